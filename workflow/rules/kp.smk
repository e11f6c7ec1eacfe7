# Knowledge Persistence stage (Bastos et al., 2023): KP of every model on every dataset, its correlation with
# the ranking metrics across models (Table 2), across training checkpoints (Table 3), evaluation time ranking vs
# KP (Table 5) and the carbon footprint of both protocols (Figure 4). Logic: kgeval.kp.persistence, kgeval.kp.carbon,
# kgeval.kp.steps.

from kgeval.kp.steps import (
    kp_datasets,
    kp_early_stopping_models,
    kp_params,
    kp_settings,
    kp_testset,
)

# the kp block with its defaults; KP_PARAMS (sample size, projections, seed, p, batch size) is the same for
# every KP computation
KP = kp_settings(config)
KP_PARAMS = kp_params(config)
KP_DATASETS = kp_datasets(config)
KP_ES_MODELS = sorted(
    {m for d in KP_DATASETS for m in kp_early_stopping_models(config, d)}
)
# targets of this stage, for rule all
KP_OUTPUTS = expand(
    "results/kp/{dataset}/{name}",
    dataset=KP_DATASETS,
    name=["correlations.csv", "timing.csv", "carbon.csv", "carbon.png"],
) + expand(
    "results/kp/{dataset}/early_stopping.csv",
    dataset=[d for d in KP_DATASETS if kp_early_stopping_models(config, d)],
)


rule kp_model:
    input:
        model="results/models/{dataset}/{model}/model.pt",
        kg="resources/datasets/{dataset}/kg.npz",
    output:
        record="results/kp/{dataset}/{model}.json",
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
    script:
        "../scripts/kp_model.py"


rule kp_correlations:
    input:
        unpack(
            lambda wildcards: {
                f"kp_{m}": f"results/kp/{wildcards.dataset}/{m}.json" for m in SYSTEMS
            }
        ),
        evaluation=lambda wildcards: f"results/metrics/{kp_testset(config, wildcards.dataset)}/evaluation.csv",
    output:
        correlations=report(
            "results/kp/{dataset}/correlations.csv",
            caption="../report/kp_correlations.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/correlations.md",
        values="results/kp/{dataset}/values.csv",
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
        selection="results/models/{dataset}/{model}/selection.json",
        seed_models=get_seed_models,
        kg="resources/datasets/{dataset}/kg.npz",
    output:
        checkpoints="results/kp/{dataset}/early_stopping/{model}.csv",
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
        snapshot_root=lambda wildcards: f"resources/snapshots/{wildcards.dataset}/{wildcards.model}",
        splits=KP["early_stopping_splits"],
        test_mrr=KP["early_stopping_test_mrr"],
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
        compile=config["evaluation"]["compile"],
    script:
        "../scripts/kp_early_stopping_model.py"


rule kp_early_stopping:
    input:
        unpack(
            lambda wildcards: {
                f"es_{m}": f"results/kp/{wildcards.dataset}/early_stopping/{m}.csv"
                for m in kp_early_stopping_models(config, wildcards.dataset)
            }
        ),
    output:
        table=report(
            "results/kp/{dataset}/early_stopping.csv",
            caption="../report/kp_early_stopping.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/early_stopping.md",
        checkpoints="results/kp/{dataset}/early_stopping_checkpoints.csv",
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
        model="results/models/{dataset}/{model}/model.pt",
        info="results/models/{dataset}/{model}/model.pt.json",
        kg="resources/datasets/{dataset}/kg.npz",
    output:
        timing="results/kp/{dataset}/timing/{model}.json",
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
        unpack(
            lambda wildcards: {
                f"timing_{m}": f"results/kp/{wildcards.dataset}/timing/{m}.json"
                for m in SYSTEMS
            }
        ),
    output:
        table=report(
            "results/kp/{dataset}/timing.csv",
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
        unpack(
            lambda wildcards: {
                f"timing_{m}": f"results/kp/{wildcards.dataset}/timing/{m}.json"
                for m in SYSTEMS
            }
        ),
    output:
        table=report(
            "results/kp/{dataset}/carbon.csv",
            caption="../report/kp_carbon.rst",
            category="7. Knowledge Persistence",
            subcategory="{dataset}",
        ),
        markdown="results/kp/{dataset}/carbon.md",
        png=report(
            "results/kp/{dataset}/carbon.png",
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
