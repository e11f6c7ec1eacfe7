"""Coverage of the bootstrap intervals of Kendall's τ that the findings decide on (issue 61, item 6).

The τ a claim states is the τ between the systems' population mean metrics on two test populations; a run
sees one sample of questions of each and estimates it by the τ of the sample means, which noise pulls towards 0.
Planted systems with known population means (and so a known true τ) draw many question sets; each gets the
project's intervals (``kgeval.analysis.resampling``: ``order_interval``, the one the findings decide on, and
``bootstrap_tau``'s BCa and plain percentile intervals) and the share of repetitions whose interval holds the
true τ is the coverage.

Per-item values: x[q, s] = μ_s + d_q + e[q, s], with a question effect d_q ~ N(0, 0.25) shared by all systems
and noise e ~ N(0, σ) (RR values spread about 0.35 around a question's mean), so a population mean is exactly μ_s.
Scenarios:

* ``independent``: two test sets of different questions (claim 1's O and S are paired in the workflow, this is
  the harder case); set B's means are set A's with adjacent pairs swapped (the true τ is known exactly).
* ``paired``: set B holds set A's questions with a system-specific shift on 30 % of them (like FB-Test-S-C: the
  completed set shares its questions with S and changes some answers), resampled paired through the keys.

Usage: python benchmarks/verdict_coverage.py OUT.csv [--reps 200] [--resamples 500]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main

from kgeval.analysis.resampling import bootstrap_tau, order_interval
from kgeval.metrics.kendall import tau_b

SYSTEMS = 13


def planted(spread: float, swaps: int) -> tuple[np.ndarray, np.ndarray]:
    """Population means of 13 systems evenly over ``spread`` (set A) and set B's, with the first ``swaps``
    adjacent pairs exchanged."""
    mu_a = 0.26 + np.linspace(0.0, spread, SYSTEMS)
    mu_b = mu_a.copy()
    for k in range(swaps):
        i = 2 * k
        mu_b[i], mu_b[i + 1] = mu_b[i + 1], mu_b[i]
    return mu_a, mu_b


def draw(rng: np.random.Generator, mu: np.ndarray, n: int, noise: float) -> np.ndarray:
    return mu[None, :] + rng.normal(0, 0.25, (n, 1)) + rng.normal(0, noise, (n, len(mu)))


def one(scenario: str, rng: np.random.Generator, mu_a: np.ndarray, mu_b: np.ndarray, n: int, noise: float,
        resamples: int, seed: int) -> dict[str, tuple[float, float, float]]:
    a = draw(rng, mu_a, n, noise)
    keys = None
    if scenario == "independent":
        b = draw(rng, mu_b, n, noise)
    else:  # B: A's questions, 30 % of them shifted per system by (μ_b − μ_a) / 0.3
        changed = rng.random(n) < 0.3
        b = a + changed[:, None] * ((mu_b - mu_a) / 0.3)[None, :]
        keys = np.arange(n)
    out = {"order": order_interval(a, b)}
    for method in ("bca", "percentile"):
        out[method] = bootstrap_tau(a, b, resamples, seed, method=method, keys_a=keys, keys_b=keys)
    return out


def run(reps: int, resamples: int, seed: int = 0) -> pd.DataFrame:
    rows = []
    # (scenario, spread of the 13 means, swapped pairs, questions per set, noise sd)
    cases = [("independent", 0.06, 2, 2000, 0.35), ("independent", 0.06, 0, 2000, 0.35),
             ("independent", 0.12, 2, 2000, 0.35), ("paired", 0.06, 3, 2000, 0.35),
             ("paired", 0.06, 1, 5000, 0.35)]
    for c, (scenario, spread, swaps, n, noise) in enumerate(cases):
        mu_a, mu_b = planted(spread, swaps)
        true = tau_b(mu_a, mu_b)
        rng = np.random.default_rng([seed, c])
        start = time.perf_counter()
        got = {"order": [], "bca": [], "percentile": []}
        for r in range(reps):
            for method, v in one(scenario, rng, mu_a, mu_b, n, noise, resamples, seed + r).items():
                got[method].append(v)
        for method, vals in got.items():
            v = np.array(vals)
            point, lo, hi = v[:, 0], v[:, 1], v[:, 2]
            rows.append({"scenario": f"{scenario} spread {spread:g} swaps {swaps} n {n}", "method": method,
                         "true_tau": round(true, 4), "mean_point": round(point.mean(), 4),
                         "mean_lo": round(lo.mean(), 4), "mean_hi": round(hi.mean(), 4),
                         "centre_minus_point": round(((lo + hi) / 2 - point).mean(), 4),
                         "coverage": round(float(((lo <= true) & (true <= hi)).mean()), 3),
                         "mean_width": round(float((hi - lo).mean()), 4),
                         "below": round(float((hi < true).mean()), 3), "above": round(float((lo > true).mean()), 3),
                         "reps": reps, "resamples": resamples})
        print(*rows[-3:], f"{time.perf_counter() - start:.1f} s", sep="\n", flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    df = run(args.reps, args.resamples, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    print(df.to_string(index=False))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
