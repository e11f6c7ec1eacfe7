# Model stage: train every configured model on every dataset (one job per seed), keep the best seed.


rule train_model:
    input:
        kg="resources/datasets/{dataset}/kg.npz",
    output:
        model="resources/models/{dataset}/{model}/seed{seed}.pt",
        info="resources/models/{dataset}/{model}/seed{seed}.pt.json",
    log:
        "logs/train_model/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "logs/benchmarks/train_model/{dataset}/{model}/seed{seed}.tsv"
    wildcard_constraints:
        model=alternatives(TRAINED_MODELS),
        seed=r"\d+",
    # the longest trainings first, so that no core idles at the end of a run (kgeval.training.cost)
    priority: get_train_priority
    conda:
        "../../envs/models.yaml"
    # train.threads (default 1): the job sets exactly that many torch threads whatever --cores is, since the
    # thread count changes float summation order; Snakemake reserves as many cores (at most --cores)
    threads: get_train_threads
    resources:
        mem_mb=12000,
        runtime=600,
    params:
        settings=lambda wildcards: get_model_settings(wildcards),
        work_dir=lambda wildcards: f"resources/checkpoints/{wildcards.dataset}/{wildcards.model}",
        snapshot_dir=lambda wildcards: f"resources/snapshots/{wildcards.dataset}/{wildcards.model}/seed{wildcards.seed}",
    script:
        "../scripts/train_model.py"


rule select_model:
    input:
        candidates=get_seed_models,
    output:
        model="results/models/{dataset}/{model}/model.pt",
        info="results/models/{dataset}/{model}/model.pt.json",
        summary="results/models/{dataset}/{model}/selection.json",
    log:
        "logs/select_model/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/select_model/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(TRAINED_MODELS),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/select_model.py"


rule fetch_libkge:
    output:
        checkpoint="resources/downloads/libkge/{dataset}/{model}.pt",
    log:
        "logs/fetch_libkge/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/fetch_libkge/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(LIBKGE_MODELS),
    conda:
        "../../envs/models.yaml"
    params:
        spec=lambda wildcards: config["models"][wildcards.model]["libkge"][
            wildcards.dataset
        ],
        mirror=config["mirror"],
        prefer_mirror=config["prefer_mirror"],
    script:
        "../scripts/fetch_libkge.py"


rule convert_libkge:
    input:
        checkpoint="resources/downloads/libkge/{dataset}/{model}.pt",
        kg="resources/datasets/{dataset}/kg.npz",
    output:
        model="results/models/{dataset}/{model}/model.pt",
        info="results/models/{dataset}/{model}/model.pt.json",
    log:
        "logs/convert_libkge/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/convert_libkge/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(LIBKGE_MODELS),
    conda:
        "../../envs/models.yaml"
    params:
        sha256=lambda wildcards: config["models"][wildcards.model]["libkge"][
            wildcards.dataset
        ]["sha256"],
    script:
        "../scripts/convert_libkge.py"
