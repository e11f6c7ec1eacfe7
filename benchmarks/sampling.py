"""The sampling stage on the real labels (issue 42 §3) without training a model: the 13 study systems' top 10 on
FB-Test-S-C from a reference pack (``reference/default/runs/FB-Test-S-C/top10.parquet``) and the published
judgments (``resources/testsets/FB-Test-S-C.tsv``, built by the data stage: ``snakemake --cores 1
resources/testsets/FB-Test-S-C.tsv resources/testsets/FB-Test-S-C.questions.tsv
resources/datasets/FB15k-237/kg.npz``). Times the plan for all 78 pairs (P@10 and RR@10, budget chosen by the
prior) and the simulation with the default configuration, and writes ``sampling_simulation.csv``,
``sampling_sequence.csv``, ``sampling_budgets_<metric>.csv``, ``sampling_vs_mtc.csv`` (MTC's and depth order's
counts per pair beside the sample's, :mod:`kgeval.sampling.baselines`), ``sampling_coverage.png`` and
``sampling_prior_budgets.csv`` into OUT. ``--prior`` (default boosted) is the prior of the plans and the
simulation's fitted prior; ``sampling_prior_budgets.csv`` sets the logistic and the boosted prior side by side:
per prior, metric (P@10, RR@10 judged in rank order) and universe (``real_plan``: every never-judged item of the
lists, the prior fitted on the pool's labels; ``hidden_labels``: the simulation's hidden published labels, the
prior out of fold by question), the median over the 78 pairs of the expected budget a pair needs (its own optimal
design; a pair unreached within 10,000 counts as above every reached one): :func:`kgeval.sampling.priors.budgets`,
what the workflow's ``sampling_priors`` writes.

A sampled RR@10 question is judged in rank order (each list down to its first relevant item); the plan's
budgets are also computed judging every open unknown of a sampled question (``judging="all"``), the design before,
and both counts of pairs within 2,500 judgments are printed.

    python benchmarks/sampling.py OUT [--reps 500] [--prior boosted]
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

from kgeval.data.kg import KnowledgeGraph
from kgeval.data.testsets import TestSet
from kgeval.sampling.baselines import baselines, targets
from kgeval.sampling.figure import coverage_figure, pair_budgets
from kgeval.sampling.plan import make_plan
from kgeval.sampling.priors import budgets
from kgeval.sampling.problem import Problem
from kgeval.sampling.reference import reference_universe
from kgeval.sampling.simulation import sequence_errors, simulate

ROOT = Path(__file__).resolve().parents[1]


BUILD = "snakemake --cores 2 resources/datasets/FB15k-237/kg.npz resources/testsets/FB-Test-S-C.tsv"


def universe():
    """The 13 study systems' top 10 on FB-Test-S-C (the reference pack) over the data stage's files; one line
    naming the missing file and the command that builds it when the data stage has not run."""
    from kgeval.errors import InputError

    for need in ("resources/datasets/FB15k-237/kg.npz", "resources/testsets/FB-Test-S-C.tsv",
                 "resources/testsets/FB-Test-S-C.questions.tsv", "reference/default/runs/FB-Test-S-C/top10.parquet"):
        if not (ROOT / need).is_file():
            raise InputError(ROOT / need, None, f"missing: the data stage builds it ({BUILD})")
    kg = KnowledgeGraph.load(ROOT / "resources/datasets/FB15k-237/kg.npz")
    ts = TestSet.load(ROOT / "resources/testsets/FB-Test-S-C.tsv", kg)
    return reference_universe(kg, ts, ROOT / "resources/testsets/FB-Test-S-C.questions.tsv",
                              ROOT / "reference/default/runs/FB-Test-S-C/top10.parquet")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--prior", choices=("logistic", "boosted"), default="boosted")
    args = ap.parse_args()
    from kgeval.workflow import setup_logging

    setup_logging()  # the simulation's and the baselines' progress lines on stderr (minutes each)
    args.out.mkdir(parents=True, exist_ok=True)
    timing = {}
    t0 = time.perf_counter()
    print("sampling.py: universe …", file=sys.stderr, flush=True)
    u = universe()
    timing["universe_s"] = time.perf_counter() - t0
    print("sampling.py: plans …", file=sys.stderr, flush=True)
    rr_truth = Problem(u.hidden_state(), u.truth, "RR@k").true  # the pairs' true RR@10 Δ, whatever the judging
    for metric, judging in (("P@k", "rank_order"), ("RR@k", "rank_order"), ("RR@k", "all")):
        t0 = time.perf_counter()
        p = u.pooled_prior(args.prior)
        pb = Problem(u.cand, np.zeros(u.truth.size), metric, judging=judging)
        plan = make_plan(pb, p, u.systems, np.arange(78), None, metric=metric)
        tag = metric if judging == "rank_order" else f"{metric}_{judging}"
        timing[f"plan_{tag}_s"] = time.perf_counter() - t0
        plan.pairs.to_csv(args.out / f"sampling_budgets_{tag.replace('@k', '')}.csv", index=False)
        timing[f"plan_{tag}_budget"], timing[f"plan_{tag}_items"] = plan.budget, int(plan.items.size)
        if metric == "RR@k":  # the target: a pair with |Δ| ≥ 0.02 within 2,500 judgments on the real plan
            big = plan.pairs[np.abs(rr_truth) >= 0.02]
            need = big["budget_needed"]
            timing[f"plan_{tag}_within_2500"] = f"{int((need <= 2500).sum())} of {len(big)}"
            timing[f"plan_{tag}_median_budget"] = float(need.median())
    t0 = time.perf_counter()  # the workflow's sampling_priors budgets (kgeval.sampling.priors), both priors
    need = pd.DataFrame([row for kind in ("logistic", "boosted") for row in budgets(u, kind)])
    timing["prior_budgets_s"] = time.perf_counter() - t0
    need.to_csv(args.out / "sampling_prior_budgets.csv", index=False)
    t0 = time.perf_counter()
    print("sampling.py: simulation …", file=sys.stderr, flush=True)
    p = u.out_of_fold_prior(args.prior)
    priors = {"fitted": p, "uniform": np.full(p.size, 0.5), "shifted": np.clip(p + 0.2, 0, 1)}
    table = simulate(u, priors, ("P@k", "RR@k"), (100, 200, 500, 1000, 2000, 5000), args.reps)
    seq = sequence_errors(u, p)
    timing["simulation_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    print("sampling.py: MTC and depth order …", file=sys.stderr, flush=True)
    base = pd.concat([baselines(u, p, m, Problem(u.hidden_state(), u.truth, m).true) for m in ("P@k", "RR@k")],
                     ignore_index=True)
    versus = targets(base, pair_budgets(table))
    timing["baselines_s"] = time.perf_counter() - t0
    versus.to_csv(args.out / "sampling_vs_mtc.csv", index=False)
    timing["target_met"] = f"{int(versus['target_met'].sum())} of {len(versus)}"
    timing.update(hidden=int(u.hidden.sum()), unknown=int((u.cand.state == -1).sum()), reps=args.reps,
                  prior=args.prior)
    table.to_csv(args.out / "sampling_simulation.csv", index=False)
    seq.to_csv(args.out / "sampling_sequence.csv", index=False)
    coverage_figure(table, str(args.out / "sampling_coverage.png"), str(args.out / "sampling_coverage.pdf"),
                    f"FB-Test-S-C: sampled judgments on the {timing['hidden']:,} hidden published labels "
                    f"({args.reps} repetitions)", versus)
    print(json.dumps(timing, indent=1))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
