"""The relevance prior p(e): the probability that an unjudged (question, entity) item is relevant, from features
every item has, fitted on the published judgments (Carterette, SIGIR 2007, estimates such priors for MTC).

Features (:func:`triple_features`): the best rank over the compared systems (k+1 when in no top k), the number of
systems with the item in their top k, the relation's category (1-1, 1-N, N-1, N-N) crossed with the question's
side (head or tail question: a 1-N relation has many answers on one side, one on the other), and the relation's
answer count. Models: a logistic regression fitted by Newton's method (IRLS) with a small L2 penalty (the
intercept is not penalised) on log(best rank), the number of systems, log(1 + answer count) — standardised — and
the eight category × side indicators; a binned estimate (the rate per best rank × category × side, shrunk to the
overall rate by ``smoothing`` pseudo-counts); or the uniform prior 0.5. The fits are deterministic; the seed of
:func:`cross_validate` draws the folds.

Caveat (state it wherever the prior is reported): the published pool's triples came from other systems' top 10,
so the prior may not transfer to never-pooled triples (:data:`TRANSFER_CAVEAT`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kgeval.errors import InputError

from .prior_models import BoostedPrior

CATEGORIES = ("1-1", "1-N", "N-1", "N-N")
SIDES = ("head", "tail")
TRANSFER_CAVEAT = ("The prior is fitted on the published judgments, whose triples came from other systems' top 10: "
                   "it may not transfer to triples that were never pooled.")


@dataclass(frozen=True)
class Features:
    """Per item: ``best_rank`` (1..k, k+1 outside every top k), ``n_top`` (systems with it in their top k),
    ``cat_side`` (category index × 2 + side index, 0..7), ``answer_count`` (the relation's answers), ``k``;
    ``extra`` (items × columns, optional): more columns only the boosted prior reads (graph evidence, each
    system's reciprocal rank: :mod:`kgeval.judgments.graph_features`)."""

    best_rank: np.ndarray
    n_top: np.ndarray
    cat_side: np.ndarray
    answer_count: np.ndarray
    k: int = 10
    extra: np.ndarray | None = None

    def __len__(self) -> int:
        return self.best_rank.size

    def take(self, idx) -> Features:
        extra = None if self.extra is None else self.extra[idx]
        return Features(self.best_rank[idx], self.n_top[idx], self.cat_side[idx], self.answer_count[idx], self.k,
                        extra)


def _codes(values, names: tuple[str, ...], what: str) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype.kind in "iu":
        codes = v.astype(np.int64)
    else:
        lookup = {n: i for i, n in enumerate(names)}
        bad = sorted({str(x) for x in v.tolist()} - set(lookup))
        if bad:
            raise InputError(None, None, f"prior features: unknown {what} {bad[0]!r}; expected one of {names}")
        codes = np.array([lookup[str(x)] for x in v.tolist()], dtype=np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise InputError(None, None, f"prior features: {what} codes must lie in 0..{len(names) - 1}")
    return codes


def triple_features(ranks: np.ndarray, category, side, answer_count, k: int = 10) -> Features:
    """Features of every item from the systems × items ranks (0 or > k: not in the top k), the relation category
    (codes 0..3 or names of :data:`CATEGORIES`), the question's side (0/1 or 'head'/'tail') and the relation's
    answer count, each per item."""
    r = np.asarray(ranks)
    inside = (r >= 1) & (r <= k)
    best = np.where(inside, r, k + 1).min(0)
    cnt = np.asarray(answer_count, dtype=float)
    if cnt.shape != best.shape or (cnt < 0).any():
        raise InputError(None, None, "prior features: answer_count must be one non-negative number per item")
    cs = _codes(category, CATEGORIES, "relation category") * 2 + _codes(side, SIDES, "side")
    return Features(best.astype(np.int64), inside.sum(0).astype(np.int64), cs, cnt, k)


def _numeric(f: Features) -> np.ndarray:
    return np.column_stack([np.log(f.best_rank), f.n_top, np.log1p(f.answer_count)]).astype(float)


class LogisticPrior:
    """L2-penalised logistic regression by Newton's method (IRLS)."""

    def __init__(self, l2: float = 1e-2, max_iter: int = 100, tol: float = 1e-10):
        self.l2, self.max_iter, self.tol = l2, max_iter, tol

    def _design(self, f: Features) -> np.ndarray:
        num = (_numeric(f) - self.mu) / self.sd
        onehot = (f.cat_side[:, None] == np.arange(2 * len(CATEGORIES))[None, :]).astype(float)
        return np.column_stack([np.ones(len(f)), num, onehot])

    def fit(self, f: Features, y) -> LogisticPrior:
        y = np.asarray(y, dtype=float)
        num = _numeric(f)
        self.mu, self.sd = num.mean(0), num.std(0)
        self.sd[self.sd == 0] = 1.0
        X = self._design(f)
        pen = np.full(X.shape[1], self.l2 * max(len(y), 1))
        pen[0] = 0.0
        beta = np.zeros(X.shape[1])
        for _ in range(self.max_iter):
            mu = 1.0 / (1.0 + np.exp(-(X @ beta)))
            grad = X.T @ (y - mu) - pen * beta
            H = (X * (mu * (1 - mu))[:, None]).T @ X + np.diag(pen) + 1e-12 * np.eye(X.shape[1])
            step = np.linalg.solve(H, grad)
            beta += step
            if np.abs(step).max() < self.tol:
                break
        self.beta = beta
        return self

    def predict(self, f: Features) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(self._design(f) @ self.beta)))


class BinnedPrior:
    """The relevant rate per (best rank, category × side) bin, shrunk to the overall rate by ``smoothing``
    pseudo-counts (a bin never seen gets the overall rate)."""

    def __init__(self, smoothing: float = 10.0):
        self.smoothing = smoothing

    def _key(self, f: Features) -> np.ndarray:
        return (np.clip(f.best_rank, 1, f.k + 1) - 1) * 2 * len(CATEGORIES) + f.cat_side

    def fit(self, f: Features, y) -> BinnedPrior:
        y = np.asarray(y, dtype=float)
        self.size = (f.k + 1) * 2 * len(CATEGORIES)
        key = self._key(f)
        self.base = float(y.mean()) if y.size else 0.5
        pos = np.bincount(key, weights=y, minlength=self.size)
        n = np.bincount(key, minlength=self.size)
        self.rate = (pos + self.smoothing * self.base) / (n + self.smoothing)
        return self

    def predict(self, f: Features) -> np.ndarray:
        return self.rate[np.minimum(self._key(f), self.size - 1)]


class UniformPrior:
    """p(e) = 0.5 for every item: MTC without a fitted prior."""

    def fit(self, f: Features, y) -> UniformPrior:
        return self

    def predict(self, f: Features) -> np.ndarray:
        return np.full(len(f), 0.5)


PRIORS = {"logistic": LogisticPrior, "binned": BinnedPrior, "uniform": UniformPrior, "boosted": BoostedPrior}


def fit_prior(features: Features, labels, kind: str = "logistic", **options):
    """A fitted prior (``.predict(features) -> p``) of the given kind: 'logistic', 'binned', 'uniform' or
    'boosted' (:class:`kgeval.judgments.prior_models.BoostedPrior`)."""
    if kind not in PRIORS:
        raise InputError(None, None, f"prior {kind!r}: expected one of {sorted(PRIORS)}")
    labels = np.asarray(labels)
    if labels.shape != (len(features),) or not np.isin(labels, (0, 1)).all():
        raise InputError(None, None, "prior: labels must be one 0/1 per item")
    return PRIORS[kind](**options).fit(features, labels)


def auc(scores, labels) -> float:
    """Area under the ROC curve by the Mann–Whitney statistic, ties counted one half; NaN without both
    classes."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels).astype(bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    r = rankdata(s)
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def reliability(pred, labels, bins: int = 10) -> pd.DataFrame:
    """The reliability table: per equal-width bin of the predicted probability, the mean prediction, the
    observed relevant rate and the count (empty bins kept with NaN rates)."""
    p, y = np.asarray(pred, dtype=float), np.asarray(labels, dtype=float)
    b = np.minimum((p * bins).astype(np.int64), bins - 1)
    n = np.bincount(b, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=p, minlength=bins) / n
        rate = np.bincount(b, weights=y, minlength=bins) / n
    edges = np.arange(bins + 1) / bins
    return pd.DataFrame({"bin_lo": edges[:-1], "bin_hi": edges[1:], "mean_predicted": mean_p,
                         "observed_rate": rate, "count": n})


@dataclass
class CrossValidation:
    """Out-of-fold predictions (``predictions``), the fold of each row (``fold``), the AUC over all out-of-fold
    predictions and per fold, and the reliability table of the out-of-fold predictions."""

    auc: float
    fold_auc: np.ndarray
    reliability: pd.DataFrame
    predictions: np.ndarray
    fold: np.ndarray


def group_folds(groups, folds: int, seed: int) -> np.ndarray:
    """Fold index per row: the distinct groups (questions) in a seeded random order, dealt to the folds in
    turn, so a group's rows all share a fold."""
    uniq, inv = np.unique(np.asarray(groups), return_inverse=True)
    if uniq.size < folds:
        raise InputError(None, None, f"cross-validation: {uniq.size} groups for {folds} folds")
    perm = np.random.default_rng(seed).permutation(uniq.size)
    fold_of_group = np.empty(uniq.size, np.int64)
    fold_of_group[perm] = np.arange(uniq.size) % folds
    return fold_of_group[inv.ravel()]


def cross_validate(features: Features, labels, groups, folds: int = 5, seed: int = 0, kind: str = "logistic",
                   fit: Callable | None = None, bins: int = 10) -> CrossValidation:
    """Grouped k-fold cross-validation: each fold's rows are predicted by a prior fitted on the other folds only
    (``fit(features, labels) -> model`` overrides :func:`fit_prior` of ``kind``)."""
    y = np.asarray(labels)
    fold = group_folds(groups, folds, seed)
    fitter = fit or (lambda f, lab: fit_prior(f, lab, kind))
    pred = np.full(y.size, np.nan)
    fold_auc = np.full(folds, np.nan)
    for i in range(folds):
        test, train = np.flatnonzero(fold == i), np.flatnonzero(fold != i)
        model = fitter(features.take(train), y[train])
        pred[test] = model.predict(features.take(test))
        fold_auc[i] = auc(pred[test], y[test])
    return CrossValidation(auc(pred, y), fold_auc, reliability(pred, y, bins), pred, fold)


def online_prior(features: Features, kind: str = "logistic", min_labels: int = 50, **options) -> Callable:
    """A refit callable for :class:`kgeval.bounds.simulation.MTC`: (judged items, their labels) → p for every
    item, from a prior fitted on those labels alone; 0.5 everywhere until ``min_labels`` labels of both
    classes are in."""

    def refit(items, labels):
        labels = np.asarray(labels)
        if labels.size < min_labels or labels.min(initial=1) == labels.max(initial=0):
            return np.full(len(features), 0.5)
        return fit_prior(features.take(np.asarray(items)), labels, kind, **options).predict(features)

    return refit

