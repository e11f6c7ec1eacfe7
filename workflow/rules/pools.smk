# Pool stage: rebuild the TREC pools from the pooling systems' runs on the sampled test set, compare them with
# the published pools, evaluate every depth with published and rebuilt judgments, export TREC files.


include: "helpers/pools.smk"


rule build_pool:
    input:
        unpack(get_pool_runs),
        kg=get_testset_kg,
        annotations=get_pool_annotations,
        pooling_depth=get_pool_depths,
    output:
        pool=POOL,
        coverage=report(
            COVERAGE,
            caption="../report/coverage.rst",
            category="3. Pools",
        ),
        prefilter="results/pools/{testset}/prefilter.json",
    log:
        "logs/build_pool/{testset}.log",
    benchmark:
        "logs/benchmarks/build_pool/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/build_pool.py"


rule depth_tables:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        pooled=TESTSET,
        seed=get_seed_testset,
        pool=POOL,
        annotations=get_pool_annotations,
    output:
        published=report(
            POOLING_DEPTH,
            caption="../report/pooling_depth.rst",
            category="2. Metric tables",
            subcategory="{testset}",
        ),
        rebuilt=report(
            POOLING_DEPTH_REBUILT,
            caption="../report/pooling_depth_rebuilt.rst",
            category="2. Metric tables",
            subcategory="{testset}",
        ),
        items_answers=DEPTH_ANSWERS,
        items_questions=DEPTH_QUESTIONS,
    log:
        "logs/depth_tables/{testset}.log",
    benchmark:
        "logs/benchmarks/depth_tables/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        measures=config["evaluation"]["trec_measures"],
        max_depth=config["pooling"]["depth"],
        prefilter=config["pooling"]["prefilter"],
    script:
        "../scripts/depth_tables.py"


rule export_trec_run:
    input:
        dump=SCORES,
        kg=get_testset_kg,
    output:
        run=TREC_RUN,
    log:
        "logs/export_trec_run/{testset}/{model}.log",
    benchmark:
        "logs/benchmarks/export_trec_run/{testset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(SYSTEMS),
    conda:
        "../../envs/analysis.yaml"
    params:
        depth=config["evaluation"]["trec_export"]["depth"],
    script:
        "../scripts/export_trec_run.py"


rule export_trec_qrels:
    input:
        judgments=TESTSET,
        questions=TESTSET_QUESTIONS,
        kg=get_testset_kg,
    output:
        qrels=TREC_QRELS,
    log:
        "logs/export_trec_qrels/{testset}.log",
    benchmark:
        "logs/benchmarks/export_trec_qrels/{testset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/export_trec_qrels.py"


rule annotation_batch:
    input:
        pool=POOL,
        kg=get_testset_kg,
        annotations=get_pool_annotations,
        templates=config["annotation"]["templates"],
    output:
        sheet=ANNOTATION_BATCH,
    log:
        "logs/annotation_batch/{testset}.log",
    benchmark:
        "logs/benchmarks/annotation_batch/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        batch=get_annotation_batch_name,
        prefilter=config["pooling"]["prefilter"],
    script:
        "../scripts/annotation_batch.py"


TREC_EXPORT_SETS = config["evaluation"]["trec_export"]["test_sets"]
add_final_outputs(
    expand(POOLING_DEPTH, testset=POOLED_SETS)
    + expand(COVERAGE, testset=POOLED_SETS)
    + expand(ANNOTATION_BATCH, testset=POOLED_SETS)
    + expand(TREC_QRELS, testset=TREC_EXPORT_SETS)
    + expand(TREC_RUN, testset=TREC_EXPORT_SETS, model=SYSTEMS)
)
