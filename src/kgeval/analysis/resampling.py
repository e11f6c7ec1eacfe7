"""Resampling over test items: bootstrap confidence intervals of τ, and subsampling stability (Figure 7).

Items are the units a metric averages: answers for micro metrics, questions for macro metrics. An item matrix
holds one row per item and one column per system (the per-item values f(r) of one metric); a metric is the
column mean, so any resample is a weighted column mean, computed for many resamples at once as a matrix
product.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from ..metrics.kendall import bca_interval, tau_b_many, tau_b_rows, tau_jackknife


def resample_means(items: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Column means of ``items`` (n × S) under each row of ``weights`` (R × n) → (R × S)."""
    w = np.asarray(weights, dtype=np.float64)
    return (w @ np.asarray(items, dtype=np.float64)) / w.sum(axis=1, keepdims=True)


def bootstrap_weights(n: int, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """Multiplicity of each item in ``repeats`` bootstrap resamples (rows sum to n)."""
    idx = rng.integers(0, n, size=(repeats, n))
    # one bincount over (resample, item) cells: an order of magnitude faster than np.add.at
    flat = (np.arange(repeats, dtype=np.int64)[:, None] * n + idx).ravel()
    return np.bincount(flat, minlength=repeats * n).reshape(repeats, n).astype(np.float32)


def bootstrap_taus(items_a: np.ndarray, items_b: np.ndarray, repeats: int = 1000, seed: int = 0,
                   keys_a: np.ndarray | None = None, keys_b: np.ndarray | None = None,
                   weights_b: np.ndarray | None = None) -> np.ndarray:
    """τ-b between the column means of ``repeats`` bootstrap resamples of two item matrices; NaN where a side
    has no untied pair (or no item drawn).

    Without keys the two sides are resampled independently (different samples). With ``keys_a``/``keys_b``
    (the unit of each item, e.g. an answer's triple and side) the units of both sides are resampled together:
    a unit drawn k times weighs k on each side that has it, so items the two sides share stay paired.
    ``weights_b``: a fixed weight per item of ``items_b`` (Table 4's relation re-weighting), so that side's
    metric is the weighted mean; a resample multiplies it by the item's multiplicity."""
    rng = np.random.default_rng(seed)
    if keys_a is None or keys_b is None:
        wa = bootstrap_weights(len(items_a), repeats, rng)
        wb = bootstrap_weights(len(items_b), repeats, rng)
    else:
        _, inv = np.unique(np.concatenate([np.asarray(keys_a), np.asarray(keys_b)]), return_inverse=True)
        w = bootstrap_weights(int(inv.max()) + 1, repeats, rng)
        wa, wb = w[:, inv[: len(items_a)]], w[:, inv[len(items_a):]]
    if weights_b is not None:
        wb = wb * np.asarray(weights_b, dtype=np.float32)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        a = resample_means(items_a, wa)
        b = resample_means(items_b, wb)
    return tau_b_rows(a, b)


def bootstrap_tau(items_a: np.ndarray, items_b: np.ndarray, repeats: int = 1000, seed: int = 0,
                  level: float = 0.95, method: str = "bca", keys_a: np.ndarray | None = None,
                  keys_b: np.ndarray | None = None, weights_b: np.ndarray | None = None
                  ) -> tuple[float, float, float]:
    """τ-b between the system rankings of two item matrices, with a bootstrap interval (``bootstrap_taus``:
    independent sides, or paired through ``keys_a``/``keys_b``).

    ``method="bca"`` (default): bias-corrected and accelerated (``kendall.bca_interval``, acceleration from the
    leave-one-out jackknife, ``kendall.tau_jackknife``). Resampling adds noise to every system's mean, which
    pulls the resampled τ towards 0, so the percentile interval lies low and can exclude the estimate; BCa
    corrects that median bias. Two test sets that share most of their items (FB-Test-S and FB-Test-S-C(d)) must
    also be resampled paired: resampled independently, nearly every resample falls below the estimate and no
    interval built from the resamples holds it. ``method="percentile"``: the plain percentile interval.
    ``weights_b``: fixed item weights of side b (see ``bootstrap_taus``). Returns (τ on the full data, lower,
    upper)."""
    mean_b = items_b.mean(0) if weights_b is None else np.average(items_b, axis=0, weights=weights_b)
    tau = float(tau_b_many(items_a.mean(0)[None, :], mean_b)[0])
    taus = bootstrap_taus(items_a, items_b, repeats, seed, keys_a, keys_b, weights_b)
    if method == "percentile":
        lo, hi = np.nanquantile(taus, [(1 - level) / 2, 1 - (1 - level) / 2])
    elif method == "bca":
        lo, hi = bca_interval(tau, taus, tau_jackknife(items_a, items_b, keys_a, keys_b, weights_b), level)
    else:
        raise ValueError(f"unknown bootstrap interval method {method!r} (bca or percentile)")
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


def pair_signs(items: np.ndarray, z: float, weights: np.ndarray | None = None) -> np.ndarray:
    """For every system pair i < j, +1 when the z-interval of the mean difference x_i − x_j over the items
    lies above 0, −1 when below, 0 when it holds 0 (the pair's order is open). The items are the units
    sampled (answers or questions), so the difference's standard error is that of a mean of paired values,
    which the question effect shared by all systems does not enter. ``weights``: fixed item weights (a
    weighted mean, its standard error treating the weights as constants)."""
    x = np.asarray(items, dtype=np.float64)
    i, j = np.triu_indices(x.shape[1], k=1)
    d = x[:, i] - x[:, j]
    w = np.ones(len(x)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = w.sum()
    mean = w @ d / total
    se = np.sqrt((w**2) @ (d - mean) ** 2) / total
    return np.where(mean - z * se > 0, 1, np.where(mean + z * se < 0, -1, 0))


def order_interval(items_a: np.ndarray, items_b: np.ndarray, level: float = 0.95,
                   weights_b: np.ndarray | None = None) -> tuple[float, float, float]:
    """τ between two item matrices' system rankings, with an interval for the τ between the systems'
    population means: every pair whose order both sides decide (``pair_signs``, Bonferroni over all pairs of
    both sides, so that every decided order is right with probability at least ``level``) counts as it is,
    every open pair as concordant for the upper and discordant for the lower end. The interval holds the true
    τ whenever all decided orders are right, so its coverage is at least ``level`` (more: transitivity is not
    used), for independent or paired sides alike.

    Why not the bootstrap: resampling the items adds noise to every system's mean once more, and τ of noisy
    means is biased towards 0 more than the bootstrap's own shift reveals (the percentile and BCa intervals of
    ``bootstrap_tau`` missed the true τ in every simulated draw of 13 systems 0.005 apart on independent
    question sets: ``benchmarks/verdict_coverage.py``, docs/results.md). Returns (τ of the sample means, lower,
    upper)."""
    a, b = np.asarray(items_a, dtype=np.float64), np.asarray(items_b, dtype=np.float64)
    mean_b = b.mean(0) if weights_b is None else np.average(b, axis=0, weights=weights_b)
    tau = float(tau_b_many(a.mean(0)[None, :], mean_b)[0])
    n_pairs = a.shape[1] * (a.shape[1] - 1) // 2
    if n_pairs == 0:
        return tau, float("nan"), float("nan")
    z = float(ndtri(1 - (1 - level) / (4 * n_pairs)))  # two-sided, 2·n_pairs statements
    prod = pair_signs(a, z) * pair_signs(b, z, weights_b)
    known = int((prod > 0).sum() - (prod < 0).sum())
    open_pairs = int((prod == 0).sum())
    return tau, (known - open_pairs) / n_pairs, (known + open_pairs) / n_pairs
