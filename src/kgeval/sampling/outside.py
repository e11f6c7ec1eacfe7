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
from ..errors import BadValueError, InputError
from ..judgments.items import METRIC_NAMES
from ..judgments.universe import Universe, build
from ..scores.ranking import Judged
from .estimates import judged_estimates
from .more import more_judgments
from .plan import Plan, make_plan
from .problem import MC_DRAWS, Problem
from .sheet import plan_sidecar, write_plan_sheet


@dataclass
class SamplingOptions:
    """The config's ``sampling`` keys and the command's sampling options."""

    enabled: bool = True
    against: tuple[str, ...] | None = None  # None: every study system
    metric: str = "P"
    budget: float | None = None
    design: str = "optimal"
    floor_share: float = 0.1
    level: float = 0.95
    max_budget: int = 10_000
    prior: str = "boosted"
    seed: int = 0
    mc_draws: int = MC_DRAWS
    judging: str = "rank_order"
    max_depth: int = 10
    judgments: str | None = None  # the merged labels of the plan's sheet (the same seed and inputs redraw the plan)


def check_against(against, study: list[str], source: str = "--decide-against") -> list[str]:
    """The named opponents, each a study system (all of them when ``against`` is None)."""
    if against is None:
        return list(study)
    unknown = [s for s in against if s not in study]
    if unknown:
        raise BadValueError(source, f"{unknown[0]!r}: not a study system ({', '.join(study)})")
    if not against:
        raise BadValueError(source, "name at least one study system")
    return list(dict.fromkeys(against))


@dataclass
class OutsidePlan:
    """The universe (systems: the outside system, then the study's), the prior p per candidate, the metric's
    short name (``P``, ``RR``, …), the pair columns (outside system, opponent) in opponent order, the plan and
    what identifies the prior's fit (:meth:`Universe.prior_fit`)."""

    universe: Universe
    p: np.ndarray
    metric: str
    cols: np.ndarray
    plan: Plan
    fit: str = ""

    @property
    def opponents(self) -> list[str]:
        _, b = self.universe.cand.pairs
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
                 floor_share: float = 0.1, level: float = 0.95, max_budget: int = 10_000, prior: str = "boosted",
                 seed: int = 0, rbp_p: float = 0.8, mc_draws: int = MC_DRAWS,
                 against: list[str] | None = None, judging: str = "rank_order") -> OutsidePlan:
    """The plan for the outside system (``u.systems[0]``) against the study systems ``against`` (default every
    other system of ``u``). The universe keeps every study list whoever is compared: the prior's features (how
    many lists rank an item in their top k, its best rank) and its pool labels come from all of them, while only
    the unknowns of the compared lists can move a compared Δ and get π > 0."""
    if metric not in METRIC_NAMES:
        raise InputError(None, None, f"sampling metric {metric!r}: expected one of {', '.join(METRIC_NAMES)}")
    p, fit = u.prior(prior)
    pb = Problem(u.cand, np.zeros(u.truth.size), METRIC_NAMES[metric], rbp_p, mc_draws, seed, judging)
    a, b = u.cand.pairs
    against = u.systems[1:] if against is None else against
    unknown = [s for s in against if s not in u.systems[1:]]
    if unknown:
        raise InputError(None, None, f"{unknown[0]!r} is not a study system ({', '.join(u.systems[1:])})")
    # (0, j): the outside system against each named opponent, in the order named
    cols = np.array([int(np.flatnonzero((a == 0) & (b == u.systems.index(s)))[0]) for s in against], np.int64)
    plan = make_plan(pb, p, u.systems, cols, budget, design, floor_share, level, max_budget, seed, metric)
    return OutsidePlan(u, p, metric, cols, plan, fit)


def outside_estimates(op: OutsidePlan, items: np.ndarray, pi: np.ndarray, x: np.ndarray,
                      sheet_item: np.ndarray | None = None, rbp_p: float = 0.8, level: float = 0.95) -> pd.DataFrame:
    """Per opponent Δ̂ = the outside system minus the opponent with its interval, from the drawn candidate
    ``items`` with their π and labels ``x`` (:func:`.estimates.judged_estimates`), and for an undecided one the
    further judgments that would decide it at the estimate in hand (``more_judgments``, as ``kgeval
    sample-estimate`` says it: :func:`.more.more_judgments`; NaN when decided or beyond ``max_budget``)."""
    metric = METRIC_NAMES[op.metric]
    est = judged_estimates(op.universe.cand, op.p, metric, op.cols, op.universe.systems, items, pi, x, sheet_item,
                           rbp_p, level)
    est.insert(0, "Metric", op.metric)
    est["more_judgments"] = more_judgments(op.universe.cand, op.p, metric, op.cols, items, x,
                                           est["delta"].to_numpy(), est["decided"].to_numpy(), rbp_p, level)
    return est


def plan_outside(name: str, dump, study: np.ndarray, opponents: list[str], kg: KnowledgeGraph, k: int,
                 opts: SamplingOptions, rbp_p: float = 0.8, source: str = "--decide-against",
                 files: tuple | None = None, templates: dict | None = None, skip_judged: bool = False
                 ) -> tuple[list[str], OutsidePlan | None, pd.DataFrame | None]:
    """The whole plan of ``kgeval evaluate --decide-against`` and :func:`kgeval.plan` in one downward call: the
    opponents ``opts.against`` checked (``source`` names the option), the universe of ``dump``'s top k beside the
    study's ``study`` (S, Q, k, in the dump's question order), the prior, the plan and its sidecar, written with
    the sheet to ``files`` = (sheet, sidecar) when given. Returns the opponents, the plan and the sidecar's frame
    (None and None with ``skip_judged`` when every item of the lists is judged: nothing to sample)."""
    wanted = check_against(opts.against, opponents, source)
    u = outside_universe(name, dump.run_entity[:, :k], study, opponents, dump.judged, dump.questions, kg, k,
                         opts.max_depth)
    if skip_judged and not (u.cand.state == -1).any():
        return wanted, None, None
    op = outside_plan(u, opts.metric, opts.budget, opts.design, opts.floor_share, opts.level, opts.max_budget,
                      opts.prior, opts.seed, rbp_p, opts.mc_draws, wanted, opts.judging)
    if files is None:
        return wanted, op, plan_sidecar(u, kg, op.plan, opts.prior, op.fit)
    return wanted, op, write_plan_sheet(u, kg, op.plan, templates or {}, f"sample-{name}", *files, prior=opts.prior,
                                        fit=op.fit)
