"""Chance-adjusted and z-scored rank metrics (Berrendorf et al. 2020; Hoyt et al. 2022, §4 and App. B).

Each is an affine transform a·M + b of a base metric M ∈ {MR, MRR, Hits@k} whose constants depend only on the
numbers of candidates N_i (and the item weights), never on the ranks:

* expectation-normalised (AMR):  M / E[M];
* adjusted index (AMRI, AMRR, AH@k):  (M − E[M]) / (best(M) − E[M]), best = 1 for all three (every rank 1):
  1 = perfect, 0 = chance, < 0 worse than chance. For MR this is AMRI = 1 − (MR − 1)/(E[MR] − 1) ∈ [−1, 1];
  for MRR and Hits@k the lower bound −E/(1 − E) depends on the data;
* z-score (ZMR, ZMRR, ZH@k):  s·(M − E[M]) / √Var[M], s = −1 for MR (lower is better) so that larger is
  always better.

E and Var are exact, per task, under r_i ~ U{1..N_i} independent: E[M] = Σ w̃_i E_i and Var[M] = Σ w̃_i² V_i
(w̃ = 1/n without weights: E = mean of E_i, Var = Σ V_i / n²), see :mod:`kgeval.metrics.rank_based`.

Components (for resampling): (f(r_i), E_i) for AMR and the adjusted indices — the column means of a resample
are (M, E[M]) of that resample, so the constants follow the resample's own N_i; (f(r_i), E_i, V_i) for the
z-scores, with Var[M] of a mean over n tasks = mean(V_i)/n: ``combine`` needs ``n``. Without weights n is the
number of items (bootstrap duplicates counted as separate tasks, see ``moments.resample_values``); with
weights ``__call__`` uses n* = Σ w̃_i V_i / Σ w̃_i² V_i (``effective_n``), which makes mean_w(V)/n* the exact
Σ w̃_i² V_i of PyKEEN.

``item_values``: the affine transform applied to f(r_i) with the constants of the whole set passed (unweighted)
— their plain mean is the metric on that set; on a subset the constants would change (E, and n for the
z-scores), so the analyses should resample components instead. Because the constants depend only on the N_i,
which are those of the test set and its judgments and hence the same for every system, an adjusted metric
ranks the systems of one test set exactly as its base metric does (also on every subset or resample, where the
constants are again common to all systems), and paired tests on the per-item values give the same p-values.

Definitional notes vs PyKEEN 1.11.1 (``pykeen.metrics.ranking``), with which all values, expectations and
variances agree (tests/test_metric_families.py):

* PyKEEN's AMRR is ``adjusted_inverse_harmonic_mean_rank`` (synonym ``amrr``), the re-indexed
  (MRR − E)/(1 − E); the paper's appendix B.2.1 calls MRR/E[MRR] the "chance-adjusted MRR" — not provided here;
  PyKEEN's AMR ``adjusted_arithmetic_mean_rank`` is MR/E[MR] (value range (0, 2)).
* PyKEEN's ``adjusted_arithmetic_mean_rank_index`` is the generic (MR − E)/(1 − E), identical to
  1 − (MR − 1)/(E[MR] − 1) (paper Eq. 9).
* The paper's closed forms for MRR (Eqs. 10–13) are the continuous approximation ln N/(N−1) and its variance
  sums lack the 1/n² (also Eqs. 7 and 18); its Hits@k uses k/N_i without the min(k, N_i). PyKEEN and this
  module use the exact discrete forms.
* PyKEEN divides by max(|x|, 1e-12) when best = E or Var = 0 (all N_i ≤ k for Hits@k, all N_i = 1); here such
  degenerate sets give ±inf / NaN.
* PyKEEN's z-scores and re-indexed metrics state that they only support realistic ranks; here any ranks are
  accepted, and realistic x.5 ranks enter f as given.
"""

from __future__ import annotations

import numpy as np

from .moments import normalised, weighted_mean
from .rank_based import (
    HitsAtK,
    MeanRank,
    MeanReciprocalRank,
    RankBasedMetric,
    _ArithmeticMeanMetric,
    _candidates,
    base_family_metrics,
)


class _Derived(RankBasedMetric):
    """a·M + b of an arithmetic-mean base metric M with constants from the N_i (and weights)."""

    base: _ArithmeticMeanMetric
    needs_candidates = True
    family = "adjusted"
    citation = "Hoyt et al. (2022), PyKEEN pykeen.metrics.ranking"

    def __init__(self, base: _ArithmeticMeanMetric):
        self.base = base

    def coefficients(self, num_candidates, weights=None) -> tuple[float, float]:
        """(a, b) with metric = a·M + b for this set of tasks."""
        raise NotImplementedError

    def __call__(self, ranks, num_candidates=None, weights=None):
        if len(ranks) == 0:
            return float("nan")
        N = _candidates(num_candidates)
        a, b = self.coefficients(N, weights)
        return float(a * self.base(np.asarray(ranks, dtype=float), N, weights) + b)

    def item_values(self, ranks, num_candidates=None):
        N = _candidates(num_candidates)
        a, b = self.coefficients(N)
        return a * self.base.item_values(ranks, N) + b

    def aggregate(self, values, weights=None):
        return weighted_mean(values, weights)

    def _stack(self, ranks, num_candidates, moments) -> np.ndarray:
        """Stack f(r_i) with per-task null moments (computed once per task, broadcast over leading axes)."""
        ranks = np.asarray(ranks, dtype=float)
        N = _candidates(num_candidates)
        cols = [self.base.item_values(ranks, N)] + [np.broadcast_to(m(N), ranks.shape) for m in moments]
        return np.stack(cols, -1)

    def expected_value(self, num_candidates, weights=None):
        a, b = self.coefficients(_candidates(num_candidates), weights)
        return a * self.base.expected_value(num_candidates, weights) + b

    def variance(self, num_candidates, weights=None):
        a, _ = self.coefficients(_candidates(num_candidates), weights)
        return a * a * self.base.variance(num_candidates, weights)


def _div(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(x, y)


class _ExpectationNormalised(_Derived):
    """M / E[M]; components (f(r_i), E_i)."""

    def coefficients(self, num_candidates, weights=None):
        return float(_div(1.0, self.base.expected_value(num_candidates, weights))), 0.0

    def components(self, ranks, num_candidates=None):
        return self._stack(ranks, num_candidates, [self.base.item_expectation])

    def combine(self, means, n=None):
        m = np.asarray(means, dtype=np.float64)
        return _div(m[..., 0], m[..., 1])

    def expected_value(self, num_candidates, weights=None):
        return 1.0


class _Reindexed(_Derived):
    """(M − E[M]) / (best − E[M]); components (f(r_i), E_i)."""

    increasing = True

    def coefficients(self, num_candidates, weights=None):
        e = self.base.expected_value(num_candidates, weights)
        a = float(_div(1.0, self.base.best - e))
        return a, -a * e

    def components(self, ranks, num_candidates=None):
        return self._stack(ranks, num_candidates, [self.base.item_expectation])

    def combine(self, means, n=None):
        m = np.asarray(means, dtype=np.float64)
        return _div(m[..., 0] - m[..., 1], self.base.best - m[..., 1])

    def expected_value(self, num_candidates, weights=None):
        return 0.0


class _ZScore(_Derived):
    """s·(M − E[M]) / √Var[M], s = +1 if M is increasing else −1; components (f(r_i), E_i, V_i)."""

    increasing = True
    value_range = (float("-inf"), float("inf"))

    @property
    def _sign(self) -> float:
        return 1.0 if self.base.increasing else -1.0

    def coefficients(self, num_candidates, weights=None):
        e = self.base.expected_value(num_candidates, weights)
        a = self._sign * float(_div(1.0, np.sqrt(self.base.variance(num_candidates, weights))))
        return a, -a * e

    def components(self, ranks, num_candidates=None):
        return self._stack(ranks, num_candidates, [self.base.item_expectation, self.base.item_variance])

    def combine(self, means, n=None):
        if n is None:
            raise ValueError("z-scores need n, the number of ranking tasks behind the means")
        m = np.asarray(means, dtype=np.float64)
        return self._sign * _div(m[..., 0] - m[..., 1], np.sqrt(m[..., 2] / np.asarray(n, dtype=np.float64)))

    def effective_n(self, num_candidates, weights=None) -> float:
        """n* with mean_w(V_i)/n* = Σ w̃_i² V_i (the exact variance of the weighted mean); n without weights."""
        V = self.base.item_variance(_candidates(num_candidates))
        if weights is None:
            return float(V.size)
        w = normalised(weights, V.size)
        return float(np.sum(w * V) / np.sum(w * w * V))

    def _effective_n(self, num_candidates, weights, n):
        return n if weights is None else self.effective_n(num_candidates, weights)

    def expected_value(self, num_candidates, weights=None):
        return 0.0

    def variance(self, num_candidates, weights=None):
        return 1.0


# -- MR ---------------------------------------------------------------------------------------------------
class AdjustedMeanRank(_ExpectationNormalised):
    """Adjusted mean rank (AMR): MR / E[MR], E[MR] = mean (N_i+1)/2. Range (0, 2), lower is better, 1 = chance.
    Source: Berrendorf et al. (2020); PyKEEN ``adjusted_arithmetic_mean_rank``."""

    key = "amr"
    label = "AMR"
    synonyms = ("adjusted_mean_rank", "adjusted_arithmetic_mean_rank", "aamr")
    citation = "Berrendorf et al. (2020); PyKEEN adjusted_arithmetic_mean_rank"
    name = "Adjusted Mean Rank"
    formula = "AMR = MR / E[MR]"
    value_range = (0.0, 2.0)
    increasing = False

    def __init__(self):
        super().__init__(MeanRank())


class AdjustedMeanRankIndex(_Reindexed):
    """Adjusted mean rank index (AMRI): (MR − E[MR]) / (1 − E[MR]) = 1 − (MR − 1)/(E[MR] − 1).
    Range [−1, 1], higher is better, 0 = chance. Source: Berrendorf et al. (2020);
    PyKEEN ``adjusted_arithmetic_mean_rank_index``."""

    key = "amri"
    label = "AMRI"
    synonyms = ("adjusted_mean_rank_index", "adjusted_arithmetic_mean_rank_index", "aamri")
    citation = "Berrendorf et al. (2020); PyKEEN adjusted_arithmetic_mean_rank_index"
    name = "Adjusted Mean Rank Index"
    formula = "AMRI = (MR − E[MR]) / (1 − E[MR])"
    value_range = (-1.0, 1.0)

    def __init__(self):
        super().__init__(MeanRank())


class ZMeanRank(_ZScore):
    """z-scored mean rank (ZMR): −(MR − E[MR]) / √Var[MR], Var[MR] = Σ (N_i²−1)/12 / n². Unbounded, higher is
    better, 0 = chance. Source: Hoyt et al. (2022); PyKEEN ``z_arithmetic_mean_rank``."""

    key = "zmr"
    label = "z-MR"
    synonyms = ("z_arithmetic_mean_rank", "zamr")
    name = "z-Mean Rank"
    formula = "ZMR = −(MR − E[MR]) / √Var[MR]"

    def __init__(self):
        super().__init__(MeanRank())


# -- MRR --------------------------------------------------------------------------------------------------
class AdjustedMeanReciprocalRank(_Reindexed):
    """Adjusted MRR index (AMRR): (MRR − E[MRR]) / (1 − E[MRR]), E[MRR] = mean H_{N_i}/N_i.
    Range (−E/(1−E), 1], higher is better, 0 = chance. Source: Hoyt et al. (2022);
    PyKEEN ``adjusted_inverse_harmonic_mean_rank`` (synonym ``amrr``)."""

    key = "amrr"
    label = "AMRR"
    synonyms = ("adjusted_mrr", "adjusted_inverse_harmonic_mean_rank", "aihmr")
    name = "Adjusted Mean Reciprocal Rank Index"
    formula = "AMRR = (MRR − E[MRR]) / (1 − E[MRR])"
    value_range = (float("-inf"), 1.0)

    def __init__(self):
        super().__init__(MeanReciprocalRank())


class ZMeanReciprocalRank(_ZScore):
    """z-scored MRR (ZMRR): (MRR − E[MRR]) / √Var[MRR], Var[1/r_i] = H^(2)_{N_i}/N_i − (H_{N_i}/N_i)².
    Unbounded, higher is better. Source: Hoyt et al. (2022); PyKEEN ``z_inverse_harmonic_mean_rank``."""

    key = "zmrr"
    label = "z-MRR"
    synonyms = ("z_inverse_harmonic_mean_rank", "zihmr")
    name = "z-Mean Reciprocal Rank"
    formula = "ZMRR = (MRR − E[MRR]) / √Var[MRR]"

    def __init__(self):
        super().__init__(MeanReciprocalRank())


# -- Hits@k -----------------------------------------------------------------------------------------------
class AdjustedHitsAtK(_Reindexed):
    """Adjusted Hits@k (AH@k): (H@k − E[H@k]) / (1 − E[H@k]), E = mean min(k, N_i)/N_i.
    Range (−E/(1−E), 1], higher is better, 0 = chance. Source: Hoyt et al. (2022);
    PyKEEN ``adjusted_hits_at_k``."""

    key = "ah@{k}"
    label = "AH@{k}"
    synonyms = ("adjusted_hits_at", "ahk")
    name = "Adjusted Hits at k"
    formula = "AH@k = (H@k − E[H@k]) / (1 − E[H@k])"
    value_range = (float("-inf"), 1.0)

    def __init__(self, k: int = 10):
        super().__init__(HitsAtK(k))
        self.k = self.base.k
        self.key = type(self).key.format(k=self.k)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"AdjustedHitsAtK(k={self.k})"


class ZHitsAtK(_ZScore):
    """z-scored Hits@k (ZH@k): (H@k − E[H@k]) / √Var[H@k], Var = Σ p_i(1−p_i)/n², p_i = min(k, N_i)/N_i.
    Unbounded, higher is better. Source: Hoyt et al. (2022); PyKEEN ``z_hits_at_k``."""

    key = "zh@{k}"
    label = "z-H@{k}"
    synonyms = ("z_hits_at", "zahk")
    name = "z-Hits at k"
    formula = "ZH@k = (H@k − E[H@k]) / √Var[H@k]"

    def __init__(self, k: int = 10):
        super().__init__(HitsAtK(k))
        self.k = self.base.k
        self.key = type(self).key.format(k=self.k)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"ZHitsAtK(k={self.k})"


def adjusted_metrics(ks: tuple[int, ...] = (1, 3, 10)) -> list[RankBasedMetric]:
    """AMR, AMRI, ZMR, AMRR, ZMRR, and AH@k, ZH@k for each k."""
    out: list[RankBasedMetric] = [AdjustedMeanRank(), AdjustedMeanRankIndex(), ZMeanRank(),
                                  AdjustedMeanReciprocalRank(), ZMeanReciprocalRank()]
    for k in ks:
        out += [AdjustedHitsAtK(k), ZHitsAtK(k)]
    return out


def family_metrics(ks: tuple[int, ...] = (1, 3, 10)) -> list[RankBasedMetric]:
    """The metric families beyond the study's columns: IMR, HMR, GMR, IGMR and the adjusted / z metrics."""
    return base_family_metrics() + adjusted_metrics(ks)


