# Helpers of the rules in workflow/rules/tables.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

from pathlib import Path

from kgeval.config import full_testsets
from kgeval.workflow_dag import job_graph, rule_stages

# the datasets with a test set: every model trains there (a dataset only the Hoyt case study ranks trains its
# models alone, config key hoyt)
TESTED_DATASETS = [
    d for d in DATASETS if any(t["dataset"] == d for t in config["test_sets"].values())
]


def get_full_evaluations():
    """dataset -> evaluation.csv of its full test set (None: the dataset has none)."""
    out = {}
    for d in TESTED_DATASETS:
        full = full_testsets(config, d)
        out[d] = EVALUATION.format(testset=full[0]) if full else None
    return out


def get_all_seed_models():
    return [
        SEED_MODEL.format(dataset=d, model=m, seed=seed)
        for d in TESTED_DATASETS
        for m in TRAINED_MODELS
        for seed in model_settings(config, d, m)["seeds"]
    ]


def get_model_quality_files():
    """dataset -> model -> the selected model's info and the benchmark files of its training jobs."""
    out = {}
    for d in TESTED_DATASETS:
        out[d] = {}
        for m in SYSTEMS:
            seeds = model_settings(config, d, m)["seeds"] if m in TRAINED_MODELS else []
            out[d][m] = {
                "info": MODEL_INFO.format(dataset=d, model=m),
                "benchmarks": [
                    TRAIN_BENCHMARK.format(dataset=d, model=m, seed=s) for s in seeds
                ],
            }
    return out


def get_study_evaluations():
    """test set -> evaluation.csv, for every test set with a study role."""
    names = [STUDY.get(r) for r in ("original", "sample", "complete", "second")]
    return {n: EVALUATION.format(testset=n) for n in names if n}


def get_findings_inputs(wildcards):
    """The analysis outputs the findings table reads (KP's only where the study's dataset is in the KP stage)."""
    out = {
        "evaluations": list(get_study_evaluations().values()),
        "figure2_kl": FIGURE2_KL,
        "figure4": FIGURE4_CSV,
        "figure5": FIGURE5_CSV,
        "table4": TABLE4,
        "claim_taus": CLAIM_TAUS,
        "figure6": FIGURE6_CSV,
        "figure7": FIGURE7_SUMMARY,
        "figure8": FIGURE8_SUMMARY,
    }
    bounded = get_bounded_study_set()
    if bounded:
        out["bounds_tau"] = BOUNDS_TAU.format(testset=bounded)
        out["bounds_counts"] = BOUNDS_COUNTS.format(testset=bounded)
        if config["sampling"]["enabled"]:
            out["sampling_budgets"] = SAMPLING_BUDGETS.format(testset=bounded)
    if HOYT_DATASETS or HOYT_TEST_SETS:
        out["hoyt_size_trend"] = HOYT_SIZE_TREND
    dataset = testset_dataset(STUDY["original"])
    if dataset in KP_DATASETS:
        out["kp_correlations"] = KP_CORRELATIONS.format(dataset=dataset)
        out["kp_timing"] = KP_TIMING.format(dataset=dataset)
        out["kp_values"] = KP_VALUES.format(dataset=dataset)
        if kp_early_stopping_models(config, dataset):
            out["kp_early_stopping"] = KP_EARLY_STOPPING.format(dataset=dataset)
            out["kp_model_range"] = KP_MODEL_RANGE.format(dataset=dataset)
        if KP_VARIANTS_SETTINGS:
            out["kp_sample_size"] = KP_SAMPLE_SIZE.format(dataset=dataset)
    return out


def get_study_names():
    return {
        role: STUDY.get(role) for role in ("original", "sample", "complete", "second")
    }


def get_run_times_inputs(wildcards):
    """The other targets of rule all (run_times runs last, when every benchmark file is written). A function, so
    that it sees the targets of every stage, whichever .smk file adds them after this one.
    """
    return [f for f in FINAL_OUTPUTS if f != RUN_TIMES]


def get_rule_stages(wildcards):
    """rule -> the .smk file it lives in (its stage)."""
    return rule_stages(workflow.rules)


def get_job_graph(wildcards):
    """This invocation's job graph from Snakemake's DAG (kgeval.workflow_dag.job_graph), for run_times'
    projection. Snakemake evaluates params after the DAG is complete; why this source and not another:
    kgeval.tables.projection."""
    return job_graph(workflow.dag)


def reference_name():
    """The reference pack's name: the stem of the config file given on the command line (config/smoke.yaml:
    smoke), default for the workflow's own config/config.yaml (always listed in workflow.configfiles).
    """
    stems = [Path(f).stem for f in workflow.configfiles if Path(f).stem != "config"]
    return stems[0] if stems else "default"


def get_cores(wildcards):
    """The cores of this invocation, for the reference pack's provenance. Read when the job runs: `snakemake
    --report` has no core count, and reading it while the rules are parsed stops the report.
    """
    return workflow.cores


def get_reference_runs(wildcards=None):
    """Every system's score dump on each pooled test set (pooled test set -> system -> folder): the reference
    pack keeps their top-k lists, from which kgeval evaluate says which comparisons the judgments decide.
    """
    return {
        t: {s: SCORES.format(testset=t, model=s) for s in testset_systems(t)}
        for t in POOLED_SETS
    }


def get_reference_dumps(wildcards):
    return [f for dumps in get_reference_runs().values() for f in dumps.values()]


def get_reference_tables(wildcards):
    """The metric stage's tables of every test set, by kind and test set (the reference pack's inputs)."""
    return {
        f"{kind}_{t}": template.format(testset=t)
        for t in TEST_SETS
        for kind, template in (
            ("evaluation", EVALUATION),
            ("per_answer", PER_ANSWER),
            ("per_question", PER_QUESTION),
        )
    }


def get_manifest_inputs(wildcards):
    """What the run's manifest hashes: every selected model, every score dump, every test set's metric tables
    and the findings table (kgeval.reproduce.manifest)."""
    return {
        "models": expand(MODEL, dataset=TESTED_DATASETS, model=SYSTEMS),
        "dumps": [
            SCORES.format(testset=t, model=s)
            for t in TEST_SETS
            for s in testset_systems(t)
        ],
        "tables": [
            template.format(testset=t)
            for t in TEST_SETS
            for template in (EVALUATION, PER_ANSWER, PER_QUESTION)
        ],
        "findings": FINDINGS,
    }
