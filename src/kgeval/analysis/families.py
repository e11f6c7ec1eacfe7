"""The new analysis of the metric families: do chance adjustment and the unified metric framework change the
study's conclusions?

* **Within one test set** every adjusted or z-scored metric is an affine function of its base metric with
  constants that depend only on the candidate counts N_i, which are the same for every system: system
  rankings, Kendall's τ, subsampling stability and paired t-test p-values are identical to the base metric's.
  ``identical_within_testset`` verifies this on the actual tables instead of assuming it.
* **Across datasets** the constants differ (FB15k-237 and WN18RR differ 3× in entities), so a comparison of
  a system's score on two datasets can flip: ``cross_dataset`` reports, per system, raw and adjusted MRR and
  Hits@10 on both datasets and whether the raw and the adjusted comparison disagree.
* The **unified metrics** reorder systems within a test set when the rank transform, the power mean or the
  class weights change: ``umf_grid`` evaluates a grid over α and p with uniform and frequency weighting of
  answer entities, and ``kgeval.metrics.umf.ranking_sensitivity`` gives τ between neighbouring grid points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.kendall import tau_b
from ..metrics.registry import higher_is_better
from ..metrics.umf import DEFAULT_ALPHAS, DEFAULT_PS, ranking_sensitivity, umf_grid_systems

ADJUSTED_PAIRS = [("micro_mrr", "micro_amrr"), ("micro_mrr", "micro_zmrr"), ("micro_hits@10", "micro_ah@10"),
                  ("micro_hits@10", "micro_zh@10"), ("micro_mr", "micro_amri"), ("macro_mrr", "macro_amrr"),
                  ("macro_hits@10", "macro_ah@10")]


def identical_within_testset(evaluation: pd.DataFrame, pairs=ADJUSTED_PAIRS) -> pd.DataFrame:
    """τ between the system ranking of each base metric and of its adjusted / z-scored form on one test set."""
    rows = []
    for base, adj in pairs:
        if base in evaluation and adj in evaluation:
            rows.append({"base": base, "adjusted": adj,
                         "tau": tau_b(evaluation[base], evaluation[adj], higher_is_better(base), higher_is_better(adj))})
    return pd.DataFrame(rows)


def cross_dataset(a: pd.DataFrame, b: pd.DataFrame, name_a: str, name_b: str,
                  pairs=(("micro_mrr", "micro_amrr"), ("micro_hits@10", "micro_ah@10"),
                         ("macro_mrr", "macro_amrr"), ("macro_hits@10", "macro_ah@10"))) -> pd.DataFrame:
    """Per system and metric pair: raw and adjusted values on two datasets, on which dataset the system looks
    better by each, and whether the two verdicts flip."""
    systems = [s for s in a["System"] if s in set(b["System"])]
    A, B = a.set_index("System").loc[systems], b.set_index("System").loc[systems]
    rows = []
    for raw, adj in pairs:
        if raw not in A or adj not in A:
            continue
        for s in systems:
            raw_a, raw_b, adj_a, adj_b = A.at[s, raw], B.at[s, raw], A.at[s, adj], B.at[s, adj]
            better_raw = name_a if raw_a > raw_b else name_b
            better_adj = name_a if adj_a > adj_b else name_b
            rows.append({"System": s, "raw": raw, "adjusted": adj, f"raw_{name_a}": raw_a, f"raw_{name_b}": raw_b,
                         f"adjusted_{name_a}": adj_a, f"adjusted_{name_b}": adj_b, "better_by_raw": better_raw,
                         "better_by_adjusted": better_adj, "flips": better_raw != better_adj})
    return pd.DataFrame(rows)


def umf_grid(per_answer: pd.DataFrame, num_entities: int, alphas=DEFAULT_ALPHAS, ps=DEFAULT_PS,
             weightings=("uniform", "frequency")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The unified metric of every system over α × p × weighting (classes = answer entities), from the
    per-answer ranks, and τ between neighbouring grid points."""
    ranks, cands, classes = {}, {}, {}
    for system, grp in per_answer.groupby("System", sort=False):
        ranks[system] = grp["rank"].to_numpy(dtype=float)
        cands[system] = grp["num_candidates"].to_numpy(dtype=float)
        classes[system] = grp["entity"].to_numpy()
    grid = umf_grid_systems(ranks, num_entities, classes=classes, num_candidates=cands, alphas=alphas, ps=ps,
                            weightings=weightings)
    return grid, ranking_sensitivity(grid)


# where the usual metrics sit on the α × p grid (kgeval.metrics.umf; shared/specs/metric-families.md): MRR is
# α = −1, p = 1; the MR family is α = 1 with p = 1 (MR), 0 (GMR), −1 (HMR); the Hits-like step transforms are
# the limit α → −∞, off the grid beyond its smallest α
UMF_MARKS = [(-1.0, 1.0, "MRR"), (1.0, 1.0, "MR"), (1.0, 0.0, "GMR"), (1.0, -1.0, "HMR")]
UMF_NOTE = ("Outlined: MRR (α = −1, p = 1), MR (α = 1, p = 1), GMR (p = 0), HMR (p = −1); micro with frequency "
            "weights, macro by entity with uniform ones.\nHits@k-like metrics are the limit α → −∞, above the "
            "top row. Colour: RdBu, τ = +1 blue (same ranking), 0 white, −1 red (reversed).")


def sensitivity_matrix(sens: pd.DataFrame, weighting: str, axis: str) -> pd.DataFrame:
    """τ to the neighbouring grid point along ``axis`` as an α × p matrix (for a heat map)."""
    sub = sens[(sens["weighting"] == weighting) & (sens["axis"] == axis)]
    return sub.pivot_table(index="alpha", columns="p", values="tau").sort_index()


def family_columns(table: pd.DataFrame, prefix: str) -> list[str]:
    """The metric-family columns of a table (adjusted, z-scored, unified) for a prefix."""
    keys = ("amr", "amri", "amrr", "zmr", "zmrr", "imr", "hmr", "gmr", "igmr")
    return [c for c in table.columns if c.startswith(prefix + "_") and (
        c[len(prefix) + 1:] in keys or c[len(prefix) + 1:].startswith(("ah@", "zh@", "umf_")))]


def summarise_flips(cross: pd.DataFrame) -> pd.DataFrame:
    if cross.empty:
        return cross
    g = cross.groupby(["raw", "adjusted"])["flips"]
    return g.agg(flipped="sum", systems="count").reset_index().assign(
        share=lambda d: np.where(d["systems"] > 0, d["flipped"] / d["systems"], np.nan))
