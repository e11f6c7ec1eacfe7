"""What the route's knobs do to the judgments needed to decide (issue 62's targets: the median pair decided in
80 % of the repetitions within 250 judgments for P@10 and 200 for RR@10), measured as
``benchmarks/sampling_decide.py`` does (the 13 study systems' top 10 on FB-Test-S-C from the reference pack, every
pooled label hidden, the prior out of fold by question, each pair's own optimal design on its budget grid,
``--reps`` repetitions) for one variant at a time:

* ``default``: the shipped settings (boosted prior, ``P_CLIP`` 0.003, floor share 0.1);
* ``clip=<c>``: the allocation's clip on p (``kgeval.sampling.design.P_CLIP``);
* ``floor=<f>``: the uniform floor's share of the budget;
* ``trees=<max_iter>/<max_leaf_nodes>/<min_samples_leaf>/<l2>``: the boosted prior's trees;
* ``finegrid``: the same design on a finer budget grid (a measurement, not a change);
* ``rho=<r>``: the Monte Carlo's correlation of a question's labels (``kgeval.sampling.problem.LABEL_CORRELATION``;
  0: independent labels, the default before);
* ``mc=<n>``: the Monte Carlo draws behind a question's Var_p(D_q) and expected cost (``sampling.mc_draws``);
* ``seed=<s>``: the simulation's seed (its repetitions' random streams and the Monte Carlo's draws; the prior's
  folds stay seed 0): how far the readings move from one set of repetitions to another (a measurement);
* ``drop=<a>+<b>…``: the boosted prior without some of its columns (``kgeval.judgments.graph_features``):
  ``near`` the common neighbours and Adamic-Adar index, ``answers`` the question's training answers, ``fusion``
  the pool's own evidence within the question, ``types`` the candidate's type match to the question's relation;
  ``drop=near+answers+fusion+types`` is the prior before issue 62;
  ``&`` joins variants (``finegrid&mc=256``).

A prior variant is tuned on the labels it is then measured on (out of fold by question, but the choice of
variant sees every fold), so its gain is an upper bound on what it would give on new labels. One row per variant
and metric in OUT/sampling_prior_variants.csv: the prior's AUC and Brier score on the hidden items, the median
judgments at 50 % and 80 % decided, seconds.

    python benchmarks/sampling_prior_variants.py OUT [--reps 200] [--variants default,clip=0.001,...] [--metrics P,RR]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main
from prior_trees import trees
from sampling import universe
from sampling_decide import GRID, judgments_to_decide
from sklearn.metrics import brier_score_loss, roc_auc_score

from kgeval.judgments import prior as judgments_prior
from kgeval.sampling import design as dz
from kgeval.sampling import problem
from kgeval.sampling.simulation import simulate

VARIANTS = ("default,drop=near+answers+fusion+types,drop=types,drop=near,drop=answers,drop=fusion,clip=0.01,clip=0.001,"
            "floor=0.03,floor=0.2,finegrid,trees=200/15/40/1,trees=800/63/20/1")
FINE = (120, 175, 225, 275, 350, 450, 600)


def kept_columns(n_extra: int, drop: list[str]) -> np.ndarray:
    """The extra columns kept when the groups ``drop`` are dropped (module docstring)."""
    from kgeval.judgments.graph_features import FUSION_COLUMNS, GRAPH_COLUMNS

    groups = {"near": ["log_common_neighbours", "adamic_adar"], "answers": ["log_question_answers"],
              "fusion": list(FUSION_COLUMNS), "types": ["type_match"]}
    names = list(GRAPH_COLUMNS) + [f"rr{i}" for i in range(n_extra - len(GRAPH_COLUMNS) - len(FUSION_COLUMNS))] \
        + list(FUSION_COLUMNS)
    unknown = set(drop) - groups.keys()
    if unknown:
        raise SystemExit(f"--variants: unknown column group {sorted(unknown)[0]!r} (near, answers, fusion, types)")
    gone = {c for g in drop for c in groups[g]}
    return np.array([i for i, n in enumerate(names) if n not in gone])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--variants", default=VARIANTS)
    ap.add_argument("--metrics", default="P,RR")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    u = universe()
    base_prior, shipped, clip = u.out_of_fold_prior("boosted"), judgments_prior.PRIORS["boosted"], dz.P_CLIP
    rho = problem.LABEL_CORRELATION
    h = u.hidden
    rows, metrics = [], tuple(f"{m}@k" for m in args.metrics.split(","))
    for variant in args.variants.split(","):
        parts = dict(part.partition("=")[::2] for part in variant.split("&"))
        t0 = time.perf_counter()
        grid, floor, p, uv, mc = GRID, 0.1, base_prior, u, problem.MC_DRAWS
        if "drop" in parts:
            keep = kept_columns(u.features.extra.shape[1], parts["drop"].split("+"))
            uv = replace(u, features=replace(u.features, extra=u.features.extra[:, keep]))
        if parts.keys() & {"drop", "trees"}:  # one fit, with the variant's columns and trees
            judgments_prior.PRIORS["boosted"] = trees(parts["trees"]) if "trees" in parts else shipped
            try:  # (the name fit_prior resolves 'boosted' by)
                p = uv.out_of_fold_prior("boosted")
            finally:
                judgments_prior.PRIORS["boosted"] = shipped
        unknown = parts.keys() - {"default", "trees", "drop", "clip", "floor", "finegrid", "mc", "rho", "seed"}
        if unknown:
            raise SystemExit(f"--variants: unknown variant {variant!r}")
        if "clip" in parts:
            dz.P_CLIP = float(parts["clip"])
        if "rho" in parts:
            problem.LABEL_CORRELATION = float(parts["rho"])
        floor = float(parts.get("floor", floor))
        mc = int(parts.get("mc", mc))
        if "finegrid" in parts:
            grid = tuple(sorted(set(GRID) | set(FINE)))
        try:
            table = simulate(uv, {"boosted": p}, metrics, grid, args.reps, designs=(), min_delta=0.0,
                             floor_share=floor, mc_draws=mc, seed=int(parts.get("seed", 0)))
        finally:
            dz.P_CLIP, problem.LABEL_CORRELATION = clip, rho
        for metric, g in table.groupby("Metric"):
            need = {share: judgments_to_decide(g, share / 100) for share in (50, 80)}
            rows.append({"variant": variant, "Metric": metric, "auc": roc_auc_score(u.truth[h], p[h]),
                         "brier": brier_score_loss(u.truth[h], p[h]),
                         **{f"median_judgments_{s}": float(np.median(n["mean_judgments"])) for s, n in need.items()},
                         **{f"median_interpolated_{s}": float(np.median(n["interpolated"])) for s, n in need.items()},
                         "reps": args.reps, "seconds": round(time.perf_counter() - t0, 1)})
        print(pd.DataFrame(rows[-2:]).to_string(index=False), flush=True)
    pd.DataFrame(rows).round(4).to_csv(args.out / "sampling_prior_variants.csv", index=False)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
