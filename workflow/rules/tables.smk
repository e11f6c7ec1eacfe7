# Summary stage: the models' quality against their published MRRs, the paper's findings claim by claim, and
# where the run's time went (read from every rule's benchmark file). Logic: kgeval.tables.steps,
# kgeval.analysis.findings, kgeval.published.


include: "helpers/tables.smk"


rule model_quality:
    input:
        infos=expand(MODEL_INFO, dataset=TESTED_DATASETS, model=SYSTEMS),
        # every seed's checkpoint: its training job, and so its benchmark file, is complete
        seed_models=get_all_seed_models(),
        evaluations=list(get_full_evaluations().values()),
    output:
        table=report(
            MODEL_QUALITY,
            caption="../report/model_quality.rst",
            category="8. Summary of the run",
        ),
        markdown="results/tables/model_quality.md",
    log:
        "logs/model_quality.log",
    benchmark:
        "logs/benchmarks/model_quality.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        models=get_model_quality_files(),
        evaluations=get_full_evaluations(),
    script:
        "../scripts/model_quality.py"


rule findings:
    input:
        unpack(get_findings_inputs),
    output:
        table=report(
            FINDINGS,
            caption="../report/findings.rst",
            category="8. Summary of the run",
        ),
        markdown="results/tables/findings.md",
    log:
        "logs/findings.log",
    benchmark:
        "logs/benchmarks/findings.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        names=get_study_names(),
        evaluations=get_study_evaluations(),
    script:
        "../scripts/findings.py"


rule run_times:
    input:
        get_run_times_inputs,
    output:
        table=report(
            RUN_TIMES,
            caption="../report/run_times.rst",
            category="8. Summary of the run",
        ),
        markdown="results/tables/run_times.md",
    log:
        "logs/run_times.log",
    # in the main process: the job graph of its params is the DAG of the invocation (a cluster job's own
    # Snakemake knows only its group)
    localrule: True
    conda:
        "../../envs/analysis.yaml"
    params:
        benchmark_dir=BENCHMARKS,
        stages=get_rule_stages,
        graph=get_job_graph,
    script:
        "../scripts/run_times.py"


# The run's content manifest (kgeval.reproduce): digests of the values of its models, score dumps and metric
# tables, its verdicts and the environment that made them; kgeval reproduce compares two runs, or a run and a
# pack (which carries its run's manifest), with it.
rule manifest:
    input:
        unpack(get_manifest_inputs),
    output:
        manifest=RUN_MANIFEST,
    log:
        "logs/manifest.log",
    benchmark:
        "logs/benchmarks/manifest.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        config=config,
        # the study's lock file (issue 61): its hash and the installed packages that differ from it
        lock="requirements.lock",
    script:
        "../scripts/manifest.py"


# The reference pack: the placement tables of every test set, compact, with their provenance, in a folder of the
# repository that can be committed; kgeval evaluate places against it when no local results exist. A target of
# its own (not part of rule all): snakemake --cores 1 reference/<config name>
rule pack_reference:
    input:
        unpack(get_reference_tables),
        runs=get_reference_dumps,
        # the run's wall and job time: facts the docs quote (kgeval.tables.facts)
        run_times=RUN_TIMES,
        # the run's content manifest, copied into the pack: kgeval reproduce compares a rerun with it
        manifest=RUN_MANIFEST,
    output:
        pack=directory("reference/{name}"),
    log:
        "logs/pack_reference/{name}.log",
    benchmark:
        "logs/benchmarks/pack_reference/{name}.tsv"
    wildcard_constraints:
        name=reference_name(),
    conda:
        "../../envs/analysis.yaml"
    params:
        config=config,
        cores=get_cores,
        benchmarks=BENCHMARKS,
        runs=get_reference_runs(),
        k=config["bounds"]["k"],
    script:
        "../scripts/pack_reference.py"


add_final_outputs([MODEL_QUALITY, FINDINGS, RUN_TIMES, RUN_MANIFEST])
