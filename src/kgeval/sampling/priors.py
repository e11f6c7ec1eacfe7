"""The relevance priors side by side (issue 50), on one pooled test set: for the logistic and the boosted prior

* calibration: the question-grouped cross-validated AUC, ECE and corr(p, y) of the held-out folds' predictions
  on the pool's labels, and ECE on the uniform audit's items (every unknown of the simulation's hidden universe
  that a plan of all pairs may draw, the prior out of fold by question: the items the uniform floor audits);
* the reliability curve of each (prior, item set);
* per metric the expected budgets on both universes: ``real_plan`` (the never-judged items of the lists, the
  prior fitted on the pool's labels: what a campaign would judge) and ``hidden_labels`` (the simulation's hidden
  published labels, the prior out of fold): the median over the pairs of the budget a pair's own optimal design
  needs (a pair not reached within ``max_budget`` counts above every reached one), and the plan's budget.

The universes differ (the hidden labels are a few thousand items, the real plan's unknowns over a hundred
thousand), so a comparison reads rows of one universe and metric: the two priors on the same items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..judgments.items import METRIC_NAMES
from ..judgments.prior import TRANSFER_CAVEAT, cross_validate, reliability
from ..judgments.prior_models import expected_calibration_error
from ..judgments.universe import Universe
from .plan import make_plan
from .problem import MC_DRAWS, Problem
from .weights import pairs

COMPARED = ("logistic", "boosted")  # today's prior and the one that knows the graph (issue 50)
RELIABILITY_COLUMNS = ["bin_lo", "bin_hi", "mean_predicted", "observed_rate", "count"]


def calibration_row(kind: str, items: str, p: np.ndarray, y: np.ndarray, **extra) -> tuple[dict, pd.DataFrame]:
    y = np.asarray(y, float)
    both = y.size > 1 and 0 < y.sum() < y.size  # a correlation needs both classes
    row = {"prior": kind, "items": items, "n": int(y.size), "relevant": int(y.sum()),
           "mean_p": float(p.mean()) if y.size else np.nan, "observed_rate": float(y.mean()) if y.size else np.nan,
           "ece": expected_calibration_error(p, y), "corr_p_y": float(np.corrcoef(p, y)[0, 1]) if both else np.nan,
           **extra}
    return row, reliability(p, y).assign(prior=kind, items=items)


def calibration(u: Universe, kind: str, folds: int = 5, seed: int = 0) -> tuple[list[dict], list[pd.DataFrame]]:
    """The held-out folds' and the uniform audit's calibration rows of prior ``kind`` and their curves."""
    train = np.flatnonzero(u.pooled)
    y = u.truth[train].astype(np.int64)
    groups = u.cand.item_q[train]
    rows, curves = [], []
    if np.unique(groups).size >= folds and 0 < y.sum() < y.size:  # else no fold split with both classes
        cv = cross_validate(u.features.take(train), y, groups, folds, seed, kind)
        row, curve = calibration_row(kind, "held_out_folds", cv.predictions, y, cv_auc=cv.auc,
                                  fold_auc_min=float(np.nanmin(cv.fold_auc)),
                                  fold_auc_max=float(np.nanmax(cv.fold_auc)))
        rows.append(row)
        curves.append(curve)
    pb = Problem(u.hidden_state(), u.truth, METRIC_NAMES["P"])
    audit = pb.U[pb.eligible(np.arange(pb.a.size))]
    row, curve = calibration_row(kind, "uniform_audit", u.out_of_fold_prior(kind, folds, seed)[audit],
                              u.truth[audit])
    return [*rows, row], [*curves, curve]


def budgets(u: Universe, kind: str, metrics: tuple[str, ...] = ("P", "RR"), folds: int = 5, seed: int = 0,
            rbp_p: float = 0.8, mc_draws: int = MC_DRAWS, judging: str = "rank_order", design: str = "optimal",
            floor_share: float = 0.1, level: float = 0.95, max_budget: int = 10_000) -> list[dict]:
    """Per metric and universe the expected budgets of prior ``kind`` over every pair (module docstring)."""
    fitted = {"real_plan": u.pooled_prior(kind), "hidden_labels": u.out_of_fold_prior(kind, folds, seed)}
    cols = np.arange(pairs(len(u.systems))[0].size)
    rows = []
    for short in metrics:
        for name, cand, truth in (("real_plan", u.cand, np.zeros(u.truth.size)),
                                  ("hidden_labels", u.hidden_state(), u.truth)):
            pb = Problem(cand, truth, METRIC_NAMES[short], rbp_p, mc_draws, seed, judging)
            plan = make_plan(pb, fitted[name], u.systems, cols, None, design, floor_share, level, max_budget, seed,
                             short)
            need = plan.pairs["budget_needed"].to_numpy(float)
            rows.append({"prior": kind, "metric": short, "universe": name, "unknowns": int((cand.state == -1).sum()),
                         "pairs": int(need.size), "reached": int(np.isfinite(need).sum()),
                         "median_budget": float(np.median(np.where(np.isfinite(need), need, np.inf))),
                         "plan_budget": float(plan.budget)})
    return rows


def compare_priors(u: Universe, metrics: tuple[str, ...] = ("P", "RR"), folds: int = 5, seed: int = 0,
                   **plan_options) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The calibration table, the reliability curves and the budgets table of the :data:`COMPARED` priors."""
    cal, curves, need = [], [], []
    for kind in COMPARED:
        rows, kind_curves = calibration(u, kind, folds, seed)
        cal += rows
        curves += kind_curves
        need += budgets(u, kind, metrics, folds, seed, **plan_options)
    curve = pd.concat(curves, ignore_index=True)
    return (pd.DataFrame(cal).assign(caveat=TRANSFER_CAVEAT),
            curve[["prior", "items", *RELIABILITY_COLUMNS]], pd.DataFrame(need))
