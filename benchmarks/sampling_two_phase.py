"""Two-phase judging of a sampled RR@10 question, measured on the hidden labels (issue 62's one open target:
the median pair decided in 80 % of repetitions within 200 judgments for RR@10; the rank-order design with the
Monte Carlo's former 64 labellings read 204-205 on the budget grid, which 256, the default since, brought to 197).
A measurement of a lever, not the library's design: nothing here is used by the route.

The shipped design judges a sampled question's two lists from the top down to their first relevant items, so
it observes D_q exactly, and most of a question's cost lies deep in lists whose top is not relevant, where a
relevant item moves D_q by at most 1/(d+1). Two-phase judging (double sampling, Särndal, Swensson and Wretman
1992, ch. 9) stops each list at depth ``d`` (phase 1, every sampled question) and goes on below it only with a
probability π₂_q drawn per question (phase 2). With C the part of D_q that phase 1 settles (a list whose
relevant item lies within the first d ranks), T the rest (the lists still open: their best relevant item below
rank d) and m_q = E_p[T | phase 1] under the prior (the items phase 1 judged at their labels), the question's term

    ŷ_q = C + m_q + (T − m_q) I₂ / π₂_q

is unbiased for D_q given phase 1, whatever m_q is, so the estimator Δ̂ = (Σ_q μ_q + Σ_{q∈S} (ŷ_q − μ_q)/π₁_q)/Q
stays unbiased for any prior. Its variance, Σ_q (1/π₁ − 1)(D_q − μ_q)² + Σ_q (1/π₂ − 1)(T − m)²/π₁, is estimated
without bias by Σ_{q∈S} [(1 − π₁)(ŷ_q − μ_q)² + π₁ I₂ (T − m)² (1 − π₂)/π₂²]/π₁² (over Q²); the interval is the
shipped one (Student's t on the sampled units bearing on the pair). Under the prior (the plan's Monte Carlo
labellings, ρ = 0.5 within a question), with W_q = E[(T − m)²], B_q = Var(D_q) − W_q and the expected phase costs
C1_q, C2_q, the cost-optimal π₂_q = √(W C1 / (B C2)) (clipped to [0.1, 1]) and π₁ is the shipped design
(:func:`kgeval.sampling.design.design`) on the variance B + W/π₂ and the cost C1 + π₂ C2. At ``d`` = 10 there is
no phase 2 and the design, its draws and its reading are the shipped ones: the script checks that its d = 10
rows equal :func:`kgeval.sampling.simulation.simulate`'s, run beside them.

Each pair's own design on the fine budget grid of ``sampling_prior_variants.py``, ``--reps`` repetitions, the
boosted prior out of fold by question (as ``sampling_decide.py``). OUT/sampling_two_phase.csv, one row per depth:
the median over the 78 pairs of the judgments that decided a pair in 50 % and 80 % of repetitions (on the grid
and interpolated), the lowest pair coverage at 200, 1,000 and 5,000 judgments, the realized judgments over the
budget, seconds; OUT/sampling_two_phase_pairs.csv, every pair's rows.

    python benchmarks/sampling_two_phase.py OUT [--reps 1000] [--depths 10,5,3,2] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main
from sampling import universe
from sampling_decide import GRID, judgments_to_decide
from sampling_prior_variants import FINE

from kgeval.sampling import design as dz
from kgeval.sampling import weights as wt
from kgeval.sampling.estimate import Estimate
from kgeval.sampling.problem import MC_DRAWS, Problem
from kgeval.sampling.simulation import COLUMNS, STREAMS, covers, pair_grid, simulate

PI2_FLOOR = 0.1  # the least phase-2 probability: a question whose tail the prior is sure of is still reached


def split(pb: Problem, j: int, depth: int, labels: np.ndarray, p_base: np.ndarray):
    """Per labelling (rows of ``labels`` (L, N)) and question, pair ``j``'s D_q, its unsettled part T, T's
    expectation m given phase 1, the two phases' judgments (the rank-order judge's, each list stopped at its
    first relevant item; phase 1 also at ``depth``) and, per labelling and item, whether phase 1 judged it."""
    k = pb.pos.shape[-1]
    rank = np.arange(k)
    judged = np.zeros(labels.shape, bool)
    sides = []
    for s in (pb.a[j], pb.b[j]):
        pos = pb.pos[s]
        item = np.maximum(pos, 0)
        lab = (pos >= 0) & labels[:, item]  # (L, Q, k)
        first = np.where(lab.any(-1), lab.argmax(-1), k)
        judge = (pos >= 0) & pb.unknown[item] & (rank <= first[..., None]) & (rank < depth)
        rows = np.broadcast_to(np.arange(labels.shape[0])[:, None, None], judge.shape)
        judged[rows[judge], np.broadcast_to(item, judge.shape)[judge]] = True
        sides.append((pos, first >= depth))
    known = np.where(judged, labels, p_base)  # what phase 1 knows of each item: a label or the prior
    d = t = m = 0.0
    for sign, (pos, still_open) in zip((1, -1), sides):
        tail = np.where(rank >= depth, pos, -1)  # the ranks below depth only
        d = d + sign * wt.max_metric(pos, pb.g, labels)
        t = t + sign * np.where(still_open, wt.max_metric(tail, pb.g, labels), 0)
        m = m + sign * np.where(still_open, wt.expected_max_metric(tail, pb.g, known), 0)
    pair = pb.systems_of([j])
    prefix = pb.pos.copy()
    prefix[..., depth:] = -1
    full = wt.question_costs(pb.pos, pb.unknown, pair, labels, judged=True)
    c1 = wt.question_costs(prefix, pb.unknown, pair, labels, judged=True)
    return d, t, m, c1.astype(float), (full - c1).astype(float), judged


def estimate(mu, sub, dq, t, m, pi1, pi2, incl, more) -> Estimate:
    """The two-phase estimate (module docstring) per repetition (rows of ``incl`` and ``more``, the phase-1 and
    phase-2 indicators over the questions ``sub``): μ_q of every question, D_q, T, m_q, π₁ and π₂ of ``sub``'s."""
    r = t - m
    y = dq - mu[sub] + r * (more / pi2 - 1)  # ŷ_q − μ_q, read only where incl
    inv = np.where(incl, 1 / pi1, 0.0)
    v2 = more * r ** 2 * (1 - pi2) / pi2 ** 2
    var = (inv ** 2 * ((1 - pi1) * y ** 2 + pi1 * v2)).sum(-1) / mu.size ** 2
    return Estimate((mu.sum() + (inv * y).sum(-1)) / mu.size, var, (incl & (y != 0)).sum(-1))


def two_phase_runs(u, p, depths, grid, reps, seed, mc_draws=MC_DRAWS, pi2_floor=PI2_FLOOR) -> pd.DataFrame:
    """The :data:`COLUMNS` table of each depth's pair designs (``design`` = ``two_phase_d<depth>``), with the
    realized judgments over the budget in ``cost_ratio``."""
    pb = Problem(u.hidden_state(), u.truth, "RR@k", mc_draws=mc_draws, seed=seed)
    v, mu = pb.variances(p)
    Q, mi = pb.Q, STREAMS.index("RR@k")
    p_base = np.where(pb.unknown, p, pb.x)
    truth = (pb.x > 0)[None]
    draws = pb._labellings(p, max(mc_draws, 8), 13)  # the draws behind the shipped expected cost
    rows = []
    for depth in depths:
        for j in range(pb.a.size):
            dq, t, m, c1, c2, _ = (x[0] for x in split(pb, j, depth, truth, p_base))
            assert np.allclose(dq, pb.dq[:, j]), "D_q of the split differs from the problem's"
            w = np.zeros(Q)
            e1, e2 = np.zeros(Q), np.zeros(Q)
            for xs in draws:
                _, tx, mx, a1, a2, _ = split(pb, j, depth, xs, p_base)
                w += ((tx - mx) ** 2).sum(0)
                e1 += a1.sum(0)
                e2 += a2.sum(0)
            n_draws = sum(len(xs) for xs in draws)
            w, e1, e2 = w / n_draws, e1 / n_draws, e2 / n_draws
            b = np.maximum(v[:, j] * Q ** 2 - w, 1e-12)
            opt2 = np.sqrt(w * e1 / (b * np.maximum(e2, 1e-12)))
            elig = pb.eligible([j])
            census = float((e1 + e2)[elig].sum())
            for n in pair_grid(grid):
                # near a census phase 2 grows with the budget, as the shipped floor does (a few tails the prior
                # was sure of would otherwise hold the variance, and the draws that miss them see none)
                pi2 = np.where(e2 > 0, np.clip(opt2, max(pi2_floor, min(1.0, n / census)), 1.0), 1.0)
                v_eff = v[:, j] + w * (1 / pi2 - 1) / Q ** 2
                dsg = dz.design(v_eff[:, None], elig, n, "optimal", e1 + pi2 * e2)
                pi1 = dsg.pi
                sub = np.flatnonzero(pi1 > 0)
                rng = np.random.default_rng([seed, mi, 0, j, int(n)])  # simulate()'s phase-1 draws
                incl = rng.random((reps, sub.size)) < pi1[sub]
                more = np.random.default_rng([seed, mi, 0, j, int(n), 2]).random((reps, sub.size)) < pi2[sub]
                est = estimate(mu[:, j], sub, dq[sub], t[sub], m[sub], pi1[sub], pi2[sub], incl, more)
                judged = (incl * (c1[sub] + more * c2[sub])).sum(1)
                true = pb.true[j]
                rows.append(("RR@k", "boosted", f"two_phase_d{depth}", int(n), u.systems[pb.a[j]],
                             u.systems[pb.b[j]], float(true), float(covers(est.lo, est.hi, true).mean()),
                             float((est.decided & (np.sign(est.delta) != np.sign(true))).mean()),
                             float(est.decided.mean()), float(est.half_width.mean()), float(judged.mean()), reps,
                             float(judged.mean() / n)))
    return pd.DataFrame(rows, columns=COLUMNS + ["cost_ratio"])


def summary(table: pd.DataFrame, seconds: float, pi2_floor: float = 1.0) -> dict:
    need = {s: judgments_to_decide(table.assign(design="pair_optimal"), s / 100) for s in (50, 80)}
    out = {"design": table["design"].iloc[0], "pi2_floor": pi2_floor}
    for s, g in need.items():
        out[f"median_judgments_{s}"] = float(np.median(g["mean_judgments"]))
        out[f"median_interpolated_{s}"] = float(np.median(g["interpolated"]))
    for n in (200, 1000, 5000):
        out[f"min_coverage_{n}"] = float(table.loc[table["budget"] == n, "coverage"].min())
    out["cost_ratio"] = float((table["mean_judgments"] / table["budget"]).median())
    return {**out, "reps": int(table["reps"].iloc[0]), "seconds": round(seconds, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--depths", default="10,5,3,2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pi2-floor", type=float, default=PI2_FLOOR)
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    if any(not 1 <= d <= 10 for d in depths):
        raise SystemExit(f"--depths {args.depths}: expected depths in 1..10")
    args.out.mkdir(parents=True, exist_ok=True)
    u = universe()
    p = u.out_of_fold_prior("boosted")
    grid = tuple(sorted(set(GRID) | set(FINE)))
    t0 = time.perf_counter()
    shipped = simulate(u, {"boosted": p}, ("RR@k",), grid, args.reps, designs=(), min_delta=0.0, seed=args.seed)
    rows, tables = [summary(shipped, time.perf_counter() - t0)], [shipped]
    for depth in depths:
        t0 = time.perf_counter()
        table = two_phase_runs(u, p, [depth], grid, args.reps, args.seed, pi2_floor=args.pi2_floor)
        if depth == 10:  # no phase 2: the shipped design, draws and reading
            same = np.allclose(table["decided"], shipped["decided"]) and np.allclose(
                table["mean_judgments"], shipped["mean_judgments"])
            print(f"d = 10 equals the shipped simulation: {same}", flush=True)
            if not same:
                raise SystemExit("benchmarks/sampling_two_phase.py: d = 10 differs from the shipped simulation")
        rows.append(summary(table, time.perf_counter() - t0, args.pi2_floor))
        tables.append(table)
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
    pd.DataFrame(rows).round(4).to_csv(args.out / "sampling_two_phase.csv", index=False)
    pd.concat(tables).to_csv(args.out / "sampling_two_phase_pairs.csv", index=False)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
