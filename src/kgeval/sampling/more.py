"""How many more judgments would decide an undecided pair at the estimate in hand (issue 62): the plan's budget
statistic (:func:`.plan.budget_needed`, the smallest budget whose expected 95 % half-width falls below a target)
with the labels in hand, the target being the estimate |Δ̂| instead of the prior's |E_p[Δ]|: the judged items
enter with their labels (their variance is 0 and they are not drawn again), the others with the prior.

:func:`more_needed` is the one computation: ``kgeval sample-estimate`` (:func:`more_judgments`, on the study's
lists), ``kgeval campaign status`` and the live page (:class:`kgeval.campaign.live.Live`, on the per-unit
statistics :func:`pair_units` gave when the campaign was created) all call it. Its answer: a number of further
judgments; NaN where no budget within ``max_budget`` would do at this estimate (or Δ̂ is 0, or the pair is
decided); ``inf`` where no budget can, every unit that bears on the pair being judged already (a census: the
exact bounds have closed on Δ, and Δ̂ sits at 0)."""

from __future__ import annotations

import numpy as np

from ..judgments.candidates import Candidates
from . import design as dz
from .plan import budget_needed
from .problem import Problem

LEVEL, FLOOR_SHARE, MAX_BUDGET = 0.95, 0.1, 10_000


def more_needed(v: np.ndarray, judged: np.ndarray, delta: float | None, decided: bool, level: float = LEVEL,
                floor_share: float = FLOOR_SHARE, max_budget: int = MAX_BUDGET,
                cost: np.ndarray | None = None) -> float:
    """One pair: the further judgments its own optimal design needs for the expected half-width at ``level`` to
    fall below |``delta``|, over its eligible units (``v``: their variances under the prior; ``judged``: the
    ones whose label is in hand, not drawn again; ``cost``: judgments per unit, default 1)."""
    if decided or delta is None or not np.isfinite(delta):
        return float("nan")
    v, left = np.asarray(v, float), ~np.asarray(judged, bool)
    if not left.any():
        return float("inf")  # a census: nothing left to judge bears on the pair
    if delta == 0:
        return float("nan")
    if cost is None:  # items: the live page's case, fast
        return unit_budget(v if left.all() else v[left], abs(delta), level, floor_share, max_budget)
    c = np.asarray(cost, float)
    return budget_needed(v[left][:, None], np.ones(int(left.sum()), bool), c[left], abs(delta), level, floor_share,
                         max_budget)


def unit_budget(v: np.ndarray, target: float, level: float = LEVEL, floor_share: float = FLOOR_SHARE,
                max_budget: int = MAX_BUDGET) -> float:
    """:func:`.plan.budget_needed` for one pair whose units each cost one judgment (``v`` their variances, all
    eligible), the same bisection on the same design (:func:`.design.design`'s floor and
    :func:`~.design.waterfill`), its units sorted once instead of at each step and only the uncapped ones summed:
    3 to 6 ms for a pair of 30,000 units instead of 280 ms (the shared 2-core machine), so that the live page
    answers within a second (tests/test_campaign.py checks that the two agree)."""
    v = np.asarray(v, float)
    n_units = v.size
    top = int(min(max_budget, n_units))
    a = np.sqrt(v)
    order = np.argsort(-a, kind="stable")  # waterfill's order (pair_units gives them so: no move)
    a_s, v_s = a[order], v[order]
    n_pos = int((a_s > 0).sum())
    a_p, v_p = a_s[:n_pos], v_s[:n_pos]  # the units with v = 0 add nothing whatever their π
    capped = np.arange(n_pos, dtype=float)  # the cost of the m largest
    rest = np.cumsum(a_p[::-1])[::-1]  # Σ_{i ≥ m} a_i
    v_rest = np.cumsum(v_p[::-1])[::-1] if n_pos else np.zeros(1)  # Σ_{i ≥ m} v_i

    def first_uncapped(budget: float) -> int:
        """waterfill's m: the first m whose uncapped units all stay ≤ 1 (looked for among the largest first)."""
        for stop in (64, n_pos):
            ok = (budget - capped[:stop]) / rest[:stop] * a_p[:stop] <= 1.0
            if ok.any():
                return int(np.argmax(ok))
        return 0

    def width(n: int) -> float:
        # design(): the floor's share (larger near a census), the optimal part waterfilled on the rest up to its
        # peak (dz.split); a unit at π = 1 adds nothing, one at π = f + (1 − f) λ a adds (1/π − 1) v
        budget, floor = dz.split(n, n_units, floor_share)
        if budget >= n_pos or floor >= 1.0:
            return 0.0
        if budget <= 0:  # as design(): π = 0 adds 0
            return dz.quantile(level, floor * n_pos) * np.sqrt((v_p * (1 / floor - 1)).sum()) if floor > 0 else 0.0
        m = first_uncapped(budget)
        lam = (budget - m) / rest[m]
        pi = a_p[m:] * ((1 - floor) * lam) + floor  # = 1 − (1 − λ a)(1 − f)
        # Student's quantile on the expected units bearing on the pair (design.expected_half_width): m at π = 1
        return dz.quantile(level, m + pi.sum()) * np.sqrt(max((v_p[m:] / pi).sum() - v_rest[m], 0.0))

    if top < 1 or width(top) >= target:
        return float("nan")
    lo, hi = 0, top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if width(mid) < target else (mid, hi)
    return float(hi)


def pair_units(pb: Problem, p: np.ndarray, cols: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """A linear metric's budget statistics per pair ``cols``: its eligible units (candidate indices: the unknowns
    whose label moves the pair) and their variances under the prior ``p``, largest first (the order
    :func:`unit_budget` sorts them in, so that it finds them sorted); what a campaign stores."""
    v = pb.variances(p)[0]
    out = []
    for j in cols:
        sub = np.flatnonzero(pb.eligible([j]))
        sub = sub[np.argsort(-np.sqrt(v[sub, j]), kind="stable")]
        out.append((pb.U[sub], v[sub, j]))
    return out


def more_judgments(cand: Candidates, p: np.ndarray, metric: str, cols: np.ndarray, items: np.ndarray,
                   x: np.ndarray, delta: np.ndarray, decided: np.ndarray, rbp_p: float = 0.8, level: float = LEVEL,
                   floor_share: float = FLOOR_SHARE, max_budget: int = MAX_BUDGET) -> np.ndarray:
    """Per pair ``cols``: :func:`more_needed` given the labels ``x`` (−1: unjudged) of the drawn candidates
    ``items``."""
    x = np.asarray(x)
    known = np.asarray(items)[x >= 0]
    pb = Problem(cand, np.zeros(cand.state.size), metric, rbp_p)
    if pb.linear:
        return np.array([more_needed(v, np.isin(units, known), d, done, level, floor_share, max_budget)
                         for (units, v), d, done in zip(pair_units(pb, p, cols), delta, decided)])
    q = np.asarray(p, dtype=float).copy()
    q[known] = x[x >= 0]  # a judged label is no longer uncertain: its question's variance falls
    v, _ = pb.variances(q)
    out = []
    for j, d, done in zip(cols, delta, decided):
        sub = np.flatnonzero(pb.eligible([j]))
        out.append(more_needed(v[sub, j], np.zeros(sub.size, bool), d, done, level, floor_share, max_budget,
                               pb.cost_of([j], q)[sub]))
    return np.array(out, float)


def more_words(n: float, max_budget: int = MAX_BUDGET) -> str:
    """What :func:`more_needed`'s answer says to a person (an undecided pair's verdict in ``kgeval
    sample-estimate``, ``kgeval campaign status`` and the live page)."""
    if n == np.inf:
        return "no budget can decide it: every unit that bears on it is judged (a census) and Δ is 0"
    if not np.isfinite(n):
        return f"no budget within {max_budget:,} decides it at this estimate"
    return f"about {int(n):,} more judgment{'s' if n != 1 else ''}"
