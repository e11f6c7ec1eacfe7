"""Kendall's τ-b between system rankings, vectorised over many rankings at once.

τ-b = (n_c − n_d) / sqrt((n_0 − n_x)(n_0 − n_y)) over the n_0 = n(n−1)/2 system pairs, n_x / n_y the pairs
tied in x / y (scipy's default variant, ``scipy.stats.kendalltau``). Rankings are compared through the metric
values themselves: a metric where lower is better (MR) flips both rankings, which leaves τ unchanged, so the
direction only matters when two different metrics are compared (``increasing`` arguments).
"""

from __future__ import annotations

import string

import numpy as np


def _pair_signs(x: np.ndarray) -> np.ndarray:
    """sign(x_i − x_j) for every pair i < j along the last axis."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    return np.sign(x[..., i] - x[..., j])


def tau_b_many(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """τ-b of every row of X (R × n) against y (n,); NaN where either side has no untied pair."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    sx = _pair_signs(X)
    sy = _pair_signs(np.asarray(y, dtype=float))
    num = sx @ sy
    nx = np.count_nonzero(sx, axis=-1)
    ny = np.count_nonzero(sy)
    denom = np.sqrt(nx * float(ny))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, num / denom, np.nan)


def tau_b(x, y, increasing_x: bool = True, increasing_y: bool = True) -> float:
    """τ-b between the system rankings induced by two metric vectors (same systems, same order)."""
    x = np.asarray(x, dtype=float) * (1 if increasing_x else -1)
    y = np.asarray(y, dtype=float) * (1 if increasing_y else -1)
    return float(tau_b_many(x[None, :], y)[0])


def system_codes(systems: list[str], reference: np.ndarray, increasing: bool = True) -> dict[str, str]:
    """Code systems A, B, C … by their rank on a reference metric (A = best), as the paper does."""
    order = np.argsort(-np.asarray(reference, dtype=float) if increasing else np.asarray(reference, dtype=float),
                       kind="stable")
    letters = string.ascii_uppercase + string.ascii_lowercase
    return {systems[i]: letters[k] for k, i in enumerate(order)}
