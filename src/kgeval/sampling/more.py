"""How many more judgments would decide an undecided pair at the estimate in hand (issue 62): the plan's budget
statistic (:func:`.plan.budget_needed`, the smallest budget whose expected 95 % half-width falls below a target)
with the labels in hand, the target being the estimate |Δ̂| instead of the prior's |E_p[Δ]|: the judged items
enter with their labels (their variance is 0 and they are not drawn again), the others with the prior. NaN where
no budget within ``max_budget`` would do, or the pair is decided."""

from __future__ import annotations

import numpy as np

from ..judgments.candidates import Candidates
from .plan import budget_needed
from .problem import Problem


def more_judgments(cand: Candidates, p: np.ndarray, metric: str, cols: np.ndarray, items: np.ndarray,
                   x: np.ndarray, delta: np.ndarray, decided: np.ndarray, rbp_p: float = 0.8, level: float = 0.95,
                   floor_share: float = 0.1, max_budget: int = 10_000) -> np.ndarray:
    """Per pair ``cols``: the further judgments its own optimal design needs for the expected half-width to fall
    below |Δ̂| (``delta``), given the labels ``x`` (−1: unjudged) of the drawn candidates ``items``."""
    x = np.asarray(x)
    known = np.asarray(items)[x >= 0]
    q = np.asarray(p, dtype=float).copy()
    q[known] = x[x >= 0]  # a judged label is no longer uncertain
    pb = Problem(cand, np.zeros(cand.state.size), metric, rbp_p)
    v, _ = pb.variances(q)
    out = np.full(len(cols), np.nan)
    for i, (j, d, done) in enumerate(zip(cols, delta, decided)):
        if done or not np.isfinite(d) or d == 0:
            continue
        elig = pb.eligible([j])
        if pb.linear:
            elig &= ~np.isin(pb.U, known)
        out[i] = budget_needed(v[:, [j]], elig, pb.cost_of([j], q), abs(d), level, floor_share, max_budget)
    return out
