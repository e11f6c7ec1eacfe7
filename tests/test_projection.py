"""run_times' projection: list scheduling of the job graph (kgeval.tables.projection) on hand-computed graphs,
its invariants on random graphs, and the projection rows of the run_times table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_tables import bench

from kgeval.tables.projection import critical_path, list_schedule, project_wall_times
from kgeval.tables.steps import max_concurrent, projection_check, run_times_table

# a(2), b(1), d(4) ready at once; c(3) after a; e(1) after b and c
DUR = [2.0, 1.0, 3.0, 4.0, 1.0]
DEPS = [[], [], [0], [], [1, 2]]


def test_five_jobs_on_two_cores_by_hand():
    # equal priorities, taken by index: a 0-2, b 0-1, d 1-5, c 2-5, e 5-6
    makespan, start = list_schedule(DUR, DEPS, 2)
    assert makespan == 6.0
    assert start.tolist() == [0.0, 0.0, 2.0, 1.0, 5.0]
    # d first (priority 10): d 0-4, a 0-2, then b 2-3 (before c: same priority, lower index), c 3-6, e 6-7
    makespan, start = list_schedule(DUR, DEPS, 2, priority=[0, 0, 0, 10, 0])
    assert makespan == 7.0
    assert start.tolist() == [0.0, 2.0, 3.0, 0.0, 6.0]
    # the tie-break (Snakemake: input bytes) orders equal priorities: c before b once a ends (c 2-5), b when
    # d ends (4-5), e 5-6
    makespan, start = list_schedule(DUR, DEPS, 2, priority=[0, 0, 0, 10, 0], tiebreak=[0, 0, 5, 0, 0])
    assert start.tolist() == [0.0, 4.0, 2.0, 0.0, 5.0] and makespan == 6.0
    assert critical_path(DUR, DEPS) == 6.0  # a + c + e


def test_a_job_of_two_threads_waits_for_two_free_cores_and_others_pass_it():
    # x(2 threads, 3 s) after y(1 s); z(5 s) independent; 2 cores: y 0-1 and z 0-5 run, x cannot start at 1
    # (one core free), starts at 5
    makespan, start = list_schedule([3.0, 1.0, 5.0], [[1], [], []], 2, threads=[2, 1, 1])
    assert start.tolist() == [5.0, 0.0, 0.0] and makespan == 8.0
    # on one core x's two threads share it, 3 s -> 6 s: y 0-1, then x (index 0) 1-7, z 7-12
    makespan, start = list_schedule([3.0, 1.0, 5.0], [[1], [], []], 1, threads=[2, 1, 1])
    assert start.tolist() == [1.0, 0.0, 7.0] and makespan == 12.0
    # four threads measured, two cores: 3 s -> 6 s, and it holds both cores (z waits)
    makespan, start = list_schedule([3.0, 5.0], [[], []], 2, threads=[4, 1])
    assert start.tolist() == [0.0, 6.0] and makespan == 11.0


def random_dag(rng, n):
    deps = [sorted(rng.choice(j, size=min(j, rng.integers(0, 4)), replace=False).tolist()) if j else []
            for j in range(n)]
    return rng.exponential(10.0, n).round(2).tolist(), deps


@pytest.mark.parametrize("seed", range(20))
def test_invariants_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    dur, deps = random_dag(rng, int(rng.integers(1, 60)))
    prio = rng.integers(0, 3, len(dur)).tolist()
    cp = critical_path(dur, deps)
    # brute-force longest path: over every chain j0 <- j1 <- ... (deps only point to lower indices)
    longest = [0.0] * len(dur)
    for j in range(len(dur)):
        longest[j] = dur[j] + max((longest[d] for d in deps[j]), default=0.0)
    assert cp == pytest.approx(max(longest))
    one, start = list_schedule(dur, deps, 1, prio)
    assert one == pytest.approx(sum(dur))
    previous = one
    for cores in (2, 3, 4, 8, 64):
        m, start = list_schedule(dur, deps, cores, prio)
        # every job after its dependencies, never more than `cores` jobs at once
        for j, ds in enumerate(deps):
            assert all(start[j] >= start[d] + dur[d] - 1e-9 for d in ds)
        for t in start:
            assert np.sum((start <= t) & (t < start + np.asarray(dur))) <= cores
        assert cp - 1e-9 <= m <= sum(dur) / cores + cp + 1e-9  # Graham's bound for list schedules
        assert m >= sum(dur) / cores - 1e-9
        previous = m
    assert list_schedule(dur, deps, len(dur) + 1)[0] == pytest.approx(cp)  # a core per job: the critical path
    assert previous >= cp


def test_a_cycle_is_refused():
    with pytest.raises(ValueError, match="cycle"):
        list_schedule([1.0, 1.0], [[1], [0]], 2)
    with pytest.raises(ValueError, match="cycle"):
        critical_path([1.0, 1.0], [[1], [0]])


def test_the_schedule_is_deterministic():
    rng = np.random.default_rng(7)
    dur, deps = random_dag(rng, 200)
    runs = [list_schedule(dur, deps, 3)[1] for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in itertools.pairwise(runs))


def test_run_times_table_adds_projection_rows_checked_against_the_wall(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "logs/benchmarks"
    names = [f"logs/benchmarks/r/{x}.tsv" for x in "abcde"]
    for name, s, end in zip(names, DUR, [2.0, 1.0, 5.0, 5.0, 6.0]):
        bench(tmp_path / name, s, end=1000.0 + end)   # the by-hand schedule above, run from t=1000
    graph = [{"benchmark": names[j], "after": [names[d] for d in DEPS[j]], "priority": 0, "threads": 1,
              "input": []} for j in range(5)]
    df = run_times_table(root, {"r": "stage"}, graph)
    rows = {(r.stage, r.rule): (r.jobs, r.seconds, r.vs_wall) for r in df.itertuples()}
    assert rows[("total", "wall")][1] == pytest.approx(6.0)
    assert rows[("projection", "1 core")][:2] == (5, 11.0)
    # the benchmark files show at most 2 jobs at once: the run's own count, checked against its wall time
    assert rows[("projection", "2 cores (this run)")][1:] == (6.0, 1.0)
    assert rows[("projection", "32 cores")][1] == 6.0
    assert rows[("projection", "critical path")][1] == 6.0
    assert "run's 2 cores" in projection_check(df) and "error +0 s (+0.0%)" in projection_check(df)
    assert rows[("total", "core-seconds")][1] == pytest.approx(11.0)  # every job one thread: the jobs' sum
    graph[3]["threads"] = 2
    rows = {(r.stage, r.rule): r.seconds for r in run_times_table(root, {"r": "stage"}, graph).itertuples()}
    assert rows[("total", "core-seconds")] == pytest.approx(15.0)  # d's 4 s on two cores counts 8
    assert rows[("total", "jobs")] == pytest.approx(11.0)
    graph[3]["threads"] = 1
    # three jobs at once (b moved into 1-2 beside a and d, which do not wait for it here): a row of its own
    bench(tmp_path / names[1], 1.0, end=1002.0)
    bench(tmp_path / names[3], 4.0, end=1004.5)
    df = run_times_table(root, {"r": "stage"}, graph)
    assert ("projection", "3 cores (this run)") in {(r.stage, r.rule) for r in df.itertuples()}


def test_max_concurrent_counts_an_end_before_a_start_at_one_instant():
    assert max_concurrent([0.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == 2
    assert max_concurrent([0.0, 0.5, 0.7], [1.0, 2.0, 3.0]) == 3
    assert max_concurrent([], []) == 0


def test_a_job_without_benchmark_counts_zero_seconds(caplog):
    walls, cp, missing = project_wall_times(
        [{"benchmark": "x.tsv", "after": []}, {"benchmark": "y.tsv", "after": ["x.tsv"]}], {"x.tsv": 3.0}, (1, 2))
    assert walls == {1: 3.0, 2: 3.0} and cp == 3.0 and missing == 1
    assert "1 job(s)" in caplog.text


def test_run_times_leaves_out_an_earlier_runs_jobs(tmp_path, monkeypatch):
    """A folder that ran another configuration first (the tiny run, then the smoke run) holds that run's
    benchmark files too: with the job graph, run_times counts only this run's jobs and spans only their time."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "logs/benchmarks"
    names = [f"logs/benchmarks/r/{x}.tsv" for x in "abcde"]
    for name, s, end in zip(names, DUR, [2.0, 1.0, 5.0, 5.0, 6.0]):
        bench(tmp_path / name, s, end=1000.0 + end)
    bench(tmp_path / "logs/benchmarks/r/earlier.tsv", 50.0, end=500.0)  # not in this run's graph
    graph = [{"benchmark": names[j], "after": [names[d] for d in DEPS[j]], "priority": 0, "threads": 1,
              "input": []} for j in range(5)]
    rows = {(r.stage, r.rule): (r.jobs, r.seconds) for r in run_times_table(root, {"r": "stage"}, graph).itertuples()}
    assert rows[("total", "jobs")] == (5, pytest.approx(11.0))
    assert rows[("total", "wall")] == (5, pytest.approx(6.0))
    assert rows[("stage", "r")] == (5, pytest.approx(11.0))
    without = {(r.stage, r.rule): r.seconds for r in run_times_table(root, {"r": "stage"}).itertuples()}
    assert without[("total", "jobs")] == pytest.approx(61.0)  # no graph: every file, as before
