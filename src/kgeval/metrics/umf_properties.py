"""Properties of the unified metric framework's rank transform f_α (``shared/papers/unified-metric-framework-
slides.txt``, "Transformation function(f) and FOTR" and "Size invariant"): the focus-on-top rate and the
expectation of f under uniformly random ranks as the number of candidates grows.

**Focus-on-top rate.** The slides' text names the property and its direction ("bigger FOTR indicates less
focus on top") and states that it is unchanged by the rescaling f_α → (x^α − 1)/(1 − |E|^α) + 1, but gives no
formula. Here FOTR_k(f) = (f(k) − f(N)) / (f(1) − f(N)): the share of f's range over ranks 1…N that is still
to be lost below rank k. It is invariant under every affine map of f (so equal for x^α and its rescaling, as
the slides require), near 0 when f spends its range on the top k (MRR: FOTR_10 ≈ 0.1), near 1 when f is
almost linear in the rank (MR), and increasing in α for fixed k and N.

**Size invariance.** With r ~ U{1…N} and the transform rescaled to the candidate set (f(1) = 1, f(N) = 0),
E[f_α] = 1 − (mean_{j≤N} j^α − 1)/(N^α − 1). It equals 1/2 for every N ≥ 2 exactly when α = 1 (the
expectation of a linear f is its mid-range): the only exactly size-invariant α. For α > 0 it tends to
α/(α + 1) as N grows; for α ≤ 0 it tends to 0 (1/ln N for α = 0, H_N/N-like for α = −1, the MRR's
N-dependence that Hoyt et al. adjust for). ``size_invariant_alpha`` finds the α where E[f] agrees on two
candidate counts numerically; the tests check it against the closed form α = 1.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from .moments import harmonic_numbers


def power_transform(x, alpha: float, worst: float) -> np.ndarray:
    """f_α(x) rescaled so that f(1) = 1 and f(worst) = 0 (α = 0: 1 − ln x / ln worst; α = −inf: 𝟙[x ≤ 1])."""
    x = np.asarray(x, dtype=np.float64)
    if np.isneginf(alpha):
        return (x <= 1).astype(np.float64)
    if alpha == 0:
        return 1.0 - np.log(x) / np.log(worst)
    return 1.0 - np.expm1(alpha * np.log(x)) / np.expm1(alpha * np.log(worst))


def fotr(alpha: float, k, num_candidates) -> np.ndarray:
    """FOTR_k = (f(k) − f(N)) / (f(1) − f(N)) of x^α (or of any affine rescaling of it), elementwise over k
    and N (k ≤ N, N ≥ 2). α = −inf is the Hits@1 step: FOTR_k = 0 for k ≥ 2."""
    k, N = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(num_candidates, dtype=np.float64))
    if (N < 2).any() or (k < 1).any() or (k > N).any():
        raise ValueError("FOTR needs 1 ≤ k ≤ N and N ≥ 2")
    return power_transform(k, alpha, N) if not np.isneginf(alpha) else (k <= 1).astype(np.float64)


def expected_transform(alpha: float, num_candidates) -> np.ndarray:
    """E[f_α(r)] for r ~ U{1…N}, f rescaled to the N candidates (f(1) = 1, f(N) = 0); N = 1 gives 1.

    Exact sums: Σ_{j≤N} j^α from the cumulative sum up to max N (α = −1 and −2 through the harmonic numbers,
    α = 0 through ln N! = gammaln(N + 1))."""
    N = np.asarray(num_candidates, dtype=np.int64)
    if (N < 1).any():
        raise ValueError("num_candidates must be ≥ 1")
    Nf = N.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.isneginf(alpha):
            out = 1.0 / Nf
        elif alpha == 0:
            from scipy.special import gammaln

            out = 1.0 - gammaln(Nf + 1.0) / (Nf * np.log(Nf))
        else:
            if alpha in (-1.0, -2.0):
                sums = harmonic_numbers(Nf, order=int(-alpha))
            else:
                j = np.arange(1, N.max() + 1, dtype=np.float64)
                sums = np.cumsum(j ** alpha)[N - 1]
            out = 1.0 - (sums / Nf - 1.0) / np.expm1(alpha * np.log(Nf))
    return np.where(N == 1, 1.0, out)


def limit_expectation(alpha: float) -> float:
    """lim_{N→∞} E[f_α]: α/(α + 1) for α > 0, 0 for α ≤ 0."""
    return alpha / (alpha + 1.0) if alpha > 0 else 0.0


def size_invariant_alpha(n_small: int, n_large: int, bracket: tuple[float, float] = (0.2, 5.0)) -> float:
    """The α > 0 at which E[f_α] is the same for n_small and n_large candidates (root of the difference)."""
    def gap(a: float) -> float:
        e = expected_transform(a, np.array([n_small, n_large]))
        return float(e[0] - e[1])

    return float(optimize.brentq(gap, *bracket, xtol=1e-12))
