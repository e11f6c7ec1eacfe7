# Bounds stage: what the existing judgments decide on a pooled test set at every pooling depth (published and
# rebuilt): exact per-system bounds, per-pair decisions and Kendall τ intervals under unjudged triples.


rule bounds:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        seed=get_seed_testset,
        pool="results/pools/{testset}/pool.tsv",
        annotations=get_pool_annotations,
    output:
        systems=report(
            "results/bounds/{testset}/systems.csv",
            caption="../report/bounds_systems.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        pairs=report(
            "results/bounds/{testset}/pairs.csv",
            caption="../report/bounds_pairs.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        tau=report(
            "results/bounds/{testset}/tau.csv",
            caption="../report/bounds_tau.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        figure=report(
            "results/bounds/{testset}/tau.png",
            caption="../report/bounds_figure.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        figure_pdf="results/bounds/{testset}/tau.pdf",
    log:
        "logs/bounds/{testset}.log",
    benchmark:
        "logs/benchmarks/bounds/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metrics=config["bounds"]["metrics"],
        milp_metrics=config["bounds"]["milp_metrics"],
        milp_time_limit=config["bounds"]["milp_time_limit"],
        max_depth=config["pooling"]["depth"],
        prefilter=config["pooling"]["prefilter"],
    script:
        "../scripts/bounds.py"
