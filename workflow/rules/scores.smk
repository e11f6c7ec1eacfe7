# Score stage: rank every question of every test set with every model, once; everything downstream reads
# these dumps.


include: "helpers/scores.smk"


rule dump_scores:
    input:
        model=get_dump_model,
        kg=get_testset_kg,
        judgments=TESTSET,
        questions=TESTSET_QUESTIONS,
    output:
        dump=directory(SCORES),
    log:
        "logs/dump_scores/{testset}/{model}.log",
    benchmark:
        "logs/benchmarks/dump_scores/{testset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(SYSTEMS),
    conda:
        "../../envs/models.yaml"
    threads: 1  # fixed: torch's thread count changes float summation order, so results must not depend on --cores
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        k=get_run_depth,
        keep_scores=get_keep_scores,
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
        compile=config["evaluation"]["compile"],
    script:
        "../scripts/dump_scores.py"
