"""Waves on the hidden labels (issue 62 item 4): does the interval still cover after a second and a third wave
drawn because the first left the pair undecided? The universe of ``benchmarks/sampling.py`` (the 13 study
systems' top 10 on FB-Test-S-C from ``reference/default``, every pooled label hidden, the boosted prior out of
fold by question), each pair asked alone (``sample-plan --pair A,B``) with the route's defaults:

1. wave 1 at the budget the prior says the pair needs (``sampling_budgets.csv``'s ``budget_needed``; 10,000
   when none reaches it), the pair's optimal design with its floor;
2. while the pair is undecided and fewer than three waves were drawn: the further judgments that would decide it
   at the estimate in hand (``more_judgments``: the pair's own design with the drawn units' variance removed,
   the target |Δ̂|; stop when no budget within 10,000 would), drawn as an independent wave whose nominal
   budget is expected to cost that many new judgments (:func:`kgeval.sampling.waves.nominal_budget`);
3. the estimate with the union π = 1 − Π (1 − π_w) (:mod:`kgeval.sampling.waves`).

For each cap on the waves (1, 2, 3) the reported interval is the one after the last wave drawn. Per metric, cap
and pair: coverage of the true Δ, wrong-sign decisions, share decided, mean judgments (rank order for RR@10:
the judgments the hidden labels make a question cost); rows ``A`` = ``all`` pool the pairs, and
``continued`` the repetitions that drew a second wave (where a stopping rule would show its bias). Writes
``sampling_waves.csv`` and ``sampling_waves_summary.csv`` into OUT.

``--mc-draws`` sets the Monte Carlo's labellings behind an RR@10 question's Var_p(D_q) and expected cost (default
``kgeval.sampling.problem.MC_DRAWS``).

    python benchmarks/sampling_waves.py OUT [--reps 200] [--metrics P,RR] [--pairs-every 1] [--mc-draws 256]
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
from kgeval.judgments.items import METRIC_NAMES
from kgeval.sampling import design as dz
from kgeval.sampling.plan import budget_needed, expected_delta
from kgeval.sampling.problem import MC_DRAWS, Problem
from kgeval.sampling.simulation import STREAMS
from kgeval.sampling.waves import nominal_budget

MAX_BUDGET, LEVEL, FLOOR = 10_000, 0.95, 0.1


def run_pair(pb: Problem, p, v, mu, j: int, reps: int, waves: int, rng) -> list[list[tuple]]:
    """Per repetition, the state after each wave drawn: (wave, Δ̂, lo, hi, decided, judgments)."""
    cols = np.array([j])
    elig_all = pb.eligible(cols)
    sub = np.flatnonzero(elig_all)
    vj = v[sub][:, [j]]
    elig = np.ones(sub.size, bool)
    cost = pb.cost_of(cols, p)[sub]
    judged = pb.judged_of(cols)[sub]
    e = expected_delta(pb, p, mu)[j]
    b1 = budget_needed(vj, elig, cost, abs(e), LEVEL, FLOOR, MAX_BUDGET)
    b1 = MAX_BUDGET if not np.isfinite(b1) else b1
    pi1 = dz.design(vj, elig, b1, "optimal", cost, FLOOR).pi
    full = np.zeros(elig_all.size)
    out = []
    for _ in range(reps):
        pi, drawn = pi1.copy(), rng.random(sub.size) < pi1
        states = []
        for w in range(1, waves + 1):
            full[:] = 0.0
            full[sub] = pi
            inc = drawn[pi > 0][None]
            est = pb.estimate(p, mu, full, inc, cols)
            est.level = LEVEL
            dec = bool(est.decided.ravel()[0])
            states.append((w, float(est.delta.ravel()[0]), float(est.lo.ravel()[0]), float(est.hi.ravel()[0]), dec,
                           float(judged[drawn].sum())))
            if dec or w == waves:
                break
            more = budget_needed(vj * ~drawn[:, None], elig & ~drawn, cost, abs(float(est.delta.ravel()[0])),
                                 LEVEL, FLOOR, MAX_BUDGET)
            if not np.isfinite(more):
                break  # the route says no budget within 10,000 decides it: the user stops
            b = nominal_budget(vj, elig, cost, drawn, more, "optimal", FLOOR)
            pi2 = dz.design(vj, elig, b, "optimal", cost, FLOOR).pi
            drawn = drawn | (rng.random(sub.size) < pi2)
            pi = pi + pi2 * (1 - pi)
        out.append(states)
    return out


def rows_of(metric, a, b, true, runs, waves):
    rows = []
    for cap in range(1, waves + 1):
        last = [r[min(cap, len(r)) - 1] for r in runs]
        delta, lo, hi, dec, jm = (np.array(x) for x in list(zip(*last))[1:])
        tol = 1e-12 + 1e-9 * abs(true)
        cover = (lo - tol <= true) & (true <= hi + tol)
        wrong = dec & (np.sign(delta) != np.sign(true))
        cont = np.array([len(r) >= 2 for r in runs])
        rows.append({"Metric": metric, "waves": cap, "A": a, "B": b, "true_delta": true, "reps": len(runs),
                     "coverage": cover.mean(), "wrong_sign": wrong.mean(), "decided": dec.mean(),
                     "mean_judgments": jm.mean(), "continued": cont.mean(),
                     "coverage_continued": cover[cont].mean() if cont.any() else np.nan,
                     "n_cover": int(cover.sum()), "n_continued": int(cont.sum()),
                     "n_cover_continued": int(cover[cont].sum())})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--waves", type=int, default=3)
    ap.add_argument("--metrics", default="P,RR")
    ap.add_argument("--pairs-every", type=int, default=1, help="every n-th of the 78 pairs (a faster check)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mc-draws", type=SchemaNumber("sampling", "mc_draws"), default=MC_DRAWS)
    args = ap.parse_args()
    metrics = args.metrics.split(",")
    if set(metrics) - METRIC_NAMES.keys():
        raise SystemExit(f"--metrics: unknown metric {sorted(set(metrics) - METRIC_NAMES.keys())[0]!r} "
                         f"({', '.join(METRIC_NAMES)})")
    from kgeval.workflow import setup_logging

    setup_logging()
    args.out.mkdir(parents=True, exist_ok=True)
    u = universe()
    p = u.out_of_fold_prior("boosted")
    rows, timing = [], {}
    for m in metrics:
        mi = STREAMS.index(METRIC_NAMES[m])  # the simulation's stream of the metric, whichever are asked
        t0 = time.perf_counter()
        pb = Problem(u.hidden_state(), u.truth, METRIC_NAMES[m], mc_draws=args.mc_draws)
        v, mu = pb.variances(p)
        for j in range(0, pb.a.size, args.pairs_every):
            runs = run_pair(pb, p, v, mu, j, args.reps, args.waves, np.random.default_rng([args.seed, mi, j]))
            rows += rows_of(f"{m}@10", u.systems[pb.a[j]], u.systems[pb.b[j]], float(pb.true[j]), runs, args.waves)
        timing[f"{m}@10_s"] = time.perf_counter() - t0
    table = pd.DataFrame(rows)
    table.to_csv(args.out / "sampling_waves.csv", index=False)
    summary = []
    for (m, cap), g in table.groupby(["Metric", "waves"]):
        summary.append({"Metric": m, "waves": cap, "pairs": len(g), "reps_per_pair": args.reps,
                        "coverage": g["n_cover"].sum() / (g["reps"].sum()),
                        "min_pair_coverage": g["coverage"].min(),
                        "pairs_below_0.92": int((g["coverage"] < 0.92).sum()),
                        "coverage_continued": g["n_cover_continued"].sum() / max(g["n_continued"].sum(), 1),
                        "continued": g["n_continued"].sum() / g["reps"].sum(),
                        "wrong_sign": g["wrong_sign"].mean(), "decided": g["decided"].mean(),
                        "median_pair_judgments": g["mean_judgments"].median(),
                        "mean_judgments": g["mean_judgments"].mean()})
    summary = pd.DataFrame(summary)
    summary.to_csv(args.out / "sampling_waves_summary.csv", index=False)
    print(summary.to_string(index=False))
    print(json.dumps(timing, indent=1), file=sys.stderr)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
