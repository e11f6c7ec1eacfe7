"""Rank-based metrics, one class each, in the style of PyKEEN's ``metrics/ranking.py``.

A metric is M(r_1 … r_n) = g(⊕ f(r_i)) with a per-item rank transform f, an aggregation ⊕ (the arithmetic
mean unless stated) and a post-transform g. ``item_values`` returns f(r_i) per ranking task, which the
stability and significance analyses resample; ``__call__`` aggregates them, optionally with per-item weights
(relation re-weighting, paper Eq. 1). Ranks are realistic ranks unless the caller passes others.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np


def weighted_mean(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    if len(values) == 0:
        return float("nan")
    if weights is None:
        return float(np.mean(values))
    total = float(np.sum(weights))
    return float(np.sum(values * weights) / total) if total > 0 else float("nan")


class RankBasedMetric:
    """Base class. Subclasses state name, formula, range, direction and source."""

    key: ClassVar[str]
    name: ClassVar[str]
    formula: ClassVar[str]
    value_range: ClassVar[tuple[float, float]]
    increasing: ClassVar[bool]
    source: ClassVar[str] = ""

    def item_values(self, ranks: np.ndarray, num_candidates: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def aggregate(self, values: np.ndarray, weights: np.ndarray | None = None) -> float:
        return weighted_mean(values, weights)

    def __call__(self, ranks: np.ndarray, num_candidates: np.ndarray | None = None,
                 weights: np.ndarray | None = None) -> float:
        return self.aggregate(self.item_values(np.asarray(ranks, dtype=float), num_candidates), weights)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class MeanRank(RankBasedMetric):
    """Mean rank (MR): mean of r_i. Range [1, ∞), lower is better. Source: Bordes et al. (2013)."""

    key = "mr"
    name = "Mean Rank"
    formula = "MR = 1/n Σ r_i"
    value_range = (1.0, float("inf"))
    increasing = False

    def item_values(self, ranks, num_candidates=None):
        return np.asarray(ranks, dtype=float)


class MeanReciprocalRank(RankBasedMetric):
    """Mean reciprocal rank (MRR): mean of 1/r_i. Range (0, 1], higher is better. Source: Voorhees (1999)."""

    key = "mrr"
    name = "Mean Reciprocal Rank"
    formula = "MRR = 1/n Σ 1/r_i"
    value_range = (0.0, 1.0)
    increasing = True

    def item_values(self, ranks, num_candidates=None):
        return 1.0 / np.asarray(ranks, dtype=float)


class HitsAtK(RankBasedMetric):
    """Hits@k: share of tasks with r_i ≤ k. Range [0, 1], higher is better. Source: Bordes et al. (2013)."""

    name = "Hits at k"
    formula = "Hits@k = 1/n Σ 𝟙[r_i ≤ k]"
    value_range = (0.0, 1.0)
    increasing = True

    def __init__(self, k: int = 10):
        if k < 1:
            raise ValueError("k must be positive")
        self.k = int(k)

    @property
    def key(self) -> str:  # type: ignore[override]
        return f"hits@{self.k}"

    def item_values(self, ranks, num_candidates=None):
        return (np.asarray(ranks, dtype=float) <= self.k).astype(float)

    def __repr__(self) -> str:
        return f"HitsAtK(k={self.k})"


def study_metrics(max_k: int = 10) -> list[RankBasedMetric]:
    """The KGC metrics of the SIGIR study, in the published column order: Hits@1…10, MR, MRR."""
    return [HitsAtK(k) for k in range(1, max_k + 1)] + [MeanRank(), MeanReciprocalRank()]
