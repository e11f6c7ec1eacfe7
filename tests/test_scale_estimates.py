"""Question-sampled estimates (kgeval.scale.estimate) and the sampled-negatives protocol (kgeval.scale.negatives):
intervals against scipy, coverage against exact enumeration, τ against scipy.stats.kendalltau, hand-computed
sampled ranks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats

from kgeval.data.questions import Questions
from kgeval.errors import KgevalError
from kgeval.scale.estimate import (
    MIN_SAMPLE,
    bounds,
    coverage,
    interval,
    paired,
    per_answer,
    sample,
    sample_size,
    sd_upper,
)
from kgeval.scale.negatives import compare, kendall_tau, sampled_ranks
from kgeval.scale.scorers import BilinearBlocks
from kgeval.scores.ranking import Judged


def test_interval_is_scipys_t_interval_with_the_finite_population_correction():
    x = np.random.default_rng(0).random(40)
    mean, half = interval(x, n_population=400)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert mean == pytest.approx(x.mean())
    assert half == pytest.approx((hi - lo) / 2 * math.sqrt(1 - 40 / 400))
    assert interval(x, n_population=40)[1] == 0.0  # the whole population: no sampling error


def test_bounds_by_hand():
    # [0, 0, 0, 1], N = 8: mean 0.25, s = 0.5, se = 0.5 / 2 · √(1 - 4/8) = 0.1767767; m3 = (3 · (-0.25)³ + 0.75³)
    # / 4 = 0.09375, γ = m3 / s³ = 0.75, a = γ / (3 · 2) = 0.125, b = γ / (6 · 2) = 0.0625; t = t_{0.975, 3}
    x = np.array([0.0, 0.0, 0.0, 1.0])
    t = stats.t.ppf(0.975, 3)

    def inv(z):
        return (np.cbrt(1 + 3 * 0.125 * (z - 0.0625)) - 1) / 0.125  # a real cube root: its argument is < 0 at -t

    mean, lo, hi = bounds(x, 8)
    se = 0.5 / 2 * math.sqrt(0.5)
    assert mean == 0.25
    assert lo == pytest.approx(0.25 - se * inv(t), abs=1e-12) and hi == pytest.approx(0.25 - se * inv(-t), abs=1e-12)
    # the skewed sample's interval leans to its long tail: the upper bound moves out more than the lower one
    half = interval(x, 8)[1]
    assert hi - 0.25 > half > 0.25 - lo


def test_bounds_of_a_symmetric_sample_are_the_t_interval_and_invert_halls_transformation():
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.5])  # skewness 0
    mean, lo, hi = bounds(x, 100)
    half = interval(x, 100)[1]
    assert (lo, hi) == (pytest.approx(mean - half), pytest.approx(mean + half))
    # for a skewed sample, Hall's g maps each bound's studentized distance back to ∓t
    y = np.random.default_rng(5).exponential(size=(3, 50))
    mean, lo, hi = bounds(y, 10**6)
    n, t = 50, stats.t.ppf(0.975, 49)
    se = y.std(-1, ddof=1) / math.sqrt(n) * math.sqrt(1 - n / 10**6)
    gamma = ((y - mean[:, None]) ** 3).mean(-1) / y.std(-1, ddof=1) ** 3
    a, b = gamma / (3 * math.sqrt(n)), gamma / (6 * math.sqrt(n))
    for bound, z in ((lo, t), (hi, -t)):
        T = (mean - bound) / se
        assert T + a * T**2 + a**2 * T**3 / 3 + b == pytest.approx(np.full(3, z))
    assert bounds(np.full(7, 0.3), 100)[1:] == (0.3, 0.3)  # no spread: a point


def test_skewness_corrected_interval_covers_heavy_tailed_reciprocal_ranks_where_t_does_not():
    """Reciprocal ranks of a weak system: most near 0, 2 % at 1. At the smallest accepted sample the plain t
    interval covers under 0.93 (it misses when the sample misses the rank-1 answers); the corrected one >= 0.94."""
    rng = np.random.default_rng(11)
    N = 20_000
    rr = np.where(rng.random(N) < 0.02, 1.0, 1.0 / np.minimum(2 + np.floor(rng.pareto(0.5, N) * 20), 10**5))
    share, _ = coverage(rr, MIN_SAMPLE, reps=4000, seed=12)
    draws = np.random.default_rng(13)
    plain = np.mean([abs(m - rr.mean()) <= h for m, h in
                     (interval(rr[draws.choice(N, MIN_SAMPLE, replace=False)], N) for _ in range(4000))])
    assert share >= 0.94 and plain < 0.93  # binomial sd at 4,000 draws: 0.0035
    with pytest.raises(KgevalError, match="sample size 99: need 100 <= n"):
        sample(N, MIN_SAMPLE - 1, seed=0)
    assert len(sample(50, 50, seed=0)) == 50  # fewer answers than the floor: all of them
    assert coverage(rr, N, reps=3, seed=0)[0] == 1.0  # the whole population: its mean, whatever the sum's order


def test_coverage_by_exact_enumeration():
    # every sample of 3 of these 7 values: the share of intervals holding the mean, enumerated exactly
    pop = np.array([0.0, 0.0, 0.1, 0.2, 0.5, 1.0, 1.0])
    combos = list(itertools.combinations(range(7), 3))
    exact = np.mean([lo <= pop.mean() <= hi for _, lo, hi in (bounds(pop[list(c)], 7) for c in combos)])
    share, est = coverage(pop, 3, reps=20000, seed=1)
    assert share == pytest.approx(exact, abs=0.01)  # binomial sd at 20,000 draws: 0.003
    assert est.mean() == pytest.approx(pop.mean(), abs=0.01)  # the sample mean is unbiased


def test_paired_difference_uses_the_same_answers():
    rng = np.random.default_rng(2)
    a = rng.random(200)
    b = a - 0.01 + 0.001 * rng.standard_normal(200)  # b is a little worse on every answer
    (m, lo, hi), = paired(np.stack([a, b]), 10_000).values()
    assert m == pytest.approx(0.01, abs=0.0005) and lo < m < hi and hi - lo < 0.001
    h = (hi - lo) / 2
    assert interval(a, 10_000)[1] > 20 * h  # separately, the two intervals would overlap


def test_sd_upper_by_hand():
    # [0, 0, 0, 1]: s² = 0.75 / 3 = 0.25; m4 = (3 · 0.25⁴ + 0.75⁴) / 4 = 0.08203125; the standard error of s² is
    # √((0.08203125 - 0.0625) / 4) = 0.0698771…; s⁺ = √(0.25 + 1.6448536… · 0.0698771…) = 0.604101…
    assert sd_upper(np.array([0.0, 0.0, 0.0, 1.0])) == pytest.approx(0.6041015, abs=1e-6)
    assert sd_upper(np.full(10, 3.0)) == 0.0


def test_sample_size_reaches_the_half_width():
    pop = np.random.default_rng(3).exponential(size=50_000)
    n = sample_size(pop[:500], 0.01, len(pop))
    n0 = (stats.norm.ppf(0.975) * sd_upper(pop[:500]) / 0.01) ** 2
    assert n == math.ceil(n0 / (1 + n0 / len(pop)))
    idx = sample(len(pop), n, seed=4)
    assert len(np.unique(idx)) == n
    assert 0.9 * 0.01 < interval(pop[idx], len(pop))[1] <= 0.01
    with pytest.raises(KgevalError, match="half-width"):
        sample_size(pop[:10], 0.0, 100)


def test_heavy_tailed_reciprocal_ranks_reach_the_half_width_sized_by_the_bound():
    """Reciprocal ranks are heavy-tailed: sized by a pilot's own standard deviation, a sample reaches the
    requested half-width about half the time; by the upper bound, in at least 90 % of 200 seeded draws."""
    rng = np.random.default_rng(7)
    N, h = 200_000, 0.005
    rr = 1.0 / np.minimum(1 + np.floor(rng.pareto(0.35, N)), 10**6)  # MRR 0.33, a fifth of the ranks at 1
    reached, plain = [], []
    for r in range(200):
        draw = np.random.default_rng([7, r])
        pilot = rr[draw.choice(N, 2000, replace=False)]
        n = sample_size(pilot, h, N)
        reached.append(interval(rr[draw.choice(N, n, replace=False)], N)[1] <= h)
        n0 = (stats.norm.ppf(0.975) * pilot.std(ddof=1) / h) ** 2
        n_plain = math.ceil(n0 / (1 + n0 / N))
        plain.append(interval(rr[draw.choice(N, n_plain, replace=False)], N)[1] <= h)
    assert np.mean(reached) >= 0.9
    assert 0.3 <= np.mean(plain) <= 0.7


def test_per_answer_values():
    v = per_answer(np.array([1.0, 2.5, 11.0]), hits=(1, 10))
    assert v["mrr"].tolist() == [1.0, 0.4, 1 / 11] and v["hits@1"].tolist() == [1, 0, 0]
    assert v["hits@10"].tolist() == [1, 1, 0]


def test_sampled_ranks_hand_computed():
    # 4 entities on a line, one relation w = 1: the score of (h, r, t) is e_h * e_t
    scorer = BilinearBlocks(torch.tensor([[1.0], [2.0], [3.0], [2.0]]), torch.ones(1, 1))
    questions = Questions(np.array([1]), np.array([0]), np.array([0]), ["tail0"], 4, 1)  # (0, r, ?)
    judged = Judged(np.array([0]), np.array([1]), np.array([1], np.int8), np.array([0], np.int16))
    negs = np.random.default_rng(5).integers(0, 4, size=(1, 6))[0]  # the negatives sampled_ranks draws for seed 5
    scores = np.array([1.0, 2.0, 3.0, 2.0])[negs]
    want = 1 + (scores > 2).sum() + (scores == 2).sum() / 2
    assert sampled_ranks(scorer, questions, judged, np.array([0]), k=6, seed=5).tolist() == [want]


def test_kendall_tau_equals_scipy():
    rng = np.random.default_rng(6)
    for _ in range(20):
        a, b = rng.integers(0, 4, 6).astype(float), rng.integers(0, 4, 6).astype(float)
        assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic)


def test_compare_reports_differences_and_tau_interval():
    rng = np.random.default_rng(7)
    full = np.stack([rng.random(300) * (1 - 0.1 * s) for s in range(5)])
    out = compare(full, full * 2.0, reps=200, seed=0)
    assert out["tau"] == 1.0 and out["tau_interval"][0] <= 1.0 <= out["tau_interval"][1]
    np.testing.assert_allclose(out["difference"], full.mean(1))
