"""The boosted relevance prior (issue 50 §2) and the calibration measure its reports need.

:class:`BoostedPrior` is scikit-learn's ``HistGradientBoostingClassifier`` on the logistic prior's features (log
best rank, number of systems, log answer count, the category × side code as a categorical feature) plus the
item's extra columns (``Features.extra``: the graph evidence and each system's reciprocal rank of
:mod:`.graph_features`). Trees, because the evidence interacts: a candidate linked to the known entity matters
most where the relation has many answers, which a logistic on the same columns cannot express (the issue
measured AUC 0.762 for the logistic against 0.856 for the trees on these columns).

Calibration: the trees' scores are mapped to probabilities by isotonic regression fitted on inner folds
(``CalibratedClassifierCV(method="isotonic")``, ``inner_folds`` stratified folds; the calibrated model is the
average of the inner fits). The control variate and the budgets use p itself, not only its order, so a
miscalibrated p would widen the plans' intervals. With too few labels of a class for the inner folds the trees'
own probabilities are used. Every random choice (the inner folds; the trees use no subsampling and no early
stopping) follows ``seed``, so a fit is the same bytes for the same labels and seed. The trees grow on one
thread: the workflow runs jobs side by side on few cores, and OpenMP threads waiting on one another on a loaded
machine were far slower than one (one calibrated fit on the 15,596 pool labels: 9.5 s on one thread; the
5-fold cross-validation had not finished in 10 minutes on two threads, load 15–19 on 2 cores).

This module knows the features by their attributes only (``best_rank``, ``n_top``, ``answer_count``,
``cat_side``, ``extra``): the prior module dispatches to it, not the other way round.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

N_CAT_SIDE = 8  # 4 relation categories × 2 question sides


def design(f) -> np.ndarray:
    """The trees' columns: the category × side code first (categorical), the logistic's numeric columns, then
    ``f.extra`` when the features carry it."""
    cols = [f.cat_side.astype(float), np.log(f.best_rank), f.n_top.astype(float), np.log1p(f.answer_count)]
    X = np.column_stack(cols)
    extra = getattr(f, "extra", None)
    return X if extra is None else np.column_stack([X, extra])


class BoostedPrior:
    """Gradient-boosted trees, calibrated by isotonic regression on inner folds (module docstring)."""

    def __init__(self, seed: int = 0, max_iter: int = 200, learning_rate: float = 0.05, max_leaf_nodes: int = 15,
                 min_samples_leaf: int = 40, l2_regularization: float = 1.0, inner_folds: int = 3):
        self.seed, self.inner_folds = seed, inner_folds
        self.params = dict(max_iter=max_iter, learning_rate=learning_rate, max_leaf_nodes=max_leaf_nodes,
                           min_samples_leaf=min_samples_leaf, l2_regularization=l2_regularization)

    def _trees(self):
        from sklearn.ensemble import HistGradientBoostingClassifier

        # no early stopping: its validation split would be a second random draw, and a fixed size is reproducible
        return HistGradientBoostingClassifier(categorical_features=[0], early_stopping=False,
                                              random_state=self.seed, **self.params)

    def fit(self, f, y) -> BoostedPrior:
        with threadpool_limits(1):
            return self._fit(f, y)

    def _fit(self, f, y) -> BoostedPrior:
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.model_selection import StratifiedKFold

        y = np.asarray(y, dtype=np.int64)
        X = design(f)
        self.constant = None
        if y.size == 0 or y.min() == y.max():  # one class: nothing for trees to split
            self.constant = float(y.mean()) if y.size else 0.5
            return self
        if min(int(y.sum()), int(y.size - y.sum())) >= self.inner_folds:
            folds = StratifiedKFold(self.inner_folds, shuffle=True, random_state=self.seed)
            self.model = CalibratedClassifierCV(self._trees(), method="isotonic", cv=folds).fit(X, y)
        else:
            self.model = self._trees().fit(X, y)
        return self

    def predict(self, f) -> np.ndarray:
        if self.constant is not None:
            return np.full(len(f.best_rank), self.constant)
        with threadpool_limits(1):
            return self.model.predict_proba(design(f))[:, 1]


def expected_calibration_error(pred, labels, bins: int = 10) -> float:
    """ECE: Σ_b (n_b / n) |mean p in bin b − relevant rate in bin b| over equal-width bins of p (the last bin
    closed at 1); NaN without items."""
    p, y = np.asarray(pred, dtype=float), np.asarray(labels, dtype=float)
    if p.size == 0:
        return float("nan")
    b = np.minimum((p * bins).astype(np.int64), bins - 1)
    gap = np.abs(np.bincount(b, weights=p, minlength=bins) - np.bincount(b, weights=y, minlength=bins))
    return float(gap.sum() / p.size)  # n_b/n · |Σp/n_b − Σy/n_b| = |Σp − Σy| / n
