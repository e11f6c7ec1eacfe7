"""The relevance priors on the published labels (issue 50 §2), on the universe of ``benchmarks/sampling.py`` (the
13 study systems' top 10 on FB-Test-S-C from the reference pack, no model trained).

Per prior (logistic, boosted), on the pool's labels (judged at depth ≥ 1, as the bounds stage fits them):
question-grouped 5-fold cross-validation (seed 0) with its AUC, per-fold AUC, ECE (10 equal-width bins) and
corr(p, y) of the out-of-fold predictions, the fit's seconds; then the audit: the out-of-fold prior of the
simulation's hidden universe on every unknown a P@10 plan of all 78 pairs may draw (what the uniform floor
samples) and on the audit items such a plan drew at a budget of 2,000. Writes ``prior_cv.csv``,
``prior_reliability.csv`` (the reliability curve per prior and item set) and ``prior_audit.csv`` into OUT.

    python benchmarks/prior.py OUT
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main
from sampling import universe

from kgeval.judgments.prior import cross_validate, reliability
from kgeval.judgments.prior_models import expected_calibration_error
from kgeval.sampling.plan import make_plan
from kgeval.sampling.problem import Problem

KINDS = ("logistic", "boosted")


def calibration_rows(kind: str, items: str, p: np.ndarray, y: np.ndarray) -> tuple[dict, pd.DataFrame]:
    row = {"prior": kind, "items": items, "n": int(y.size), "relevant": int(y.sum()),
           "mean_p": float(p.mean()), "observed_rate": float(y.mean()), "ece": expected_calibration_error(p, y)}
    return row, reliability(p, y).assign(prior=kind, items=items)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--audit-budget", type=float, default=2000)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    u = universe()
    train = np.flatnonzero(u.pooled)
    y = u.truth[train].astype(np.int64)
    feats, groups = u.features.take(train), u.cand.item_q[train]
    cv_rows, audit_rows, curves = [], [], []
    pb = Problem(u.hidden_state(), u.truth, "P@k")
    cols = np.arange(78)
    for kind in KINDS:
        t0 = time.perf_counter()
        cv = cross_validate(feats, y, groups, 5, 0, kind)
        seconds = time.perf_counter() - t0
        row, curve = calibration_rows(kind, "held_out_folds", cv.predictions, y)
        cv_rows.append({**row, "cv_auc": cv.auc, "fold_auc_min": float(cv.fold_auc.min()),
                        "fold_auc_max": float(cv.fold_auc.max()),
                        "corr_p_y": float(np.corrcoef(cv.predictions, y)[0, 1]), "cv_seconds": seconds})
        curves.append(curve)
        p = u.out_of_fold_prior(kind)
        elig = pb.U[pb.eligible(cols)]
        row, curve = calibration_rows(kind, "audit_population", p[elig], u.truth[elig].astype(float))
        audit_rows.append(row)
        curves.append(curve)
        plan = make_plan(pb, p, u.systems, cols, args.audit_budget, metric="P@k")
        drawn = plan.items[plan.audit]
        row, curve = calibration_rows(kind, f"audit_drawn_at_{int(args.audit_budget)}", p[drawn],
                                      u.truth[drawn].astype(float))
        audit_rows.append(row)
        curves.append(curve)
    pd.DataFrame(cv_rows).to_csv(args.out / "prior_cv.csv", index=False)
    pd.DataFrame(audit_rows).to_csv(args.out / "prior_audit.csv", index=False)
    pd.concat(curves, ignore_index=True).to_csv(args.out / "prior_reliability.csv", index=False)
    print(json.dumps({"cv": cv_rows, "audit": audit_rows}, indent=1))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
