# Knowledge Persistence stage (Bastos et al., 2023): KP of every model on every dataset, its correlation with
# the ranking metrics across models (Table 2), across training checkpoints (Table 3), evaluation time ranking vs
# KP (Table 5) and the carbon footprint of both protocols (Figure 4). Logic: kgeval.kp.persistence, kgeval.kp.carbon,
# kgeval.kp.steps.


include: "helpers/kp.smk"


rule kp_model:
    input:
        model=MODEL,
        kg=KG,
    output:
        record=KP_RECORD,
    log:
        "logs/kp_model/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/kp_model/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(SYSTEMS),
    conda:
        "../../envs/models.yaml"
    threads: 1  # fixed: torch's thread count changes float summation order, so results must not depend on --cores
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        kp=KP_PARAMS,
        splits=KP["splits"],
        graph_kernel=KP_GRAPH_KERNEL,
    script:
        "../scripts/kp_model.py"


rule kp_correlations:
    input:
        unpack(get_kp_records),
        evaluation=get_kp_evaluation,
    output:
        correlations=report(
            KP_CORRELATIONS,
            caption="../report/kp_correlations.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/correlations.md",
        values=KP_VALUES,
    log:
        "logs/kp_correlations/{dataset}.log",
    benchmark:
        "logs/benchmarks/kp_correlations/{dataset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/kp_correlations.py"


rule kp_early_stopping_model:
    input:
        # the selected seed is named in selection.json; every seed's checkpoint is an input, so the selected
        # one (written after its snapshots) is complete before this rule runs
        selection=MODEL_SELECTION,
        seed_models=get_seed_models,
        kg=KG,
    output:
        checkpoints=KP_EARLY_STOPPING_RECORD,
    log:
        "logs/kp_early_stopping_model/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/kp_early_stopping_model/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(KP_ES_MODELS) if KP_ES_MODELS else "(?!)",
    conda:
        "../../envs/models.yaml"
    threads: 1  # fixed: torch's thread count changes float summation order, so results must not depend on --cores
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        kp=KP_PARAMS,
        snapshot_root=get_snapshot_root,
        splits=KP["early_stopping_splits"],
        test_mrr=KP["early_stopping_test_mrr"],
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
        compile=config["evaluation"]["compile"],
    script:
        "../scripts/kp_early_stopping_model.py"


rule kp_early_stopping:
    input:
        unpack(get_early_stopping_records),
    output:
        table=report(
            KP_EARLY_STOPPING,
            caption="../report/kp_early_stopping.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/early_stopping.md",
        checkpoints="results/kp/{dataset}/early_stopping_checkpoints.csv",
        model_range=report(
            KP_MODEL_RANGE,
            caption="../report/kp_model_range.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        model_range_markdown="results/kp/{dataset}/model_range.md",
    log:
        "logs/kp_early_stopping/{dataset}.log",
    benchmark:
        "logs/benchmarks/kp_early_stopping/{dataset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/kp_early_stopping.py"


rule kp_timing:
    input:
        model=MODEL,
        info=MODEL_INFO,
        kg=KG,
    output:
        timing=KP_TIMING_RECORD,
    log:
        "logs/kp_timing/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/kp_timing/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(SYSTEMS),
    conda:
        "../../envs/models.yaml"
    threads: 1  # fixed: the ranking and KP times are compared on one thread
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        kp=KP_PARAMS,
        splits=KP["timing_splits"],
        repeats=KP["timing_repeats"],
        min_seconds=KP["timing_min_seconds"],
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
        compile=config["evaluation"]["compile"],
        country_iso_code=KP["country_iso_code"],
        measure_power_secs=KP["measure_power_secs"],
    script:
        "../scripts/kp_timing.py"


rule kp_timing_table:
    input:
        unpack(get_timing_records),
    output:
        table=report(
            KP_TIMING,
            caption="../report/kp_timing.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/timing.md",
    log:
        "logs/kp_timing_table/{dataset}.log",
    benchmark:
        "logs/benchmarks/kp_timing_table/{dataset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/kp_timing_table.py"


rule kp_carbon:
    input:
        unpack(get_timing_records),
    output:
        table=report(
            KP_CARBON,
            caption="../report/kp_carbon.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/carbon.md",
        png=report(
            KP_CARBON_FIGURE,
            caption="../report/kp_carbon_figure.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        pdf="results/kp/{dataset}/carbon.pdf",
    log:
        "logs/kp_carbon/{dataset}.log",
    benchmark:
        "logs/benchmarks/kp_carbon/{dataset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        projection=KP["projection"],
    script:
        "../scripts/kp_carbon.py"


rule kp_variants_model:
    input:
        model=MODEL,
        kg=KG,
    output:
        record=KP_VARIANTS_RECORD,
    log:
        "logs/kp_variants_model/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/kp_variants_model/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(SYSTEMS),
    conda:
        "../../envs/models.yaml"
    threads: 1  # fixed: torch's thread count changes float summation order, so results must not depend on --cores
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        kp=KP_PARAMS,
        variants=KP_VARIANTS_SETTINGS or {},
    script:
        "../scripts/kp_variants_model.py"


rule kp_variants:
    input:
        unpack(get_variants_records),
        evaluation=get_kp_evaluation,
    output:
        sample_size=report(
            KP_SAMPLE_SIZE,
            caption="../report/kp_sample_size.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        sample_size_markdown="results/kp/{dataset}/sample_size.md",
        png=report(
            KP_SAMPLE_SIZE_FIGURE,
            caption="../report/kp_sample_size_figure.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        pdf="results/kp/{dataset}/sample_size.pdf",
        variants=report(
            KP_VARIANTS,
            caption="../report/kp_variants.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        variants_markdown="results/kp/{dataset}/variants.md",
    log:
        "logs/kp_variants/{dataset}.log",
    benchmark:
        "logs/benchmarks/kp_variants/{dataset}.tsv"
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/kp_variants.py"


add_final_outputs(
    [
        path.format(dataset=d)
        for d in KP_DATASETS
        for path in (KP_CORRELATIONS, KP_TIMING, KP_CARBON, KP_CARBON_FIGURE)
    ]
    + expand(
        KP_EARLY_STOPPING,
        dataset=[d for d in KP_DATASETS if kp_early_stopping_models(config, d)],
    )
    + expand(
        [KP_SAMPLE_SIZE, KP_SAMPLE_SIZE_FIGURE, KP_VARIANTS],
        dataset=KP_DATASETS if KP_VARIANTS_SETTINGS else [],
    )
)
