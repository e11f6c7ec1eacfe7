"""What the workflow reads from Snakemake's own objects at run time: the job graph of an invocation and the stage
of each rule, for the run_times table (workflow/rules/tables.smk; why the graph comes from the DAG:
kgeval.tables.projection). Duck-typed on Snakemake's ``DAG``, ``Job`` and ``Rule``, so tests pass stand-ins."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def job_graph(dag: Any) -> list[dict[str, Any]]:
    """One entry per job of ``dag`` with a benchmark file (its name), sorted by that name: the benchmarked jobs
    it waits for (through jobs without one), its rule's priority for its wildcards, its threads and its input
    files. None (no DAG yet): an empty list."""
    if dag is None:
        return []
    deps = dag.dependencies
    timed: dict[Any, set[str]] = {}

    def timed_deps(job: Any) -> set[str]:
        if job not in timed:
            out: set[str] = set()
            for dep in deps[job]:
                out |= {str(dep.benchmark)} if dep.benchmark else timed_deps(dep)
            timed[job] = out
        return timed[job]

    graph = [
        {
            "benchmark": str(job.benchmark),
            "rule": job.rule.name,
            "after": sorted(timed_deps(job)),
            "priority": job.rule.expand_priority(job.wildcards_dict, job.input, job.attempt),
            "threads": job.threads,
            "input": sorted(str(f) for f in job.input),
        }
        for job in dag.jobs
        if job.benchmark
    ]
    return sorted(graph, key=lambda g: g["benchmark"])


def rule_stages(rules: Any) -> dict[str, str]:
    """Rule name -> the stem of the .smk file it is defined in (its stage), for every rule with a benchmark."""
    return {r.name: Path(r.snakefile).stem for r in rules if r.benchmark}
