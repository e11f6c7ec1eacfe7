"""The wall time a run would take on N cores: list scheduling of the workflow's job graph with measured job times.

Where the graph comes from. The job graph is Snakemake's own: ``get_job_graph``
(workflow/rules/helpers/tables.smk), a params function of the ``run_times`` rule, passes ``workflow.dag`` of the
invocation that runs ``run_times`` to :func:`kgeval.workflow_dag.job_graph`.
Snakemake evaluates a job's params lazily, after its DAG is built and cleaned (in ``DAG.update_needrun`` or when it
checks a script job, both after every target's jobs exist), so every job that ``run_times`` depends on is there,
finished ones included: Snakemake creates the producing job of every input, present or not, to decide what must
run. Each job is named by its benchmark file, which links it to its measured time. The alternatives were weaker:
``snakemake --dag`` cannot run inside a running workflow (a second Snakemake on the locked folder, with the user's
command line to repeat); re-deriving edges from the rules' input/output patterns re-implements Snakemake's
matching (input functions, wildcard constraints, ruleorder); Snakemake's ``.snakemake/metadata`` holds only the
jobs that ran in this folder, in an undocumented format. A job's priority is its rule's ``priority:`` expanded
for its wildcards (what Snakemake's scheduler reads; ``--prioritize`` is left out, it belongs to one command
line), its threads Snakemake's (capped at the invocation's ``--cores``; every rule of the default workflow has
one).

How it is scheduled. Snakemake's greedy scheduler (the ``ilp`` default falls back to it without ``pulp``) starts,
whenever a job ends, the ready jobs of highest reward while cores are free: reward = (priority, size of temp
inputs, size of inputs). :func:`list_schedule` does the same with an event loop over job ends: ready jobs in the
order (priority descending, input bytes descending, name), each started if its threads fit the free cores.
Ignored: Snakemake's own gaps between jobs (a second or two per job for its file checks and process start-up,
which is why the projection falls short of a measured wall time), memory resources (not limited on one
machine unless ``--resources`` says so).
"""

from __future__ import annotations

import heapq
import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

PROJECTED_CORES = (1, 2, 4, 8, 16, 32)


def _check_graph(durations: Sequence[float], deps: Sequence[Sequence[int]]) -> int:
    n = len(durations)
    if len(deps) != n:
        raise ValueError(f"{len(deps)} dependency lists for {n} jobs")
    for j, ds in enumerate(deps):
        for d in ds:
            if not 0 <= d < n or d == j:
                raise ValueError(f"job {j}: dependency {d} is not another job")
    return n


def list_schedule(durations: Sequence[float], deps: Sequence[Sequence[int]], cores: int,
                  priority: Sequence[float] | None = None, threads: Sequence[int] | None = None,
                  tiebreak: Sequence[float] | None = None) -> tuple[float, np.ndarray]:
    """Makespan and start times of a non-preemptive list schedule on ``cores`` cores.

    ``deps[j]``: the jobs that must end before ``j`` starts. Whenever jobs end (and at time 0), the ready jobs are
    taken in the order (``priority`` descending, ``tiebreak`` descending, index) and each one whose threads
    (capped at ``cores``) fit the free cores starts; a job of more threads than ``cores`` takes
    ``durations[j] * threads[j] / cores`` (its threads share the cores). Deterministic; a cycle raises
    ``ValueError``.
    """
    n = _check_graph(durations, deps)
    if cores < 1:
        raise ValueError(f"cores must be >= 1, not {cores}")
    dur = np.asarray(durations, dtype=float)
    asked = np.ones(n, dtype=int) if threads is None else np.asarray(threads, dtype=int)
    dur = dur * np.maximum(asked / cores, 1.0)
    prio = np.zeros(n) if priority is None else np.asarray(priority, dtype=float)
    tie = np.zeros(n) if tiebreak is None else np.asarray(tiebreak, dtype=float)
    need = np.maximum(np.minimum(asked, cores), 1)
    # rank 0 = started first among ready jobs
    order = np.lexsort((np.arange(n), -tie, -prio))
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)
    waiting = np.array([len(set(d)) for d in deps])
    children: list[list[int]] = [[] for _ in range(n)]
    for j, ds in enumerate(deps):
        for d in set(ds):
            children[d].append(j)
    ready = [int(rank[j]) for j in range(n) if waiting[j] == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []  # (end, job)
    start = np.full(n, np.nan)
    free, now, done = cores, 0.0, 0
    while done < n:
        skipped = []
        while ready and free > 0:
            j = int(order[heapq.heappop(ready)])
            if need[j] <= free:
                start[j] = now
                free -= need[j]
                heapq.heappush(running, (now + dur[j], j))
            else:
                skipped.append(int(rank[j]))
        for r in skipped:
            heapq.heappush(ready, r)
        if not running:
            raise ValueError("the job graph has a cycle: jobs wait on each other")
        now = running[0][0]
        while running and running[0][0] == now:
            _, j = heapq.heappop(running)
            free += need[j]
            done += 1
            for c in children[j]:
                waiting[c] -= 1
                if waiting[c] == 0:
                    heapq.heappush(ready, int(rank[c]))
    return float(np.max(start + dur)) if n else 0.0, start


def critical_path(durations: Sequence[float], deps: Sequence[Sequence[int]]) -> float:
    """Longest chain of job times through the graph: the wall time on unlimited cores."""
    n = _check_graph(durations, deps)
    finish = np.full(n, np.nan)
    # iterative depth-first search: the graph is a few hundred jobs, recursion would do, but cycles must be caught
    state = np.zeros(n, dtype=int)  # 0 new, 1 on the stack, 2 done
    for root in range(n):
        if state[root]:
            continue
        stack = [(root, iter(deps[root]))]
        state[root] = 1
        while stack:
            j, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                finish[j] = durations[j] + max((finish[d] for d in deps[j]), default=0.0)
                state[j] = 2
            elif state[nxt] == 1:
                raise ValueError("the job graph has a cycle: jobs wait on each other")
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(deps[nxt])))
    return float(np.max(finish)) if n else 0.0


def input_bytes(files: Sequence[str]) -> int:
    """Summed size of the files that exist (folders: their files); Snakemake's tie-break among equal priorities."""
    total = 0
    for f in files:
        if os.path.isdir(f):
            for folder, _, names in os.walk(f):
                total += sum(os.path.getsize(os.path.join(folder, n)) for n in names)
        elif os.path.exists(f):
            total += os.path.getsize(f)
    return total


def project_wall_times(graph: Sequence[dict[str, Any]], seconds: dict[str, float],
                       cores: Sequence[int] = PROJECTED_CORES) -> tuple[dict[int, float], float, int]:
    """Projected wall seconds per core count, the critical path, and how many jobs lacked a measured time.

    ``graph``: one dict per job (``benchmark``: its benchmark file, ``after``: the benchmark files of the jobs it
    waits for, ``priority``, ``threads``, ``input``: its input files); ``seconds``: benchmark file → measured
    seconds. A job without a measured time counts 0 s (its outputs existed before the benchmarks were kept).
    """
    names = [str(g["benchmark"]) for g in graph]
    index = {b: i for i, b in enumerate(names)}
    deps = [[index[a] for a in g.get("after", []) if a in index] for g in graph]
    missing = [b for b in names if b not in seconds]
    if missing:
        log.warning("%d job(s) of the graph have no benchmark file and count 0 s, e.g. %s", len(missing), missing[0])
    dur = [float(seconds.get(b, 0.0)) for b in names]
    prio = [float(g.get("priority", 0)) for g in graph]
    threads = [int(g.get("threads", 1)) for g in graph]
    tie = [float(input_bytes(g.get("input", []))) for g in graph]
    walls = {c: list_schedule(dur, deps, c, prio, threads, tie)[0] for c in cores}
    return walls, critical_path(dur, deps), len(missing)
