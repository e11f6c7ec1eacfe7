"""Means, moments and resampling of per-item metric values, shared by every rank-based metric.

Generalised harmonic numbers H_N = Σ_{j≤N} 1/j and H^(2)_N = Σ_{j≤N} 1/j² are computed in closed form from
scipy's digamma / trigamma: H_N = ψ(N+1) + γ, H^(2)_N = π²/6 − ψ₁(N+1); vectorised over any N, no cache, and
within a few ulp of the exact rational sums (checked against exact fractions in ``tests/test_metric_families.py``).
With weights, E[Σ w̃_i x_i] = Σ w̃_i E[x_i] and Var = Σ w̃_i² Var[x_i] (w̃ normalised to sum 1), as in PyKEEN;
without weights Var[M] = Σ Var_i / n².
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special


class NoClosedFormError(ValueError):
    """The metric has no closed-form expectation / variance under the null model: use the Monte-Carlo
    estimates ``expectation_mc`` / ``variance_mc``."""


def weighted_mean(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    if len(values) == 0:
        return float("nan")
    if weights is None:
        return float(np.mean(values))
    total = float(np.sum(weights))
    return float(np.sum(values * weights) / total) if total > 0 else float("nan")


def harmonic_numbers(n, order: int = 1) -> np.ndarray:
    """H^(order)_n = Σ_{j=1}^{n} j^(−order) for order 1 or 2, elementwise over integer n ≥ 0 (H_0 = 0)."""
    n = np.asarray(n, dtype=np.float64)
    if order == 1:
        return special.digamma(n + 1.0) + np.euler_gamma
    if order == 2:
        return np.pi ** 2 / 6.0 - special.polygamma(1, n + 1.0)
    raise ValueError("order must be 1 or 2")


def normalised(weights: np.ndarray | None, n: int) -> np.ndarray:
    if weights is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},)")
    return w / w.sum()


def mean_expectation(individual: np.ndarray, weights: np.ndarray | None = None) -> float:
    """E of the (weighted) mean of independent items with expectations ``individual``."""
    individual = np.asarray(individual, dtype=np.float64)
    return float(np.sum(normalised(weights, individual.size) * individual))


def mean_variance(individual: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Var of the (weighted) mean of independent items with variances ``individual``: Σ w̃_i² V_i."""
    individual = np.asarray(individual, dtype=np.float64)
    if weights is None:
        return float(individual.sum() / individual.size ** 2)
    return float(np.sum(normalised(weights, individual.size) ** 2 * individual))


def _contract(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Σ_i W[..., i] x[i]: W (n,) against x (..., n, C), or W (R, n) against x (n, ...)."""
    if W.ndim == 1:
        return np.einsum("n,...nc->...c", W, x)
    return np.einsum("rn,n...->r...", W, x)


def _weighted_means(W: np.ndarray, components: np.ndarray) -> np.ndarray:
    """Weighted means of ``components`` under weights W: W (n,) against (..., n, C) → (..., C), or weight rows
    W (R, n) against (n, C) / (n, S, C) → (R, C) / (R, S, C).

    ±inf entries (log 0, 0^p for p < 0) are kept exact: a mean is ±inf when an item with positive weight is,
    instead of the NaN that 0·inf would give for items of weight 0."""
    c = np.asarray(components, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    total = W.sum(-1)
    if W.ndim == 2:
        total = total.reshape((-1,) + (1,) * (c.ndim - 1))
    finite = np.isfinite(c)
    if finite.all():
        return _contract(W, c) / total
    out = _contract(W, np.where(finite, c, 0.0)) / total
    pos = (W > 0).astype(np.float64)
    has_pos = _contract(pos, np.isposinf(c).astype(np.float64)) > 0
    has_neg = _contract(pos, np.isneginf(c).astype(np.float64)) > 0
    has_nan = _contract(pos, np.isnan(c).astype(np.float64)) > 0
    out = np.where(has_pos, np.inf, out)
    out = np.where(has_neg, -np.inf, out)
    return np.where(has_nan | (has_pos & has_neg), np.nan, out)


def component_means(components: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """(Weighted) means of per-item components (..., n, C) over the item axis → (..., C)."""
    c = np.asarray(components, dtype=np.float64)
    w = np.ones(c.shape[-2]) if weights is None else np.asarray(weights, dtype=np.float64)
    return _weighted_means(w, c)


def effective_n(weights: np.ndarray | None, n: int) -> float:
    """Kish's effective number of items (Σw)²/Σw²; n without weights."""
    if weights is None:
        return float(n)
    w = np.asarray(weights, dtype=np.float64)
    return float(w.sum() ** 2 / np.sum(w ** 2))


def resample_values(metric: Any, components: np.ndarray, weights: np.ndarray,
                    n: np.ndarray | None = None) -> np.ndarray:
    """The metric (a :class:`~kgeval.metrics.rank_based.RankBasedMetric`) on many resamples of the items at once.

    ``components``: (n_items, C) for one system or (n_items, S, C) for S systems (``metric.components`` of each
    system stacked on axis 1); ``weights``: (R, n_items) multiplicities of the items in R resamples (bootstrap
    counts, 0/1 subsample masks, or relation weights × multiplicities). Returns (R,) or (R, S).

    ``n`` (R,) is the number of ranking tasks each resample stands for, used by the z-scores only; by default
    the row sums of ``weights`` (a subset of m items counts m tasks; a bootstrap resample of n items, duplicates
    included, counts n tasks — the variance of the metric on a test set of that composition)."""
    c = np.asarray(components, dtype=np.float64)
    W = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    means = _weighted_means(W, c)  # (R, [S,] C)
    nn = W.sum(1) if n is None else np.asarray(n, dtype=np.float64)
    if c.ndim == 3:
        nn = nn[:, None]
    return metric.combine(means, n=nn)
