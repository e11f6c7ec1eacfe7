"""Steps of the sampling stage (workflow/rules/sampling.smk) on a pooled test set: the sampling plan over the
published judgments' unknowns, and the simulation on the hidden published labels."""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..errors import InputError
from ..io import write_csv
from ..judgments.items import METRIC_NAMES
from ..judgments.prior import TRANSFER_CAVEAT
from ..judgments.universe import Universe, from_dumps
from ..pools.annotation import load_templates
from .baselines import baselines, targets
from .estimates import judged_estimates, plan_labels, prior_audit, read_plan_items
from .figure import coverage_figure, pair_budgets
from .more import more_judgments
from .plan import make_plan
from .priors import compare_priors
from .problem import MC_DRAWS, Problem
from .sheet import check_design, locate_items, pair_columns, plan_prior, read_plan_pairs, write_plan_sheet
from .simulation import sequence_errors, simulate
from .weights import is_linear, pairs

log = logging.getLogger(__name__)


def _pair_columns(systems: list[str], against: str | list[str] | None = None, pair: list[str] | None = None,
                  source: str = "sampling") -> np.ndarray:
    """The pairs a plan asks about: every pair; ``pair`` = [A, B], that one pair (in the study's order: Δ = the
    system listed first in the study minus the other); ``against`` = a name, that system against every other;
    a list, its first name against the others named. ``source`` names the options in an error."""
    a, b = pairs(len(systems))
    if pair is not None and against is not None:
        raise InputError(None, None, f"{source}: ask one question: a pair or against, not both")
    names = [against] if isinstance(against, str) else pair if pair is not None else against
    if names is None:
        return np.arange(a.size)
    key = source if source.startswith("--") else f"{source}.pair" if pair is not None else f"{source}.against"
    unknown = [n for n in names if n not in systems]
    if unknown:
        raise InputError(None, None, f"{key} {unknown[0]!r}: not a system of the study (known: {', '.join(systems)})")
    idx = [systems.index(n) for n in dict.fromkeys(names)]
    if pair is not None and (len(pair) != 2 or len(idx) != 2):
        raise InputError(None, None, f"{key} {','.join(pair)}: name two different systems")
    if not idx:
        raise InputError(None, None, f"{key}: name at least one system")
    first, others = idx[0], (idx[1:] if len(idx) > 1 else [i for i in range(len(systems)) if i != idx[0]])
    want = np.zeros(a.size, bool)
    for o in others:
        want |= ((a == first) & (b == o)) | ((a == o) & (b == first))
    return np.flatnonzero(want)


def plan_step(dumps: dict[str, str], kg_path: str, templates: str, out_sheet: str, out_items: str, out_pairs: str,
              k: int = 10, rbp_p: float = 0.8, metric: str = "P", budget: int | None = None,
              design: str = "optimal", floor_share: float = 0.1, level: float = 0.95, max_budget: int = 10_000,
              against: str | list[str] | None = None, prior: str = "boosted", mc_draws: int = MC_DRAWS, seed: int = 0,
              max_depth: int = 10, testset: str = "", judging: str = "rank_order", pair: list[str] | None = None
              ) -> None:
    """``sampling_plan.tsv`` (the annotation sheet, its triples numbered in judging order), its sidecar with one
    row per sampled (question, entity) — its sheet ``item``, ``order``, π, p and audit flag — and per pair the
    expected Δ and the budget it needs."""
    kg = KnowledgeGraph.load(kg_path)
    plan_universe(from_dumps(dumps, kg, k, max_depth), kg, templates, out_sheet, out_items, out_pairs, rbp_p,
                  metric, budget, design, floor_share, level, max_budget, against, prior, mc_draws, seed, testset,
                  judging, pair)


def plan_universe(u: Universe, kg: KnowledgeGraph, templates: str, out_sheet: str, out_items: str, out_pairs: str,
                  rbp_p: float = 0.8, metric: str = "P", budget: int | None = None, design: str = "optimal",
                  floor_share: float = 0.1, level: float = 0.95, max_budget: int = 10_000,
                  against: str | list[str] | None = None, prior: str = "boosted", mc_draws: int = MC_DRAWS, seed: int = 0,
                  testset: str = "", judging: str = "rank_order", pair: list[str] | None = None,
                  source: str = "sampling") -> None:
    """:func:`plan_step` on a universe already built (from score dumps, or from a reference pack's lists:
    :func:`kgeval.sampling.reference.reference_universe`)."""
    p, fit = u.prior(prior)
    pb = Problem(u.cand, np.zeros(u.truth.size), METRIC_NAMES[metric], rbp_p, mc_draws, seed, judging)
    cols = _pair_columns(u.systems, against, pair, source)
    plan = make_plan(pb, p, u.systems, cols, budget, design, floor_share, level, max_budget, seed, metric)
    write_plan_sheet(u, kg, plan, load_templates(templates), f"sample-{testset or 'pool'}", out_sheet, out_items,
                     prior=prior, fit=fit)
    write_csv(plan.pairs.assign(testset=testset, caveat=TRANSFER_CAVEAT), out_pairs)
    log.info("%s: %d items to judge (budget %.0f, %s design, %d pairs, %s)", out_sheet, plan.items.size,
             plan.budget, design, cols.size, metric)


def estimate_step(dumps: dict[str, str], kg_path: str, plan_items: str, plan_pairs: str, labels: str,
                  out_estimates: str, out_audit: str, k: int = 10, rbp_p: float = 0.8, prior: str | None = None,
                  level: float = 0.95, max_depth: int = 10, testset: str = "",
                  universe: Callable[[], tuple[Universe, KnowledgeGraph]] | None = None) -> pd.DataFrame:
    """``estimates.csv`` (per pair of the plan: Δ̂, its variance and interval, decided, judgments used) and
    ``prior_audit.csv`` from a plan (its sidecar and per-pair table) whose sheet went through
    ``annotate-merge`` (``labels``), on the lists and prior the plan was made from: the score dumps, or
    ``universe()`` (a reference pack's lists: :func:`kgeval.sampling.reference.source_universe`). The labels are
    checked against the plan before the lists are read, so that a part-judged file is refused at once. The
    prior is the one the sidecar records; a ``prior`` (the config's) that differs is refused in one line."""
    from ..pools.annotation.qrels import _read_qrels_rows

    plan = read_plan_items(plan_items)
    table = read_plan_pairs(plan_pairs)
    short = table["Metric"].iloc[0]
    x = plan_labels(plan, plan_items, _read_qrels_rows(labels), labels, not is_linear(METRIC_NAMES[short]))
    if universe is not None:
        u, kg = universe()
    else:
        kg = KnowledgeGraph.load(kg_path)
        u = from_dumps(dumps, kg, k, max_depth)
    cols = pair_columns(u.systems, table, plan_pairs)
    p = u.pooled_prior(plan_prior(plan, plan_items, u, prior))
    items = locate_items(plan, plan_items, u, kg, p)
    check_design(plan, plan_items, u, p, METRIC_NAMES[short], cols, items, rbp_p)  # π, recomputed
    try:
        est = judged_estimates(u.cand, p, METRIC_NAMES[short], cols, u.systems, items,
                               plan["pi"].to_numpy(), x, plan["item"].to_numpy(int), rbp_p, level)
    except ValueError as exc:
        raise InputError(plan_items, None, str(exc)) from None
    est.insert(0, "Metric", short)
    # an undecided pair: the judgments that would decide it at the estimate in hand (NaN: none within 10,000)
    est["more_judgments"] = more_judgments(u.cand, p, METRIC_NAMES[short], cols, items, x, est["delta"].to_numpy(),
                                           est["decided"].to_numpy(), rbp_p, level)
    audit = prior_audit(plan, x)
    write_csv(est.assign(testset=testset), out_estimates)
    write_csv(audit.assign(testset=testset, caveat=TRANSFER_CAVEAT), out_audit)
    log.info("%s: %d of %d pairs decided from %d judgments (%s)", out_estimates, int(est["decided"].sum()),
             len(est), int(plan["item"].nunique()), short)
    return est


def simulation_step(dumps: dict[str, str], kg_path: str, out_table: str, out_sequence: str, out_figure: str,
                    out_figure_pdf: str, k: int = 10, rbp_p: float = 0.8, metrics: tuple[str, ...] = ("P", "RR"),
                    budgets: tuple[int, ...] = (100, 200, 500, 1000, 2000, 5000), reps: int = 500,
                    floor_share: float = 0.1, shift: float = 0.2, min_delta: float = 0.02, level: float = 0.95,
                    looks: int = 2000, sequence_reps: int = 200, prior: str = "boosted", folds: int = 5,
                    mc_draws: int = MC_DRAWS, seed: int = 0, max_depth: int = 10, testset: str = "",
                    out_vs_mtc: str | None = None, judging: str = "rank_order") -> None:
    """``sampling_simulation.csv``, the confidence sequence's table, ``sampling_coverage.png`` and, with
    ``out_vs_mtc``, per pair whose true |Δ| is at least ``min_delta`` the sample's budget beside MTC's hard- and
    soft-stop counts and depth order's on the same universe (:mod:`.baselines`)."""
    kg = KnowledgeGraph.load(kg_path)
    u = from_dumps(dumps, kg, k, max_depth)
    if not u.hidden.any():
        raise InputError(None, None, f"sampling simulation on {testset}: the pool labels no item of the top {k}")
    p = u.out_of_fold_prior(prior, folds, seed)
    priors = {"fitted": p, "uniform": np.full(p.size, 0.5), "shifted": np.clip(p + shift, 0, 1)}
    table = simulate(u, priors, tuple(METRIC_NAMES[m] for m in metrics), budgets, reps, floor_share=floor_share,
                     min_delta=min_delta, level=level, rbp_p=rbp_p, mc_draws=mc_draws, seed=seed, judging=judging)
    linear = [METRIC_NAMES[m] for m in metrics if m in ("P", "DCG", "RBP")]
    seq = sequence_errors(u, p, linear[0], looks, sequence_reps, floor_share, 1 - level, rbp_p, seed) if linear \
        else pd.DataFrame()
    versus = None
    if out_vs_mtc is not None:
        base = []
        for m in metrics:
            pb = Problem(u.hidden_state(), u.truth, METRIC_NAMES[m], rbp_p)
            base.append(baselines(u, p, METRIC_NAMES[m], pb.true, min_delta, rbp_p=rbp_p, draws=mc_draws,
                                  seed=seed))
        versus = targets(pd.concat(base, ignore_index=True), pair_budgets(table))
    write_csv(table.assign(testset=testset), out_table)
    write_csv(seq.assign(testset=testset), out_sequence)
    if versus is not None:
        write_csv(versus.assign(testset=testset), out_vs_mtc)
    coverage_figure(table, out_figure, out_figure_pdf, f"{testset or 'pooled test set'}: sampled judgments on the "
                    f"{int(u.hidden.sum()):,} hidden published labels ({reps} repetitions)", versus)
    overall = table[(table["A"] == "all") & (table["budget"] >= 200)]
    log.info("coverage at budgets ≥ 200: %.3f to %.3f; %d pairs' budgets for 80 %% decided", overall["coverage"].min(),
             overall["coverage"].max(), int(pair_budgets(table)["budget_80"].notna().sum()))
    if versus is not None and len(versus):
        log.info("%s: %d of %d pairs with |Δ| ≥ %g decided in 80 %% at ≤ 10 %% of MTC's hard-stop count", out_vs_mtc,
                 int(versus["target_met"].sum()), len(versus), min_delta)


def priors_step(dumps: dict[str, str], kg_path: str, out_calibration: str, out_reliability: str, out_budgets: str, *,
                k: int, rbp_p: float, metrics: tuple[str, ...], folds: int, mc_draws: int, judging: str,
                design: str, floor_share: float, level: float, max_budget: int, seed: int, max_depth: int,
                testset: str = "") -> None:
    """The logistic and the boosted prior side by side (:mod:`.priors`): ``prior_calibration.csv`` (CV AUC and
    ECE on the held-out folds, ECE on the uniform audit's items), ``prior_reliability.csv`` (their curves) and
    ``prior_budgets.csv`` (per metric the median expected budget per pair on the real plan and on the hidden
    labels). Every setting is the config's (no default here: the schema holds them)."""
    kg = KnowledgeGraph.load(kg_path)
    u = from_dumps(dumps, kg, k, max_depth)
    cal, curves, need = compare_priors(u, tuple(metrics), folds, seed, rbp_p=rbp_p, mc_draws=mc_draws,
                                       judging=judging, design=design, floor_share=floor_share, level=level,
                                       max_budget=max_budget)
    write_csv(cal.assign(testset=testset), out_calibration)
    write_csv(curves.assign(testset=testset), out_reliability)
    write_csv(need.assign(testset=testset), out_budgets)
    for row in need.itertuples(index=False):
        log.info("%s %s on %s: median budget per pair %.0f (%d of %d pairs reached)", row.prior, row.metric,
                 row.universe, row.median_budget, row.reached, row.pairs)
