"""The scale stage's steps: ranking only the sampled answers' questions gives the same estimates as ranking every
answer and drawing the same sample; question shards ranked as separate steps gather to the unsharded ranking,
byte for byte, and to the same tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.errors import KgevalError
from kgeval.io import read_json
from kgeval.scale.steps import TABLES, evaluate_graph, gather_step, graph_step


def _run(tmp_path, graph, name, exact_max_answers, shards=1, systems=3, seed=0):
    out = {t: tmp_path / f"{name}_{t}.csv" for t in (*TABLES, "pools", "pool_bounds", "sampling_plan")}
    out["tau"] = tmp_path / f"{name}_tau.json"
    work = tmp_path / f"{name}_work"
    work.mkdir()
    evaluate_graph(graph, work, out, systems=systems, shards=shards, k=5, negatives_k=50, sample_size=300,
                   half_width=0.01, hits=[1, 10], seed=seed, batch=256, memory_budget_mb=64, bootstrap=100,
                   exact_max_answers=exact_max_answers, pool_questions=250, pool_depths=(1, 5), plan_budget=100)
    return {k: (read_json(v) if k == "tau" else pd.read_csv(v)) for k, v in out.items()}, work


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    path = tmp_path_factory.mktemp("scale") / "graph.npz"
    graph_step("wikikg2", 0.001, 0, path)
    return path


def test_sampled_path_equals_the_exact_path_on_the_same_sample(tmp_path, graph):
    full, _ = _run(tmp_path, graph, "full", 10**9)
    part, _ = _run(tmp_path, graph, "part", 0)
    cols = ["system", "metric", "estimate", "half_width", "n", "population"]
    pd.testing.assert_frame_equal(full["estimates"][cols], part["estimates"][cols])
    pd.testing.assert_frame_equal(full["paired"][["metric", "a", "b", "difference", "half_width"]],
                                  part["paired"][["metric", "a", "b", "difference", "half_width"]])
    assert full["exact"]["value"].notna().all() and part["exact"]["value"].isna().all()
    # a table of NaN says why in its rows
    assert (full["exact"]["note"] == "every test answer ranked").all()
    assert part["exact"]["note"].str.startswith("not computed: ").all()
    assert part["exact"]["note"].str.contains("exceed exact_max_answers, so only the 300 sampled").all()
    # the best/worst MRR ratio under both protocols, beside tau
    neg = part["negatives"]
    for col, key in (("mrr_full", "best_worst_ratio_full"), ("mrr_sampled", "best_worst_ratio_sampled")):
        assert part["tau"][key] == pytest.approx(neg[col].max() / neg[col].min())
    assert full["estimates"]["covered"].mean() >= 0.75
    mrr = full["exact"][full["exact"]["metric"] == "mrr"]["value"].to_numpy()
    assert (np.diff(mrr) < 0).all()  # the planted order
    assert part["tau"]["answers"] == 300 and -1 <= part["tau"]["tau"] <= 1
    # pools of 250 of the ranked questions: the bounds hold the truth and close at the deepest pool (depth 5 = k)
    for run in (full, part):
        assert (run["pools"]["questions"] == 250).all() and run["pools"]["pooled"].is_monotonic_increasing
        b = run["pool_bounds"]
        assert ((b["lower"] <= b["exact"]) & (b["exact"] <= b["upper"])).all()
        deep = b[b["depth"] == 5]
        assert (deep["lower"] == deep["exact"]).all() and (deep["upper"] == deep["exact"]).all()


def test_another_seed_redraws_the_sample_on_the_same_planted_systems(tmp_path, graph, caplog):
    """The planted systems keep the graph's seed: another evaluation seed gives the same exact metrics (the same
    systems) and other estimates (another sample), so the estimates' spread shows on fixed systems."""
    a, _ = _run(tmp_path, graph, "seed0", 10**9, systems=2, seed=0)
    with caplog.at_level("INFO"):
        b, _ = _run(tmp_path, graph, "seed1", 10**9, systems=2, seed=1)
    said = [r.getMessage() for r in caplog.records]
    # the evaluate and pools steps say what they do and how far they are; the systems' noise says which is best
    assert any("scale evaluate: systems (ranks, sampled negatives): 2/2 systems (100.0 %)" in m for m in said)
    assert any(m.startswith("pools: reading 2 systems' top lists") for m in said)
    assert any("systems 0-1: DistMult over the planted vectors plus noise 0.2, 0.4 of their scale (0 the best)"
               in m for m in said)
    pd.testing.assert_frame_equal(a["exact"], b["exact"])
    assert not np.allclose(a["estimates"]["estimate"], b["estimates"]["estimate"])
    est = b["estimates"]
    assert ((est["low"] <= est["estimate"]) & (est["estimate"] <= est["high"])).all()
    assert np.allclose(est["half_width"], (est["high"] - est["low"]) / 2)


@pytest.mark.parametrize("exact_max_answers", [10**9, 0])
def test_shards_gather_to_the_unsharded_ranking_and_tables(tmp_path, graph, exact_max_answers):
    one, w1 = _run(tmp_path, graph, "one", exact_max_answers, shards=1, systems=2)
    three, w3 = _run(tmp_path, graph, "three", exact_max_answers, shards=3, systems=2)
    for s in range(2):  # the merged rankings: the same bytes
        assert (w1 / f"system{s}.npz").read_bytes() == (w3 / f"system{s}.npz").read_bytes()
    for t in (*TABLES, "pools", "pool_bounds", "sampling_plan"):
        pd.testing.assert_frame_equal(one[t], three[t])
    assert one["tau"] == three["tau"]
    # the shards are disjoint and cover the plan: each ranked a third of the questions
    sizes = [len(np.load(w3 / f"shard{i}of3.npz")["system0/q_idx"]) for i in range(3)]
    whole = len(np.load(w1 / "system0.npz")["q_idx"])
    assert sum(sizes) == whole and max(sizes) - min(sizes) <= 1


def test_gather_refuses_an_incomplete_split(tmp_path, graph):
    _, w3 = _run(tmp_path, graph, "three", 0, shards=3, systems=2)
    with pytest.raises(KgevalError, match=r"not one full split"):
        gather_step([w3 / "shard0of3.npz", w3 / "shard2of3.npz"], [tmp_path / "x.npz"])
    assert not (tmp_path / "x.npz").exists()
