"""Metric families: base metrics of Hoyt et al. (2022), chance-adjusted and z-scored metrics, and the unified
metric framework (spec: shared/specs/metric-families.md)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgeval.metrics.adjusted import (
    AdjustedHitsAtK,
    AdjustedMeanRank,
    AdjustedMeanRankIndex,
    AdjustedMeanReciprocalRank,
    ZHitsAtK,
    ZMeanRank,
    ZMeanReciprocalRank,
    family_metrics,
)
from kgeval.metrics.kendall import tau_b
from kgeval.metrics.moments import NoClosedFormError, component_means, harmonic_numbers, resample_values
from kgeval.metrics.rank_based import (
    GeometricMeanRank,
    HarmonicMeanRank,
    HitsAtK,
    InverseGeometricMeanRank,
    InverseMeanRank,
    MeanRank,
    MeanReciprocalRank,
    study_metrics,
)
from kgeval.metrics.umf import (
    UnifiedMetric,
    ranking_sensitivity,
    ranking_vs_reference,
    umf_grid,
    umf_grid_systems,
)


def tasks(n: int, max_n: int, seed: int, ties: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Ranks and VARYING numbers of candidates N_i ∈ [1, max_n); some realistic x.5 ranks."""
    rng = np.random.default_rng(seed)
    N = rng.integers(1, max_n, size=n)
    r = rng.integers(1, N + 1).astype(float)
    if ties:
        half = (rng.random(n) < 0.2) & (r < N)
        r[half] += 0.5
    return r, N


def ours_and_pykeen() -> list[tuple[object, str, dict]]:
    return [
        (MeanRank(), "arithmetic_mean_rank", {}),
        (InverseMeanRank(), "inverse_arithmetic_mean_rank", {}),
        (HarmonicMeanRank(), "harmonic_mean_rank", {}),
        (MeanReciprocalRank(), "inverse_harmonic_mean_rank", {}),
        (GeometricMeanRank(), "geometric_mean_rank", {}),
        (InverseGeometricMeanRank(), "inverse_geometric_mean_rank", {}),
        (AdjustedMeanRank(), "adjusted_arithmetic_mean_rank", {}),
        (AdjustedMeanRankIndex(), "adjusted_arithmetic_mean_rank_index", {}),
        (AdjustedMeanReciprocalRank(), "adjusted_inverse_harmonic_mean_rank", {}),
        (ZMeanRank(), "z_arithmetic_mean_rank", {}),
        (ZMeanReciprocalRank(), "z_inverse_harmonic_mean_rank", {}),
    ] + [(cls(k), name, {"k": k}) for k in (1, 3, 10)
         for cls, name in ((HitsAtK, "hits_at_k"), (AdjustedHitsAtK, "adjusted_hits_at_k"), (ZHitsAtK, "z_hits_at_k"))]


PAIRS = ours_and_pykeen()


# -- generalised harmonic numbers -------------------------------------------------------------------------
def test_harmonic_numbers_exact():
    H, H2 = Fraction(0), Fraction(0)
    ns, exact1, exact2 = [], [], []
    for j in range(1, 401):
        H += Fraction(1, j)
        H2 += Fraction(1, j * j)
        ns.append(j)
        exact1.append(H)
        exact2.append(H2)
    got1, got2 = harmonic_numbers(np.array(ns), 1), harmonic_numbers(np.array(ns), 2)
    assert max(abs(float((Fraction(g) - e) / e)) for g, e in zip(got1, exact1)) < 1e-15
    assert max(abs(float((Fraction(g) - e) / e)) for g, e in zip(got2, exact2)) < 1e-15
    assert abs(harmonic_numbers(0, 1)) < 1e-15 and abs(harmonic_numbers(0, 2)) < 1e-15
    mpmath = pytest.importorskip("mpmath")
    for big in (10 ** 5, 10 ** 7):
        assert harmonic_numbers(big, 1) == pytest.approx(float(mpmath.harmonic(big)), rel=1e-15)
        assert harmonic_numbers(big, 2) == pytest.approx(float(mpmath.zeta(2) - mpmath.zeta(2, big + 1)), rel=1e-15)


# -- agreement with PyKEEN 1.11.1 -------------------------------------------------------------------------
@pytest.mark.peer
@pytest.mark.parametrize("ours,pykeen_name,kw", PAIRS, ids=[p[1] + str(p[2].get("k", "")) for p in PAIRS])
def test_agrees_with_pykeen(ours, pykeen_name, kw):
    pk = pytest.importorskip("pykeen.metrics.ranking")
    theirs = pk.rank_based_metric_resolver.make(pykeen_name, **kw)
    r, N = tasks(150, 400, seed=3)
    w = np.random.default_rng(4).random(len(r)) + 0.1
    for weights in (None, w):
        assert ours(r, N, weights) == pytest.approx(theirs(r, N, weights), rel=1e-9, abs=1e-12)
        for method in ("expected_value", "variance"):
            try:
                expected = getattr(theirs, method)(N, weights=weights)
            except pk.NoClosedFormError:
                if isinstance(ours, InverseGeometricMeanRank):
                    continue  # exact here (test_igmr_closed_form_matches_gmr_family), PyKEEN has none
                with pytest.raises(NoClosedFormError):
                    getattr(ours, method)(N, weights)
                continue
            assert getattr(ours, method)(N, weights) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert ours.increasing == theirs.increasing


def test_igmr_closed_form_matches_gmr_family():
    """PyKEEN has no IGMR moments; E[Π r_i^(−1/n)] is exact too — checked against brute force on a tiny case."""
    N = np.array([2, 3, 4])
    grid = np.stack(np.meshgrid(*[np.arange(1, k + 1) for k in N], indexing="ij"), -1).reshape(-1, 3)
    vals = np.prod(grid.astype(float), 1) ** (-1 / 3)
    m = InverseGeometricMeanRank()
    assert m.expected_value(N) == pytest.approx(vals.mean(), rel=1e-13)
    assert m.variance(N) == pytest.approx(vals.var(), rel=1e-12)
    g = np.prod(grid.astype(float), 1) ** (1 / 3)
    assert GeometricMeanRank().variance(N) == pytest.approx(g.var(), rel=1e-12)


# -- closed forms inside seeded Monte-Carlo intervals -----------------------------------------------------
def _settings():
    rng = np.random.default_rng(11)
    return {"N=7": (np.full(5, 7), None), "N=1000": (np.full(20, 1000), None),
            "varying": (rng.integers(1, 300, size=40), None),
            "varying+weights": (rng.integers(2, 60, size=25), rng.random(25) + 0.2)}


CLOSED = [MeanRank(), MeanReciprocalRank(), HitsAtK(1), HitsAtK(10), GeometricMeanRank(), InverseGeometricMeanRank(),
          AdjustedMeanRank(), AdjustedMeanRankIndex(), AdjustedMeanReciprocalRank(), AdjustedHitsAtK(10),
          ZMeanRank(), ZMeanReciprocalRank(), ZHitsAtK(10)]


@pytest.mark.parametrize("metric", CLOSED, ids=[m.key for m in CLOSED])
def test_closed_forms_inside_monte_carlo_interval(metric):
    for label, (N, w) in _settings().items():
        if isinstance(metric, (AdjustedHitsAtK, ZHitsAtK)) and label == "N=7":
            continue  # k ≥ N: Hits@10 is 1 for every draw, the adjustment is undefined
        mean, se_mean, var, se_var = metric.moments_mc(N, samples=6000, seed=5, weights=w)
        e, v = metric.expected_value(N, w), metric.variance(N, w)
        assert abs(mean - e) <= 4 * se_mean + 1e-12, (label, mean, e, se_mean)
        assert abs(var - v) <= 4 * se_var + 1e-12, (label, var, v, se_var)


def test_null_moments_hand_values():
    N = np.array([1, 2, 4])
    assert MeanRank().expected_value(N) == pytest.approx((1 + 1.5 + 2.5) / 3)
    assert MeanRank().variance(N) == pytest.approx((0 + 3 / 12 + 15 / 12) / 9)
    assert MeanReciprocalRank().expected_value(N) == pytest.approx((1 + 0.75 + (25 / 12) / 4) / 3)
    v4 = (1 + 1 / 4 + 1 / 9 + 1 / 16) / 4 - ((25 / 12) / 4) ** 2
    assert MeanReciprocalRank().variance(N) == pytest.approx((0 + 1.25 / 2 - 0.75 ** 2 + v4) / 9)
    assert HitsAtK(2).expected_value(N) == pytest.approx((1 + 1 + 0.5) / 3)
    assert HitsAtK(2).variance(N) == pytest.approx(0.25 / 9)
    assert AdjustedMeanRankIndex()(np.ones(3), N) == 1.0
    assert AdjustedMeanRankIndex()(np.array([1.0, 2.0, 4.0]), N) == pytest.approx(-1.0)


def test_no_closed_form_uses_monte_carlo():
    N = np.array([5, 50, 500])
    for m in (InverseMeanRank(), HarmonicMeanRank(), UnifiedMetric(-1, 0.5, num_entities=500)):
        with pytest.raises(NoClosedFormError):
            m.expected_value(N)
        est, se = m.expectation_mc(N, samples=4000, seed=1)
        assert 0 < se < 0.05 * abs(est)
        assert m.expectation_mc(N, samples=4000, seed=1) == (est, se)  # seeded
    # HMR: E[1/MRR] > 1/E[MRR] (Jensen) — the MC estimate sees it
    est, se = HarmonicMeanRank().expectation_mc(N, samples=20000, seed=2)
    assert est > 1 / MeanReciprocalRank().expected_value(N) + 4 * se


# -- components / combine ---------------------------------------------------------------------------------
ALL = study_metrics(3) + family_metrics((1, 10)) + [
    UnifiedMetric(-1, 1, "uniform", num_entities=400), UnifiedMetric(-0.5, 0, "frequency", num_entities=400),
    UnifiedMetric(-2, 2, "stratified", beta=0.5, num_entities=400), UnifiedMetric(1, -1, "uniform"),
    UnifiedMetric(hits_k=3, p=0.5, weighting="uniform")]


@pytest.mark.parametrize("metric", ALL, ids=[m.key for m in ALL])
def test_combine_of_component_means_is_the_metric(metric):
    r, N = tasks(120, 400, seed=7)
    classes = np.random.default_rng(8).integers(0, 6, size=len(r))
    kw = {"classes": classes} if isinstance(metric, UnifiedMetric) else {}
    comps = metric.components(r, N, **kw)
    assert comps.ndim == 2 and comps.shape[0] == len(r)
    value = metric(r, N, **kw)
    assert metric.combine(comps.mean(0), n=len(r)) == pytest.approx(value, rel=1e-12, abs=1e-12)
    w = np.random.default_rng(9).random(len(r))
    n_w = metric.effective_n(N, w) if hasattr(metric, "effective_n") else None
    assert metric.combine(component_means(comps, w), n=n_w) == pytest.approx(metric(r, N, w, **kw), rel=1e-12)
    if metric.is_item_mean:
        assert metric.aggregate(metric.item_values(r, N)) == pytest.approx(value, rel=1e-12, abs=1e-12)
    else:
        with pytest.raises(NotImplementedError):
            metric.item_values(r, N)


def test_z_score_variance_of_a_subset_is_mean_var_over_n():
    """A resample of m tasks is scored as a test set of m tasks: Var = mean(V_i)/m over its own tasks."""
    r, N = tasks(60, 300, seed=12)
    systems = np.stack([r, np.maximum(1, np.floor(r / 2)), np.minimum(N, r + 3)], 1)  # (n, S)
    rng = np.random.default_rng(13)
    idx = rng.integers(0, len(r), size=(5, len(r)))  # bootstrap
    W = np.zeros((5, len(r)))
    np.add.at(W, (np.repeat(np.arange(5), len(r)), idx.ravel()), 1.0)
    mask = rng.random((1, len(r))) < 0.3
    for metric in (ZMeanRank(), ZMeanReciprocalRank(), AdjustedMeanRankIndex(), GeometricMeanRank(),
                   UnifiedMetric(-1, 0.5, "uniform", num_entities=300)):
        kw = {"classes": np.arange(len(r)) % 4} if isinstance(metric, UnifiedMetric) else {}
        comps = np.stack([metric.components(systems[:, s], N, **kw) for s in range(3)], 1)  # (n, S, C)
        got = resample_values(metric, comps, W)
        for b in range(5):
            kwb = {"classes": kw["classes"][idx[b]]} if kw else {}
            for s in range(3):
                assert got[b, s] == pytest.approx(metric(systems[idx[b], s], N[idx[b]], **kwb), rel=1e-10)
        sub = resample_values(metric, comps, mask)[0]
        kws = {"classes": kw["classes"][mask[0]]} if kw else {}
        for s in range(3):
            assert sub[s] == pytest.approx(metric(systems[mask[0], s], N[mask[0]], **kws), rel=1e-10)


# -- rankings of systems on one test set ------------------------------------------------------------------
def test_adjustments_do_not_change_rankings_within_a_test_set():
    """N_i are the test set's (same for every system): an affine adjustment keeps the base metric's ranking of
    systems, on the full set and on every resample; IMR/HMR/IGMR are monotone in MR/MRR/GMR; GMR is not."""
    rng = np.random.default_rng(21)
    N = rng.integers(5, 2000, size=300)
    skill = np.linspace(0.05, 0.9, 10)
    systems = [np.maximum(1, np.ceil(rng.integers(1, N + 1) * rng.random(300) ** (1 / s0) * 0.5)) for s0 in skill]
    systems = [np.minimum(r, N).astype(float) for r in systems]
    same = [(AdjustedMeanRank(), MeanRank()), (AdjustedMeanRankIndex(), MeanRank()), (ZMeanRank(), MeanRank()),
            (AdjustedMeanReciprocalRank(), MeanReciprocalRank()), (ZMeanReciprocalRank(), MeanReciprocalRank()),
            (AdjustedHitsAtK(10), HitsAtK(10)), (ZHitsAtK(10), HitsAtK(10)), (InverseMeanRank(), MeanRank()),
            (HarmonicMeanRank(), MeanReciprocalRank()), (InverseGeometricMeanRank(), GeometricMeanRank()),
            (UnifiedMetric(-1, 1, "frequency", num_entities=2000), MeanReciprocalRank())]
    W = rng.random((20, 300)) < 0.5
    for adj, base in same:
        a = np.array([adj(r, N) for r in systems])
        b = np.array([base(r, N) for r in systems])
        assert tau_b(a, b, adj.increasing, base.increasing) == 1.0, adj.key
        if not isinstance(adj, UnifiedMetric):
            ra = resample_values(adj, np.stack([adj.components(r, N) for r in systems], 1), W)
            rb = resample_values(base, np.stack([base.components(r, N) for r in systems], 1), W)
            for i in range(len(W)):
                assert tau_b(ra[i], rb[i], adj.increasing, base.increasing) == 1.0
    # a metric with another aggregation can reorder systems: GMR vs MR
    x = np.array([1.0, 1.0, 1.0, 1000.0])
    y = np.array([30.0, 30.0, 30.0, 30.0])
    N2 = np.full(4, 1000)
    assert MeanRank()(x) > MeanRank()(y) and GeometricMeanRank()(x) < GeometricMeanRank()(y)
    assert AdjustedMeanRankIndex()(x, N2) < AdjustedMeanRankIndex()(y, N2)  # same order as MR


# -- unified metric framework -----------------------------------------------------------------------------
def test_umf_hand_computed_tiny_case():
    r = np.array([1.0, 2.0, 5.0, 10.0])
    c = np.array(["a", "a", "b", "c"])
    # |E| = 10, α = −1: f(x) = 1 − (1 − 1/x)/(1 − 1/10): f(1) = 1, f(2) = 4/9, f(5) = 1/9, f(10) = 0
    f = UnifiedMetric(-1, 1, num_entities=10).transform(r)
    np.testing.assert_allclose(f, [1, 4 / 9, 1 / 9, 0], atol=1e-15)
    u = float(Fraction(1, 3) * ((1 + Fraction(4, 9)) / 2 + Fraction(1, 9) + 0))  # = 5/18
    assert UnifiedMetric(-1, 1, "uniform", num_entities=10)(r, classes=c) == pytest.approx(u) == pytest.approx(5 / 18)
    assert UnifiedMetric(-1, 1, "frequency", num_entities=10)(r, classes=c) == pytest.approx(7 / 18)
    assert UnifiedMetric(-1, 2, "uniform", num_entities=10)(r, classes=c) == pytest.approx(math.sqrt(11 / 54))
    strat = (math.sqrt(2) * 13 / 18 + 1 / 9) / (math.sqrt(2) + 2)
    assert UnifiedMetric(-1, 1, "stratified", beta=0.5, num_entities=10)(r, classes=c) == pytest.approx(strat)
    for p in (0.0, -1.0):  # an f value of 0 (rank |E|) makes every p ≤ 0 mean 0
        assert UnifiedMetric(-1, p, "uniform", num_entities=10)(r, classes=c) == 0.0
    r3, c3 = r[:3], c[:3]
    assert UnifiedMetric(-1, 0, "uniform", num_entities=10)(r3, classes=c3) == pytest.approx((4 / 9) ** 0.25 / 3)
    assert UnifiedMetric(-1, 0, "frequency", num_entities=10)(r3, classes=c3) == pytest.approx((4 / 81) ** (1 / 3))
    assert UnifiedMetric(-1, -1, "uniform", num_entities=10)(r3, classes=c3) == pytest.approx(16 / 85)


def test_umf_weights_uniform_vs_frequency():
    """Three answers of a frequent entity at rank 1, one of a rare entity at the worst rank."""
    r = np.array([1.0, 1.0, 1.0, 50.0])
    c = np.array([7, 7, 7, 3])
    assert UnifiedMetric(-1, 1, "frequency", num_entities=50)(r, classes=c) == pytest.approx(0.75)
    assert UnifiedMetric(-1, 1, "uniform", num_entities=50)(r, classes=c) == pytest.approx(0.5)
    assert UnifiedMetric(-1, 1, "stratified", beta=0.5, num_entities=50)(r, classes=c) == pytest.approx(
        math.sqrt(3) / (math.sqrt(3) + 1))
    m = UnifiedMetric(-1, 1, "uniform", num_entities=50)
    assert m.class_weights(np.array([3.0, 1.0, 0.0])).tolist() == [0.5, 0.5, 0.0]
    assert UnifiedMetric(-1, 1, "frequency", num_entities=50).class_weights(np.array([3.0, 1.0])).tolist() == [
        0.75, 0.25]
    # a system good on the rare entity ranks above under uniform, below under frequency weights
    a, b = np.array([1.0, 1.0, 1.0, 50.0]), np.array([2.0, 2.0, 2.0, 1.0])
    uni = UnifiedMetric(-1, 1, "uniform", num_entities=50)
    frq = UnifiedMetric(-1, 1, "frequency", num_entities=50)
    assert uni(a, classes=c) < uni(b, classes=c) and frq(a, classes=c) > frq(b, classes=c)


def test_umf_reductions():
    r, N = tasks(200, 500, seed=31)
    E = 500
    classes = np.random.default_rng(32).integers(0, 9, size=len(r))
    mrr = MeanReciprocalRank()(r)
    # α = −1, p = 1, frequency: affine in MRR, (|E|·MRR − 1)/(|E| − 1)
    assert UnifiedMetric(-1, 1, "frequency", num_entities=E)(r, classes=classes) == pytest.approx(
        (E * mrr - 1) / (E - 1), rel=1e-12)
    assert UnifiedMetric(-1, 1, "frequency", rescale=False)(r) == pytest.approx(mrr, rel=1e-12)
    # MR-like: unscaled α = 1 is MR (p = 1), GMR (p = 0), HMR (p = −1); rescaled: AMRI form with |E|
    assert UnifiedMetric(1, 1, "frequency")(r) == pytest.approx(MeanRank()(r), rel=1e-12)
    assert UnifiedMetric(1, 0, "frequency")(r) == pytest.approx(GeometricMeanRank()(r), rel=1e-12)
    assert UnifiedMetric(1, -1, "frequency")(r) == pytest.approx(HarmonicMeanRank()(r), rel=1e-12)
    assert UnifiedMetric(1, 1, "frequency", num_entities=E, rescale=True)(r) == pytest.approx(
        1 - (MeanRank()(r) - 1) / (E - 1), rel=1e-12)
    # Hits-like: a step f is Hits@k; α → −∞ is Hits@1
    for k in (1, 3, 10):
        assert UnifiedMetric(hits_k=k, p=1, weighting="frequency")(r) == pytest.approx(HitsAtK(k)(r))
        assert UnifiedMetric(hits_k=k, p=2, weighting="frequency")(r) == pytest.approx(math.sqrt(HitsAtK(k)(r)))
    assert UnifiedMetric(float("-inf"), 1, "frequency")(r) == pytest.approx(HitsAtK(1)(r))
    assert UnifiedMetric(-60, 1, "frequency", num_entities=E)(r) == pytest.approx(HitsAtK(1)(r), abs=1e-12)
    # frequency weights (w_c ∝ n_c) = the micro average over tasks, whatever the classes
    for a, p in ((-0.5, 1), (-2, 0.5), (0, 0), (1, 2)):
        m = UnifiedMetric(a, p, "frequency", num_entities=E)
        assert m(r, classes=classes) == pytest.approx(m(r), rel=1e-12)
        f = m.transform(r)
        micro = np.exp(np.mean(np.log(f))) if p == 0 else np.mean(f ** p) ** (1 / p)
        assert m(r) == pytest.approx(micro, rel=1e-12)
    # stratified β = 1 is uniform (macro by class), β = 0 is frequency (micro)
    for a, p in ((-1, 1), (-0.25, 0), (-2, -1)):
        uni = UnifiedMetric(a, p, "uniform", num_entities=E)(r, classes=classes)
        assert UnifiedMetric(a, p, "stratified", beta=1, num_entities=E)(r, classes=classes) == pytest.approx(uni)
        assert UnifiedMetric(a, p, "stratified", beta=0, num_entities=E)(r, classes=classes) == pytest.approx(
            UnifiedMetric(a, p, "frequency", num_entities=E)(r, classes=classes))
    df = pd.DataFrame({"r": r, "c": classes})
    macro = df.groupby("c")["r"].apply(lambda x: MeanReciprocalRank()(x.to_numpy())).mean()
    assert UnifiedMetric(-1, 1, "uniform", rescale=False)(r, classes=classes) == pytest.approx(macro, rel=1e-12)
    # limits: α → 0⁻ and p → 0
    assert UnifiedMetric(-1e-7, 1, num_entities=E)(r, classes=classes) == pytest.approx(
        UnifiedMetric(0, 1, num_entities=E)(r, classes=classes), rel=1e-5)
    assert UnifiedMetric(-1, 1e-7, num_entities=E)(r, classes=classes) == pytest.approx(
        UnifiedMetric(-1, 0, num_entities=E)(r, classes=classes), rel=1e-5)
    # per-task worst rank: f(N_i) = 0
    m = UnifiedMetric(-1, 1, "frequency", worst="candidates")
    assert np.all(m.transform(N.astype(float), N)[N > 1] == 0)


def test_umf_null_model_p1_closed_form():
    rng = np.random.default_rng(41)
    N = rng.integers(1, 200, size=30)
    classes = rng.integers(0, 4, size=30)
    for m in (UnifiedMetric(-1, 1, "uniform", num_entities=200), UnifiedMetric(0, 1, "stratified", beta=0.5,
                                                                               num_entities=200),
              UnifiedMetric(-0.5, 1, "uniform", worst="candidates"), UnifiedMetric(hits_k=5, weighting="uniform"),
              UnifiedMetric(1, 1, "frequency")):
        mean, se, var, se_var = m.moments_mc(N, samples=6000, seed=3, classes=classes)
        assert abs(mean - m.expected_value(N, classes=classes)) <= 4 * se
        assert abs(var - m.variance(N, classes=classes)) <= 4 * se_var
    # α = −1, p = 1, frequency: E = (|E|·E[MRR] − 1)/(|E| − 1) exactly
    m = UnifiedMetric(-1, 1, "frequency", num_entities=200)
    e_mrr = MeanReciprocalRank().expected_value(N)
    assert m.expected_value(N) == pytest.approx((200 * e_mrr - 1) / 199, rel=1e-12)
    assert m.variance(N) == pytest.approx(MeanReciprocalRank().variance(N) * (200 / 199) ** 2, rel=1e-10)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), alpha=st.one_of(st.floats(-4, 2).filter(lambda a: abs(a) > 1e-3), st.just(0.0),
                                        st.just(float("-inf"))),
       p=st.one_of(st.floats(-3, 3), st.just(0.0)), beta=st.floats(0, 1.5), n=st.integers(1, 30),
       E=st.integers(2, 1000))
def test_umf_stays_within_range_of_f(data, alpha, p, beta, n, E):
    halves = data.draw(st.lists(st.integers(2, 2 * E), min_size=n, max_size=n))
    r = np.array(halves, dtype=float) / 2.0  # ranks in [1, E], x.5 allowed
    classes = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    weights = np.array(data.draw(st.lists(st.floats(0.01, 10), min_size=n, max_size=n)))
    m = UnifiedMetric(alpha, p, "stratified", beta=beta, num_entities=E)
    v = m(r, weights=weights, classes=classes)
    f = m.transform(r)
    lo, hi = m.value_range
    assert lo - 1e-12 <= f.min() and f.max() <= hi * (1 + 1e-12)
    assert f.min() * (1 - 1e-9) - 1e-12 <= v <= f.max() * (1 + 1e-9) + 1e-12


def test_umf_keys_grid_and_sensitivity():
    keys = [m.key for m in family_metrics((1, 10))] + [
        UnifiedMetric(-1, 1, "uniform", num_entities=9).key, UnifiedMetric(-0.5, 0, "frequency", num_entities=9).key,
        UnifiedMetric(-1, 1, "stratified", beta=0.5, num_entities=9).key, UnifiedMetric(hits_k=10).key,
        UnifiedMetric(1, 2, "uniform", num_entities=9, rescale=True).key]
    assert keys[-5:] == ["umf_a-1_p1_uniform", "umf_a-0.5_p0_frequency", "umf_a-1_p1_strat0.5", "umf_h10_p1_uniform",
                         "umf_a1_r_p2_uniform"]
    assert all(re.fullmatch(r"[a-z0-9@_.\-]+", k) for k in keys) and len(set(keys)) == len(keys)
    assert {"imr", "hmr", "gmr", "igmr", "amr", "amri", "amrr", "ah@10", "zmr", "zmrr", "zh@10"} <= set(keys)

    c = np.array([7, 7, 7, 3])
    systems = {"A": np.array([1.0, 1.0, 1.0, 50.0]), "B": np.array([2.0, 2.0, 2.0, 1.0]),
               "C": np.array([3.0, 4.0, 3.0, 2.0])}
    one = umf_grid(systems["A"], 50, classes=c, alphas=(-1, 1), ps=(0, 1))
    assert list(one.columns) == ["alpha", "p", "weighting", "key", "increasing", "value"] and len(one) == 8
    assert one.query("alpha == -1 and p == 1 and weighting == 'uniform'")["value"].item() == pytest.approx(0.5)
    grid = umf_grid_systems(systems, 50, classes=c, alphas=(-2, -1, 1), ps=(0, 1, 2))
    assert len(grid) == 3 * 3 * 3 * 2
    sens = ranking_sensitivity(grid)
    assert set(sens["axis"]) == {"alpha", "p", "weighting"}
    assert len(sens) == 2 * (2 * 3 + 3 * 2) + 3 * 3  # α- and p-neighbours per weighting, then weightings
    assert sens["tau"].between(-1, 1).all()
    # uniform and frequency weights order A and B differently at α = −1, p = 1
    w = sens.query("axis == 'weighting' and alpha == -1 and p == 1")["tau"].item()
    assert w < 1
    ref = ranking_vs_reference(grid)
    assert ref.query("weighting == 'frequency' and alpha == -1 and p == 1")["tau"].item() == 1.0
    # the MR point (unscaled α = 1, lower is better) compared with direction: A (MR 13.25) vs B (1.75)
    mr = ref.query("weighting == 'frequency' and alpha == 1 and p == 1")["tau"].item()
    vals = {s: MeanRank()(x) for s, x in systems.items()}
    mrr = {s: UnifiedMetric(-1, 1, "frequency", num_entities=50)(x) for s, x in systems.items()}
    assert mr == pytest.approx(tau_b([vals[s] for s in "ABC"], [mrr[s] for s in "ABC"], False, True))
