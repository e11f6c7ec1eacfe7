"""``kgeval scale graph`` / ``kgeval scale evaluate`` on a small synth graph: the same tables as the steps give,
one-line errors for bad arguments and inputs, and no output left behind by a failed command."""

from __future__ import annotations

import pandas as pd
import pytest
from test_cli_safety import one_line_error

from kgeval.cli import main
from kgeval.io import read_json
from kgeval.scale.steps import TABLES, evaluate_graph, graph_step

ARGS = ["--systems", "2", "--k", "5", "--negatives", "50", "--sample-size", "300", "--hits", "1,10", "--batch", "256",
        "--memory-budget-mb", "64", "--bootstrap", "100", "--pool-questions", "200", "--pool-depths", "1,5",
        "--plan-budget", "50"]


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scale-cli")
    assert main(["scale", "graph", "--shape", "wikikg2", "--factor", "0.001", "--out", str(folder / "g")]) == 0
    return folder / "g" / "graph.npz"


def test_graph_is_the_steps_graph(graph, tmp_path):
    graph_step("wikikg2", 0.001, 0, tmp_path / "graph.npz")
    assert graph.read_bytes() == (tmp_path / "graph.npz").read_bytes()


def test_evaluate_writes_the_steps_tables(graph, tmp_path, capsys):
    assert main(["scale", "evaluate", str(graph), "--out", str(tmp_path / "ev"), "--shards", "2", *ARGS]) == 0
    out = capsys.readouterr().out.split()
    names = [f"{t}.csv" for t in (*TABLES, "pools", "pool_bounds", "sampling_plan")] + ["negatives_tau.json"]
    assert out == [str(tmp_path / "ev" / n) for n in names]
    (tmp_path / "work").mkdir()
    ref = {t: tmp_path / f"{t}.ref" for t in (*TABLES, "tau", "pools", "pool_bounds", "sampling_plan")}
    evaluate_graph(graph, tmp_path / "work", ref, systems=2, shards=1, k=5, negatives_k=50, sample_size=300,
                   half_width=0.005, hits=[1, 10], seed=0, batch=256, memory_budget_mb=64, bootstrap=100,
                   exact_max_answers=50000, pool_questions=200, pool_depths=(1, 5), plan_budget=50)
    for t in (*TABLES, "pools", "pool_bounds", "sampling_plan"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "ev" / f"{t}.csv"), pd.read_csv(ref[t]))
    assert read_json(tmp_path / "ev" / "negatives_tau.json") == read_json(ref["tau"])
    mrr = pd.read_csv(tmp_path / "ev" / "exact.csv").query("metric == 'mrr'")["value"].tolist()
    assert mrr[0] > mrr[1]  # the planted order
    assert sorted(p.name for p in (tmp_path / "ev").iterdir() if not p.name.startswith(".")) == sorted(names)


@pytest.mark.parametrize("args, words", [
    (["graph", "--shape", "wikikg2", "--factor", "2"], "--factor: 2 is out of range"),
    (["graph", "--shape", "freebase"], "--shape: invalid choice"),
    (["evaluate", "{graph}", "--shards", "0"], "--shards: 0 is out of range"),
    (["evaluate", "{graph}", "--hits", "0,1"], "--hits: '0,1'"),
    (["evaluate", "{graph}", "--sample-size", "1"], "--sample-size: 1 is out of range"),
    (["evaluate", "{missing}"], "no such file"),
    (["evaluate", "{not_graph}"], "not a readable array file"),
    (["evaluate", "{graph}", "--k", "-1"], "--k: -1 is out of range"),
    (["evaluate", "{graph}", "--k", "5", "--pool-depths", "1,10"], "--pool-depths 10 is deeper than the top lists"),
])
def test_bad_arguments_are_one_line(graph, tmp_path, capsys, args, words):
    (tmp_path / "not.npz").write_text("x")
    paths = {"graph": str(graph), "missing": str(tmp_path / "nope.npz"), "not_graph": str(tmp_path / "not.npz")}
    out = tmp_path / "out"
    line = one_line_error(capsys, main(["scale", *[a.format(**paths) for a in args], "--out", str(out)]))
    assert words in line
    assert not out.exists() or not [p for p in out.iterdir() if not p.name.startswith(".")]
