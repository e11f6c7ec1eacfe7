"""Correlations of the KP stage (``correlate``): Pearson's r, Spearman's ρ (Pearson of average ranks) and
Kendall's τ-b (``kgeval.metrics.kendall``) over the pairs where both values are finite; NaN with fewer than three
pairs (two points always correlate perfectly) or when either side is constant. And the ranking metrics they
correlate with.
"""

from __future__ import annotations

import numpy as np

from ..metrics.kendall import tau_b

# the ranking metrics of the paper's Table 2, micro and macro, as named in evaluation.csv
RANKING_METRICS = [f"{avg}_{m}" for avg in ("micro", "macro")
                   for m in ("hits@1", "hits@3", "hits@10", "mr", "mrr")]
MEASURES = {"Conicity": "conicity", "AVL": "avl", "GK(train)": "gk_train", "GK(test)": "gk_test",
            "KP(train)": "kp_train", "KP(test)": "kp_test"}
CORRELATIONS = ("pearson", "spearman", "kendall")


def stratified_metrics(columns) -> list[str]:
    """The unified-metric columns of an evaluation table (``micro_umf_…``, ``macro_umf_…``), in table order."""
    return [c for c in columns if c.startswith(("micro_umf_", "macro_umf_"))]


def correlate(x, y) -> dict[str, float]:
    """Pearson, Spearman and Kendall τ-b of two vectors over their finite pairs (NaN if fewer than 3 or
    constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    from scipy.stats import rankdata

    nan = dict.fromkeys(CORRELATIONS, float("nan"))
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return nan
    return {"pearson": float(np.corrcoef(x, y)[0, 1]),
            "spearman": float(np.corrcoef(rankdata(x), rankdata(y))[0, 1]),
            "kendall": tau_b(x, y)}
