"""Rank-based metrics, one class each, in the style of PyKEEN's ``metrics/ranking.py``.

A metric is M(r_1 … r_n) = g(⊕ f(r_i)) with a per-item rank transform f, an aggregation ⊕ (the arithmetic
mean unless stated) and a post-transform g (Hoyt et al. 2022, Table 2). Ranks are realistic ranks unless the
caller passes others; a realistic rank of a tied answer can be x.5 and enters every formula as given
(f(r) = r, 1/r, log r, 𝟙[r ≤ k] of the non-integer value; 𝟙[10.5 ≤ 10] = 0). ``num_candidates`` holds N_i,
the number of candidates of ranking task i after filtering; it differs per task.

Three ways to evaluate a metric:

* ``__call__(ranks, num_candidates, weights)`` — the metric of one set of ranking tasks, optionally with
  per-item weights (relation re-weighting, paper Eq. 1): every mean below is then the weighted mean.
* ``item_values`` / ``aggregate`` — for metrics that are the arithmetic mean of a per-item value
  (``is_item_mean``: MR, MRR, Hits@k and, with the constants of the whole set passed, the adjusted metrics of
  :mod:`kgeval.metrics.adjusted`): ``aggregate(item_values(r, N)) == metric(r, N)``. Metrics that are not an
  arithmetic mean of anything per item (IMR, HMR, GMR, IGMR, most unified metrics) raise
  ``NotImplementedError`` there: a column of per-item values whose mean is *not* the metric would be
  resampled wrongly by the stability and significance analyses.
* ``components`` / ``combine`` — every metric: ``components(r, N)`` is an (n, C) array of per-item quantities
  and ``combine(means, n)`` maps their (weighted) column means, shape (..., C), to the metric, so that
  ``metric == combine(component_means(components), n)`` on any subset or resample of the items. ``n`` is the
  number of ranking tasks the means stand for; only the z-scores use it (Var of a mean over n tasks is
  mean(Var_i)/n). :func:`kgeval.metrics.moments.resample_values` evaluates many resamples of many systems at once.

Expectations and variances are taken under the null model r_i ~ U{1 … N_i}, independent across tasks
(``expected_value`` / ``variance``, exact closed forms where they exist, ``NoClosedFormError`` otherwise);
``expectation_mc`` / ``variance_mc`` give seeded Monte-Carlo estimates with their standard errors for every
metric. With weights, E[Σ w̃_i x_i] = Σ w̃_i E[x_i] and Var = Σ w̃_i² Var[x_i] (w̃ normalised to sum 1), as in
PyKEEN; without weights Var[M] = Σ Var_i / n².

The shared means, moments and harmonic numbers are in :mod:`kgeval.metrics.moments`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .moments import (
    NoClosedFormError,
    component_means,
    effective_n,
    harmonic_numbers,
    mean_expectation,
    mean_variance,
    normalised,
    weighted_mean,
)


class RankBasedMetric:
    """Base class. A subclass is the metric's one declaration (:mod:`kgeval.metrics.registry` builds its columns
    ``micro_<key>``/``macro_<key>`` and the name resolver from these attributes):

    ``key``: the column suffix (``mrr``; ``hits@{k}`` for a metric with a cutoff k, which the instance fills in);
    ``label``: the figure label (``MRR``, ``Hits@{k}``); ``name`` and ``formula``; ``value_range`` and
    ``increasing`` (higher is better); ``family``: ``rank`` or ``adjusted``; ``synonyms``: further names the
    resolver accepts (PyKEEN's names among them); ``citation``: where the metric is defined.

    ``is_item_mean``: the metric is the arithmetic mean of ``item_values`` (so ``aggregate`` restores it);
    ``needs_candidates``: the metric needs ``num_candidates``; ``best``: the metric's optimum (all ranks 1)."""

    key: ClassVar[str]
    label: ClassVar[str]
    name: ClassVar[str]
    formula: ClassVar[str]
    value_range: ClassVar[tuple[float, float]]
    increasing: ClassVar[bool]
    family: ClassVar[str] = "rank"
    synonyms: ClassVar[tuple[str, ...]] = ()
    citation: ClassVar[str] = ""
    is_item_mean: ClassVar[bool] = True
    needs_candidates: ClassVar[bool] = False
    best: ClassVar[float] = 1.0

    # -- per-item values (arithmetic-mean metrics) ------------------------------------------------------
    def item_values(self, ranks: np.ndarray, num_candidates: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError(
            f"{type(self).__name__} is not the arithmetic mean of a per-item value: use components/combine")

    def aggregate(self, values: np.ndarray, weights: np.ndarray | None = None) -> float:
        if not self.is_item_mean:
            raise NotImplementedError(f"{type(self).__name__} has no per-item values: use components/combine")
        return weighted_mean(values, weights)

    # -- components (every metric) ----------------------------------------------------------------------
    def components(self, ranks: np.ndarray, num_candidates: np.ndarray | None = None) -> np.ndarray:
        """Per-item quantities (..., n, C) whose column means determine the metric (default: item values)."""
        return np.asarray(self.item_values(np.asarray(ranks, dtype=float), num_candidates))[..., None]

    def combine(self, means: np.ndarray, n=None) -> np.ndarray:
        """The metric from the column means (..., C) of ``components``; ``n``: tasks per mean (z-scores)."""
        return np.asarray(means, dtype=np.float64)[..., 0]

    def _effective_n(self, num_candidates: np.ndarray | None, weights: np.ndarray | None, n: int) -> float:
        return effective_n(weights, n)

    def _from_components(self, ranks: np.ndarray, num_candidates, weights, **kwargs) -> np.ndarray:
        ranks = np.asarray(ranks, dtype=float)
        comps = self.components(ranks, num_candidates, **kwargs)
        means = component_means(comps, weights)
        return self.combine(means, n=self._effective_n(num_candidates, weights, ranks.shape[-1]))

    def __call__(self, ranks: np.ndarray, num_candidates: np.ndarray | None = None,
                 weights: np.ndarray | None = None) -> float:
        if self.is_item_mean:
            return self.aggregate(self.item_values(np.asarray(ranks, dtype=float), num_candidates), weights)
        if len(ranks) == 0:
            return float("nan")
        return float(self._from_components(ranks, num_candidates, weights))

    # -- null model -------------------------------------------------------------------------------------
    def expected_value(self, num_candidates: np.ndarray, weights: np.ndarray | None = None) -> float:
        """E[M] under r_i ~ U{1..N_i} independent (closed form); ``NoClosedFormError`` if there is none."""
        raise NoClosedFormError(f"{type(self).__name__}: no closed-form expectation, use expectation_mc")

    def variance(self, num_candidates: np.ndarray, weights: np.ndarray | None = None) -> float:
        """Var[M] under r_i ~ U{1..N_i} independent (closed form); ``NoClosedFormError`` if there is none."""
        raise NoClosedFormError(f"{type(self).__name__}: no closed-form variance, use variance_mc")

    def std(self, num_candidates: np.ndarray, weights: np.ndarray | None = None) -> float:
        return float(np.sqrt(self.variance(num_candidates, weights)))

    def sample_null(self, num_candidates: np.ndarray, samples: int = 10_000, seed: int = 0,
                    weights: np.ndarray | None = None, **kwargs) -> np.ndarray:
        """The metric on ``samples`` seeded draws of integer ranks r_i ~ U{1..N_i} (independent)."""
        N = np.asarray(num_candidates, dtype=np.int64)
        if N.ndim != 1 or N.size == 0 or (N < 1).any():
            raise ValueError("num_candidates must be a non-empty 1-d array of positive integers")
        rng = np.random.default_rng(seed)
        chunk = max(1, int(4_000_000 // (N.size * self._mc_cost(N, **kwargs))))
        out = np.empty(samples)
        for start in range(0, samples, chunk):
            s = min(chunk, samples - start)
            r = rng.integers(1, N + 1, size=(s, N.size)).astype(np.float64)
            out[start:start + s] = self._from_components(r, N, weights, **kwargs)
        return out

    def _mc_cost(self, num_candidates: np.ndarray, **kwargs) -> int:
        """Floats per item and sample that ``_from_components`` holds (to size the Monte-Carlo chunks)."""
        return int(self.components(np.ones((1, len(num_candidates))), num_candidates, **kwargs).shape[-1])

    def moments_mc(self, num_candidates: np.ndarray, samples: int = 10_000, seed: int = 0,
                   weights: np.ndarray | None = None, **kwargs) -> tuple[float, float, float, float]:
        """Seeded Monte-Carlo estimates from one set of draws: (E, its standard error s/√samples, Var (sample
        variance, ddof 1), its asymptotic standard error √((m₄ − s⁴)/samples), m₄ the 4th central moment)."""
        x = self.sample_null(num_candidates, samples, seed, weights, **kwargs)
        v = float(x.var(ddof=1))
        m4 = float(np.mean((x - x.mean()) ** 4))
        return float(x.mean()), float(np.sqrt(v / samples)), v, float(np.sqrt(max(m4 - v * v, 0.0) / samples))

    def expectation_mc(self, num_candidates: np.ndarray, samples: int = 10_000, seed: int = 0,
                       weights: np.ndarray | None = None, **kwargs) -> tuple[float, float]:
        """Seeded Monte-Carlo estimate of E[M] under the null and its standard error s/√samples."""
        return self.moments_mc(num_candidates, samples, seed, weights, **kwargs)[:2]

    def variance_mc(self, num_candidates: np.ndarray, samples: int = 10_000, seed: int = 0,
                    weights: np.ndarray | None = None, **kwargs) -> tuple[float, float]:
        """Seeded Monte-Carlo estimate of Var[M] under the null and its standard error (see ``moments_mc``)."""
        return self.moments_mc(num_candidates, samples, seed, weights, **kwargs)[2:]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _ArithmeticMeanMetric(RankBasedMetric):
    """A metric M = 1/n Σ f(r_i) with closed-form per-item null moments E[f(r_i)], Var[f(r_i)]."""

    def item_expectation(self, num_candidates: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def item_variance(self, num_candidates: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def expected_value(self, num_candidates, weights=None):
        return mean_expectation(self.item_expectation(_candidates(num_candidates)), weights)

    def variance(self, num_candidates, weights=None):
        return mean_variance(self.item_variance(_candidates(num_candidates)), weights)


def _candidates(num_candidates) -> np.ndarray:
    if num_candidates is None:
        raise ValueError("this metric needs num_candidates")
    N = np.asarray(num_candidates, dtype=np.float64)
    if (N < 1).any():
        raise ValueError("num_candidates must be ≥ 1")
    return N


class MeanRank(_ArithmeticMeanMetric):
    """Mean rank (MR): mean of r_i. Range [1, ∞), lower is better. Source: Bordes et al. (2013).

    Null model: E[r_i] = (N_i+1)/2, Var[r_i] = (N_i²−1)/12 (PyKEEN ``arithmetic_mean_rank``)."""

    key = "mr"
    label = "MR"
    synonyms = ("mean_rank", "arithmetic_mean_rank")
    citation = "Bordes et al. (2013)"
    name = "Mean Rank"
    formula = "MR = 1/n Σ r_i"
    value_range = (1.0, float("inf"))
    increasing = False

    def item_values(self, ranks, num_candidates=None):
        return np.asarray(ranks, dtype=float)

    def item_expectation(self, num_candidates):
        return (np.asarray(num_candidates, dtype=float) + 1.0) / 2.0

    def item_variance(self, num_candidates):
        N = np.asarray(num_candidates, dtype=float)
        return (N ** 2 - 1.0) / 12.0


class MeanReciprocalRank(_ArithmeticMeanMetric):
    """Mean reciprocal rank (MRR): mean of 1/r_i. Range (0, 1], higher is better. Source: Voorhees (1999).

    Null model (exact, discrete): E[1/r_i] = H_{N_i}/N_i, Var[1/r_i] = H^(2)_{N_i}/N_i − (H_{N_i}/N_i)²
    (PyKEEN ``inverse_harmonic_mean_rank``); the paper's continuous ln N/(N−1) is an approximation."""

    key = "mrr"
    label = "MRR"
    synonyms = ("mean_reciprocal_rank", "inverse_harmonic_mean_rank")
    citation = "Voorhees (1999)"
    name = "Mean Reciprocal Rank"
    formula = "MRR = 1/n Σ 1/r_i"
    value_range = (0.0, 1.0)
    increasing = True

    def item_values(self, ranks, num_candidates=None):
        return 1.0 / np.asarray(ranks, dtype=float)

    def item_expectation(self, num_candidates):
        N = np.asarray(num_candidates, dtype=float)
        return harmonic_numbers(N, 1) / N

    def item_variance(self, num_candidates):
        N = np.asarray(num_candidates, dtype=float)
        return np.maximum(harmonic_numbers(N, 2) / N - (harmonic_numbers(N, 1) / N) ** 2, 0.0)


class HitsAtK(_ArithmeticMeanMetric):
    """Hits@k: share of tasks with r_i ≤ k. Range [0, 1], higher is better. Source: Bordes et al. (2013).

    Null model: 𝟙[r_i ≤ k] ~ Bernoulli(p_i), p_i = min(k, N_i)/N_i, Var = p_i(1−p_i)."""

    key = "hits@{k}"
    label = "Hits@{k}"
    name = "Hits at k"
    formula = "Hits@k = 1/n Σ 𝟙[r_i ≤ k]"
    value_range = (0.0, 1.0)
    increasing = True
    synonyms = ("hits_at", "h")
    citation = "Bordes et al. (2013)"

    def __init__(self, k: int = 10):
        if k < 1:
            raise ValueError("k must be positive")
        self.k = int(k)
        self.key = type(self).key.format(k=self.k)  # type: ignore[misc]

    def item_values(self, ranks, num_candidates=None):
        return (np.asarray(ranks, dtype=float) <= self.k).astype(float)

    def item_expectation(self, num_candidates):
        N = np.asarray(num_candidates, dtype=float)
        return np.minimum(self.k, N) / N

    def item_variance(self, num_candidates):
        p = self.item_expectation(num_candidates)
        return p * (1.0 - p)

    def __repr__(self) -> str:
        return f"HitsAtK(k={self.k})"


class InverseMeanRank(RankBasedMetric):
    """Inverse (arithmetic) mean rank (IMR): 1/MR. Range (0, 1], higher is better.
    Source: Hoyt et al. (2022), PyKEEN ``inverse_arithmetic_mean_rank``.

    Components (r_i), combine 1/m. No closed-form null moments (E[1/MR] ≠ 1/E[MR]): Monte-Carlo only.
    Same system ranking as MR (monotone transform)."""

    key = "imr"
    label = "IMR"
    synonyms = ("inverse_arithmetic_mean_rank", "iamr")
    citation = "Hoyt et al. (2022)"
    name = "Inverse Mean Rank"
    formula = "IMR = (1/n Σ r_i)^−1"
    value_range = (0.0, 1.0)
    increasing = True
    is_item_mean = False

    def components(self, ranks, num_candidates=None):
        return np.asarray(ranks, dtype=float)[..., None]

    def combine(self, means, n=None):
        return 1.0 / np.asarray(means, dtype=np.float64)[..., 0]


class HarmonicMeanRank(RankBasedMetric):
    """Harmonic mean rank (HMR): M_−1 of r = (1/n Σ 1/r_i)^−1 = 1/MRR. Range [1, ∞), lower is better.
    Source: Hoyt et al. (2022), PyKEEN ``harmonic_mean_rank``.

    Components (1/r_i), combine 1/m. No closed-form null moments: Monte-Carlo only. Same system ranking as
    MRR."""

    key = "hmr"
    label = "HMR"
    synonyms = ("harmonic_mean_rank",)
    citation = "Hoyt et al. (2022)"
    name = "Harmonic Mean Rank"
    formula = "HMR = (1/n Σ r_i^−1)^−1"
    value_range = (1.0, float("inf"))
    increasing = False
    is_item_mean = False

    def components(self, ranks, num_candidates=None):
        return 1.0 / np.asarray(ranks, dtype=float)[..., None]

    def combine(self, means, n=None):
        return 1.0 / np.asarray(means, dtype=np.float64)[..., 0]


def _power_moments(N: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For r ~ U{1..N_i} and exponent a_i: (E[r^a_i] − 1, Var[r^a_i]) per item, computed stably from
    Y = expm1(a log j) summed over j = 1..N_i (cumulative sums up to max N_i, one pass per distinct a)."""
    N = np.asarray(N, dtype=np.int64)
    a = np.broadcast_to(np.asarray(a, dtype=np.float64), N.shape)
    m1 = np.empty(N.shape)
    var = np.empty(N.shape)
    logj = np.log(np.arange(1, N.max() + 1, dtype=np.float64))
    uniq, inv = np.unique(a, return_inverse=True)
    for u, ai in enumerate(uniq):
        sel = inv.reshape(N.shape) == u
        y = np.expm1(ai * logj[: N[sel].max()])
        c1, c2 = np.cumsum(y), np.cumsum(y * y)
        n = N[sel]
        e1, e2 = c1[n - 1] / n, c2[n - 1] / n
        m1[sel] = e1
        var[sel] = np.maximum(e2 - e1 * e1, 0.0)
    return m1, var


def _product_moments(N: np.ndarray, a: np.ndarray) -> tuple[float, float]:
    """E and Var of Π_i r_i^{a_i}, r_i ~ U{1..N_i} independent: E = Π E[r_i^a_i],
    Var = E² · (Π E[r_i^{2a_i}]/E[r_i^a_i]² − 1), evaluated in logs (log1p / expm1) to avoid cancellation."""
    m1, var = _power_moments(N, a)
    log_e = float(np.sum(np.log1p(m1)))
    ratio = float(np.sum(np.log1p(var / (1.0 + m1) ** 2)))
    e = float(np.exp(log_e))
    return e, e * e * float(np.expm1(ratio))


class GeometricMeanRank(RankBasedMetric):
    """Geometric mean rank (GMR): M_0 of r = exp(1/n Σ log r_i). Range [1, ∞), lower is better.
    Source: Hoyt et al. (2022), PyKEEN ``geometric_mean_rank``.

    Components (log r_i), combine exp(m). Null moments exact though the paper lists none: GMR = Π r_i^{w̃_i}
    (w̃_i = 1/n or the normalised weights) is a product of independent factors, so E[GMR] = Π E[r_i^{w̃_i}] and
    Var[GMR] = Π E[r_i^{2w̃_i}] − E[GMR]², with E[r^a] = 1/N Σ_{j≤N} j^a a finite sum (as PyKEEN)."""

    key = "gmr"
    label = "GMR"
    synonyms = ("geometric_mean_rank",)
    citation = "Hoyt et al. (2022)"
    name = "Geometric Mean Rank"
    formula = "GMR = (Π r_i)^(1/n)"
    value_range = (1.0, float("inf"))
    increasing = False
    is_item_mean = False
    _sign: ClassVar[float] = 1.0

    def components(self, ranks, num_candidates=None):
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(ranks, dtype=float))[..., None]

    def combine(self, means, n=None):
        return np.exp(self._sign * np.asarray(means, dtype=np.float64)[..., 0])

    def _moments(self, num_candidates, weights):
        N = np.asarray(_candidates(num_candidates), dtype=np.int64)
        return _product_moments(N, self._sign * normalised(weights, N.size))

    def expected_value(self, num_candidates, weights=None):
        return self._moments(num_candidates, weights)[0]

    def variance(self, num_candidates, weights=None):
        return self._moments(num_candidates, weights)[1]


class InverseGeometricMeanRank(GeometricMeanRank):
    """Inverse geometric mean rank (IGMR): 1/GMR = exp(−1/n Σ log r_i). Range (0, 1], higher is better.
    Source: Hoyt et al. (2022), PyKEEN ``inverse_geometric_mean_rank``.

    Components (log r_i), combine exp(−m). Null moments exact like GMR's with exponents −w̃_i (PyKEEN has
    none for IGMR). Same system ranking as GMR."""

    key = "igmr"
    label = "IGMR"
    synonyms = ("inverse_geometric_mean_rank",)
    citation = "Hoyt et al. (2022)"
    name = "Inverse Geometric Mean Rank"
    formula = "IGMR = (Π r_i)^(−1/n)"
    value_range = (0.0, 1.0)
    increasing = True
    _sign = -1.0


def study_metrics(max_k: int = 10) -> list[RankBasedMetric]:
    """The KGC metrics of the SIGIR study, in the published column order: Hits@1…10, MR, MRR."""
    return [HitsAtK(k) for k in range(1, max_k + 1)] + [MeanRank(), MeanReciprocalRank()]


def base_family_metrics() -> list[RankBasedMetric]:
    """The further base metrics of Hoyt et al. (2022): IMR, HMR, GMR, IGMR."""
    return [InverseMeanRank(), HarmonicMeanRank(), GeometricMeanRank(), InverseGeometricMeanRank()]
