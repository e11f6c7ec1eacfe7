"""A second look for an outside system's plan (``kgeval evaluate --decide-against``, ``kgeval.plan``), measured on
the hidden labels: the plan of one pair at the budget the prior says it needs, judged; when undecided, the plan
drawn again with the same seed at that budget plus the judgments the labels in hand say would decide it
(``more_judgments``). Every unit keeps its two random numbers (``make_plan`` draws them over every unit of the
universe) and π only grows with the budget up to a census (``kgeval.sampling.design.split``), so the second
sheet holds every triple of the first: the judged ones carry over and the estimate is the larger plan's own. The size of the second look
depends on the first look's labels, so its coverage is measured here, not assumed.

The 13 study systems' top 10 on FB-Test-S-C from the reference pack, every pooled label hidden and the boosted
prior out of fold by question, as ``benchmarks/sampling_decide.py``; for each of the 78 pairs (P@10) and
``--reps`` repetitions: the final interval's coverage of the true Δ, the share decided after one and two looks,
the judgments made, and how often a triple of the first sheet was missing from the second (``not_superset``).

    python benchmarks/sampling_second_look.py OUT [--reps 200]
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

from kgeval.sampling import design as dz
from kgeval.sampling.estimate import ROUNDING
from kgeval.sampling.more import more_needed
from kgeval.sampling.plan import budget_needed
from kgeval.sampling.problem import Problem
from kgeval.sampling.simulation import covers

FLOOR = 0.1


def looks(pb: Problem, p: np.ndarray, v: np.ndarray, j: int, reps: int, rng: np.random.Generator) -> dict:
    """Pair ``j``: the two-look procedure in ``reps`` repetitions (module docstring)."""
    elig, cost = pb.eligible([j]), pb.cost_of([j], p)
    e_delta = float(p[pb.U] @ pb.d[:, j] + pb.known[j])
    n1 = budget_needed(v[:, [j]], elig, cost, abs(e_delta), 0.95, FLOOR, 10_000)
    if not np.isfinite(n1):
        return {}
    u_opt, u_uni = rng.random((reps, elig.size)), rng.random((reps, elig.size))

    def look(n: float, r: np.ndarray):
        d = dz.design(v[:, [j]], elig, n, "optimal", cost, FLOOR)
        drawn = (u_opt[r] < d.pi_opt) | (u_uni[r] < d.pi_uniform)
        sub = np.flatnonzero(d.pi > 0)
        return d, drawn, pb.estimate(p, None, d.pi, drawn[:, sub], np.array([j]))

    every = np.arange(reps)
    d1, drawn1, est1 = look(n1, every)
    lo, hi = est1.lo[:, 0].copy(), est1.hi[:, 0].copy()
    decided1 = est1.decided[:, 0]
    judged = drawn1.sum(1).astype(float)
    second, not_superset = np.zeros(reps, bool), 0
    for r in np.flatnonzero(~decided1):
        more = more_needed(v[elig, j], drawn1[r][elig], float(est1.delta[r, 0]), False, 0.95, FLOOR)
        if not np.isfinite(more):
            continue  # no budget within 10,000 decides it at this estimate: the first look's interval stands
        _, drawn2, est2 = look(n1 + more, np.array([r]))
        not_superset += int((drawn1[r] & ~drawn2[0]).any())
        lo[r], hi[r] = est2.lo[0, 0], est2.hi[0, 0]
        judged[r] = drawn2[0].sum()
        second[r] = True
    true = float(pb.true[j])
    decided = (lo > ROUNDING) | (hi < -ROUNDING)  # as Estimate.decided, on the intervals of either look
    return {"true_delta": true, "first_budget": float(n1), "coverage": float(covers(lo, hi, true).mean()),
            "decided_first": float(decided1.mean()), "second_look": float(second.mean()),
            "decided_final": float(decided.mean()), "mean_judgments": float(judged.mean()),
            "not_superset": not_superset, "reps": reps}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    u = universe()
    p = u.out_of_fold_prior("boosted")
    pb = Problem(u.hidden_state(), u.truth, "P@k")
    v, _ = pb.variances(p)
    rows = []
    for j in range(pb.a.size):
        row = looks(pb, p, v, j, args.reps, np.random.default_rng([args.seed, j]))
        if row:
            rows.append({"A": u.systems[pb.a[j]], "B": u.systems[pb.b[j]], **row})
        print(f"sampling_second_look: pair {j + 1} of {pb.a.size}", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(args.out / "sampling_second_look.csv", index=False)
    summary = {"pairs": len(table), "reps": args.reps, "min_coverage": float(table["coverage"].min()),
               "mean_coverage": float(table["coverage"].mean()),
               "pairs_below_0.93": int((table["coverage"] < 0.93).sum()),
               "decided_first": float(table["decided_first"].mean()),
               "decided_final": float(table["decided_final"].mean()),
               "median_first_budget": float(table["first_budget"].median()),
               "median_judgments": float(table["mean_judgments"].median()),
               "not_superset": int(table["not_superset"].sum()), "seconds": time.perf_counter() - t0}
    (args.out / "sampling_second_look.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
