"""Sampled judgments for an outside system against named study systems (``kgeval evaluate --decide-against``,
:func:`kgeval.api.plan` and :func:`kgeval.api.estimate`).

The outside system is one more list beside the opponents' (first, so that every pair reads Δ = the outside system
minus the study system, the sign of the pair bounds of :mod:`kgeval.bounds.placement`): the universe is the
unknowns (question, entity) of the S + 1 top-k lists under the published judgments, an unknown shared by two lists
taking one value in both. The prior is fitted on the pool's labels of these lists (:meth:`Universe.pooled_prior`).
Per opponent the plan states the budget its own optimal design needs for the expected 95 % half-width to fall
below |E_p[Δ]| (NaN: not within ``max_budget``); the sheet is one joint plan over the named opponents, drawn with
the largest budget the opponents reach (:func:`.plan.make_plan`), so one round of judging serves them all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..data.questions import Questions
from ..errors import InputError
from ..judgments.items import METRIC_NAMES
from ..judgments.universe import Universe, build
from ..scores.ranking import Judged
from .estimates import judged_estimates
from .plan import Plan, make_plan
from .problem import Problem
from .weights import pairs


@dataclass
class OutsidePlan:
    """The universe (systems: the outside system, then the study's), the prior p per candidate, the metric's
    short name (``P``, ``RR``, …), the pair columns (outside system, opponent) in opponent order and the plan."""

    universe: Universe
    p: np.ndarray
    metric: str
    cols: np.ndarray
    plan: Plan

    @property
    def opponents(self) -> list[str]:
        _, b = pairs(len(self.universe.systems))
        return [self.universe.systems[j] for j in b[self.cols]]


def outside_universe(name: str, own: np.ndarray, study: np.ndarray, opponents: list[str], judged: Judged,
                     questions: Questions, kg: KnowledgeGraph, k: int, max_depth: int) -> Universe:
    """``own`` (Q, k) top k of the outside system, ``study`` (S, Q, k) of the opponents on the same questions in
    the same order, the published judgments ``judged`` of those questions."""
    if name in opponents:
        raise InputError(None, None, f"system name {name!r} is also a study system; label yours with --name")
    entity = np.concatenate([np.asarray(own, np.int64)[None, :, :k], np.asarray(study, np.int64)[:, :, :k]], 0)
    return build([name, *opponents], entity, judged, questions, kg, k, max_depth)


def outside_plan(u: Universe, metric: str = "P", budget: float | None = None, design: str = "optimal",
                 floor_share: float = 0.1, level: float = 0.95, max_budget: int = 10_000, prior: str = "logistic",
                 seed: int = 0, rbp_p: float = 0.8, mc_draws: int = 64,
                 against: list[str] | None = None, judging: str = "rank_order") -> OutsidePlan:
    """The plan for the outside system (``u.systems[0]``) against the study systems ``against`` (default every
    other system of ``u``). The universe keeps every study list whoever is compared: the prior's features (how
    many lists rank an item in their top k, its best rank) and its pool labels come from all of them, while only
    the unknowns of the compared lists can move a compared Δ and get π > 0."""
    if metric not in METRIC_NAMES:
        raise InputError(None, None, f"sampling metric {metric!r}: expected one of {', '.join(METRIC_NAMES)}")
    p = u.pooled_prior(prior)
    pb = Problem(u.cand, np.zeros(u.truth.size), METRIC_NAMES[metric], rbp_p, mc_draws, seed, judging)
    a, _ = pairs(len(u.systems))
    _, b = pairs(len(u.systems))
    against = u.systems[1:] if against is None else against
    unknown = [s for s in against if s not in u.systems[1:]]
    if unknown:
        raise InputError(None, None, f"{unknown[0]!r} is not a study system ({', '.join(u.systems[1:])})")
    # (0, j): the outside system against each named opponent, in the order named
    cols = np.array([int(np.flatnonzero((a == 0) & (b == u.systems.index(s)))[0]) for s in against], np.int64)
    plan = make_plan(pb, p, u.systems, cols, budget, design, floor_share, level, max_budget, seed, metric)
    return OutsidePlan(u, p, metric, cols, plan)


def outside_estimates(op: OutsidePlan, items: np.ndarray, pi: np.ndarray, x: np.ndarray,
                      sheet_item: np.ndarray | None = None, rbp_p: float = 0.8, level: float = 0.95) -> pd.DataFrame:
    """Per opponent Δ̂ = the outside system minus the opponent with its interval, from the drawn candidate
    ``items`` with their π and labels ``x`` (:func:`.estimates.judged_estimates`)."""
    est = judged_estimates(op.universe.cand, op.p, METRIC_NAMES[op.metric], op.cols, op.universe.systems, items,
                           pi, x, sheet_item, rbp_p, level)
    est.insert(0, "Metric", op.metric)
    return est
