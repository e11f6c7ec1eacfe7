"""Sampling stage (issue 42): the linear weights against a brute-force metric, and the difference estimator and
its variance estimator against exact enumeration of every Poisson sample of small instances, for every design,
with a correct and a deliberately wrong prior."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kgeval.judgments.candidates import Candidates
from kgeval.sampling import design as dz
from kgeval.sampling import estimate as est
from kgeval.sampling import weights as wt


def instance(seed=0, S=3, Q=4, k=3, n_ent=5):
    """S systems' top k over Q questions of n_ent candidate entities: Candidates and the (S, Q, k) lists."""
    rng = np.random.default_rng(seed)
    lists = np.stack([np.stack([rng.permutation(n_ent)[:k] for _ in range(Q)]) for _ in range(S)])
    keys = np.unique((np.arange(Q)[None, :, None] * n_ent + lists).ravel())
    item_q = keys // n_ent
    ranks = np.zeros((S, keys.size), np.int64)
    for s in range(S):
        for q in range(Q):
            for i in range(k):
                ranks[s, np.searchsorted(keys, q * n_ent + lists[s, q, i])] = i + 1
    return Candidates(item_q, ranks, np.full(keys.size, -1), Q, k), lists, keys, n_ent


def brute_metric(lists, keys, n_ent, x, gains, kind):
    """The metric of every system by its definition: per question over the ranked list, then the mean."""
    S, Q, k = lists.shape
    out = np.zeros(S)
    for s in range(S):
        for q in range(Q):
            lab = [x[np.searchsorted(keys, q * n_ent + lists[s, q, i])] for i in range(k)]
            vals = [gains[i] * lab[i] for i in range(k)]
            out[s] += sum(vals) if kind == "linear" else max(vals)
    return out / Q


@pytest.mark.parametrize("metric", ["P@k", "DCG@k", "RBP"])
def test_linear_pair_weights_match_brute_force(metric):
    cand, lists, keys, n_ent = instance()
    d = wt.pair_weights(cand, metric)
    a, b = wt.pairs(3)
    gains = wt.rank_gains(metric, 3)
    for x in np.random.default_rng(1).integers(0, 2, (5, cand.n_items)):
        m = brute_metric(lists, keys, n_ent, x, gains, "linear")
        np.testing.assert_allclose(x @ d, m[a] - m[b], atol=1e-12)


@pytest.mark.parametrize("metric", ["RR@k", "Success@k"])
def test_max_metric_and_its_prior_expectation(metric):
    cand, lists, keys, n_ent = instance(Q=2, n_ent=4)
    pos = wt.position_items(cand)
    g = wt.rank_gains(metric, 3)
    p = np.random.default_rng(2).random(cand.n_items)
    xs = np.array(list(itertools.product((0, 1), repeat=cand.n_items)))
    m = wt.max_metric(pos, g, xs)  # every labelling at once
    for i in np.random.default_rng(3).choice(len(xs), 6, replace=False):
        np.testing.assert_allclose(m[i].mean(1), brute_metric(lists, keys, n_ent, xs[i], g, "max"), atol=1e-12)
    prob = np.prod(np.where(xs == 1, p, 1 - p), 1)
    np.testing.assert_allclose(wt.expected_max_metric(pos, g, p), np.tensordot(prob, m, 1), atol=1e-12)


def test_waterfill_meets_the_budget_and_caps_at_one():
    a = np.array([10.0, 1.0, 1.0, 0.5, 0.0])
    pi = dz.waterfill(a, 2.0)
    assert pi.sum() == pytest.approx(2.0) and pi[0] == 1.0 and pi[4] == 0.0
    np.testing.assert_allclose(pi[1:4], np.array([1.0, 1.0, 0.5]) / 2.5)
    c = np.array([1.0, 2.0, 3.0, 1.0, 1.0])
    pi = dz.waterfill(a, 3.0, c)
    assert (pi * c).sum() == pytest.approx(3.0) and pi.max() <= 1.0
    np.testing.assert_array_equal(dz.waterfill(a, 100.0), [1, 1, 1, 1, 0])


def test_split_by_hand_and_nested_designs():
    """The floor's share is max(0.1, (n/N)²) of n (N = 100: n = 30 → 0.1, n = 50 → 0.25, n = 90 → 0.81); the
    optimal part gets the rest up to n* = N/√3, its peak (2/3)(N/√3) past it. Hence every unit's components only
    grow with the budget, and the same random numbers draw nested samples at every budget up to a census (the
    formula before this change shrank the optimal part past n*: 5 of these budgets dropped a unit)."""
    assert dz.split(30, 100) == pytest.approx((27.0, 0.03))
    assert dz.split(50, 100) == pytest.approx((37.5, 0.125))
    peak = 2 / 3 * 100 / np.sqrt(3)
    assert dz.split(90, 100) == pytest.approx((peak, 0.81 * 0.9))
    assert dz.split(100, 100) == pytest.approx((peak, 1.0))  # a census, as the floor alone already was
    rng = np.random.default_rng(0)
    v = rng.gamma(0.3, size=(100, 1)) * rng.random((100, 1))
    elig = rng.random(100) < 0.9
    u_opt, u_uni = rng.random(100), rng.random(100)
    before, drawn_before = None, None
    for n in np.linspace(1, elig.sum(), 200):
        d = dz.design(v, elig, n)
        drawn = (u_opt < d.pi_opt) | (u_uni < d.pi_uniform)
        if before is not None:
            assert (d.pi_opt >= before.pi_opt - 1e-12).all() and (d.pi_uniform >= before.pi_uniform - 1e-12).all()
            assert not (drawn_before & ~drawn).any(), n
        before, drawn_before = d, drawn


def enumerate_samples(pi):
    """Every inclusion pattern of Poisson sampling and its probability."""
    incl = np.array(list(itertools.product((False, True), repeat=pi.size)))
    prob = np.prod(np.where(incl, pi, 1 - pi), 1)
    return incl, prob


PRIORS = {"right": lambda p: p, "wrong": lambda p: np.clip(p + 0.2, 0, 1), "flipped": lambda p: 1 - p}


@pytest.mark.parametrize("kind", dz.DESIGNS)
@pytest.mark.parametrize("prior", sorted(PRIORS))
def test_item_estimator_and_variance_unbiased_by_enumeration(kind, prior):
    cand, *_ = instance(seed=3, Q=3)
    rng = np.random.default_rng(4)
    N = cand.n_items
    keep = np.sort(rng.choice(N, 10, replace=False))  # ten unknown items, the rest known
    x_all = rng.integers(0, 2, N)
    d_all = wt.pair_weights(cand, "DCG@k")
    known_mask = ~np.isin(np.arange(N), keep)
    K = x_all[known_mask] @ d_all[known_mask]
    d, x = d_all[keep], x_all[keep]
    p_true = rng.uniform(0.05, 0.95, keep.size)
    p = PRIORS[prior](p_true)
    eligible = (d != 0).any(1)
    dsg = dz.design(dz.item_variances(d, p), eligible, 4.0, kind)
    assert dsg.expected_judgments == pytest.approx(4.0, abs=0.5) and (dsg.pi[eligible] > 0).all()
    incl, prob = enumerate_samples(dsg.pi)
    e = est.difference(K, d, p, x, dsg.pi, incl)
    truth = x_all @ d_all
    mean = prob @ e.delta
    np.testing.assert_allclose(mean, truth, atol=1e-12)
    var = prob @ (e.delta - truth) ** 2
    np.testing.assert_allclose(prob @ e.var, var, atol=1e-12)
    np.testing.assert_allclose(var, dz.expected_variance(dsg.pi, d ** 2 * ((x - p) ** 2)[:, None]), atol=1e-12)


@pytest.mark.parametrize("kind", dz.DESIGNS)
@pytest.mark.parametrize("prior", sorted(PRIORS))
@pytest.mark.parametrize("metric", ["RR@k", "Success@k"])
def test_question_estimator_and_variance_unbiased_by_enumeration(kind, prior, metric):
    cand, *_ = instance(seed=5, Q=8, n_ent=6)
    rng = np.random.default_rng(6)
    pos = wt.position_items(cand)
    g = wt.rank_gains(metric, 3)
    x = rng.integers(0, 2, cand.n_items)
    p = PRIORS[prior](rng.uniform(0.05, 0.95, cand.n_items))
    a, b = wt.pairs(3)
    m_true, m_exp = wt.max_metric(pos, g, x), wt.expected_max_metric(pos, g, p)
    dq, mu = (m_true[a] - m_true[b]).T, (m_exp[a] - m_exp[b]).T
    cost = wt.question_costs(pos, np.ones(cand.n_items, bool))
    v = np.abs(mu) + 0.01  # any allocation score: unbiasedness must not depend on it
    dsg = dz.design(v, cost > 0, 10.0, kind, cost)
    incl, prob = enumerate_samples(dsg.pi)
    e = est.question_difference(mu, dq, dsg.pi, incl, 8)
    truth = m_true.mean(1)[a] - m_true.mean(1)[b]
    np.testing.assert_allclose(prob @ e.delta, truth, atol=1e-12)
    np.testing.assert_allclose(prob @ e.var, prob @ (e.delta - truth) ** 2, atol=1e-12)


def test_unsampled_labels_are_never_read():
    d = np.array([[0.5], [0.25], [0.25]])
    p, pi = np.array([0.2, 0.5, 0.9]), np.array([0.5, 0.5, 1.0])
    incl = np.array([True, False, True])
    a = est.difference(np.zeros(1), d, p, np.array([1, 0, 0]), pi, incl)
    b = est.difference(np.zeros(1), d, p, np.array([1, 1, 0]), pi, incl)
    assert a.delta == b.delta and a.var == b.var
    # hand computation: 0.5·0.2 + 0.25·0.5 + 0.25·0.9 + 0.5·0.8/0.5 + 0.25·(−0.9)/1
    assert a.delta[0] == pytest.approx(0.1 + 0.125 + 0.225 + 0.8 - 0.225)
    assert a.var[0] == pytest.approx(0.5 * 0.25 * 0.64 / 0.25)


def test_interval_uses_student_t_on_the_sampled_units():
    e = est.Estimate(np.array([1.0, 1.0, 1.0]), np.array([0.25, 0.25, 0.25]), np.array([1, 2, 1000]))
    assert np.isinf(e.half_width[0]) and not e.decided[0]  # one unit: no interval
    assert e.half_width[1] == pytest.approx(12.706205 * 0.5, rel=1e-6)  # t(0.975, 1)
    assert e.half_width[2] == pytest.approx(1.962339 * 0.5, rel=1e-5)  # t(0.975, 999), nearly normal


def test_a_census_covers_and_decides_only_a_real_difference():
    """A budget that reaches every unit (π = 1) is a census: Δ̂ is Δ up to rounding and the interval has zero width;
    it covers Δ, and a Δ that is 0 but for rounding is not decided (the smoke run's budget 5,000 over 2,520 labels)."""
    from kgeval.sampling.estimate import Estimate

    true = np.array([0.1 + 0.2, 0.0])
    est = Estimate(delta=np.array([[0.3, 1e-17]]), var=np.zeros((1, 2)), units=np.array([[40, 40]]))
    assert est.half_width.tolist() == [[0.0, 0.0]]
    assert est.decided.tolist() == [[True, False]]
    assert not ((est.lo <= true) & (true <= est.hi)).all()  # without a tolerance rounding breaks the census
    from kgeval.sampling.simulation import _rows

    rows = _rows("P@k", "fitted", "optimal", 5000, est, true, np.array([40.0]), [0, 0], [1, 2], ["A", "B", "C"], 1)
    assert [r[7] for r in rows] == [1.0, 1.0, 1.0]  # coverage of both pairs and of their mean
    assert [r[9] for r in rows] == [1.0, 0.0, 0.5]  # decided


def test_rank_order_cost_by_hand():
    # one question, lists a = (e0, e1, e2) and b = (e2, e3, e0); e1 is relevant: a stops at e1 (e0, e1 judged),
    # b finds nothing relevant and is judged to its end (e2, e3, e0): 4 distinct items in all
    cand = Candidates(np.zeros(4, np.int64), np.array([[1, 2, 3, 0], [3, 0, 1, 2]]), np.full(4, -1), 1, 3)
    pos, unknown = wt.position_items(cand), cand.state == -1
    x = np.array([0, 1, 0, 0])
    assert wt.question_costs(pos, unknown, None, x, judged=True).tolist() == [4]
    # with e2 relevant too, b stops at its first item: e0, e1 (a) and e2 (b)
    assert wt.question_costs(pos, unknown, None, np.array([0, 1, 1, 0]), judged=True).tolist() == [3]
    # e0 relevant closes a at once and b at its third place: e0 (a), e2, e3 (b)
    assert wt.question_costs(pos, unknown, None, np.array([1, 0, 0, 0]), judged=True).tolist() == [3]
    # a known relevant item is never judged and closes its lists as before
    known = Candidates(cand.item_q, cand.ranks, np.array([-1, -1, 1, -1]), 1, 3)
    assert wt.question_costs(pos, known.state == -1, None, np.array([0, 0, 1, 0]), judged=True).tolist() == [2]
    # every labelling at once (a leading axis) gives each one's count
    xs = np.array([[0, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 0]])
    assert wt.question_costs(pos, unknown, None, xs, judged=True).tolist() == [[4], [3], [3]]


def copula_weights(p, item_q, rho, nodes=80):
    """P(x) for every labelling x of the items (rows of the enumeration) under the Gaussian copula with ρ within a
    question: given z_q each item is relevant with Φ((Φ⁻¹(p_e) − √ρ z_q) / √(1 − ρ)), independently; z_q
    integrated out by Gauss-Hermite quadrature, question by question (ρ = 0: Π p^x (1 − p)^(1 − x))."""
    from numpy.polynomial.hermite_e import hermegauss
    from scipy.stats import norm

    xs = np.array(list(itertools.product((0, 1), repeat=p.size)))
    z, w = hermegauss(nodes)
    w = w / w.sum()
    given = norm.cdf((norm.ppf(p)[None, :] - np.sqrt(rho) * z[:, None]) / np.sqrt(1 - rho))  # (nodes, items)
    weight = np.ones(len(xs))
    for q in np.unique(item_q):
        e = item_q == q
        lik = np.where(xs[:, None, e] == 1, given[None, :, e], 1 - given[None, :, e]).prod(-1)  # (x, nodes)
        weight *= lik @ w
    return xs, weight


@pytest.mark.parametrize("rho", [0.0, 0.5])
def test_expected_rank_order_cost_and_question_variance_against_enumeration(rho):
    """The Monte Carlo's expected rank-order cost and Var(D_q) per question against every labelling weighted by
    its probability: independent items (ρ = 0, the plans before ``mc_rho``) and the Gaussian copula (ρ = 0.5,
    the default), whose weights come from quadrature over the question's shared factor; the copula keeps each
    item's p and adds Var(D_q) when two lists rank different items (tested: it differs from ρ = 0's)."""
    from kgeval.sampling.problem import Problem

    cand, *_ = instance(seed=4, S=3, Q=3, k=3, n_ent=4)
    p = np.random.default_rng(5).uniform(0.1, 0.7, cand.n_items)
    pb = Problem(cand, np.zeros(cand.n_items), "RR@k", mc_draws=4000, seed=1, mc_rho=rho)
    pos, unknown = wt.position_items(cand), cand.state == -1
    xs, weight = copula_weights(p, cand.item_q, rho)
    assert weight.sum() == pytest.approx(1.0) and weight @ xs == pytest.approx(p)  # the marginals are p
    exact = weight @ wt.question_costs(pos, unknown, np.array([0, 1]), xs, judged=True)
    mc = pb.cost_of([0], p)  # pair (0, 1)
    np.testing.assert_allclose(mc, exact, atol=0.1)  # 4,000 draws: the standard error is below 0.02
    assert (mc <= pb.cost_of([0]) + 1e-12).all()  # never more than judging every open unknown
    assert (pb.judged_of([0]) == wt.question_costs(pos, unknown, np.array([0, 1]), pb.x, judged=True)).all()
    m = wt.max_metric(pos, pb.g, xs.astype(float))  # (x, S, Q)
    dq = m[:, pb.a, :] - m[:, pb.b, :]  # (x, pairs, Q)
    var = np.einsum("x,xpq->qp", weight, dq ** 2) - np.einsum("x,xpq->qp", weight, dq) ** 2
    v, _ = pb.variances(p)
    np.testing.assert_allclose(v * cand.n_questions ** 2, var, atol=0.015)  # Var ≤ 1: standard error ≤ 0.005
    if rho:
        _, w0 = copula_weights(p, cand.item_q, 0.0)
        var0 = np.einsum("x,xpq->qp", w0, dq ** 2) - np.einsum("x,xpq->qp", w0, dq) ** 2
        assert np.abs(var - var0).max() > 0.03  # the correlation moves Var(D_q) beyond the Monte Carlo's error
    everything = Problem(cand, np.zeros(cand.n_items), "RR@k", mc_draws=64, judging="all")
    np.testing.assert_array_equal(everything.cost_of([0], p), pb.cost_of([0]))


def test_the_allocation_clips_p_at_the_problems_clip():
    """v_e = d_e² p̃ (1 − p̃), p̃ = p clipped to [c, 1 − c]: by hand at the default c = 0.003 and at 0.01."""
    d = np.array([[1.0], [-2.0], [0.5]])
    p = np.array([0.0, 0.5, 0.999])
    np.testing.assert_allclose(dz.item_variances(d, p)[:, 0], [0.003 * 0.997, 4 * 0.25, 0.25 * 0.003 * 0.997])
    np.testing.assert_allclose(dz.item_variances(d, p, 0.01)[:, 0], [0.01 * 0.99, 1.0, 0.25 * 0.01 * 0.99])
