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
    params:
        k=config["evaluation"]["run_depth"],
        keep_scores=lambda wildcards: wildcards.testset in config["evaluation"]["full_scores"],
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
    wildcard_constraints:
        model=alternatives(SYSTEMS),
    threads: workflow.cores
    resources:
        mem_mb=8000,
        runtime=120,
    log:
        "logs/dump_scores/{testset}/{model}.log",
    benchmark:
        "logs/benchmarks/dump_scores/{testset}/{model}.tsv"
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/dump_scores.py"
