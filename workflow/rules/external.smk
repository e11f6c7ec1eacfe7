# Outside systems (config key external_systems): a PyKEEN model, a checkpoint or TREC run files become score
# dumps beside the study's models, so that every metric table and analysis includes them. Logic:
# kgeval.external.steps.


include: "helpers/external.smk"


rule import_external_system:
    input:
        unpack(get_external_system_files),
        kg=get_testset_kg,
        judgments=TESTSET,
        questions=TESTSET_QUESTIONS,
    output:
        dump=directory(SCORES),
    log:
        "logs/import_external_system/{testset}/{model}.log",
    benchmark:
        "logs/benchmarks/import_external_system/{testset}/{model}.tsv"
    wildcard_constraints:
        model=alternatives(EXTERNAL_SYSTEMS),
    conda:
        "../../envs/models.yaml"
    threads: 1  # as dump_scores: results must not depend on --cores
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        spec=get_external_spec,
        k=get_run_depth,
        memory_budget_mb=config["evaluation"]["memory_budget_mb"],
    script:
        "../scripts/import_external_system.py"
