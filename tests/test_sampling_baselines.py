"""MTC and depth order on the sampling simulation's universe (``kgeval.sampling.baselines``): counts by hand on a
tiny pair, and the target table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.judgments.candidates import Candidates
from kgeval.judgments.items import Items
from kgeval.judgments.universe import Universe
from kgeval.sampling.baselines import pair_candidates, pair_counts, targets


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


def test_only_unknowns_above_a_known_relevant_item_are_judged():
    """Question 0: A ranks e0, e1, e2 and B e0, e1, e3; e1 is known relevant, so e2 and e3 cannot move either
    list's RR, and the two lists agree down to e1: D_q is 0 whatever the labels (inert), one judgment (e0) if
    sampled. Question 1: A ranks e4, e5, e6 and B e5, e4, e6, with e5 known not relevant and e6 known relevant:
    RR_A − RR_B = x4 (1 − 1/2): only e4 is open, and the question is not inert."""
    from kgeval.sampling import weights as wt

    pos = np.array([[[0, 1, 2], [4, 5, 6]],
                    [[0, 1, 3], [5, 4, 6]]])
    unknown = np.array([1, 0, 1, 1, 1, 0, 0], bool)
    relevant = np.array([0, 1, 0, 0, 0, 0, 1])
    assert wt.open_positions(pos, unknown, relevant).tolist() == [[[True, False, False], [True, False, False]],
                                                                   [[True, False, False], [False, True, False]]]
    assert wt.inert_questions(pos, unknown, relevant, np.array([0]), np.array([1])).tolist() == [[True], [False]]
    assert wt.question_costs(pos, unknown, None, relevant).tolist() == [1, 1]
    assert wt.question_costs(pos, unknown).tolist() == [3, 1]  # without the known labels: every unknown


def test_pair_budget_is_the_judgments_made_on_a_grid_twice_as_fine():
    from kgeval.sampling.figure import pair_budgets
    from kgeval.sampling.simulation import pair_grid

    assert pair_grid((100, 200, 500)).tolist() == [100, 141, 200, 316, 500]
    table = pd.DataFrame({"Metric": "RR@k", "design": "pair_optimal", "A": "a", "B": "b", "true_delta": 0.03,
                          "budget": [100, 141, 200], "decided": [0.5, 0.85, 0.9],
                          "mean_judgments": [96.0, 120.5, 190.0]})
    out = pair_budgets(pd.concat([table, table.assign(design="optimal")]))
    assert out[["budget_80", "design_budget"]].values.tolist() == [[120.5, 141.0]]
    never = pair_budgets(table.assign(decided=0.1))
    assert np.isnan(never["budget_80"].iloc[0]) and np.isnan(never["design_budget"].iloc[0])
