# Score stage: rank every question of every test set with every model, once; everything downstream reads
# these dumps.


rule dump_scores:
    input:
        model=get_dump_model,
        kg=get_testset_kg,
        judgments="resources/testsets/{testset}.tsv",
        questions="resources/testsets/{testset}.questions.tsv",
    output:
        dump=directory("results/scores/{testset}/{model}"),
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
        k=lambda wildcards: run_depth(config, wildcards.testset),
        keep_scores=lambda wildcards: wildcards.testset
        in config["evaluation"]["full_scores"],
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
        compile=config["evaluation"]["compile"],
    script:
        "../scripts/dump_scores.py"
