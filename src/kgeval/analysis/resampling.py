"""Resampling over test items: bootstrap confidence intervals of τ, and subsampling stability (Figure 7).

Items are the units a metric averages: answers for micro metrics, questions for macro metrics. An item matrix
holds one row per item and one column per system (the per-item values f(r) of one metric); a metric is the
column mean, so any resample is a weighted column mean, computed for many resamples at once as a matrix
product.
"""

from __future__ import annotations

import numpy as np

from .kendall import tau_b_many


def resample_means(items: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Column means of ``items`` (n × S) under each row of ``weights`` (R × n) → (R × S)."""
    w = np.asarray(weights, dtype=np.float64)
    return (w @ np.asarray(items, dtype=np.float64)) / w.sum(axis=1, keepdims=True)


def bootstrap_weights(n: int, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """Multiplicity of each item in ``repeats`` bootstrap resamples (rows sum to n)."""
    idx = rng.integers(0, n, size=(repeats, n))
    w = np.zeros((repeats, n), np.float32)
    np.add.at(w, (np.repeat(np.arange(repeats), n), idx.ravel()), 1.0)
    return w


def bootstrap_tau(items_a: np.ndarray, items_b: np.ndarray, repeats: int = 1000, seed: int = 0,
                  level: float = 0.95) -> tuple[float, float, float]:
    """τ-b between the system rankings of two item matrices, with a percentile bootstrap interval from
    resampling the items of each side independently (their test sets are different samples).

    Returns (τ on the full data, lower, upper)."""
    rng = np.random.default_rng(seed)
    tau = float(tau_b_many(items_a.mean(0)[None, :], items_b.mean(0))[0])
    a = resample_means(items_a, bootstrap_weights(len(items_a), repeats, rng))
    b = resample_means(items_b, bootstrap_weights(len(items_b), repeats, rng))
    i, j = np.triu_indices(a.shape[1], k=1)
    sa, sb = np.sign(a[:, i] - a[:, j]), np.sign(b[:, i] - b[:, j])
    num = (sa * sb).sum(1)
    den = np.sqrt(np.count_nonzero(sa, 1) * np.count_nonzero(sb, 1).astype(float))
    taus = np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0)
    lo, hi = np.nanquantile(taus, [(1 - level) / 2, 1 - (1 - level) / 2])
    return tau, float(lo), float(hi)


DEFAULT_SIZES = (0.01,) + tuple(np.round(np.arange(0.05, 0.951, 0.05), 2))


def subsample_masks(n_units: int, sizes=DEFAULT_SIZES, repeats: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Boolean unit masks (len(sizes)·repeats × n_units): ``repeats`` seeded random subsets of each size
    (a share of the units, at least one unit), and the size of each row."""
    rng = np.random.default_rng(seed)
    rows, size_of = [], []
    for p in sizes:
        k = max(1, int(round(p * n_units)))
        for _ in range(repeats):
            m = np.zeros(n_units, bool)
            m[rng.choice(n_units, size=k, replace=False)] = True
            rows.append(m)
            size_of.append(p)
    return np.array(rows), np.array(size_of)


def stability_taus(items: np.ndarray, unit_of_item: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """τ-b between the ranking on each subset (items whose unit is selected) and on the whole set.

    ``unit_of_item`` maps items to units (a test triple); an item is kept when any of its units is selected:
    micro items (answers) have one triple each; a macro item (question) is kept when one of its triples is.
    ``unit_of_item`` may be a list of arrays (units per item) for the macro case.
    """
    if isinstance(unit_of_item, list):  # questions: kept when any of their triples is selected
        lengths = np.array([len(u) for u in unit_of_item])
        if (lengths == 0).any():
            raise ValueError("every item needs at least one unit")
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        hit = masks[:, np.concatenate(unit_of_item)].astype(np.int32)
        sel = (np.add.reduceat(hit, starts, axis=1) > 0).astype(np.float32)
    else:
        sel = masks[:, unit_of_item].astype(np.float32)
    keep = sel.sum(1) > 0
    means = np.full((masks.shape[0], items.shape[1]), np.nan)
    means[keep] = resample_means(items, sel[keep])
    return tau_b_many(means, items.mean(0))
