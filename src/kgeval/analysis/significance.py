"""Discriminative power: significance tests over every pair of systems (Figure 8).

* paired two-tailed Student t-test on per-item scores (answers for micro, questions for macro metrics),
  vectorised over all pairs; equal to ``scipy.stats.ttest_rel``;
* randomised Tukey HSD (Carterette 2012; Sakai's recommendation for many systems): in each of B trials the
  scores of every item are permuted across systems; a pair's p-value is the share of trials whose largest
  difference between any two system means reaches the pair's observed difference. It controls the
  family-wise error over all pairs.

Discriminative power is read from the sorted p-value curves and the share of pairs significant at α.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def paired_t_pvalues(items: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-tailed paired t-test p-values for all system pairs of an item matrix (n × S).

    Returns (i, j, p) for the pairs i < j. A pair with identical scores on every item gets p = 1."""
    X = np.asarray(items, dtype=np.float64)
    n = X.shape[0]
    i, j = np.triu_indices(X.shape[1], k=1)
    d = X[:, i] - X[:, j]
    mean = d.mean(0)
    sd = d.std(0, ddof=1) if n > 1 else np.zeros(len(i))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = 2 * stats.t.sf(np.abs(t), df=max(n - 1, 1))
    p = np.where(sd > 0, p, np.where(mean == 0, 1.0, 0.0))
    return i, j, p


def tukey_hsd_pvalues(items: np.ndarray, trials: int = 1000, seed: int = 0,
                      chunk: int = 50) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Randomised Tukey HSD p-values for all system pairs of an item matrix (n × S)."""
    X = np.asarray(items, dtype=np.float64)
    n, S = X.shape
    i, j = np.triu_indices(S, k=1)
    observed = np.abs(X.mean(0)[i] - X.mean(0)[j])
    rng = np.random.default_rng(seed)
    exceed = np.zeros(len(i))
    for start in range(0, trials, chunk):
        b = min(chunk, trials - start)
        perm = np.argsort(rng.random((b, n, S)), axis=2)  # an independent permutation per item and trial
        shuffled = np.take_along_axis(np.broadcast_to(X, (b, n, S)), perm, axis=2)
        means = shuffled.mean(1)  # (b × S)
        spread = means.max(1) - means.min(1)
        exceed += (spread[:, None] >= observed[None, :] - 1e-12).sum(0)
    return i, j, exceed / trials


def discriminative_power(pvalues: np.ndarray, alpha: float = 0.05) -> float:
    """Share of system pairs with p < α."""
    return float(np.mean(np.asarray(pvalues) < alpha)) if len(pvalues) else float("nan")


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values of one family of tests (NaN p-values are left out of the family and
    stay NaN): the i-th smallest of m p-values becomes max over j ≤ i of (m − j + 1)·p_(j), capped at 1, so
    ``holm(p) < α`` rejects exactly the hypotheses Holm's procedure rejects at family-wise level α."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if not len(ok):
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    out[order] = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
    return out
