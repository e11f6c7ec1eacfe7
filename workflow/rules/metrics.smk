# Metric stage: the published result tables of every test set, from the score dumps.


rule evaluate_testset:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
    output:
        evaluation=report(
            EVALUATION,
            caption="../report/evaluation.rst",
            category="2. Metric tables",
            subcategory="{testset}",
        ),
        per_category=PER_CATEGORY,
        per_question=PER_QUESTION,
        per_answer=PER_ANSWER,
    log:
        "logs/evaluate_testset/{testset}.log",
    benchmark:
        "logs/benchmarks/evaluate_testset/{testset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        measures=config["evaluation"]["trec_measures"],
    script:
        "../scripts/evaluate_testset.py"


rule reweighted_metrics:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        reference=get_seed_testset,
    output:
        table=report(
            REWEIGHTED,
            caption="../report/reweighted.rst",
            category="2. Metric tables",
            subcategory="{testset}",
        ),
    log:
        "logs/reweighted_metrics/{testset}.log",
    benchmark:
        "logs/benchmarks/reweighted_metrics/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/reweighted_metrics.py"


add_final_outputs(expand(EVALUATION, testset=TEST_SETS))
