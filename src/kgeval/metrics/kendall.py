"""Kendall's τ-b between system rankings, vectorised over many rankings at once.

τ-b = (n_c − n_d) / sqrt((n_0 − n_x)(n_0 − n_y)) over the n_0 = n(n−1)/2 system pairs, n_x / n_y the pairs
tied in x / y (scipy's default variant, ``scipy.stats.kendalltau``). Rankings are compared through the metric
values themselves: a metric where lower is better (MR) flips both rankings, which leaves τ unchanged, so the
direction only matters when two different metrics are compared (``increasing`` arguments).
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr, ndtri


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


def tau_b_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """τ-b of every row of X against the same row of Y (both R × n); NaN where a row has no untied pair."""
    sx = _pair_signs(np.atleast_2d(np.asarray(X, dtype=float)))
    sy = _pair_signs(np.atleast_2d(np.asarray(Y, dtype=float)))
    num = (sx * sy).sum(-1)
    denom = np.sqrt(np.count_nonzero(sx, axis=-1) * np.count_nonzero(sy, axis=-1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, num / denom, np.nan)


def tau_b(x, y, increasing_x: bool = True, increasing_y: bool = True) -> float:
    """τ-b between the system rankings induced by two metric vectors (same systems, same order)."""
    x = np.asarray(x, dtype=float) * (1 if increasing_x else -1)
    y = np.asarray(y, dtype=float) * (1 if increasing_y else -1)
    return float(tau_b_many(x[None, :], y)[0])


def bca_interval(estimate: float, boot: np.ndarray, jackknife: Sequence[np.ndarray], level: float = 0.95
                 ) -> tuple[float, float]:
    """Bias-corrected and accelerated (BCa) bootstrap interval (Efron and Tibshirani 1993, §14.3; for several
    independent samples the jackknife of each sample adds to the acceleration, their eq. 15.36), as
    ``scipy.stats.bootstrap(method="BCa")`` computes it.

    ``boot``: the statistic on each bootstrap resample; ``jackknife``: per independent sample, the statistic
    with each of its items left out in turn. The bias correction z0 counts bootstrap values equal to the
    estimate as half below (τ is discrete: many resamples reproduce it exactly); a z0 of ±∞ (every value on one
    side) is clipped to the share 1/(2B) from the edge so the interval stays defined (scipy returns a
    degenerate interval there). NaN values (a resample with no untied pair) are left out.

    Note: the interval holds the estimate exactly when |z0| ≤ z_{(1+level)/2} (unless the acceleration reaches
    the pole, a·(z0 ± z) ≥ 1), which is when the percentile interval holds it too: BCa corrects where the
    interval lies, not whether resamples that all fall on one side of the estimate can bracket it.

    Returns (lower, upper); NaN when the estimate or every bootstrap value is NaN.
    """
    boot = np.asarray(boot, dtype=float)
    boot = boot[np.isfinite(boot)]
    if boot.size == 0 or not np.isfinite(estimate):
        return float("nan"), float("nan")
    below = (np.count_nonzero(boot < estimate) + np.count_nonzero(boot <= estimate)) / (2 * boot.size)
    z0 = ndtri(np.clip(below, 0.5 / boot.size, 1 - 0.5 / boot.size))
    num = den = 0.0
    for theta in jackknife:
        theta = np.asarray(theta, dtype=float)
        theta = theta[np.isfinite(theta)]
        n = theta.size
        if n < 2:
            continue
        u = (n - 1) * (theta.mean() - theta)
        num += np.sum(u**3) / n**3
        den += np.sum(u**2) / n**2
    accel = num / (6 * den**1.5) if den > 0 else 0.0
    z = ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    shift = 1 - accel * (z0 + z)
    # past the pole of the correction (|a| large) the adjusted level runs to the far end of the distribution
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas = np.where(shift > 0, ndtr(z0 + (z0 + z) / shift), (z > 0).astype(float))
    lo, hi = np.quantile(boot, alphas)
    return float(lo), float(hi)


def tau_jackknife(items_a: np.ndarray, items_b: np.ndarray, keys_a: np.ndarray | None = None,
                  keys_b: np.ndarray | None = None, weights_b: np.ndarray | None = None) -> list[np.ndarray]:
    """Leave-one-out τ-b between the column means of two item matrices (items × systems), as the samples of
    a BCa acceleration. Independent sides (no keys): each item of ``items_a`` left out (``items_b`` whole),
    then each item of ``items_b`` — two samples. Paired sides (``keys_a``/``keys_b``, the unit of each item,
    shared between the sides): each unit left out of both sides at once — one sample. All leave-one-out means
    at once: (sum − left-out rows) / (count − left-out count). ``weights_b``: fixed item weights of side b
    (its means are weighted means; leaving an item out removes its weight)."""
    a = np.asarray(items_a, dtype=np.float64)
    b = np.asarray(items_b, dtype=np.float64)
    wa = np.ones(len(a))
    wb = np.ones(len(b)) if weights_b is None else np.asarray(weights_b, dtype=np.float64)
    if keys_a is None or keys_b is None:
        out = []
        for x, w, other, w_other in ((a, wa, b, wb), (b, wb, a, wa)):
            if len(x) < 2:
                out.append(np.empty(0))
                continue
            wx = x * w[:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                loo = (wx.sum(0)[None, :] - wx) / (w.sum() - w)[:, None]
            # τ-b is symmetric in its two rankings
            out.append(tau_b_many(loo, (other * w_other[:, None]).sum(0) / w_other.sum()))
        return out
    _, inv = np.unique(np.concatenate([np.asarray(keys_a), np.asarray(keys_b)]), return_inverse=True)
    n_units = int(inv.max()) + 1
    loo = []
    for x, w, idx in ((a, wa, inv[: len(a)]), (b, wb, inv[len(a):])):
        wx = x * w[:, None]
        left = np.zeros((n_units, x.shape[1]))
        np.add.at(left, idx, wx)
        count = w.sum() - np.bincount(idx, weights=w, minlength=n_units)
        with np.errstate(invalid="ignore", divide="ignore"):
            loo.append((wx.sum(0)[None, :] - left) / count[:, None])
    return [tau_b_rows(loo[0], loo[1])]


def system_codes(systems: list[str], reference: np.ndarray, increasing: bool = True) -> dict[str, str]:
    """Code systems A, B, C … by their rank on a reference metric (A = best), as the paper does."""
    order = np.argsort(-np.asarray(reference, dtype=float) if increasing else np.asarray(reference, dtype=float),
                       kind="stable")
    letters = string.ascii_uppercase + string.ascii_lowercase
    return {systems[i]: letters[k] for k, i in enumerate(order)}
