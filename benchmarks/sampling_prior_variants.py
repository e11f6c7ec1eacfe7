"""What the route's knobs do to the judgments needed to decide (issue 62's targets: the median pair decided in
80 % of the repetitions within 250 judgments for P@10 and 200 for RR@10), measured as
``benchmarks/sampling_decide.py`` does (the 13 study systems' top 10 on FB-Test-S-C from the reference pack, every
pooled label hidden, the prior out of fold by question, each pair's own optimal design on its budget grid,
``--reps`` repetitions) for one variant at a time:

* ``default``: the shipped settings (boosted prior, ``P_CLIP`` 0.01, floor share 0.1);
* ``clip=<c>``: the allocation's clip on p (``kgeval.sampling.design.P_CLIP``);
* ``floor=<f>``: the uniform floor's share of the budget;
* ``trees=<max_iter>/<max_leaf_nodes>/<min_samples_leaf>/<l2>``: the boosted prior's trees;
* ``finegrid``: the same design on a finer budget grid (a measurement, not a change);
* ``features=<a>+<b>…``: the boosted prior with more columns, each a textbook link-prediction or pooling signal
  chosen before measuring: ``cn`` the common neighbours of the question's known entity and the candidate in the
  undirected training graph (log 1 + count), ``aa`` their Adamic-Adar index, ``qrel`` the training answers the
  question already has (log 1 + count), ``fuse`` the pool's own evidence within the question (the candidate's summed
  reciprocal rank over the systems, that sum over the question's largest and over its total, and the question's
  number of candidates); ``&`` joins a ``features=`` and a ``trees=`` variant.

A prior variant is tuned on the labels it is then measured on (out of fold by question, but the choice of
variant sees every fold), so its gain is an upper bound on what it would give on new labels. One row per variant
and metric in OUT/sampling_prior_variants.csv: the prior's AUC and Brier score on the hidden items, the median
judgments at 50 % and 80 % decided, seconds.

    python benchmarks/sampling_prior_variants.py OUT [--reps 200] [--variants default,clip=0.001,...]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from _common import fb15k237, heartbeat_main
from sampling import universe
from sampling_decide import GRID, judgments_to_decide
from sklearn.metrics import brier_score_loss, roc_auc_score

from kgeval.judgments import prior as judgments_prior
from kgeval.judgments import prior_models
from kgeval.sampling import design as dz
from kgeval.sampling.simulation import simulate

VARIANTS = ("default,clip=0.003,clip=0.001,floor=0.03,floor=0.2,finegrid,trees=400/31/20/1,trees=800/63/20/1,"
            "trees=400/31/10/0.1,features=cn,features=aa,features=qrel,features=fuse,features=cn+aa+qrel+fuse,"
            "features=cn+aa+qrel+fuse&trees=400/31/20/1")
FINE = (120, 175, 225, 275, 350, 450, 600)


def trees(spec: str):
    """The BoostedPrior whose trees take ``max_iter/max_leaf_nodes/min_samples_leaf/l2`` from ``spec``."""
    it, leaves, leaf, l2 = spec.split("/")
    return partial(prior_models.BoostedPrior, max_iter=int(it), max_leaf_nodes=int(leaves),
                   min_samples_leaf=int(leaf), l2_regularization=float(l2))


def extra_features(u, kg, which: list[str]) -> np.ndarray:
    """(items, columns) of the ``features=`` variant's columns (module docstring), vectorised over the items."""
    import scipy.sparse as sp

    from kgeval.judgments.graph_features import graph_counts, reciprocal_ranks

    q, cand = u.items.q, u.items.entity
    known, rel, side = u.questions.entity[q], u.questions.relation[q], u.questions.side[q]
    tr = np.asarray(kg.splits["train"], np.int64)
    E = kg.num_entities
    adj = sp.coo_matrix((np.ones(len(tr)), (tr[:, 0], tr[:, 2])), shape=(E, E)).tocsr()
    und = ((adj + adj.T) > 0).astype(float).tocsr()
    cols = []
    for name in which:
        if name == "cn":
            cols.append(np.log1p(np.asarray(und[known].multiply(und[cand]).sum(1)).ravel()))
        elif name == "aa":
            deg = np.asarray(und.sum(1)).ravel()
            weighted = und @ sp.diags(1 / np.log(np.maximum(deg, 2)))
            cols.append(np.asarray(weighted[known].multiply(und[cand]).sum(1)).ravel())
        elif name == "qrel":
            # the question's training answers are the side frequency of its known entity on the other side: a
            # head question (?, r, t) counts (·, r, t), a tail question (h, r, ·)
            cols.append(np.log1p(graph_counts(tr, E, rel, 1 - side, known, known)[:, 0]))
        elif name == "fuse":
            rr = reciprocal_ranks(u.cand.ranks, u.cand.k).sum(1)
            top = np.zeros(q.max() + 1)
            np.maximum.at(top, q, rr)
            total, n = np.bincount(q, rr, q.max() + 1), np.bincount(q, minlength=q.max() + 1)
            cols += [rr, rr / np.maximum(top[q], 1e-12), rr / np.maximum(total[q], 1e-12), n[q]]
        else:
            raise SystemExit(f"--variants: unknown feature {name!r} (cn, aa, qrel, fuse)")
    return np.column_stack(cols)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--variants", default=VARIANTS)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    u = universe()
    base_prior, shipped, clip = u.out_of_fold_prior("boosted"), judgments_prior.PRIORS["boosted"], dz.P_CLIP
    h = u.hidden
    rows = []
    kg = fb15k237()
    for variant in args.variants.split(","):
        parts = dict(part.partition("=")[::2] for part in variant.split("&"))
        kind, value = next(iter(parts.items()))
        t0 = time.perf_counter()
        grid, floor, p, uv = GRID, 0.1, base_prior, u
        if "features" in parts:
            uv = replace(u, features=replace(u.features, extra=np.column_stack(
                [u.features.extra, extra_features(u, kg, parts["features"].split("+"))])))
        if parts.keys() & {"features", "trees"}:  # one fit, with the variant's columns and trees
            judgments_prior.PRIORS["boosted"] = trees(parts["trees"]) if "trees" in parts else shipped
            try:  # (the name fit_prior resolves 'boosted' by)
                p = uv.out_of_fold_prior("boosted")
            finally:
                judgments_prior.PRIORS["boosted"] = shipped
        if kind == "clip":
            dz.P_CLIP = float(value)
        elif kind == "floor":
            floor = float(value)
        elif kind == "finegrid":
            grid = tuple(sorted(set(GRID) | set(FINE)))
        elif kind not in ("default", "trees", "features"):
            raise SystemExit(f"--variants: unknown variant {variant!r}")
        try:
            table = simulate(uv, {"boosted": p}, ("P@k", "RR@k"), grid, args.reps, designs=(), min_delta=0.0,
                             floor_share=floor)
        finally:
            dz.P_CLIP = clip
        for metric, g in table.groupby("Metric"):
            rows.append({"variant": variant, "Metric": metric, "auc": roc_auc_score(u.truth[h], p[h]),
                         "brier": brier_score_loss(u.truth[h], p[h]),
                         "median_judgments_50": float(np.median(judgments_to_decide(g, 0.5)["mean_judgments"])),
                         "median_judgments_80": float(np.median(judgments_to_decide(g, 0.8)["mean_judgments"])),
                         "reps": args.reps, "seconds": round(time.perf_counter() - t0, 1)})
        print(pd.DataFrame(rows[-2:]).to_string(index=False), flush=True)
    pd.DataFrame(rows).round(4).to_csv(args.out / "sampling_prior_variants.csv", index=False)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
