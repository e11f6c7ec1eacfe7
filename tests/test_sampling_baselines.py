"""MTC and depth order on the sampling simulation's universe (``kgeval.sampling.baselines``): counts by hand on a
tiny pair, and the target table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.bounds.candidates import Candidates
from kgeval.bounds.decide import Items
from kgeval.sampling.baselines import pair_candidates, pair_counts, targets
from kgeval.sampling.universe import Universe


def _tiny() -> Universe:
    """k = 2, two questions, every label hidden. q0: A ranks e0, e1; B ranks e1, e2. q1: A ranks e3, e5; B ranks
    e4, e5. P@2, Δ = A − B = (x0 − x2 + x3 − x4) / 4 (e1 and e5 are in both lists: they cancel); truth x0 = x3 = 1,
    x2 = x4 = 0, so Δ = 1/2. A seventh item e6 is in no top 2 (rank 3 of A): never part of the pair."""
    ranks = np.array([[1, 2, 0, 1, 0, 2, 3],
                      [0, 1, 2, 0, 1, 2, 0]])
    item_q = np.array([0, 0, 0, 1, 1, 1, 1])
    cand = Candidates(item_q, ranks, np.full(7, -1), 2, 2, ("A", "B"))
    truth = np.array([1, 1, 0, 1, 0, 0, 1], np.int8)
    hidden = np.ones(7, bool)
    depth = np.array([1, 1, 2, 3, 3, 1, 1])  # the pool's order: e0, e1, e5 (and e6), then e2, then e3 and e4
    return Universe(["A", "B"], Items(cand, item_q, np.arange(7)), truth, hidden, hidden.copy(), None, None, depth)


def test_pair_counts_by_hand():
    """Hard stop: the bounds exclude 0 once three of e0, e2, e3, e4 are judged, whichever three (two leave a
    labelling with Δ = 0), and MTC picks only those four: 3. Depth order judges e0, e1, e5 (depth 1), e2 (2),
    then one of e3, e4: decided at the 5th. The soft stop never needs more than the hard one."""
    u = _tiny()
    cand, keep = pair_candidates(u, 0, 1)
    assert keep.tolist() == [0, 1, 2, 3, 4, 5] and cand.n_items == 6
    for seed in range(4):  # the tie-breaking key changes the order, not the counts
        hard, soft, depth, hidden = pair_counts(u, np.full(7, 0.5), "P@k", 0, 1, batch=1, seed=seed)
        assert (hard, depth, hidden) == (3.0, 5.0, 6), seed
        assert soft <= hard


def test_targets_compare_the_sample_with_a_tenth_of_mtc():
    base = pd.DataFrame({"Metric": "P@k", "A": ["a", "a", "b"], "B": ["b", "c", "c"], "true_delta": [0.03, 0.05, 0.02],
                         "hidden": 100, "mtc_hard": [1000.0, 4000.0, np.nan], "mtc_soft": 0.0,
                         "depth_order": [2000.0, 5000.0, np.nan]})
    budgets = pd.DataFrame({"Metric": "P@k", "A": ["a", "a", "b"], "B": ["b", "c", "c"],
                            "budget_80": [100.0, 500.0, 200.0]})
    out = targets(base, budgets)
    np.testing.assert_allclose(out["share_of_mtc_hard"], [0.1, 0.125, np.nan])
    assert out["target_met"].tolist() == [True, False, False]
