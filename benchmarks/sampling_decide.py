"""What the sampling route's defaults need, measured on the hidden labels (issue 62): the 13 study systems'
top 10 on FB-Test-S-C from the reference pack, every pooled label hidden (as ``benchmarks/sampling.py``), the
prior out of fold by question. Two tables in OUT:

* ``sampling_pair_coverage.csv``: each pair's own optimal design (``pair_optimal``, :mod:`kgeval.sampling.simulation`)
  for all 78 pairs at ``--coverage-budgets`` (default 200, 1,000 and the near-census 5,000, with the geometric
  means between them), ``--reps`` repetitions, the default (boosted) prior: the coverage of every pair's interval;
* ``sampling_judgments_to_decide.csv``: per metric and prior (logistic, boosted), over all 78 pairs and over the
  pairs whose true |Δ| is at least 0.02 (``pairs``), ``--decide-reps`` repetitions, the median of the judgments a pair's own design actually made at the smallest budget of the
  simulation.s grid (100, 150, 200, 250, 300, 400, 500, 700, 1,000, 2,000, 5,000 and the geometric means between) that decided it in 50 % and in 80 % of the
  repetitions (a pair never decided counts as above every decided one): judgments measured on labels, not the
  prior's forecasts.

``--mc-draws`` sets the Monte Carlo's labellings behind an RR@10 question's Var_p(D_q) and expected cost (default
``kgeval.sampling.problem.MC_DRAWS``).

    python benchmarks/sampling_decide.py OUT [--reps 1000] [--decide-reps 200] [--metrics P,RR] [--mc-draws 256]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main
from sampling import universe

from kgeval.cli.options import SchemaNumber
from kgeval.sampling.problem import MC_DRAWS
from kgeval.sampling.simulation import simulate

GRID = (100, 150, 200, 250, 300, 400, 500, 700, 1000, 2000, 5000)


def judgments_to_decide(table: pd.DataFrame, share: float) -> pd.DataFrame:
    """Per metric, prior and pair: the mean judgments at the smallest budget decided in ≥ ``share`` (inf: none),
    and ``interpolated``, those judgments read between that budget and the one below it, linearly in the decided
    share, where the share crosses ``share`` (the grid's reading is up to one grid step high)."""
    sub = table[(table["design"] == "pair_optimal")].sort_values("budget", kind="stable")
    keys = ["Metric", "prior", "A", "B"]
    sub = sub.assign(prev_decided=sub.groupby(keys)["decided"].shift(), prev_judgments=sub.groupby(keys)[
        "mean_judgments"].shift())
    ok = sub[sub["decided"] >= share].groupby(keys, as_index=False).first()
    f = ((share - ok["prev_decided"]) / (ok["decided"] - ok["prev_decided"])).clip(0, 1)
    ok["interpolated"] = (ok["prev_judgments"] + f * (ok["mean_judgments"] - ok["prev_judgments"])).fillna(
        ok["mean_judgments"])
    every = sub.groupby(keys, as_index=False)["true_delta"].first()
    out = every.merge(ok[keys + ["mean_judgments", "interpolated"]], on=keys, how="left")
    return out.fillna({"mean_judgments": np.inf, "interpolated": np.inf}).assign(share=share)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--decide-reps", type=int, default=200)
    ap.add_argument("--metrics", default="P,RR")
    ap.add_argument("--coverage-budgets", default="200,1000,5000")
    ap.add_argument("--skip-coverage", action="store_true")
    ap.add_argument("--mc-draws", type=SchemaNumber("sampling", "mc_draws"), default=MC_DRAWS)
    args = ap.parse_args()
    from kgeval.workflow import setup_logging

    setup_logging()
    args.out.mkdir(parents=True, exist_ok=True)
    metrics = tuple(f"{m}@k" for m in args.metrics.split(","))
    u = universe()
    timing = {}
    if not args.skip_coverage:
        t0 = time.perf_counter()
        p = u.out_of_fold_prior("boosted")
        cover = simulate(u, {"boosted": p}, metrics, tuple(int(b) for b in args.coverage_budgets.split(",")),
                         args.reps, designs=(), min_delta=0.0, mc_draws=args.mc_draws)
        cover.to_csv(args.out / "sampling_pair_coverage.csv", index=False)
        timing["coverage_s"] = time.perf_counter() - t0
        for (m, n), g in cover.groupby(["Metric", "budget"]):
            timing[f"{m} {n}"] = {"pairs": len(g), "min_coverage": float(g["coverage"].min()),
                                  "below_0.93": int((g["coverage"] < 0.93).sum()),
                                  "below_0.92": int((g["coverage"] < 0.92).sum())}
    t0 = time.perf_counter()
    rows = []
    for prior in ("logistic", "boosted"):
        table = simulate(u, {prior: u.out_of_fold_prior(prior)}, metrics, GRID, args.decide_reps, designs=(),
                         min_delta=0.0, mc_draws=args.mc_draws)
        table.to_csv(args.out / f"sampling_decide_{prior}.csv", index=False)
        for share in (0.5, 0.8):
            need = judgments_to_decide(table, share)
            for (m, which), g in pd.concat([need.assign(pairs="all"), need[np.abs(need["true_delta"]) >= 0.02]
                                            .assign(pairs="abs_delta_0.02")]).groupby(["Metric", "pairs"]):
                rows.append({"Metric": m, "prior": prior, "share_decided": share, "pairs": which, "n_pairs": len(g),
                             "median_judgments": float(np.median(g["mean_judgments"])),
                             "median_interpolated": float(np.median(g["interpolated"])),
                             "decided_pairs": int(np.isfinite(g["mean_judgments"]).sum()), "reps": args.decide_reps})
    need = pd.DataFrame(rows)
    need.to_csv(args.out / "sampling_judgments_to_decide.csv", index=False)
    timing["decide_s"] = time.perf_counter() - t0
    print(need.to_string(index=False))
    print(json.dumps(timing, indent=1), file=sys.stderr)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
