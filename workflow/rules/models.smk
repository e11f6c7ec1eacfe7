# Model stage: train every configured model on every dataset (one job per seed), keep the best seed.


rule train_model:
    input:
        kg="resources/datasets/{dataset}/kg.npz",
    output:
        model="resources/models/{dataset}/{model}/seed{seed}.pt",
        info="resources/models/{dataset}/{model}/seed{seed}.pt.json",
    params:
        settings=lambda wildcards: get_model_settings(wildcards),
        work_dir=lambda wildcards: f"resources/checkpoints/{wildcards.dataset}/{wildcards.model}",
        snapshot_dir=lambda wildcards: f"resources/snapshots/{wildcards.dataset}/{wildcards.model}/seed{wildcards.seed}",
    wildcard_constraints:
        model=alternatives(TRAINED_MODELS),
        seed=r"\d+",
    threads: workflow.cores
    resources:
        mem_mb=12000,
        runtime=600,
    log:
        "logs/train_model/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "logs/benchmarks/train_model/{dataset}/{model}/seed{seed}.tsv"
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/train_model.py"


rule select_model:
    input:
        candidates=get_seed_models,
    output:
        model="results/models/{dataset}/{model}/model.pt",
        info="results/models/{dataset}/{model}/model.pt.json",
        summary="results/models/{dataset}/{model}/selection.json",
    wildcard_constraints:
        model=alternatives(TRAINED_MODELS),
    log:
        "logs/select_model/{dataset}/{model}.log",
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/select_model.py"
