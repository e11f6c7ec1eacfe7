"""Question-sampled estimates with a guarantee: MRR and Hits@k from a seeded sample of the ranked answers.

The unit is one ranked answer (a test triple's head or tail question and its answer, micro-filtered, realistic
rank), the unit over which MRR and Hits@k average. A simple random sample of n of the N answers, without
replacement, estimates the mean by the sample mean. Its 95 % interval (:func:`bounds`) is Student's t with the
finite population correction, mean ± t_{0.975, n-1} · s / √n · √(1 - n/N) (Cochran 1977, ch. 2), corrected for
skewness by Hall's (1992) cubic transformation of the studentized mean: the reciprocal rank is heavy-tailed (most
values near 0, a spike at 1), so a small sample that misses the spike has a low mean *and* a small s, and the
plain t interval (:func:`interval`) then misses on the low side (for the weakest planted systems 0.85-0.93 of
95 % at n = 100). The transformation moves the interval towards the long tail by the sample's own skewness.
Below ``MIN_SAMPLE`` answers even that interval falls under 0.94 (a sample too small to see the spike's share),
so no smaller sample is drawn; benchmarks/scale_coverage.py measures the coverage at every sample size. Paired
between systems use the same sampled answers, so the interval is that of the per-answer differences (much
narrower than two separate intervals where the systems agree). The sample size for a requested half-width h
comes from a pilot: n0 = (z s⁺ / h)², n = n0 / (1 + n0 / N), with s⁺ a one-sided 95 % upper bound of the
standard deviation (:func:`sd_upper`): sized by the pilot's own s, a sample reaches h only about half the time,
and reciprocal ranks are heavy-tailed (most near 0, a few 1), so s from a pilot of hundreds is far from sure
(at ogbl-wikikg2's shape a 500-answer pilot sized a sample whose MRR interval came out ± 0.00555 for ± 0.005).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import KgevalError

LEVEL = 0.95

#: the smallest sample of answers drawn: from here on the skewness-corrected interval covers >= 0.94 for every
#: planted system (0.946 at 100 answers), at 20-50 answers down to 0.84-0.92 (benchmarks/scale_coverage.csv)
MIN_SAMPLE = 100


def per_answer(ranks: np.ndarray, hits: tuple[int, ...] = (1, 3, 10)) -> dict[str, np.ndarray]:
    """The per-answer values whose means are MRR and Hits@k, from realistic ranks."""
    ranks = np.asarray(ranks, np.float64)
    out = {"mrr": 1.0 / ranks}
    out.update({f"hits@{k}": (ranks <= k).astype(np.float64) for k in hits})
    return out


def sample(n_population: int, n: int, seed: int) -> np.ndarray:
    """A seeded simple random sample of n of the N answers, without replacement, in ascending order."""
    if not min(MIN_SAMPLE, n_population) <= n <= n_population:
        raise KgevalError(f"sample size {n}: need {min(MIN_SAMPLE, n_population)} <= n <= {n_population} (the answers ranked; a "
                          f"smaller sample's 95 % interval of MRR covers less than 94 %: it too often misses the "
                          "rare rank-1 answers that carry much of the mean)")
    return np.sort(np.random.default_rng(seed).choice(n_population, size=n, replace=False))


def interval(values: np.ndarray, n_population: int, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Mean and half-width of the t interval over the last axis (a sample of ``n_population`` units)."""
    values = np.asarray(values, np.float64)
    n = values.shape[-1]
    fpc = math.sqrt(max(0.0, 1.0 - n / n_population))
    t = stats.t.ppf(0.5 + level / 2, n - 1)
    return values.mean(-1), t * values.std(-1, ddof=1) / math.sqrt(n) * fpc


def bounds(values: np.ndarray, n_population: int, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, lower and upper bound of the skewness-corrected t interval over the last axis (Hall 1992): with
    T = (mean - μ) / se and γ the sample skewness, g(T) = T + aT² + a²T³/3 + b (a = γ / (3√n), b = γ / (6√n)) is
    nearly pivotal, and g is monotone with the closed inverse g⁻¹(z) = ((1 + 3a(z - b))^⅓ - 1) / a, so the
    interval is [mean - se g⁻¹(t), mean - se g⁻¹(-t)]. With γ = 0 it is :func:`interval`'s."""
    values = np.asarray(values, np.float64)
    n = values.shape[-1]
    mean = values.mean(-1)
    dev = values - mean[..., None]
    sd = np.sqrt((dev ** 2).sum(-1) / (n - 1))
    se = sd / math.sqrt(n) * math.sqrt(max(0.0, 1.0 - n / n_population))
    t = stats.t.ppf(0.5 + level / 2, n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(sd > 0, (dev ** 3).mean(-1) / sd ** 3, 0.0)
    a, b = gamma / (3 * math.sqrt(n)), gamma / (6 * math.sqrt(n))

    def inverse(z):
        # (c - 1) / a with c = ∛(1 + 3a(z - b)), written as 3(z - b) / (c² + c + 1) (c³ - 1 = 3a(z - b)): no
        # cancellation when the skewness is near 0, and exactly z - b at 0
        c = np.cbrt(1 + 3 * a * (z - b))
        return 3 * (z - b) / (c * c + c + 1)

    return mean, mean - se * inverse(t), mean - se * inverse(-t)


def paired(values: np.ndarray, n_population: int, level: float = LEVEL
           ) -> dict[tuple[int, int], tuple[float, float, float]]:
    """For every pair of systems (rows of ``values``, the same sampled answers): the mean difference a - b and
    its interval's bounds (:func:`bounds`)."""
    out = {}
    for a in range(len(values)):
        for b in range(a + 1, len(values)):
            m, lo, hi = bounds(values[a] - values[b], n_population, level)
            out[(a, b)] = (float(m), float(lo), float(hi))
    return out


def sd_upper(pilot: np.ndarray, confidence: float = 0.95) -> float:
    """A one-sided ``confidence`` upper bound of the population's standard deviation from a pilot sample: the
    sample variance plus z times its distribution-free standard error √((m₄ − s⁴) / n) (m₄ the fourth central
    moment; no normality assumed, the bound widens with the tails)."""
    x = np.asarray(pilot, np.float64)
    s2 = float(x.var(ddof=1))
    m4 = float(((x - x.mean()) ** 4).mean())
    return math.sqrt(s2 + stats.norm.ppf(confidence) * math.sqrt(max(m4 - s2 * s2, 0.0) / len(x)))


def sample_size(pilot: np.ndarray, half_width: float, n_population: int, level: float = LEVEL) -> int:
    """Answers to sample for a ``half_width`` interval, from a pilot sample (:func:`sd_upper`'s bound of the
    standard deviation)."""
    if half_width <= 0:
        raise KgevalError(f"half-width {half_width}: must be > 0")
    s = sd_upper(pilot)
    n0 = (stats.norm.ppf(0.5 + level / 2) * s / half_width) ** 2
    return int(min(n_population, max(MIN_SAMPLE, math.ceil(n0 / (1.0 + n0 / n_population)))))


def coverage(values: np.ndarray, n: int, reps: int, seed: int, level: float = LEVEL,
             chunk: int = 64, plain: bool = False) -> tuple[float, np.ndarray]:
    """Share of ``reps`` seeded samples of n of ``values`` (the population) whose interval (:func:`bounds`; the
    plain t interval of :func:`interval` with ``plain``) holds the population mean, and each repetition's
    estimate. Repetitions are vectorised: a chunk of them draws its samples as the
    n smallest of random keys per row (a uniform sample without replacement)."""
    values = np.asarray(values, np.float64)
    N = len(values)
    truth = values.mean()
    rng = np.random.default_rng(seed)
    hit, est = [], []
    for r0 in range(0, reps, chunk):
        m = min(chunk, reps - r0)
        idx = np.argpartition(rng.random((m, N)), n - 1, axis=1)[:, :n]
        if plain:
            mean, half = interval(values[idx], N, level)
            low, high = mean - half, mean + half
        else:
            mean, low, high = bounds(values[idx], N, level)
        # the whole population's interval is a point: its mean summed in another order differs in the last bits
        eps = 1e-12 * max(1.0, abs(truth))
        hit.append((low - eps <= truth) & (truth <= high + eps))
        est.append(mean)
    return float(np.concatenate(hit).mean()), np.concatenate(est)
