"""The plan and the greedy run of the MTC selection: rank the unknown items by decision value and judge the best
first until every pair of systems is decided.

An engine (:func:`make_engine`: :class:`~.linear.LinearPairs` or :class:`~.maxtype.MaxPairs`) gives each
unknown item its priority (linear: the variance of the pair differences that judging it removes; max-type: the
probability that its label is pivotal, summed over the undecided pairs) and a tie-break (linear: Σ d² over the
undecided pairs; max-type: the number of undecided pairs it bears on); remaining ties go by a seeded random key.
Only items that bear on an undecided pair are ranked. The stops are the engine's (:mod:`.engine`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..judgments.candidates import LINEAR_METRICS, Candidates, PairBounds, system_pairs
from .linear import LinearPairs
from .maxtype import MaxPairs

MAX_REFRESH = 0.05  # greedy on a max-type metric: re-rank after judging this fraction of the ranked items


def make_engine(cand: Candidates, p, metric: str, rbp_p: float = 0.8, pair_bounds: PairBounds | None = None,
                draws: int = 200, seed: int = 0, rest: str = "normal") -> LinearPairs | MaxPairs:
    """The engine of a metric: exact E/Var for linear metrics, seeded Monte Carlo for max-type ones."""
    if metric in LINEAR_METRICS:
        return LinearPairs(cand, p, metric, rbp_p)
    return MaxPairs(cand, p, metric, pair_bounds, draws, seed, rest)


@dataclass
class Plan:
    """The items to judge next, best first: ``items`` (indices into the candidates), their ``priority`` and
    ``p``, and the undecided pairs each bears on as CSR (``pairs[ptr[i]:ptr[i+1]]`` indexes
    :func:`system_pairs`)."""

    items: np.ndarray
    priority: np.ndarray
    p: np.ndarray
    ptr: np.ndarray
    pairs: np.ndarray

    def bears_on_labels(self, systems) -> list[str]:
        """Per item, its pairs as 'A|B;C|D' with the given system names."""
        a, b = system_pairs(len(systems))
        return [";".join(f"{systems[a[j]]}|{systems[b[j]]}" for j in self.pairs[self.ptr[i]:self.ptr[i + 1]])
                for i in range(self.items.size)]


def order_items(items: np.ndarray, pri: np.ndarray, tie: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Positions of the items bearing on an undecided pair (tie > 0), best first: priority, tie-break, then the
    seeded ``key`` of each candidate item."""
    keep = np.flatnonzero(tie > 0)
    return keep[np.lexsort((key[items[keep]], -tie[keep], -pri[keep]))]


def plan(engine: LinearPairs | MaxPairs, stop: str = "hard", seed: int = 0) -> Plan:
    """The current ranking of the unknown items that bear on an undecided pair, by decision value. Without labels,
    the ranking does not change as items are set aside (the priorities of linear metrics are per item and only
    the set of undecided pairs changes, which needs labels): after a round of judgments, reveal them and plan
    again."""
    und = engine.undecided(stop)
    items, pri, tie = engine.priority(und)
    key = np.random.default_rng(seed).random(engine.cand.n_items)
    pos = order_items(items, pri, tie, key)
    chosen = items[pos]
    ptr, pairs = np.zeros(chosen.size + 1, np.int64), np.zeros(0, np.int64)
    if chosen.size:
        und_idx = np.flatnonzero(und)
        rows, cols = [], []
        for start, bo in engine.bears_on_blocks(und, chosen):             # pairs × items
            c, r = np.nonzero(bo.T)
            rows.append(c + start)
            cols.append(und_idx[r])
        rows, pairs = np.concatenate(rows), np.concatenate(cols)
        ptr[1:] = np.cumsum(np.bincount(rows, minlength=chosen.size))
    return Plan(chosen, pri[pos], engine.p[chosen], ptr, pairs)


@dataclass
class Trace:
    """One greedy run: the items revealed in order, the judgments made, and per pair the number of judgments
    after which it was resolved (−1: never)."""

    order: np.ndarray
    judgments: int
    decided_at: np.ndarray
    all_decided: bool


@dataclass
class _Ranking:
    """The ranking the greedy run takes items from: ``items`` best first, ``next`` the position of the first item
    not yet passed, ``pairs`` the undecided pairs it was ranked for (None: rank again), ``judged_since`` the items
    judged since it was ranked."""

    items: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    next: int = 0
    pairs: np.ndarray | None = None
    judged_since: int = 0

    def take(self, engine: LinearPairs | MaxPairs, und: np.ndarray, want: int, recheck: bool) -> np.ndarray:
        """The next ``want`` items still unknown (an item may have been judged since by another caller) and, with
        ``recheck``, still bearing on an undecided pair; moves past them. None left: the ranking is spent."""
        rest = self.items[self.next:]
        open_ = engine.state[rest] == -1
        if recheck:
            open_[open_] = engine.bears_on(und, rest[open_]).any(0)
        pos = np.flatnonzero(open_)[:want]
        if pos.size == 0:
            self.next, self.pairs = self.items.size, None
            return pos
        self.next += int(pos[-1]) + 1
        self.judged_since += pos.size
        return rest[pos]


def greedy(engine: LinearPairs | MaxPairs, reveal: Callable[[np.ndarray], np.ndarray], batch: int = 50,
           stop: str = "hard", max_judgments: int | None = None, seed: int = 0,
           refresh: float | None = None) -> Trace:
    """Judge in batches of the best ``batch`` items until every pair is resolved (hard) or besides sure at 95 %
    (soft), taking the best items of the current ranking. ``reveal(items) -> labels`` is the annotator (or a
    simulation of one); the engine is mutated. The stop is checked after every batch, so the counts are exact to
    the batch (a smaller batch, a finer count).

    Re-ranking. A linear metric's ranking depends on the undecided pairs only (the priorities are per item), so
    it is recomputed when they change and is otherwise the previous ranking less the judged items: the same
    order as re-ranking after every batch, exactly. A max-type metric's priorities also move with every label
    (a question's other items, the rest's normal) and each ranking costs a Monte Carlo over every unknown item,
    so it is recomputed once ``refresh`` (default :data:`MAX_REFRESH`, 0.05) × the items of the last ranking have
    been judged since; in between, the next items of the last ranking that still bear on an undecided pair are
    taken (items of pairs resolved since are skipped, not judged). ``refresh=0`` re-ranks after every batch (the
    exact but slow form; docs/guide/judgments.md says how much the coarser ranking changes the counts)."""
    key = np.random.default_rng(seed).random(engine.cand.n_items)
    exact_reuse = isinstance(engine, LinearPairs)
    if refresh is None:
        refresh = 0.0 if exact_reuse else MAX_REFRESH
    decided_at = np.where(engine.resolved(), 0, -1)
    order, n = [], 0
    ranking = _Ranking()
    while max_judgments is None or n < max_judgments:
        und = engine.undecided(stop)
        if not und.any():
            break
        changed = ranking.pairs is None or not np.array_equal(und, ranking.pairs)
        stale = (ranking.next >= ranking.items.size or (changed and (exact_reuse or refresh == 0))
                 or (not exact_reuse and ranking.judged_since >= max(refresh * ranking.items.size, 1)))
        if stale:
            items, pri, tie = engine.priority(und)
            ranking = _Ranking(items[order_items(items, pri, tie, key)], 0, und, 0)
            if ranking.items.size == 0:
                break
        want = batch if max_judgments is None else min(batch, max_judgments - n)
        # a max-type ranking kept though pairs were resolved since: skip the items that bear on none left
        take = ranking.take(engine, und, want, recheck=changed and not stale)
        if take.size == 0:
            continue
        engine.reveal(take, np.asarray(reveal(take)))
        order.append(take)
        n += take.size
        now = engine.resolved() if stop == "hard" else ~engine.undecided(stop)
        decided_at[(decided_at < 0) & now] = n
    done = not engine.undecided(stop).any()
    return Trace(np.concatenate(order) if order else np.zeros(0, np.int64), n, decided_at, done)
