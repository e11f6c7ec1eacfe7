"""MTC and depth order on the sampling simulation's universe (issue 42 §3): per pair, on the hidden published
labels, the judgments the Minimal Test Collections selection (:func:`kgeval.bounds.greedy.greedy`) needs to
decide the pair alone with the hard stop (the exact bounds exclude 0) and with the soft stop (besides, P(A > B)
under the prior ≥ 0.95), and the judgments the paper's pool order (depth 1, then 2, …) needs before the exact
bounds decide it. Each runs on the pair's two top-k lists only (an item neither list ranks cannot move the
pair), with the true labels revealed batch by batch, so the counts are exact to the batch.

The target of the issue compares them per pair with the sample: the smallest budget whose pair design decides
the pair in ≥ 80 % of the repetitions must be at most 10 % of MTC's hard-stop count (:func:`targets`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..bounds.greedy import greedy, make_engine
from ..bounds.simulation import DepthOrder, HiddenLabels, simulate
from ..judgments.candidates import Candidates
from ..judgments.universe import Universe
from ..progress import Progress
from .weights import pairs

COLUMNS = ["Metric", "A", "B", "true_delta", "hidden", "mtc_hard", "mtc_soft", "depth_order"]


def pair_candidates(u: Universe, i: int, j: int) -> tuple[Candidates, np.ndarray]:
    """The hidden universe restricted to the items of systems i's and j's top k, and their indices."""
    cand = u.hidden_state()
    r = cand.ranks[[i, j]]
    keep = np.flatnonzero(((r >= 1) & (r <= cand.k)).any(0))
    names = None if cand.systems is None else (cand.systems[i], cand.systems[j])
    return Candidates(cand.item_q[keep], r[:, keep], cand.state[keep], cand.n_questions, cand.k, names), keep


def _count(trace) -> float:
    return float(trace.judgments) if trace.all_decided else np.nan


def pair_counts(u: Universe, p: np.ndarray, metric: str, i: int, j: int, batch: int = 10, rbp_p: float = 0.8,
                draws: int = 64, seed: int = 0) -> tuple[float, float, float, int]:
    """MTC's hard- and soft-stop counts and depth order's for the pair (i, j); NaN where the pair stays
    undecided after every hidden label of its lists; the hidden items of its lists."""
    cand, keep = pair_candidates(u, i, j)
    truth = u.truth[keep].astype(np.int8)
    hidden = cand.state == -1
    out = []
    for stop in ("hard", "soft"):
        engine = make_engine(cand, p[keep], metric, rbp_p, None, draws, seed)
        out.append(_count(greedy(engine, lambda items: truth[items], batch, stop, seed=seed)))
    depth = u.depth[keep] if u.depth is not None else np.zeros(keep.size)
    _, needed = simulate(cand, HiddenLabels(np.where(hidden, truth, 0), hidden), DepthOrder(depth, seed), metric,
                         batch, rbp_p=rbp_p)
    return out[0], out[1], (np.nan if needed is None else float(needed)), int(hidden.sum())


def baselines(u: Universe, p: np.ndarray, metric: str, true_delta: np.ndarray, min_delta: float = 0.02,
              batch: int = 10, rbp_p: float = 0.8, draws: int = 64, seed: int = 0) -> pd.DataFrame:
    """The table of :data:`COLUMNS` for every pair (in :func:`.weights.pairs` order) whose true |Δ| is at least
    ``min_delta``; ``metric`` is the bounds stage's name (``P@k``, ``RR@k`` …)."""
    a, b = pairs(len(u.systems))
    rows = []
    wanted = np.flatnonzero(np.abs(true_delta) >= min_delta)
    with Progress(len(wanted), f"MTC and depth order, {metric}", unit="pairs") as progress:  # seconds per pair
        for c in wanted:
            hard, soft, depth, hidden = pair_counts(u, p, metric, int(a[c]), int(b[c]), batch, rbp_p, draws, seed)
            rows.append((metric, u.systems[a[c]], u.systems[b[c]], float(true_delta[c]), hidden, hard, soft, depth))
            progress.update(1)
    return pd.DataFrame(rows, columns=COLUMNS)


def targets(base: pd.DataFrame, budgets: pd.DataFrame, share: float = 0.1) -> pd.DataFrame:
    """Per pair of ``base``: the sample's budget deciding it in ≥ 80 % (``budgets``, :func:`.figure.pair_budgets`)
    beside MTC's and depth order's counts, its share of MTC's hard-stop count, and whether it is at most
    ``share`` of it (the issue's target; False where the sample never reached 80 %)."""
    keep = ["Metric", "A", "B", "budget_80"] + [c for c in ("design_budget",) if c in budgets]
    out = base.merge(budgets[keep], on=["Metric", "A", "B"], how="left")
    out["share_of_mtc_hard"] = out["budget_80"] / out["mtc_hard"]
    out["target_met"] = (out["share_of_mtc_hard"] <= share).fillna(False).astype(bool)
    return out
