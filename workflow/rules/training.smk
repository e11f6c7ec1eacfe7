# Model stage: train every configured model on every dataset (one job per seed), keep the best seed.


include: "helpers/training.smk"


rule train_model:
    input:
        kg=KG,
    output:
        model=SEED_MODEL,
        info=SEED_MODEL_INFO,
    log:
        "logs/train_model/{dataset}/{model}/seed{seed}.log",
    # TRAIN_BENCHMARK (paths.smk), spelled out: tests/test_workflow_paths.py reads each rule's benchmark path
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
        settings=get_model_settings,
        work_dir=get_checkpoint_dir,
        snapshot_dir=get_snapshot_dir,
    script:
        "../scripts/train_model.py"


rule select_model:
    input:
        candidates=get_seed_models,
    output:
        model=MODEL,
        info=MODEL_INFO,
        summary=MODEL_SELECTION,
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
        checkpoint=LIBKGE_CHECKPOINT,
    log:
        "logs/fetch_libkge/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/fetch_libkge/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(LIBKGE_MODELS),
    conda:
        "../../envs/models.yaml"
    params:
        spec=get_libkge_spec,
        mirror=config["mirror"],
        prefer_mirror=config["prefer_mirror"],
    script:
        "../scripts/fetch_libkge.py"


rule convert_libkge:
    input:
        checkpoint=LIBKGE_CHECKPOINT,
        kg=KG,
    output:
        model=MODEL,
        info=MODEL_INFO,
    log:
        "logs/convert_libkge/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/convert_libkge/{dataset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(LIBKGE_MODELS),
    conda:
        "../../envs/models.yaml"
    params:
        sha256=get_libkge_sha256,
    script:
        "../scripts/convert_libkge.py"
