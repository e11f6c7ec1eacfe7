"""The scale stage's evaluation step: ranking only the sampled answers' questions gives the same estimates as
ranking every answer and drawing the same sample."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.io import read_json
from kgeval.scale.steps import evaluate_step, graph_step


def _run(tmp_path, graph, name, exact_max_answers):
    out = {f"out_{t}": tmp_path / f"{name}_{t}.csv" for t in ("exact", "estimates", "paired", "negatives")}
    out["out_tau"] = tmp_path / f"{name}_tau.json"
    evaluate_step(graph, systems=3, k=5, negatives_k=50, sample_size=300, half_width=0.01, hits=[1, 10], seed=0,
                  batch=256, memory_budget_mb=64, bootstrap=100, exact_max_answers=exact_max_answers, **out)
    return {k: (read_json(v) if k == "out_tau" else pd.read_csv(v)) for k, v in out.items()}


def test_sampled_path_equals_the_exact_path_on_the_same_sample(tmp_path):
    graph = tmp_path / "graph.npz"
    graph_step("wikikg2", 0.001, 0, graph)
    full = _run(tmp_path, graph, "full", 10**9)
    part = _run(tmp_path, graph, "part", 0)
    cols = ["system", "metric", "estimate", "half_width", "n", "population"]
    pd.testing.assert_frame_equal(full["out_estimates"][cols], part["out_estimates"][cols])
    pd.testing.assert_frame_equal(full["out_paired"][["metric", "a", "b", "difference", "half_width"]],
                                  part["out_paired"][["metric", "a", "b", "difference", "half_width"]])
    assert full["out_exact"]["value"].notna().all() and part["out_exact"]["value"].isna().all()
    assert full["out_estimates"]["covered"].mean() >= 0.75
    mrr = full["out_exact"][full["out_exact"]["metric"] == "mrr"]["value"].to_numpy()
    assert (np.diff(mrr) < 0).all()  # the planted order
    assert part["out_tau"]["answers"] == 300 and -1 <= part["out_tau"]["tau"] <= 1
