"""Which unjudged triples to judge next: Minimal Test Collections (Carterette, Allan and Sitaraman, SIGIR 2006;
Carterette, SIGIR 2007) over every pair of compared systems, on arrays. This module holds the data model and the
metric weights; :mod:`.linear` and :mod:`.maxtype` the two engines, :mod:`.greedy` the plan and the greedy run,
:mod:`.counts` the judgments to decide and τ under the prior.

Data model (:class:`Candidates`): the items are the (question, entity) pairs in the union of the compared systems'
top-k lists. ``item_q[e]`` is the question of item e (0 … Q−1, Q = ``n_questions``, the number of questions the
mean divides by, including questions with no candidate item), ``ranks[s, e]`` the rank of e in system s's
filtered run (0 or > k: not in its top k), ``state[e]`` 1 known relevant, 0 known not relevant, −1 unknown.

Metrics. Linear per-question metrics M_s(q) = Σ_e w_s(e) x_e with w_s(e) for rank r ≤ k: P@k 1/k, DCG@k
1/log2(r+1), RBP (1−p) p^(r−1). Max-type metrics M_s(q) = max_e w_s(e) x_e: RR@k (w = 1/r) and Success@k (w = 1);
they are not linear in the labels. A system's score is the mean over the Q questions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from kgeval.errors import InputError

from .metrics import BoundedMetric, bounded_metric

LINEAR_METRICS = ("P@k", "DCG@k", "RBP")
MAX_METRICS = ("RR@k", "Success@k")
TOL = 1e-12  # differences smaller than this are ties: incremental sums drift by ~1e-16
CHUNK = 4_000_000  # floats per temporary pairs × items (or draws × …) block: ~32 MB

PairBounds = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Candidates:
    """The candidate items of one comparison of systems (see the module docstring): ``item_q`` (n,) question of
    each item, ``ranks`` (S, n) rank of each item in each system's filtered run (0 or > k: not in its top k),
    ``state`` (n,) 1 relevant / 0 not relevant / −1 unknown, ``n_questions`` Q the mean divides by, ``k`` the
    cut-off, ``systems`` optional names. Set once from these: ``n_systems`` S, ``n_items`` n and ``pairs`` (a, b),
    the pair order of every per-pair array (:func:`system_pairs`); plain values, so the stages that read them
    never call back down here for them."""

    item_q: np.ndarray
    ranks: np.ndarray
    state: np.ndarray
    n_questions: int
    k: int = 10
    systems: tuple[str, ...] | None = None
    n_systems: int = field(init=False, repr=False, compare=False)
    n_items: int = field(init=False, repr=False, compare=False)
    pairs: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        q, r, s = np.asarray(self.item_q), np.asarray(self.ranks), np.asarray(self.state)
        if r.ndim != 2 or q.shape != (r.shape[1],) or s.shape != q.shape:
            raise InputError(None, None, f"candidates: ranks must be systems × items and item_q, state one entry "
                                         f"per item; got ranks {r.shape}, item_q {q.shape}, state {s.shape}")
        if q.size and (q.min() < 0 or q.max() >= self.n_questions):
            raise InputError(None, None, f"candidates: item_q must lie in 0..{self.n_questions - 1}")
        if not np.isin(s, (-1, 0, 1)).all():
            raise InputError(None, None, "candidates: state must be 1 (relevant), 0 (not relevant) or -1 (unknown)")
        if self.systems is not None and len(self.systems) != r.shape[0]:
            raise InputError(None, None, f"candidates: {len(self.systems)} system names for {r.shape[0]} systems")
        object.__setattr__(self, "item_q", q.astype(np.int64))
        object.__setattr__(self, "ranks", r.astype(np.int64))
        object.__setattr__(self, "state", s.astype(np.int8))
        object.__setattr__(self, "n_systems", r.shape[0])
        object.__setattr__(self, "n_items", r.shape[1])
        object.__setattr__(self, "pairs", system_pairs(r.shape[0]))

    def with_state(self, state: np.ndarray) -> Candidates:
        return replace(self, state=np.asarray(state))


def item_weights(ranks: np.ndarray, metric: str, k: int = 10, rbp_p: float = 0.8) -> np.ndarray:
    """w_s(e) (systems × items) of a linear (P@k, DCG@k, RBP) or max-type (RR@k, Success@k) metric; 0 outside
    the top k. The weight of each rank is :func:`kgeval.judgments.metrics.bounded_metric`'s, the one table the bounds use."""
    return _by_rank(ranks, _resolve(metric, k, rbp_p), k)


def metric_weights(cand: Candidates, metric: str, rbp_p: float = 0.8) -> tuple[BoundedMetric, np.ndarray]:
    """The metric (``P@k``, …, ``Success@k``) at ``cand``'s cut-off, resolved once, and its :func:`item_weights`
    on ``cand``'s ranks: what a sampling problem reads, in one call."""
    m = _resolve(metric, cand.k, rbp_p)
    return m, _by_rank(cand.ranks, m, cand.k)


def _resolve(metric: str, k: int, rbp_p: float) -> BoundedMetric:
    if metric not in LINEAR_METRICS + MAX_METRICS:
        raise InputError(None, None, f"metric {metric!r}: expected one of {LINEAR_METRICS + MAX_METRICS}")
    return bounded_metric(metric.split("@")[0], k, rbp_p)


def _by_rank(ranks: np.ndarray, m: BoundedMetric, k: int) -> np.ndarray:
    r = np.asarray(ranks)
    inside = (r >= 1) & (r <= k)
    by_rank = np.append(m.weights, 0.0)  # index k: outside
    return by_rank[np.where(inside, r - 1, k)]


def system_pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) with a < b: the order of every per-pair array here (Δ = mean(a) − mean(b))."""
    return np.triu_indices(n_systems, k=1)


def blocks(n: int, width: int):
    """Slices of 0 … n−1 whose rows of ``width`` floats each fill about :data:`CHUNK` floats together."""
    step = max(1, CHUNK // max(width, 1))
    for i in range(0, n, step):
        yield slice(i, min(n, i + step))
