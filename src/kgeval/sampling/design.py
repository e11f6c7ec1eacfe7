"""Sampling designs: inclusion probabilities π > 0 over the sampling units (items for the linear metrics,
questions for RR@k and Success@k), Poisson sampling (each unit drawn independently with its π).

A unit u costs c_u judgments (1 for an item; a question's distinct unknowns in the compared lists) and adds
v_u = Var_p(unit's term) to each pair's variance (an item: d_e² p_e (1 − p_e); a question: Var_p(D_q) / Q²).
Under Poisson sampling the difference estimator's variance is Σ_u (1/π_u − 1) v_u (:mod:`.estimate`), whose
minimum over π with Σ_u c_u π_u = n and π ≤ 1 (a Lagrangian, as in Schnabel, Swaminathan, Frazier and Joachims,
ICTIR 2016) is π_u = min(1, λ √(v_u / c_u)), λ set by the budget (:func:`waterfill`). Many pairs at once: the sum
of their variances, so v_u is summed over the pairs. The optimal design needs a prior and gives π = 0 where the
prior is sure; the floor keeps every eligible unit's π > 0 (unbiased whatever the prior): a share of the budget
(``floor_share``, default 10 %) is drawn uniformly over the eligible units, which doubles as the audit of the
prior (those draws are a uniform sample of where the prior is used). π = 1 − (1 − π_opt)(1 − π_uniform): the two
components are drawn independently, so each draw's component is known.

Near a census the floor grows: its share is max(``floor_share``, (n / N)²), N the eligible units' cost. There
the optimal design leaves π < 1 only on the units the prior is surest of; one it is wrong about then holds most
of the remaining variance, and in the draws that miss it the variance estimate (which sees only drawn units)
collapses and the interval misses Δ. A larger uniform share keeps every unit's π near n / N, so such a unit is
missed rarely and the drawn units are many. Below a third of a census (n / N)² < 0.1 and nothing changes.
The optimal part's budget (1 − share) n peaks at n* = N / √3 (58 % of a census; √``floor_share`` N for a floor
share above a third) and would shrink beyond it: there it keeps its peak (:func:`split`), while the floor grows
on to a census at n = N. So every unit's two components only grow with the budget, and a plan drawn again with the same
seed and a larger budget holds every unit of the smaller one (``kgeval evaluate --decide-against``'s second look;
``benchmarks/sampling_second_look.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student

from ..errors import InputError

DESIGNS = ("optimal", "uniform")
#: the allocation's σ uses p in [P_CLIP, 1 − P_CLIP]: a prior that is sure of a label still gets its share. 0.003
#: and not 0.01: the richer prior is sure of more labels, and 0.01 gave its near-certain items too much of the
#: optimal part (P@10's 80 % decided 260 → 249 judgments, docs/guide/sampling.md); a plan records its clip
P_CLIP = 0.003
LEGACY_P_CLIP = 0.01  # the clip of a plan whose sidecar does not record one (written before plans did)


def waterfill(a: np.ndarray, budget: float, cost: np.ndarray | None = None) -> np.ndarray:
    """π_u = min(1, λ a_u) with Σ c_u π_u = budget (π = 1 wherever a > 0 if the budget covers them all)."""
    a = np.asarray(a, dtype=float)
    c = np.ones_like(a) if cost is None else np.asarray(cost, dtype=float)
    pi = np.zeros_like(a)
    pos = np.flatnonzero(a > 0)
    if budget <= 0 or pos.size == 0:
        return pi
    if budget >= c[pos].sum():
        pi[pos] = 1.0
        return pi
    order = pos[np.argsort(-a[pos], kind="stable")]
    a_s, c_s = a[order], c[order]
    capped_cost = np.concatenate([[0.0], np.cumsum(c_s)[:-1]])  # cost of the m largest, m = 0..M-1
    rest = np.cumsum((c_s * a_s)[::-1])[::-1]  # Σ_{i ≥ m} c_i a_i
    lam = (budget - capped_cost) / rest
    m = int(np.argmax(lam * a_s <= 1.0))  # the first m whose uncapped units all stay ≤ 1
    pi[order[:m]] = 1.0
    pi[order[m:]] = lam[m] * a_s[m:]
    return pi


@dataclass
class Design:
    """π per unit and its two components (``optimal`` and ``uniform``, the floor and audit), the cost per unit."""

    pi: np.ndarray
    pi_opt: np.ndarray
    pi_uniform: np.ndarray
    cost: np.ndarray

    @property
    def expected_judgments(self) -> float:
        return float((self.pi * self.cost).sum())


def design(v: np.ndarray, eligible: np.ndarray, budget: float, kind: str = "optimal", cost: np.ndarray | None = None,
           floor_share: float = 0.1) -> Design:
    """The design over the units for the pairs whose per-unit variances are the columns of ``v`` (U, P); only
    ``eligible`` units (those whose label can move a compared difference) get π > 0."""
    if kind not in DESIGNS:
        raise InputError(None, None, f"sampling design {kind!r}: expected one of {DESIGNS}")
    if not 0 <= floor_share <= 1:
        raise InputError(None, None, f"sampling.floor_share {floor_share}: expected a share in [0, 1]")
    eligible = np.asarray(eligible, bool)
    c = np.ones(eligible.size) if cost is None else np.asarray(cost, dtype=float)
    total = float(c[eligible].sum())
    uni = np.where(eligible, min(1.0, budget / total) if total else 0.0, 0.0)
    if kind == "uniform":
        return Design(uni, np.zeros_like(uni), uni, c)
    opt_budget, floor_pi = split(budget, total, floor_share)
    floor = np.where(eligible, floor_pi, 0.0)
    a = np.where(eligible, np.sqrt(np.asarray(v, dtype=float).reshape(eligible.size, -1).sum(1) / np.maximum(c, 1)), 0)
    opt = waterfill(a, opt_budget, c)
    return Design(1 - (1 - opt) * (1 - floor), opt, floor, c)


def split(budget: float, total: float, floor_share: float = 0.1) -> tuple[float, float]:
    """The budget of the optimal part and the uniform floor's π at ``budget`` over eligible units costing
    ``total``: the floor's share max(``floor_share``, (n / N)²) of the budget, and the rest for the optimal part up
    to the budget where that rest peaks, its peak past it (module docstring): both grow with the budget, and a
    budget of N is a census as before."""
    if total <= 0:
        return (1 - floor_share) * budget, 0.0

    def share(m: float) -> float:
        return max(floor_share, min(1.0, m / total) ** 2)

    m = min(budget, total * max(1 / np.sqrt(3), np.sqrt(floor_share)))  # (1 − share(m)) m rises up to there
    return float((1 - share(m)) * m), float(min(1.0, share(budget) * budget / total))


def item_variances(d: np.ndarray, p: np.ndarray, clip: float | None = None) -> np.ndarray:
    """v_e = d_e² p_e (1 − p_e) per item and pair (p clipped to [``clip``, 1 − ``clip``], default
    :data:`P_CLIP`, for the allocation only)."""
    clip = P_CLIP if clip is None else clip
    pc = np.clip(p, clip, 1 - clip)
    return d ** 2 * (pc * (1 - pc))[:, None]


def expected_variance(pi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Σ_u (1/π_u − 1) v_u per pair: the estimator's variance when the prior is right (0 where π = 1)."""
    w = np.divide(1.0, pi, out=np.zeros_like(pi, dtype=float), where=pi > 0) - 1.0
    w[pi <= 0] = 0.0
    return w @ v


def quantile(level: float, units) -> np.ndarray:
    """The interval's multiplier: Student's t quantile at ``level`` on ``units`` − 1 degrees of freedom (at least
    1), the sampled units bearing on the pair: the estimate's (:class:`.estimate.Estimate`, its sampled units) and
    a forecast's (:func:`expected_half_width`, the units it expects). Here, not in the estimate's module, so that a
    plan, which forecasts, does not walk the estimator's."""
    return student.ppf(0.5 + level / 2, np.maximum(np.asarray(units, dtype=float) - 1, 1))


def expected_half_width(pi: np.ndarray, v: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Per pair (the columns of ``v``) the half-width the interval is expected to have under ``pi`` when the prior
    is right: :func:`quantile` on the expected number of sampled units bearing on the pair (Σ π_u over
    the units with v_u > 0) times √:func:`expected_variance`. The estimate's interval is Student's, so a forecast
    with the normal quantile ran low where few units decide a pair: by (t/z)², about 8 % at 30 units."""
    units = np.asarray(pi, dtype=float) @ (np.asarray(v) > 0)
    return quantile(level, units) * np.sqrt(expected_variance(pi, v))


def poisson(pi: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, U) inclusion indicators, each unit drawn independently with probability π_u."""
    return rng.random((reps, pi.size)) < pi
