# Pool stage: rebuild the TREC pools from the pooling systems' runs on the sampled test set, compare them with
# the published pools, evaluate every depth with published and rebuilt judgments, export TREC files.


rule build_pool:
    input:
        unpack(get_pool_runs),
        kg=get_testset_kg,
        annotations=get_pool_annotations,
        pooling_depth=get_pool_depths,
    output:
        pool="results/pools/{testset}/pool.tsv",
        coverage=report(
            "results/pools/{testset}/coverage.csv",
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
        pooled="resources/testsets/{testset}.tsv",
        seed=get_seed_testset,
        pool="results/pools/{testset}/pool.tsv",
        annotations=get_pool_annotations,
    output:
        published=report(
            "results/metrics/{testset}/pooling_depth.csv",
            caption="../report/pooling_depth.rst",
            category="2. Metric tables",
            subcategory="{testset}",
        ),
        rebuilt=report(
            "results/metrics/{testset}/pooling_depth_rebuilt.csv",
            caption="../report/pooling_depth_rebuilt.rst",
            category="2. Metric tables",
            subcategory="{testset}",
        ),
        items_answers="results/metrics/{testset}/pooling_depth_answers.parquet",
        items_questions="results/metrics/{testset}/pooling_depth_questions.parquet",
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
        dump="results/scores/{testset}/{model}",
        kg=get_testset_kg,
    output:
        run="results/trec/{testset}/{model}.run",
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
        judgments="resources/testsets/{testset}.tsv",
        questions="resources/testsets/{testset}.questions.tsv",
        kg=get_testset_kg,
    output:
        qrels="results/trec/{testset}/qrels.txt",
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
        pool="results/pools/{testset}/pool.tsv",
        kg=get_testset_kg,
        annotations=get_pool_annotations,
        templates=config["annotation"]["templates"],
    output:
        sheet="results/annotations/{testset}/batch.tsv",
    log:
        "logs/annotation_batch/{testset}.log",
    benchmark:
        "logs/benchmarks/annotation_batch/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        batch=lambda wildcards: f"{wildcards.testset}-rebuilt",
        prefilter=config["pooling"]["prefilter"],
    script:
        "../scripts/annotation_batch.py"
