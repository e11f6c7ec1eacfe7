"""benchmarks/sampling_two_phase.py, the measurement of two-phase RR@k judging (issue 62): its split of D_q and its
estimator against exact enumeration."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from kgeval.sampling import weights as wt
from kgeval.sampling.problem import Problem


@pytest.fixture
def two_phase(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import sampling_two_phase

    return sampling_two_phase


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_split_settles_d_and_expects_the_rest_given_phase_one(two_phase, depth):
    """Over every labelling of the unknowns, weighted by independent p: D_q is what max_metric gives, the two
    phases cost the rank-order judge's judgments between them, and m_q is E[T | the labels phase 1 judged] (the
    weighted mean of T over the labellings phase 1 cannot tell apart). At depth k nothing is left to phase 2."""
    from test_sampling import instance

    cand, *_ = instance(seed=0, S=2, Q=2, k=3, n_ent=5)  # lists [1 3 2] [0 1 2] and [8 5 6] [7 6 4]
    state = np.full(cand.n_items, -1)
    state[[3, 4]] = [0, 1]  # a known non-relevant and a known relevant item
    cand = cand.with_state(state)
    p = np.random.default_rng(8).uniform(0.15, 0.8, cand.n_items)
    pb = Problem(cand, np.zeros(cand.n_items), "RR@k", mc_draws=8)
    open_ = np.flatnonzero(state == -1)
    xs = np.zeros((2 ** open_.size, cand.n_items), bool)
    xs[:, open_] = np.array(list(itertools.product((0, 1), repeat=open_.size)), bool)
    xs[:, 4] = True
    weight = np.where(xs[:, open_], p[open_], 1 - p[open_]).prod(1)
    d, t, m, c1, c2, judged = two_phase.split(pb, 0, depth, xs, np.where(pb.unknown, p, pb.x))
    best = wt.max_metric(pb.pos, pb.g, xs.astype(float))
    np.testing.assert_allclose(d, best[:, 0] - best[:, 1])
    np.testing.assert_array_equal(c1 + c2, wt.question_costs(pb.pos, pb.unknown, np.array([0, 1]), xs, judged=True))
    assert (c1 > 0).any() and not judged[:, state >= 0].any()
    if depth == 3:
        assert not t.any() and not m.any() and not c2.any()
        return
    assert (c2 > 0).any() and t.any()
    for q in range(cand.n_questions):
        seen = judged & (cand.item_q == q)
        keys = [r.tobytes() + (x & r).tobytes() for r, x in zip(seen, xs)]
        for key in set(keys):
            g = np.array([k == key for k in keys])
            np.testing.assert_allclose(m[g, q], weight[g] @ t[g, q] / weight[g].sum())


def test_two_phase_estimate_and_its_variance_are_unbiased(two_phase):
    """Every phase-1 and phase-2 draw of three questions, weighted by its probability: E[Δ̂] = Δ, and E[V̂] is
    Var(Δ̂) = Σ (1/π₁ − 1)(D − μ)² + Σ (1/π₂ − 1)(T − m)²/π₁ over Q²."""
    rng = np.random.default_rng(2)
    Q = 3
    mu, dq, t, m = rng.uniform(-0.5, 0.5, (4, Q))
    pi1, pi2 = rng.uniform(0.2, 0.9, (2, Q))
    draws = np.array(list(itertools.product((0, 1), repeat=2 * Q)), bool)
    incl, more = draws[:, :Q], draws[:, Q:]
    prob = np.where(incl, pi1, 1 - pi1).prod(1) * np.where(more, pi2, 1 - pi2).prod(1)
    est = two_phase.estimate(mu, np.arange(Q), dq, t, m, pi1, pi2, incl, more)
    assert prob.sum() == pytest.approx(1.0)
    assert prob @ est.delta == pytest.approx(dq.mean())
    var = prob @ (est.delta - dq.mean()) ** 2
    assert var == pytest.approx((((1 / pi1 - 1) * (dq - mu) ** 2 + (1 / pi2 - 1) * (t - m) ** 2 / pi1).sum()) / Q ** 2)
    assert prob @ est.var == pytest.approx(var)
