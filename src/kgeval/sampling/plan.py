"""The sampling plan: which unknown (question, entity) items to judge for the named comparisons, each with its
inclusion probability π, drawn once with a seed (Poisson sampling: every unit independently).

The budget n is the user's, or the smallest n at which the expected 95 % half-width under the prior falls below
|E_p[Δ]| (:func:`budget_needed`, each pair with its own optimal design); for several pairs the plan takes the
largest such n among the pairs that reach it within ``max_budget``. A sampled question (RR@k, Success@k) brings
every unknown of the compared lists that can move them, in rank order (a question's items together, each at its
best rank over the compared lists): judged from the top, a list needs nothing below its first relevant item, so
the budget counts the judgments the prior expects (:meth:`.problem.Problem.cost_of`). Each drawn item says whether
the uniform component (the floor, the audit of the prior) drew it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import design as dz
from .problem import Problem


def expected_delta(pb: Problem, p: np.ndarray, mu) -> np.ndarray:
    if pb.linear:
        return pb.known + p[pb.U] @ pb.d
    return mu.sum(0) / pb.Q


def budget_needed(v: np.ndarray, eligible: np.ndarray, cost: np.ndarray, target: float, level: float = 0.95,
                  floor_share: float = 0.1, max_budget: int = 10_000) -> float:
    """Smallest integer n ≤ ``max_budget`` whose optimal design's expected half-width
    (:func:`.design.expected_half_width`, Student's like the estimate's) is below ``target`` (NaN if none):
    bisection, the half-width falling with n."""
    sub = np.flatnonzero(eligible)  # the others have v = 0 and π = 0 whatever n
    v, cost, eligible = v[sub].sum(1, keepdims=True), cost[sub], np.ones(sub.size, bool)  # one pair
    top = int(min(max_budget, np.ceil(cost[eligible].sum())))

    def width(n):
        return float(dz.expected_half_width(dz.design(v, eligible, n, "optimal", cost, floor_share).pi, v, level)[0])

    if top < 1 or width(top) >= target:
        return float("nan")
    lo, hi = 0, top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if width(mid) < target else (mid, hi)
    return float(hi)


@dataclass
class Plan:
    """The drawn items (candidate indices) in judging order, with π, p and the audit flag; per pair the table
    of expected Δ, the budget it needs and the expected half-width at the plan's budget."""

    items: np.ndarray
    pi: np.ndarray
    p: np.ndarray
    audit: np.ndarray
    budget: float
    pairs: pd.DataFrame
    lists: np.ndarray | None = None
    design: dict | None = None  # what recomputes π: kind, floor share, budget, the clip and the Monte Carlo's
    wave: np.ndarray | None = None  # an extended plan (:mod:`.waves`): the wave that first drew each item


def make_plan(pb: Problem, p: np.ndarray, systems: list[str], cols: np.ndarray, budget: float | None = None,
              kind: str = "optimal", floor_share: float = 0.1, level: float = 0.95, max_budget: int = 10_000,
              seed: int = 0, metric: str = "") -> Plan:
    """The plan for the pairs ``cols`` of :func:`kgeval.sampling.weights.pairs`."""
    v, mu = pb.variances(p)
    e_delta = expected_delta(pb, p, mu)[cols]
    needed = np.array([budget_needed(v[:, [j]], pb.eligible([j]), pb.cost_of([j], p), abs(e), level, floor_share,
                                     max_budget) for j, e in zip(cols, e_delta)])
    if budget is None:
        budget = float(np.nanmax(needed)) if np.isfinite(needed).any() else float(max_budget)
    elig, cost = pb.eligible(cols), pb.cost_of(cols, p)
    dsg = dz.design(v[:, cols], elig, budget, kind, cost, floor_share)
    rng = np.random.default_rng(seed)
    u_opt, u_uni = rng.random(dsg.pi.size), rng.random(dsg.pi.size)
    audit = u_uni < dsg.pi_uniform
    drawn = (u_opt < dsg.pi_opt) | audit
    hw = dz.expected_half_width(dsg.pi, v[:, cols], level)
    items, pi, flag, order, systems_used = drawn_items(pb, cols, drawn, dsg.pi, audit, rng)
    table = pd.DataFrame({"Metric": metric, "A": np.asarray(systems)[pb.a[cols]], "B": np.asarray(systems)[pb.b[cols]],
                          "expected_delta": e_delta, "budget_needed": needed, "plan_budget": budget,
                          "expected_half_width": hw})
    lists = None if pb.linear else list_ranks(pb, systems, systems_used, items[order])
    inputs = {"design": kind, "floor_share": floor_share, "budget": budget, **pb.settings()}
    return Plan(items[order], pi[order], p[items[order]], flag[order], budget, table, lists, inputs)


def drawn_items(pb: Problem, cols: np.ndarray, drawn: np.ndarray, pi_unit: np.ndarray, audit: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candidate items of the drawn units (``drawn``, per unit), each with its unit's π and audit flag, and
    the judging order (a permutation of them): an item plan's items in a random order; a question plan's
    questions in a random order, each one's unknowns of the compared lists that can move them from the top (at
    their best rank). Also the compared systems (a question plan's lists)."""
    systems_used = pb.systems_of(cols)
    if pb.linear:
        items, pi, flag = pb.U[drawn], pi_unit[drawn], audit[drawn]
        return items, pi, flag, rng.permutation(items.size), systems_used
    # every unknown of the compared lists of each drawn question that can move them (above a known relevant)
    sub = pb.pos[systems_used]
    q_of = np.broadcast_to(np.arange(pb.Q)[None, :, None], sub.shape)
    ok = pb.open[systems_used] & drawn[q_of]
    rank = np.broadcast_to(np.arange(1, sub.shape[-1] + 1), sub.shape)[ok]
    at = np.lexsort((rank, sub[ok]))  # by item, then its best rank first
    by_item = sub[ok][at]
    keep = np.concatenate([[by_item.size > 0], by_item[1:] != by_item[:-1]])[:by_item.size]  # none: a wave of 0
    items, best = by_item[keep], rank[at][keep]
    q = pb.cand.item_q[items]
    # questions in a random order, each one's items from the top
    order = np.lexsort((items, best, rng.permutation(pb.Q)[q]))
    return items, pi_unit[q], audit[q], order, systems_used


def list_ranks(pb: Problem, systems: list[str], used: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Per drawn item of a question plan, the compared lists that rank it and where (``ComplEx:2 TransE:5``): an
    item may be left unjudged once each of those lists has an item judged relevant above that rank."""
    r = pb.cand.ranks[used][:, items]
    inside = (r >= 1) & (r <= pb.cand.k)
    names = np.asarray(systems)[used]
    return np.array([" ".join(f"{n}:{v}" for n, v, ok in zip(names, col, keep) if ok)
                     for col, keep in zip(r.T.tolist(), inside.T.tolist())], dtype=object)
