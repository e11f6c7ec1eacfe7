"""The relevance prior (kgeval.judgments.prior): features by hand, AUC against a pairwise count, the reliability
table by hand, the logistic fit against scipy's optimiser, and cross-validation that never sees its test fold."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from kgeval.errors import InputError
from kgeval.judgments.prior import (
    TRANSFER_CAVEAT,
    BinnedPrior,
    Features,
    LogisticPrior,
    auc,
    cross_validate,
    fit_prior,
    online_prior,
    reliability,
    triple_features,
)


def test_features_by_hand():
    ranks = np.array([[1, 0, 11, 4], [3, 2, 0, 4]])
    f = triple_features(ranks, ["1-N", "N-N", "1-1", "N-1"], ["tail", "head", "head", "tail"], [5, 0, 2, 9], k=10)
    np.testing.assert_array_equal(f.best_rank, [1, 2, 11, 4])
    np.testing.assert_array_equal(f.n_top, [2, 1, 0, 2])
    np.testing.assert_array_equal(f.cat_side, [3, 6, 0, 5])
    g = triple_features(ranks, [1, 3, 0, 2], [1, 0, 0, 1], [5, 0, 2, 9], k=10)
    np.testing.assert_array_equal(g.cat_side, f.cat_side)
    with pytest.raises(InputError, match="unknown relation category 'M-M'"):
        triple_features(ranks, ["M-M"] * 4, [0] * 4, [1] * 4)
    assert "never pooled" in TRANSFER_CAVEAT


def random_features(rng, n):
    return Features(rng.integers(1, 12, n), rng.integers(0, 14, n), rng.integers(0, 8, n),
                    rng.integers(0, 500, n).astype(float))


def test_auc_equals_pairwise_count_with_ties():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 5, 60) / 4      # many ties
    y = rng.random(60) < 0.4
    pos, neg = s[y], s[~y]
    brute = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (pos.size * neg.size)
    assert auc(s, y) == pytest.approx(brute)
    assert auc([0.1, 0.9], [0, 1]) == 1.0 and auc([0.9, 0.1], [0, 1]) == 0.0
    assert np.isnan(auc([0.1, 0.2], [1, 1]))


def test_reliability_by_hand():
    t = reliability([0.05, 0.15, 0.12, 0.95, 1.0], [0, 1, 0, 1, 1], bins=10)
    assert list(t["count"]) == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert t["mean_predicted"][1] == pytest.approx(0.135)
    assert t["observed_rate"][1] == 0.5 and t["observed_rate"][9] == 1.0
    assert np.isnan(t["observed_rate"][2])


def test_logistic_fit_is_the_penalised_optimum():
    rng = np.random.default_rng(1)
    f = random_features(rng, 400)
    y = (rng.random(400) < 1 / (1 + np.exp(0.4 * f.best_rank - 2))).astype(int)
    model = LogisticPrior(l2=1e-2).fit(f, y)
    X = model._design(f)
    pen = np.r_[0.0, np.full(X.shape[1] - 1, 1e-2 * 400)]

    def loss(beta):
        z = X @ beta
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * np.sum(pen * beta ** 2)

    ref = minimize(loss, np.zeros(X.shape[1]), method="BFGS", options={"gtol": 1e-9})
    np.testing.assert_allclose(model.beta, ref.x, atol=1e-4)
    p = model.predict(f)
    assert ((p > 0) & (p < 1)).all()
    # deeper best rank, lower prior (the generating model's sign)
    assert model.beta[1] < 0


def test_binned_and_uniform_by_hand():
    f = Features(np.array([1, 1, 1, 2, 2]), np.zeros(5, int), np.array([0, 0, 0, 0, 1]), np.zeros(5), k=2)
    y = np.array([1, 1, 0, 0, 1])
    m = BinnedPrior(smoothing=2).fit(f, y)
    # overall rate 0.6; bin (1, 0): (2 + 2·0.6)/(3 + 2); bin (2, 0): (0 + 1.2)/(1 + 2); unseen bin: 0.6
    np.testing.assert_allclose(m.predict(f.take(np.array([0, 3]))), [3.2 / 5, 1.2 / 3])
    unseen = Features(np.array([3]), np.zeros(1, int), np.array([7]), np.zeros(1), k=2)
    assert m.predict(unseen)[0] == pytest.approx(0.6)
    np.testing.assert_array_equal(fit_prior(f, y, "uniform").predict(f), 0.5)
    with pytest.raises(InputError, match="prior 'tree'"):
        fit_prior(f, y, "tree")


def test_cross_validation_never_sees_its_test_fold():
    rng = np.random.default_rng(3)
    n = 300
    f = random_features(rng, n)
    f = Features(f.best_rank, f.n_top, f.cat_side, np.arange(n, dtype=float))  # answer_count = the row id
    y = (rng.random(n) < 1 / (1 + np.exp(0.5 * f.best_rank - 3))).astype(int)
    groups = rng.integers(0, 40, n)
    fits = []

    class Spy:
        def __init__(self, feats, labels):
            self.model = LogisticPrior().fit(feats, labels)
            fits.append(feats.answer_count.astype(int))

        def predict(self, feats):
            predicted.append(feats.answer_count.astype(int))
            return self.model.predict(feats)

    predicted = []
    cv = cross_validate(f, y, groups, folds=5, seed=7, fit=Spy)
    assert len(fits) == 5
    for i, (train, test) in enumerate(zip(fits, predicted)):
        np.testing.assert_array_equal(test, np.flatnonzero(cv.fold == i))
        assert np.intersect1d(train, test).size == 0
        assert np.intersect1d(groups[train], groups[test]).size == 0      # a question stays in one fold
        assert train.size + test.size == n
    # the out-of-fold predictions are what a fit without the fold predicts
    again = cross_validate(f, y, groups, folds=5, seed=7)
    np.testing.assert_allclose(again.predictions, cv.predictions)
    assert cv.auc == pytest.approx(auc(cv.predictions, y))
    assert cv.auc > 0.6
    assert cv.reliability["count"].sum() == n
    assert not np.array_equal(cross_validate(f, y, groups, folds=5, seed=8).fold, cv.fold)


def test_online_prior_learns_only_from_the_labels_given():
    rng = np.random.default_rng(4)
    f = random_features(rng, 200)
    y = (rng.random(200) < 1 / (1 + np.exp(0.5 * f.best_rank - 3))).astype(int)
    refit = online_prior(f, min_labels=30)
    np.testing.assert_array_equal(refit(np.arange(20), y[:20]), 0.5)
    np.testing.assert_array_equal(refit(np.arange(40), np.ones(40, int)), 0.5)
    items = np.arange(0, 200, 2)
    np.testing.assert_allclose(refit(items, y[items]), fit_prior(f.take(items), y[items]).predict(f))

