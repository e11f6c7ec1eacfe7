"""The relevance priors on the published labels (issue 50 §2), on the universe of ``benchmarks/sampling.py`` (the
13 study systems' top 10 on FB-Test-S-C from the reference pack, no model trained): what the workflow's
``sampling_priors`` rule writes (:func:`kgeval.sampling.priors.compare_priors`, the default config's settings),
timed. Per prior (logistic, boosted): question-grouped 5-fold cross-validation (seed 0) on the pool's labels with
its AUC, per-fold AUC, ECE (10 equal-width bins) and corr(p, y), and ECE on the uniform audit's items (the
simulation's hidden labels a plan of all 78 pairs may draw, the prior out of fold); the reliability curves; per
metric (P@10, RR@10) the median expected budget per pair on the real plan and on the hidden labels; beside them
(benchmark only) the calibration of the audit items a P@10 plan of the 78 pairs drew at ``--audit-budget``. Writes
``prior_calibration.csv``, ``prior_reliability.csv`` and ``prior_budgets.csv`` into OUT.

    python benchmarks/prior.py OUT [--audit-budget 2000]
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

from kgeval.sampling.plan import make_plan
from kgeval.sampling.priors import COMPARED, calibration_row, compare_priors
from kgeval.sampling.problem import Problem


def drawn_audit(u, budget: float) -> tuple[list[dict], list[pd.DataFrame]]:
    """Per prior, the calibration of the audit items its P@10 plan of every pair drew at ``budget`` (hidden
    labels, the prior out of fold): what one campaign's audit would see."""
    pb = Problem(u.hidden_state(), u.truth, "P@k")
    rows, curves = [], []
    for kind in COMPARED:
        p = u.out_of_fold_prior(kind)
        plan = make_plan(pb, p, u.systems, np.arange(pb.a.size), budget, metric="P@k")
        drawn = plan.items[plan.audit]
        row, curve = calibration_row(kind, f"audit_drawn_at_{int(budget)}", p[drawn], u.truth[drawn])
        rows.append(row)
        curves.append(curve)
    return rows, curves


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--audit-budget", type=float, default=2000)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    u = universe()
    universe_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cal, curves, need = compare_priors(u, ("P", "RR"), 5, 0)
    seconds = time.perf_counter() - t0
    rows, drawn_curves = drawn_audit(u, args.audit_budget)
    cal = pd.concat([cal, pd.DataFrame(rows)], ignore_index=True)
    curves = pd.concat([curves, *drawn_curves], ignore_index=True)
    cal.to_csv(args.out / "prior_calibration.csv", index=False)
    curves.to_csv(args.out / "prior_reliability.csv", index=False)
    need.to_csv(args.out / "prior_budgets.csv", index=False)
    print(json.dumps({"universe_s": universe_s, "compare_priors_s": seconds,
                      "calibration": cal.drop(columns="caveat").to_dict("records"),
                      "budgets": need.to_dict("records")}, indent=1))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
