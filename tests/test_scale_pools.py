"""Pools and bounds on a scale graph: the planted truth found by key search agrees with a set of triples, pools
are the union of the top lists, and the bounds hold the exact value and close at the deepest pool."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.data.questions import Questions
from kgeval.errors import KgevalError
from kgeval.scale.pools import is_true, pool, pool_bounds, truth_keys


def _graph(E=30, R=3, n=120, seed=0):
    rng = np.random.default_rng(seed)
    t = np.unique(rng.integers(0, [E, R, E], size=(n, 3)), axis=0).astype(np.int32)
    t = t[t[:, 0] != t[:, 2]]
    splits = np.array_split(rng.permutation(len(t)), 4)
    return {name: t[idx] for name, idx in zip(("train", "valid", "test", "hidden"), splits)}, E, R


def test_is_true_agrees_with_a_set_of_triples():
    g, E, R = _graph()
    truth = truth_keys(g, E, R)
    facts = {tuple(x) for s in g.values() for x in s.tolist()}
    questions = Questions.from_triples(g["test"], E, R)
    rng = np.random.default_rng(1)
    q = rng.integers(0, len(questions), 2000)
    e = rng.integers(0, E, 2000)
    got = is_true(questions, q, e, truth)
    want = [((int(x), int(questions.relation[i]), int(questions.entity[i])) if questions.side[i] == 0
             else (int(questions.entity[i]), int(questions.relation[i]), int(x))) in facts for i, x in zip(q, e)]
    np.testing.assert_array_equal(got, want)
    assert got.any() and not got.all()
    # every test answer is true: the truth holds its own test split
    t = g["test"].astype(np.int64)
    tails = np.flatnonzero(questions.side == 1)[:5]
    answers = [t[(t[:, 0] == questions.entity[i]) & (t[:, 1] == questions.relation[i])][0, 2] for i in tails]
    assert is_true(questions, tails, np.array(answers), truth).all()


def test_pool_is_the_union_of_the_top_lists():
    a = np.array([[3, 1, 2], [0, -1, -1]])
    b = np.array([[1, 4, 3], [5, 0, -1]])
    q, e = pool([a, b], 2, 10)
    assert list(zip(q.tolist(), e.tolist())) == [(0, 1), (0, 3), (0, 4), (1, 0), (1, 5)]


def test_bounds_hold_the_truth_and_close_at_the_deepest_pool():
    g, E, R = _graph(E=40, n=400)
    truth = truth_keys(g, E, R)
    questions = Questions.from_triples(g["test"], E, R)
    rng = np.random.default_rng(2)
    tops = [np.argsort(rng.random((len(questions), E)), axis=1)[:, :5] for _ in range(3)]
    tops[0][0, 3:] = -1  # a list shorter than k
    pools, bounds = pool_bounds(questions, tops, truth, [1, 3, 5])
    assert (bounds["lower"] <= bounds["exact"] + 1e-12).all() and (bounds["exact"] <= bounds["upper"] + 1e-12).all()
    deepest = bounds[bounds["depth"] == 5]
    np.testing.assert_allclose(deepest["lower"], deepest["exact"])
    np.testing.assert_allclose(deepest["upper"], deepest["exact"])
    assert (deepest["unjudged_share"] == 0).all()
    assert pools["pooled"].is_monotonic_increasing and (pools["relevant"] <= pools["pooled"]).all()
    # the exact P@5 of system 1, by hand
    facts = {tuple(x) for s in g.values() for x in s.tolist()}

    def fact(i, x):
        known, r = int(questions.entity[i]), int(questions.relation[i])
        return ((int(x), r, known) if questions.side[i] == 0 else (known, r, int(x))) in facts

    want = np.mean([sum(fact(i, x) for x in tops[1][i]) / 5 for i in range(len(questions))])
    assert deepest[deepest["system"] == 1]["exact"].item() == pytest.approx(want)
    with pytest.raises(KgevalError, match="top lists of at least 10"):
        pool_bounds(questions, tops, truth, [1, 10])


def test_sampling_plan_is_exact_at_full_budget_and_covers_below_it():
    from kgeval.scale.pools import sampling_plan

    g, E, R = _graph(E=40, n=400)
    truth = truth_keys(g, E, R)
    questions = Questions.from_triples(g["test"], E, R)
    rng = np.random.default_rng(2)
    tops = [np.argsort(rng.random((len(questions), E)), axis=1)[:, :5] for _ in range(3)]
    _, bounds = pool_bounds(questions, tops, truth, [5])
    p_at_5 = bounds.set_index("system")["exact"]
    full = sampling_plan(questions, tops, truth, 5, 10**6, reps=3)
    # every unit judged: the estimate is the exact difference of the systems' P@5, with no variance
    np.testing.assert_allclose(full["estimate"], full["exact"], atol=1e-12)
    np.testing.assert_allclose(full["exact"], [p_at_5[0] - p_at_5[1], p_at_5[1] - p_at_5[2]], atol=1e-12)
    assert (full["half_width_prior"] == 0).all() and (full["coverage"] == 1).all()
    # 100 expected judgments of the 1,700 pooled pairs: the 95 % intervals hold the truth about 95 % of the time
    part = sampling_plan(questions, tops, truth, 5, 100, reps=2000)
    assert part["expected_judgments"].iloc[0] == pytest.approx(100, rel=0.01)
    assert (part["coverage"] >= 0.92).all() and (part["half_width_prior"] > 0).all()
