"""How much a question's labels go together, and what the Monte Carlo's correlation ρ
(``kgeval.sampling.problem.LABEL_CORRELATION``) makes of it, on the universe of ``benchmarks/sampling.py`` (the 13
study systems' top 10 on FB-Test-S-C from the reference pack, every pooled label hidden, the prior out of fold by
question). Two tables in OUT:

* ``label_dispersion.csv``: per set of questions (all, and two halves of a seeded permutation), the spread of
  the number relevant per question about the prior's expectation, Σ_q (S_q − m_q)² over Σ_q Σ_e p_e (1 − p_e)
  (1 for independent labels), observed on the hidden labels and expected under the copula's ρ (``--draws``
  labellings of the boosted prior, drawn as the Monte Carlo draws them): the ρ whose spread matches the observed
  one is the ρ that fits;
* ``label_costs.csv``: per prior and ρ, over every pair and every question that could move it, the judgments the
  hidden labels make the question's two lists cost (judged down to the first relevant item) over the Monte
  Carlo's expected cost (``Problem.cost_of``, 64 draws): 1 when the Monte Carlo's cost is right.

    python benchmarks/label_correlation.py OUT [--draws 200] [--rhos 0,0.2,0.3,0.4,0.5,0.6]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main
from sampling import universe

from kgeval.sampling.problem import LABEL_CORRELATION, LEGACY_LABEL_CORRELATION, Problem


def dispersion(p: np.ndarray, x: np.ndarray, q: np.ndarray, n_q: int) -> tuple[float, float]:
    """Σ (S_q − m_q)² and Σ_q Σ_e p_e (1 − p_e) over the items given (S_q: relevant, m_q: expected)."""
    s, m = np.bincount(q, x, minlength=n_q), np.bincount(q, p, minlength=n_q)
    return float(((s - m) ** 2).sum()), float((p * (1 - p)).sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--rhos", default="0,0.2,0.3,0.4,0.5,0.6")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rhos = [float(r) for r in args.rhos.split(",")]
    u = universe()
    state = u.hidden_state()
    h, q, n_q = u.hidden, state.item_q, state.n_questions
    half = np.zeros(n_q, bool)
    half[np.random.default_rng(0).permutation(n_q)[: n_q // 2]] = True
    sets = {"all": h, "half_a": h & half[q], "half_b": h & ~half[q]}
    p = u.out_of_fold_prior("boosted")
    rows = []
    for rho in rhos:
        t0 = time.perf_counter()
        pb = Problem(state, u.truth, "RR@k", mc_draws=args.draws, mc_rho=rho)
        draws = np.concatenate(pb._labellings(p, args.draws, 29)).astype(float)  # the Monte Carlo's own draws
        for name, sel in sets.items():
            obs, indep = dispersion(p[sel], u.truth[sel].astype(float), q[sel], n_q)
            sim = np.mean([dispersion(p[sel], d[sel], q[sel], n_q)[0] for d in draws])
            rows.append({"questions": name, "items": int(sel.sum()), "rho": rho, "observed": obs / indep,
                         "expected_at_rho": sim / indep, "draws": len(draws),
                         "seconds": round(time.perf_counter() - t0, 1)})
    table = pd.DataFrame(rows).round(4)
    table.to_csv(args.out / "label_dispersion.csv", index=False)
    print(table.to_string(index=False), flush=True)
    costs = []
    for prior in ("boosted", "logistic"):
        pp = u.out_of_fold_prior(prior)
        for rho in (LEGACY_LABEL_CORRELATION, LABEL_CORRELATION):  # independent labels, and the default ρ
            pb = Problem(state, u.truth, "RR@k", mc_rho=rho)
            judged = expected = 0.0
            for j in range(pb.a.size):
                el = pb.eligible([j])
                judged += pb.judged_of([j])[el].sum()
                expected += pb.cost_of([j], pp)[el].sum()
            costs.append({"prior": prior, "rho": rho, "pairs": int(pb.a.size), "judged": judged,
                          "expected": round(expected, 1), "judged_over_expected": round(judged / expected, 4)})
    costs = pd.DataFrame(costs)
    costs.to_csv(args.out / "label_costs.csv", index=False)
    print(costs.to_string(index=False))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
