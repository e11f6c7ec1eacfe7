"""Simulation on real labels (issue 30 §3): hide the labels the published judgments give, let each strategy
reveal them batch by batch, and measure how fast the comparisons get decided.

The hidden items are the ones the published pool labels (beyond depth 0); every other candidate item keeps its
known state (depth-0 answers relevant, never-pooled items not relevant, as in the official evaluation). A
:class:`HiddenLabels` holds the true labels and counts every read; a strategy sees only the current state array
(−1 for an item still hidden) and learns a label only by revealing it. The evaluator reads the full labels once,
through :meth:`HiddenLabels.truth`, for the target ranking and Δ (counted apart from the strategies' reads).

Strategies (``next(state, n) -> items``): :class:`MTC` (the selection of :mod:`kgeval.bounds.greedy` with a
given prior, or 0.5), :class:`DepthOrder` (all of pooling depth 1, then 2, …; ties in a seeded random order),
:class:`RandomOrder` (seeded), :class:`MoveToFront` (Cormack, Palmer and Clarke, SIGIR 1998).

After every batch :func:`simulate` records the judgments made, the pairs decided by the bounds (still-hidden
labels unknown), Kendall's τ-b between the lower-bound estimate's ranking (hidden = not relevant) and the ranking
under all labels, and the largest |Δ_estimate − Δ_true| over the pairs. The judgments needed by a strategy are the
first record at which every pair the full labels decide is decided (exact to the batch). Runs are reproducible
byte for byte with their seeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.bounds.greedy import make_engine, order_items
from kgeval.errors import InputError
from kgeval.judgments.candidates import TOL, Candidates, PairBounds
from kgeval.metrics.kendall import tau_b_many


class HiddenLabels:
    """True labels behind a counter. ``reveal(items)`` returns the labels of hidden, not yet revealed items and
    counts each read (``reads``, and per item ``read_count``); revealing an item twice or an item that is not
    hidden is an error. ``truth()`` hands the evaluator all labels (counted in ``truth_reads``)."""

    def __init__(self, labels, hidden):
        self._labels = np.asarray(labels, dtype=np.int8).copy()
        self.hidden = np.asarray(hidden, dtype=bool).copy()
        if self._labels.shape != self.hidden.shape or not np.isin(self._labels, (0, 1)).all():
            raise InputError(None, None, "hidden labels: one 0/1 label and one hidden flag per item")
        self.revealed = np.zeros(self.hidden.size, bool)
        self.read_count = np.zeros(self.hidden.size, np.int64)
        self.reads = 0
        self.truth_reads = 0

    def reveal(self, items) -> np.ndarray:
        items = np.asarray(items, dtype=np.int64)
        if not self.hidden[items].all() or self.revealed[items].any() or np.unique(items).size != items.size:
            raise InputError(None, None, "reveal: only hidden items, each once")
        self.revealed[items] = True
        self.read_count[items] += 1
        self.reads += items.size
        return self._labels[items].copy()

    def truth(self) -> np.ndarray:
        self.truth_reads += 1
        return self._labels.copy()


def _judgeable(state: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    return hidden & (state == -1)


class MTC:
    """Minimal Test Collections' greedy choice (hard stop's undecided pairs) under the prior ``p`` (a number
    such as 0.5, or one per item); once every pair is resolved, the rest by p, then a seeded key.

    A prior fitted on the published labels is fitted on the very labels the simulation hides: use out-of-fold
    predictions (:func:`kgeval.judgments.prior.cross_validate`, folds by question) at least, or ``refit``, a
    callable (judged items, their labels) → p called before the first batch and every ``refit_every`` batches
    (:func:`kgeval.judgments.prior.online_prior`), which learns only from the labels revealed so far."""

    def __init__(self, p=0.5, metric: str = "P@k", rbp_p: float = 0.8, seed: int = 0, draws: int = 64,
                 pair_bounds: PairBounds | None = None, refit=None, refit_every: int = 10):
        self.p, self.metric, self.rbp_p, self.seed, self.draws = p, metric, rbp_p, seed, draws
        self.pair_bounds, self.refit, self.refit_every = pair_bounds, refit, refit_every
        self.calls = 0

    def start(self, cand: Candidates, hidden: np.ndarray) -> None:
        self.engine = make_engine(cand, self.p, self.metric, self.rbp_p, self.pair_bounds, self.draws, self.seed)
        self.hidden = hidden
        self.key = np.random.default_rng(self.seed).random(cand.n_items)

    def next(self, state: np.ndarray, n: int) -> np.ndarray:
        new = np.flatnonzero((self.engine.state == -1) & (state != -1))
        if new.size:
            self.engine.reveal(new, state[new])
        if self.refit is not None and self.calls % self.refit_every == 0:
            judged = np.flatnonzero(self.hidden & (state != -1))
            self.engine.set_prior(self.refit(judged, state[judged]))
        self.calls += 1
        und = self.engine.undecided("hard")
        items, pri, tie = self.engine.priority(und)
        ok = _judgeable(state, self.hidden)[items]
        items, pri, tie = items[ok], pri[ok], tie[ok]
        take = items[order_items(items, pri, tie, self.key)[:n]]
        if take.size < n:
            rest = np.setdiff1d(np.flatnonzero(_judgeable(state, self.hidden)), take)
            rest = rest[np.lexsort((self.key[rest], -self.engine.p[rest]))]
            take = np.concatenate([take, rest[:n - take.size]])
        return take


class DepthOrder:
    """The paper's pool order: every item of pooling depth 1, then 2, …; ties in a seeded random order."""

    def __init__(self, depth, seed: int = 0):
        self.depth, self.seed = np.asarray(depth), seed

    def start(self, cand: Candidates, hidden: np.ndarray) -> None:
        key = np.random.default_rng(self.seed).random(cand.n_items)
        self.order = np.lexsort((key, self.depth))
        self.hidden = hidden

    def next(self, state: np.ndarray, n: int) -> np.ndarray:
        ok = _judgeable(state, self.hidden)[self.order]
        return self.order[ok][:n]


class RandomOrder(DepthOrder):
    """A seeded random order of the hidden items."""

    def __init__(self, seed: int = 0):
        super().__init__(0, seed)

    def start(self, cand: Candidates, hidden: np.ndarray) -> None:
        self.order = np.random.default_rng(self.seed).permutation(cand.n_items)
        self.hidden = hidden


class MoveToFront:
    """Move-to-front pooling (Cormack, Palmer and Clarke, SIGIR 1998), per question: every system's run starts
    with the same priority; judge the current run's next hidden item top-down; on a relevant item stay, on a
    non-relevant one lower that run's priority by one and switch to the run of highest priority (ties: a seeded
    random order of the runs per question); items already known or judged are passed over. The questions run
    side by side: each round judges one item of every question still having one (in a seeded order of the
    questions), and the next round starts once the round's labels are revealed."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def start(self, cand: Candidates, hidden: np.ndarray) -> None:
        S, Q, k = cand.n_systems, cand.n_questions, cand.k
        rng = np.random.default_rng(self.seed)
        self.lists = np.full((S, Q, k), -1, np.int64)
        s, e = np.nonzero((cand.ranks >= 1) & (cand.ranks <= k) & hidden[None, :])
        slot = (s * Q + cand.item_q[e]) * k + cand.ranks[s, e] - 1
        if np.unique(slot).size != slot.size:
            raise InputError(None, None, "move-to-front: two items share a rank in one system's list of a question")
        self.lists[s, cand.item_q[e], cand.ranks[s, e] - 1] = e
        self.ptr = np.zeros((S, Q), np.int64)
        self.score = rng.random((Q, S)) * 0.5     # integer priorities, ties broken by the fraction
        self.cur = self.score.argmax(1)
        self.qorder = rng.permutation(Q)
        self.queue = np.zeros(0, np.int64)
        self.last = np.zeros(0, np.int64)
        self.item_q = cand.item_q
        self.hidden = hidden

    def _advance(self, state: np.ndarray) -> np.ndarray:
        """Move every pointer past items that cannot be judged; returns exhausted (S, Q)."""
        S, Q, k = self.lists.shape
        s_idx, q_idx = np.meshgrid(np.arange(S), np.arange(Q), indexing="ij")
        for _ in range(k + 1):
            p = np.minimum(self.ptr, k - 1)
            item = self.lists[s_idx, q_idx, p]
            skip = (self.ptr < k) & ((item < 0) | ~_judgeable(state, self.hidden)[np.maximum(item, 0)])
            if not skip.any():
                break
            self.ptr += skip
        return self.ptr >= k

    def _round(self, state: np.ndarray) -> np.ndarray:
        exhausted = self._advance(state)
        if self.last.size:  # the previous round's labels: a non-relevant item demotes its run
            q = self.item_q[self.last]
            miss = state[self.last] == 0
            self.score[q[miss], self.cur[q[miss]]] -= 1.0
        free = np.where(exhausted.T, -np.inf, self.score)
        Q = self.score.shape[0]
        cur_out = exhausted[self.cur, np.arange(Q)]
        switch = np.zeros(Q, bool)
        if self.last.size:
            switch[self.item_q[self.last[state[self.last] == 0]]] = True
        self.cur = np.where(switch | cur_out, free.argmax(1), self.cur)
        active = np.isfinite(free.max(1))
        q = self.qorder[active[self.qorder]]
        c = self.cur[q]
        items = self.lists[c, q, self.ptr[c, q]]
        self.ptr[c, q] += 1
        self.last = items
        return items

    def next(self, state: np.ndarray, n: int) -> np.ndarray:
        if self.queue.size == 0:
            self.queue = self._round(state)
        take, self.queue = self.queue[:n], self.queue[n:]
        return take


def simulate(cand: Candidates, labels: HiddenLabels, strategy, metric: str = "P@k", batch: int = 100,
             max_judgments: int | None = None, rbp_p: float = 0.8, pair_bounds: PairBounds | None = None
             ) -> tuple[pd.DataFrame, int | None]:
    """One strategy's run: the record after every batch (``judgments``, ``decided``, ``tau``,
    ``max_abs_delta_error``; the first row is before any judgment) and the judgments needed to decide every pair
    the full labels decide (None if the run stopped before). ``cand.state`` must be −1 exactly on the hidden
    items. ``pair_bounds`` (state → per-pair (lo, hi)) replaces a max-type metric's built-in bounds in the
    records."""
    hidden = labels.hidden
    if not np.array_equal(cand.state == -1, hidden):
        raise InputError(None, None, "simulate: the candidates' unknown items must be the hidden ones")
    truth = labels.truth()
    full = make_engine(cand.with_state(np.where(hidden, truth, cand.state)), 0.5, metric, rbp_p)
    true_means = full.sample_means(np.zeros((1, 0)))[0]
    true_delta = true_means[full.a] - true_means[full.b]
    target = np.abs(true_delta) > TOL
    ev = make_engine(cand, 0.5, metric, rbp_p, pair_bounds)
    state = cand.state.copy()
    strategy.start(cand, hidden.copy())
    rows, needed, n = [], None, 0
    limit = int(hidden.sum()) if max_judgments is None else min(max_judgments, int(hidden.sum()))
    while True:
        est = ev.sample_means(np.zeros((1, ev.unknown.size)))[0]
        dec = ev.decided()
        rows.append((n, int(dec.sum()), float(tau_b_many(est[None], true_means)[0]),
                     float(np.abs(est[ev.a] - est[ev.b] - true_delta).max(initial=0.0))))
        if needed is None and (dec | ~target).all():
            needed = n
        if n >= limit:
            break
        take = np.asarray(strategy.next(state.copy(), min(batch, limit - n)), dtype=np.int64)
        if take.size == 0:
            break
        x = labels.reveal(take)
        state[take] = x
        ev.reveal(take, x)
        n += take.size
    rec = pd.DataFrame(rows, columns=["judgments", "decided", "tau", "max_abs_delta_error"])
    rec.attrs["target_decided"] = int(target.sum())
    return rec, needed


def compare_strategies(cand: Candidates, labels, strategies: dict, metric: str = "P@k", batch: int = 100,
                       max_judgments: int | None = None, rbp_p: float = 0.8, pair_bounds: PairBounds | None = None
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every strategy on fresh hidden labels: the records stacked with a ``strategy`` column, and per strategy
    the judgments needed (``judgments_needed``, NaN if not reached) out of ``hidden`` items and the pairs the
    full labels decide (``target_decided``)."""
    hidden = cand.state == -1
    tables, summary = [], []
    for name, strategy in strategies.items():
        hl = HiddenLabels(np.where(hidden, labels, 0), hidden)
        rec, needed = simulate(cand, hl, strategy, metric, batch, max_judgments, rbp_p, pair_bounds)
        tables.append(rec.assign(strategy=name))
        summary.append((name, np.nan if needed is None else needed, int(hidden.sum()), rec.attrs["target_decided"]))
    out = pd.concat(tables, ignore_index=True)[["strategy", "judgments", "decided", "tau", "max_abs_delta_error"]]
    return out, pd.DataFrame(summary, columns=["strategy", "judgments_needed", "hidden", "target_decided"])
