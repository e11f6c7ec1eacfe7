import os
import re
from pathlib import Path

from kgeval.config import full_testsets, model_settings, run_depth
from kgeval.data.kg import CATEGORIES
from kgeval.data.manifest import read_manifest
from kgeval.data.synth import ROLE_FILES
from kgeval.training.cost import expected_train_seconds
from kgeval.workflow import forward_stop_signals

# glibc's allocator: keep large freed blocks (torch's batch x entities score tensors) in the heap instead of
# unmapping them, which made every batch pay page faults (28 % of a default run's CPU time went to the kernel).
# glibc reads these once, when a process starts: set here, they reach every job Snakemake starts (local or
# sbatch --export=ALL), not this process; a value set by the user wins.
for _malloc_var in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
    os.environ.setdefault(_malloc_var, "1000000000000")


# Ctrl-C (SIGINT) or SIGTERM of Snakemake stops the running jobs within seconds instead of waiting for them
# (kgeval.workflow.forward_stop_signals); onstart runs after Snakemake installed its own SIGTERM handler. Not in
# a process that submits to a cluster: its children are the submission commands, not the jobs.
onstart:
    if workflow.local_exec:
        forward_stop_signals()


MANIFEST = read_manifest(config["manifest"])
DATASETS = list(config["datasets"])
TEST_SETS = list(config["test_sets"])
STUDY = config["study"]
SYSTEMS = list(config["models"])
TRAINED_MODELS = [
    m for m in SYSTEMS if config["models"][m].get("source", "train") == "train"
]
LIBKGE_MODELS = [
    m for m in SYSTEMS if config["models"][m].get("source", "train") == "libkge"
]
# outside systems (config key external_systems): scored on their dataset's test sets beside the models
EXTERNAL_SYSTEMS = list(config["external_systems"])


def alternatives(values):
    """A wildcard constraint that admits exactly the configured values (none: a regex that never matches)."""
    values = list(values)
    return "|".join(re.escape(v) for v in values) if values else "(?!x)x"


wildcard_constraints:
    dataset=alternatives(DATASETS),
    testset=alternatives(TEST_SETS),


def dataset_spec(dataset):
    return config["datasets"][dataset]


def role_path(dataset, role):
    """Path of one input file of a dataset, by role (train, valid, test, names, annotations, ...)."""
    spec = dataset_spec(dataset)
    if spec["source"] == "synth":
        return f"resources/synth/{dataset}/{ROLE_FILES[role]}"
    if role in ("train", "valid", "test"):
        return f"resources/datasets/{dataset}/splits/{role}.txt"
    return f"resources/downloads/{spec['files'][role]}"


def dataset_roles(dataset):
    spec = dataset_spec(dataset)
    if spec["source"] == "synth":
        roles = [
            "train",
            "valid",
            "test",
            "names",
            "categories",
            "relation_types",
            "entity_types",
        ]
        if spec.get("synth", {}).get("annotations", True):
            roles += ["sample_idxs", "samples", "annotations", "pooling_depth"]
        return roles
    return ["train", "valid", "test"] + list(spec.get("files", {}))


def synth_outputs():
    """Every file the synthesize rule writes, by role (one entry per relation-category file)."""
    out = {}
    for role, path in ROLE_FILES.items():
        if role == "categories":
            for cat in CATEGORIES:
                out[f"category_{cat}"] = f"resources/synth/{{dataset}}/{path}/{cat}.txt"
        else:
            out[role] = f"resources/synth/{{dataset}}/{path}"
    return out


def get_archive(wildcards):
    return f"resources/downloads/{dataset_spec(wildcards.dataset)['archive']}"


def get_kg_inputs(wildcards):
    """Role files that build a knowledge graph (the categories role is the one_to_one.txt of its folder)."""
    out = {}
    for role in (
        "train",
        "valid",
        "test",
        "names",
        "categories",
        "relation_types",
        "entity_types",
    ):
        if role not in dataset_roles(wildcards.dataset):
            continue
        path = role_path(wildcards.dataset, role)
        out[role] = f"{path}/{CATEGORIES[0]}.txt" if role == "categories" else path
    if "categories" in out:
        folder = out["categories"].rsplit("/", 1)[0]
        for cat in CATEGORIES[1:]:
            out[f"category_{cat}"] = f"{folder}/{cat}.txt"
    return out


def testset_spec(testset):
    return config["test_sets"][testset]


def testset_dataset(testset):
    return testset_spec(testset)["dataset"]


def get_testset_inputs(wildcards):
    spec = testset_spec(wildcards.testset)
    dataset = spec["dataset"]
    out = {"kg": f"resources/datasets/{dataset}/kg.npz"}
    if spec["kind"] == "sample":
        out["sample_idxs"] = role_path(dataset, "sample_idxs")
        if "samples" in dataset_roles(dataset):
            out["samples"] = role_path(dataset, "samples")
    elif spec["kind"] == "pooled":
        out["annotations"] = role_path(dataset, "annotations")
        out["pooling_depth"] = role_path(dataset, "pooling_depth")
        out["seed_set"] = f"resources/testsets/{spec['seed_set']}.tsv"
    if "queries" in spec:
        out["queries"] = f"resources/downloads/{spec['queries']}"
    return out


def get_table1_inputs(wildcards):
    names = [STUDY["original"], STUDY["sample"], STUDY["complete"]]
    return {name: f"resources/testsets/{name}.tsv" for name in names}


def get_table1_kgs():
    names = [STUDY["original"], STUDY["sample"], STUDY["complete"]]
    return {n: f"resources/datasets/{testset_dataset(n)}/kg.npz" for n in names}


def get_model_settings(wildcards):
    return model_settings(config, wildcards.dataset, wildcards.model)


# Snakemake's priorities do not flow upstream: with trainings prioritised by cost, a dataset whose kg was not
# yet prepared waited behind every ready training of the other dataset (the first full run trained all 13
# WN18RR models before preparing FB15k-237, so its longest trainings started an hour late). The cheap data
# jobs therefore outrank every training.
DATA_PRIORITY = 1_000_000


def get_train_priority(wildcards):
    """A training job's expected seconds: Snakemake starts the ready jobs of highest priority first."""
    settings = model_settings(config, wildcards.dataset, wildcards.model)
    return expected_train_seconds(wildcards.model, settings["train"])


def get_train_threads(wildcards):
    """A training job's threads: its train.threads setting."""
    return model_settings(config, wildcards.dataset, wildcards.model)["train"][
        "threads"
    ]


def get_seed_models(wildcards):
    seeds = model_settings(config, wildcards.dataset, wildcards.model)["seeds"]
    return [
        f"resources/models/{wildcards.dataset}/{wildcards.model}/seed{seed}.pt"
        for seed in seeds
    ]


def get_dump_model(wildcards):
    return f"results/models/{testset_dataset(wildcards.testset)}/{wildcards.model}/model.pt"


def get_testset_kg(wildcards):
    return f"resources/datasets/{testset_dataset(wildcards.testset)}/kg.npz"


def testset_systems(testset):
    """The models, then the outside systems of the test set's dataset."""
    dataset = testset_dataset(testset)
    return SYSTEMS + [
        s
        for s in EXTERNAL_SYSTEMS
        if config["external_systems"][s]["dataset"] == dataset
    ]


def get_testset_dumps(wildcards):
    return {
        f"dump_{system}": f"results/scores/{wildcards.testset}/{system}"
        for system in testset_systems(wildcards.testset)
    }


def get_external_system_files(wildcards):
    """What an outside system is read from on one test set: its run file, or its model (checkpoint or folder)."""
    spec = config["external_systems"][wildcards.model]
    if "runs" in spec:
        return {"system": spec["runs"][wildcards.testset]}
    return {"system": spec["system"]}


POOLED_SETS = [t for t in TEST_SETS if config["test_sets"][t]["kind"] == "pooled"]


def get_seed_testset(wildcards):
    return f"resources/testsets/{testset_spec(wildcards.testset)['seed_set']}.tsv"


def get_pool_runs(wildcards):
    seed = testset_spec(wildcards.testset)["seed_set"]
    return {
        f"run_{system}": f"results/scores/{seed}/{system}"
        for system in config["pooling"]["systems"]
    }


def get_pool_annotations(wildcards):
    return role_path(testset_dataset(wildcards.testset), "annotations")


def get_pool_depths(wildcards):
    return role_path(testset_dataset(wildcards.testset), "pooling_depth")


def analysis_files(role):
    """The files the analyses read for the test set playing ``role`` (original, sample, complete, second)."""
    name = STUDY[role]
    files = {
        "name": name,
        "kg": f"resources/datasets/{testset_dataset(name)}/kg.npz",
        "testset": f"resources/testsets/{name}.tsv",
        "questions": f"resources/testsets/{name}.questions.tsv",
        "evaluation": f"results/metrics/{name}/evaluation.csv",
        "per_category": f"results/metrics/{name}/lp_per_rel_type.csv",
        "per_answer": f"results/metrics/{name}/per_answer.parquet",
        "per_question": f"results/metrics/{name}/per_question.parquet",
    }
    if name in POOLED_SETS:
        files.update(
            pooling_depth=f"results/metrics/{name}/pooling_depth.csv",
            pooling_depth_rebuilt=f"results/metrics/{name}/pooling_depth_rebuilt.csv",
            depth_answers=f"results/metrics/{name}/pooling_depth_answers.parquet",
            depth_questions=f"results/metrics/{name}/pooling_depth_questions.parquet",
            reweighted=f"results/metrics/{name}/lp_sample_rel_dist.csv",
        )
    return files


def get_analysis_inputs(roles):
    """Every file of the given study roles (roles without a test set are skipped)."""
    out = []
    for role in roles:
        if STUDY.get(role):
            out += [v for k, v in analysis_files(role).items() if k != "name"]
    return sorted(set(out))


def get_reanalysis_inputs(wildcards):
    files = []
    for role in ("original", "sample", "complete", "second"):
        name = STUDY.get(role)
        if name:
            files += [
                f"results/metrics/{name}/evaluation.csv",
                f"results/metrics/{name}/lp_per_rel_type.csv",
            ]
    complete = STUDY["complete"]
    files += [
        f"results/metrics/{complete}/pooling_depth.csv",
        f"results/metrics/{complete}/lp_sample_rel_dist.csv",
    ]
    return files


def get_release_tables(wildcards):
    """The CSV tables of the release folder to re-analyse (config key analysis/reanalyze)."""
    folder = config["analysis"]["reanalyze"]
    return sorted(str(p) for p in Path(folder).glob("*/*.csv")) if folder else []


def get_final_outputs():
    out = ["results/tables/table1.csv"]
    if any(dataset_spec(d)["source"] == "manifest" for d in DATASETS):
        out.append("results/tables/resources.csv")
    out += expand("resources/testsets/{testset}.json", testset=TEST_SETS)
    out += expand("results/metrics/{testset}/evaluation.csv", testset=TEST_SETS)
    out += expand("results/metrics/{testset}/pooling_depth.csv", testset=POOLED_SETS)
    out += expand("results/pools/{testset}/coverage.csv", testset=POOLED_SETS)
    out += expand("results/annotations/{testset}/batch.tsv", testset=POOLED_SETS)
    out += get_bounds_outputs()
    out += expand("results/sampling/{t}/sampling_{f}", t=POOLED_SETS, f=SAMPLING_FILES)
    exported = config["evaluation"]["trec_export"]["test_sets"]
    out += expand("results/trec/{testset}/qrels.txt", testset=exported)
    out += expand("results/trec/{testset}/{model}.run", testset=exported, model=SYSTEMS)
    out += [
        "results/analysis/figure3.png",
        "results/analysis/figure7.png",
        "results/analysis/figure8.png",
        "results/analysis/umf_grid.csv",
        "results/reanalysis/own/notes.txt",
    ]
    if config["analysis"]["reanalyze"]:
        out.append("results/reanalysis/release/notes.txt")
    out += [
        "results/tables/model_quality.csv",
        "results/tables/findings.csv",
        "results/tables/run_times.csv",
    ]
    return out


def get_bounds_outputs():
    """The bounds stage's τ tables, the selection's next judgments and the simulation's summary (their rules write
    the other tables and the figures too); none when disabled."""
    if not config["bounds"]["enabled"]:
        return []
    out = expand("results/bounds/{testset}/tau.csv", testset=POOLED_SETS)
    out += expand("results/bounds/{testset}/next_judgments.tsv", testset=POOLED_SETS)
    if config["bounds"]["simulation"]:
        out += expand(
            "results/bounds/{testset}/simulation_summary.csv", testset=POOLED_SETS
        )
    return out


def get_job_graph(wildcards):
    """This invocation's job graph from Snakemake's DAG, for run_times' projection: one entry per job with a
    benchmark file (its name), the benchmarked jobs it waits for (through jobs without one), its rule's priority
    for its wildcards, its threads and input files. Snakemake evaluates params after the DAG is complete; why
    this source and not another: kgeval.tables.projection."""
    dag = workflow.dag
    if dag is None:
        return []
    deps = dag.dependencies
    timed = {}

    def timed_deps(job):
        if job not in timed:
            out = set()
            for dep in deps[job]:
                out |= {str(dep.benchmark)} if dep.benchmark else timed_deps(dep)
            timed[job] = out
        return timed[job]

    graph = [
        {
            "benchmark": str(job.benchmark),
            "rule": job.rule.name,
            "after": sorted(timed_deps(job)),
            "priority": job.rule.expand_priority(
                job.wildcards_dict, job.input, job.attempt
            ),
            "threads": job.threads,
            "input": sorted(str(f) for f in job.input),
        }
        for job in dag.jobs
        if job.benchmark
    ]
    return sorted(graph, key=lambda g: g["benchmark"])


def get_full_evaluations():
    """dataset -> evaluation.csv of its full test set (None: the dataset has none)."""
    out = {}
    for d in DATASETS:
        full = full_testsets(config, d)
        out[d] = f"results/metrics/{full[0]}/evaluation.csv" if full else None
    return out


def get_all_seed_models():
    return [
        f"resources/models/{d}/{m}/seed{seed}.pt"
        for d in DATASETS
        for m in TRAINED_MODELS
        for seed in model_settings(config, d, m)["seeds"]
    ]


def get_model_quality_files():
    """dataset -> model -> the selected model's info and the benchmark files of its training jobs."""
    out = {}
    for d in DATASETS:
        out[d] = {}
        for m in SYSTEMS:
            seeds = model_settings(config, d, m)["seeds"] if m in TRAINED_MODELS else []
            out[d][m] = {
                "info": f"results/models/{d}/{m}/model.pt.json",
                "benchmarks": [
                    f"logs/benchmarks/train_model/{d}/{m}/seed{s}.tsv" for s in seeds
                ],
            }
    return out


def get_study_evaluations():
    """test set -> evaluation.csv, for every test set with a study role."""
    names = [STUDY.get(r) for r in ("original", "sample", "complete", "second")]
    return {n: f"results/metrics/{n}/evaluation.csv" for n in names if n}


def get_bounded_study_set():
    """The study's completed test set when the bounds stage runs on it, else None."""
    name = STUDY.get("complete")
    return name if config["bounds"]["enabled"] and name in POOLED_SETS else None


def get_bounds_overlay(wildcards):
    """The bounds stage's τ intervals and the prior's expected τ, which Figure 5 draws (none without bounds)."""
    bounded = get_bounded_study_set()
    if not bounded:
        return {}
    return {
        "bounds_tau": f"results/bounds/{bounded}/tau.csv",
        "bounds_prior": f"results/bounds/{bounded}/tau_prior.csv",
    }


def get_findings_inputs(wildcards):
    """The analysis outputs the findings table reads (KP's only where the study's dataset is in the KP stage)."""
    out = {
        "evaluations": list(get_study_evaluations().values()),
        "figure2_kl": "results/analysis/figure2_kl.csv",
        "figure4": "results/analysis/figure4.csv",
        "figure5": "results/analysis/figure5.csv",
        "table4": "results/tables/table4.csv",
        "figure6": "results/analysis/figure6.csv",
        "figure7": "results/analysis/figure7_summary.csv",
        "figure8": "results/analysis/figure8_summary.csv",
    }
    bounded = get_bounded_study_set()
    if bounded:
        out["bounds_tau"] = f"results/bounds/{bounded}/tau.csv"
        out["bounds_counts"] = f"results/bounds/{bounded}/judgments_to_decide.csv"
    dataset = testset_dataset(STUDY["original"])
    if dataset in KP_DATASETS:
        out["kp_correlations"] = f"results/kp/{dataset}/correlations.csv"
        out["kp_timing"] = f"results/kp/{dataset}/timing.csv"
        if kp_early_stopping_models(config, dataset):
            out["kp_early_stopping"] = f"results/kp/{dataset}/early_stopping.csv"
    return out


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
        t: {s: f"results/scores/{t}/{s}" for s in testset_systems(t)}
        for t in POOLED_SETS
    }


def get_reference_tables(wildcards):
    """The metric stage's tables of every test set, by kind and test set (the reference pack's inputs)."""
    return {
        f"{kind}_{t}": f"results/metrics/{t}/{name}"
        for t in TEST_SETS
        for kind, name in (
            ("evaluation", "evaluation.csv"),
            ("per_answer", "per_answer.parquet"),
            ("per_question", "per_question.parquet"),
        )
    }
