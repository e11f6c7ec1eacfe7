"""The job graph and rule stages the run_times rule reads from Snakemake (kgeval.workflow_dag), on stand-ins for
Snakemake's DAG, jobs and rules; and the environment the workflow's jobs start with (kgeval.workflow_env)."""

from __future__ import annotations

from types import SimpleNamespace

from kgeval.workflow_dag import job_graph, rule_stages
from kgeval.workflow_env import ALLOCATOR, set_job_environment


class Rule(SimpleNamespace):
    def expand_priority(self, wildcards, input, attempt):
        # a priority function of the job's wildcards, as get_train_priority is
        return self.priority(wildcards) if callable(self.priority) else self.priority


class Job:
    """Hashable by identity, as Snakemake's jobs are keys of the DAG's dependencies."""

    def __init__(self, rule, benchmark, inputs, threads, wildcards):
        self.rule, self.benchmark, self.input, self.threads = rule, benchmark, list(inputs), threads
        self.wildcards_dict, self.attempt = wildcards or {}, 1


def job(name, rule, benchmark, *, inputs=(), threads=1, wildcards=None):
    return Job(rule, benchmark, inputs, threads, wildcards)


def test_job_graph_follows_dependencies_through_unbenchmarked_jobs():
    prep = Rule(name="prepare", priority=10, benchmark="b")
    train = Rule(name="train", priority=lambda w: 100 * int(w["seed"]), benchmark="b")
    mid = Rule(name="all", priority=0, benchmark=None)
    summ = Rule(name="summary", priority=0, benchmark="b")
    kg = job("kg", prep, "logs/benchmarks/prepare.tsv", inputs=["z.txt", "a.txt"])
    t1 = job("t1", train, "logs/benchmarks/train/1.tsv", inputs=["kg.npz"], threads=2, wildcards={"seed": "1"})
    t2 = job("t2", train, "logs/benchmarks/train/2.tsv", inputs=["kg.npz"], wildcards={"seed": "2"})
    gather = job("gather", mid, None)  # no benchmark: its own dependencies count for those after it
    top = job("top", summ, "logs/benchmarks/summary.tsv", inputs=["x"])
    dag = SimpleNamespace(jobs=[top, gather, t2, t1, kg],
                          dependencies={kg: [], t1: [kg], t2: [kg], gather: [t1, t2], top: [gather, kg]})
    assert job_graph(dag) == [
        {"benchmark": "logs/benchmarks/prepare.tsv", "rule": "prepare", "after": [], "priority": 10,
         "threads": 1, "input": ["a.txt", "z.txt"]},
        {"benchmark": "logs/benchmarks/summary.tsv", "rule": "summary",
         "after": ["logs/benchmarks/prepare.tsv", "logs/benchmarks/train/1.tsv", "logs/benchmarks/train/2.tsv"],
         "priority": 0, "threads": 1, "input": ["x"]},
        {"benchmark": "logs/benchmarks/train/1.tsv", "rule": "train", "after": ["logs/benchmarks/prepare.tsv"],
         "priority": 100, "threads": 2, "input": ["kg.npz"]},
        {"benchmark": "logs/benchmarks/train/2.tsv", "rule": "train", "after": ["logs/benchmarks/prepare.tsv"],
         "priority": 200, "threads": 1, "input": ["kg.npz"]},
    ]


def test_job_graph_without_a_dag_is_empty():
    assert job_graph(None) == []


def test_rule_stages_name_each_benchmarked_rule_by_its_file():
    rules = [SimpleNamespace(name="train_model", snakefile="/w/workflow/rules/training.smk", benchmark="b"),
             SimpleNamespace(name="run_times", snakefile="/w/workflow/rules/tables.smk", benchmark=None),
             SimpleNamespace(name="all", snakefile="/w/Snakefile", benchmark=None),
             SimpleNamespace(name="kp_model", snakefile="workflow/rules/kp.smk", benchmark="b")]
    assert rule_stages(rules) == {"train_model": "training", "kp_model": "kp"}


def test_job_environment_sets_the_allocator_unless_the_user_did():
    env = {"MALLOC_TRIM_THRESHOLD_": "5", "PATH": "/bin", "KGEVAL_NUMERICS": "native"}
    assert set_job_environment(env) == {"MALLOC_MMAP_THRESHOLD_": "1000000000000"}
    assert env == {"MALLOC_TRIM_THRESHOLD_": "5", "PATH": "/bin", "KGEVAL_NUMERICS": "native",
                   "MALLOC_MMAP_THRESHOLD_": "1000000000000"}
    assert set_job_environment(env) == {}
    assert set(ALLOCATOR) == {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}


def test_job_environment_pins_the_numerical_mode_over_the_users_values():
    # the reproducible mode's variables win over a value the user set (a job's bits must not depend on the shell
    # it was started from); KGEVAL_NUMERICS=native (above) leaves them all alone
    env = {"MKL_CBWR": "AUTO", "ATEN_CPU_CAPABILITY": "avx2"}
    added = set_job_environment(env)
    assert env["MKL_CBWR"] == "AVX2,STRICT" and env["ONEDNN_MAX_CPU_ISA"] == "AVX512_CORE"
    assert env["ATEN_CPU_CAPABILITY"] == "avx2" and "ATEN_CPU_CAPABILITY" not in added
    assert added["MKL_CBWR"] == "AVX2,STRICT" and added["OPENBLAS_CORETYPE"] == "Haswell"


def test_job_environment_follows_the_portable_mode():
    # KGEVAL_NUMERICS=portable starts every job on MKL's compatible branch, the others pinned as in the default
    env = {"KGEVAL_NUMERICS": "portable", "MKL_CBWR": "AVX2,STRICT"}
    added = set_job_environment(env)
    assert env["MKL_CBWR"] == "COMPATIBLE,STRICT" and added["MKL_CBWR"] == "COMPATIBLE,STRICT"
    assert env["ATEN_CPU_CAPABILITY"] == "avx2" and env["OPENBLAS_CORETYPE"] == "Haswell"
    assert env["ONEDNN_MAX_CPU_ISA"] == "AVX2"  # oneDNN's AVX-512 convolutions differ between the kinds
