"""The simulation on real labels (kgeval.bounds.simulation): MTC against depth order on an instance built for
it, move-to-front by hand, reproducibility byte for byte, and no strategy reading a label it has not revealed."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.bounds.simulation import (
    MTC,
    DepthOrder,
    HiddenLabels,
    MoveToFront,
    RandomOrder,
    compare_strategies,
    simulate,
)
from kgeval.errors import InputError
from kgeval.judgments.candidates import Candidates
from kgeval.judgments.prior import online_prior, triple_features


def shared_top_instance(Q=20, S=3, k=10):
    """Every system has the same 8 items at ranks 1-8 of every question (their labels cancel in every pair);
    ranks 9-10 are each system's own: A's two relevant, B's rank 9 only, C's none, so the own items alone
    decide every pair."""
    per_q = 8 + 2 * S
    n = Q * per_q
    item_q = np.repeat(np.arange(Q), per_q)
    ranks = np.zeros((S, n), np.int64)
    truth = np.zeros(n, np.int8)
    rng = np.random.default_rng(0)
    for q in range(Q):
        base = q * per_q
        ranks[:, base:base + 8] = np.arange(1, 9)
        truth[base:base + 8] = rng.random(8) < 0.5
        for s in range(S):
            own = base + 8 + 2 * s
            ranks[s, own:own + 2] = [9, 10]
            truth[own:own + 2] = [s < 2, s < 1]
    depth = np.where(ranks > 0, ranks, k + 1).min(0)
    return Candidates(item_q, ranks, np.full(n, -1), Q, k), truth, depth


def test_mtc_decides_with_fewer_judgments_than_depth_order():
    cand, truth, depth = shared_top_instance()
    for metric in ("P@k", "DCG@k"):
        _, summary = compare_strategies(cand, truth, {"mtc": MTC(0.5, metric), "depth": DepthOrder(depth, seed=1)},
                                        metric=metric, batch=10)
        need = dict(zip(summary.strategy, summary.judgments_needed))
        assert summary.target_decided.tolist() == [3, 3]
        assert need["mtc"] <= 20 * 6         # only the systems' own items bear on a pair
        assert need["depth"] > 20 * 8        # depth order judges every shared item first
        assert need["mtc"] < need["depth"]


def strategies(depth, p, cand=None):
    online = {}
    if cand is not None:  # a prior refitted on the labels revealed so far
        feats = triple_features(cand.ranks, cand.item_q % 4, cand.item_q % 2, cand.item_q % 7 + 1, cand.k)
        online = {"mtc_online": MTC(0.5, "P@k", seed=1, refit=online_prior(feats, min_labels=10), refit_every=1)}
    return {**online, "mtc_prior": MTC(p, "P@k", seed=1), "mtc_uniform": MTC(0.5, "P@k", seed=1),
            "depth": DepthOrder(depth, seed=2), **{f"random_{s}": RandomOrder(seed=s) for s in range(5)},
            "mtf": MoveToFront(seed=3)}


def random_lists(rng, S, Q, k, per_q):
    """Each of S systems ranks k of a question's per_q items 1..k, at random: (item_q, ranks)."""
    n = Q * per_q
    item_q = np.repeat(np.arange(Q), per_q)
    ranks = np.zeros((S, n), np.int64)
    for s in range(S):
        for q in range(Q):
            ranks[s, q * per_q + rng.permutation(per_q)[:k]] = np.arange(1, k + 1)
    return item_q, ranks


def random_instance(seed=4, S=4, Q=30, k=5, per_q=9):
    rng = np.random.default_rng(seed)
    item_q, ranks = random_lists(rng, S, Q, k, per_q)
    keep = (ranks > 0).any(0)
    ranks, item_q = ranks[:, keep], item_q[keep]
    n = item_q.size
    truth = (rng.random(n) < 0.35).astype(np.int8)
    hidden = rng.random(n) < 0.8
    state = np.where(hidden, -1, np.where(rng.random(n) < 0.3, 1, 0))
    depth = np.where(ranks > 0, ranks, k + 1).min(0)
    return Candidates(item_q, ranks, state, Q, k), truth, depth, rng.random(n)


def test_simulation_is_reproducible_byte_for_byte():
    cand, truth, depth, p = random_instance()
    runs = [compare_strategies(cand, truth, strategies(depth, p, cand), batch=25) for _ in range(2)]
    assert runs[0][0].to_csv(index=False).encode() == runs[1][0].to_csv(index=False).encode()
    assert runs[0][1].to_csv(index=False).encode() == runs[1][1].to_csv(index=False).encode()
    rr = [compare_strategies(cand, truth, {"mtc": MTC(p, "RR@k", seed=1, draws=16)}, metric="RR@k", batch=25)
          for _ in range(2)]
    assert rr[0][0].to_csv(index=False) == rr[1][0].to_csv(index=False)
    table = runs[0][0]
    other = compare_strategies(cand, truth, {"random_0": RandomOrder(seed=99)}, batch=25)[0]
    assert not table[table.strategy == "random_0"].decided.reset_index(drop=True).equals(other.decided)


def test_records_end_at_the_full_labels():
    cand, truth, depth, p = random_instance()
    hl = HiddenLabels(np.where(cand.state == -1, truth, 0), cand.state == -1)
    rec, needed = simulate(cand, hl, RandomOrder(seed=0), batch=30)
    assert rec.judgments.iloc[0] == 0 and rec.judgments.iloc[-1] == (cand.state == -1).sum()
    assert (np.diff(rec.decided) >= 0).all()
    last = rec.iloc[-1]
    assert last.decided == rec.attrs["target_decided"] and last.tau == 1.0
    assert last.max_abs_delta_error < 1e-12 < rec.max_abs_delta_error.iloc[0]
    assert needed is not None and needed in set(rec.judgments)


class Recorder:
    """Wraps a strategy and records every item it chooses, in order."""

    def __init__(self, inner):
        self.inner, self.chosen = inner, []

    def start(self, cand, hidden):
        self.inner.start(cand, hidden)

    def next(self, state, n):
        out = self.inner.next(state, n)
        self.chosen.extend(out.tolist())
        return out


@pytest.mark.parametrize("name", ["mtc_online", "mtc_prior", "mtc_uniform", "depth", "random_0", "mtf"])
def test_no_strategy_reads_a_label_it_has_not_revealed(name):
    cand, truth, depth, p = random_instance(seed=6)
    hidden = cand.state == -1
    N = 40
    hl = HiddenLabels(np.where(hidden, truth, 0), hidden)
    rec = Recorder(strategies(depth, p, cand)[name])
    simulate(cand, hl, rec, batch=10, max_judgments=N)
    assert hl.reads == N == len(rec.chosen) and hl.truth_reads == 1
    np.testing.assert_array_equal(hl.read_count, hl.revealed.astype(int))
    np.testing.assert_array_equal(np.flatnonzero(hl.revealed), np.sort(rec.chosen))
    # flip every label the strategy did not reveal: its choices must not change
    flipped = truth.copy()
    unseen = hidden & ~hl.revealed
    flipped[unseen] = 1 - flipped[unseen]
    rec2 = Recorder(strategies(depth, p, cand)[name])
    simulate(cand, HiddenLabels(np.where(hidden, flipped, 0), hidden), rec2, batch=10, max_judgments=N)
    assert rec2.chosen == rec.chosen
    # and the labels it did reveal steer move-to-front (MTC changes course only once a pair is decided)
    if name == "mtf":
        seen = flipped.copy()
        seen[hl.revealed] = 1 - seen[hl.revealed]
        rec3 = Recorder(strategies(depth, p)[name])
        simulate(cand, HiddenLabels(np.where(hidden, seen, 0), hidden), rec3, batch=10, max_judgments=N)
        assert rec3.chosen != rec.chosen


def test_move_to_front_by_hand():
    """One question; A: a1, a2, s; B: b1, b2, s (s shared at rank 3). Labels a1 1, a2 0, s 1, b1 0, b2 1."""
    a1, a2, s, b1, b2 = range(5)
    ranks = np.array([[1, 2, 3, 0, 0], [0, 0, 3, 1, 2]])
    cand = Candidates(np.zeros(5, int), ranks, np.full(5, -1), 1, k=3)
    truth = np.array([1, 0, 1, 0, 1])
    expected = {0: [a1, a2, b1, s, b2],   # start A: stay on a1; a2 misses -> B; b1 misses -> tie -> A; s; A done
                1: [b1, a1, a2, b2, s]}   # start B: b1 misses -> A; a1; a2 misses -> tie -> B; b2; s
    seen = set()
    for seed in range(10):
        strat = MoveToFront(seed=seed)
        rec = Recorder(strat)
        hl = HiddenLabels(truth, np.ones(5, bool))
        strat_start = strat.start
        starts = []

        def start(c, h, strat=strat, strat_start=strat_start, starts=starts):
            strat_start(c, h)
            starts.append(int(strat.cur[0]))

        strat.start = start
        simulate(cand, hl, rec, batch=1)
        assert rec.chosen == expected[starts[0]]
        seen.add(starts[0])
    assert seen == {0, 1}


def test_hidden_labels_refuse_a_second_read():
    hl = HiddenLabels([1, 0, 1], [True, True, False])
    assert hl.reveal([1]).tolist() == [0]
    with pytest.raises(InputError, match="each once"):
        hl.reveal([1])
    with pytest.raises(InputError, match="each once"):
        hl.reveal([2])
    assert hl.reads == 1


def test_a_pair_bounds_hook_gives_the_records_of_the_builtin_bounds():
    """Brute-force RR@k bounds plugged in as the hook: the same records as the built-in exact bounds."""
    import itertools

    from kgeval.judgments.candidates import item_weights, system_pairs

    rng = np.random.default_rng(12)
    S, Q, k, per_q = 3, 4, 3, 4
    n = Q * per_q
    item_q, ranks = random_lists(rng, S, Q, k, per_q)
    hidden = np.zeros(n, bool)
    hidden[rng.permutation(n)[:9]] = True
    state = np.where(hidden, -1, (rng.random(n) < 0.3).astype(int))
    cand = Candidates(item_q, ranks, state, Q, k)
    truth = (rng.random(n) < 0.4).astype(np.int8)
    W = item_weights(ranks, "RR@k", k)
    a, b = system_pairs(S)
    calls = []

    def brute(st):
        calls.append(1)
        U = np.flatnonzero(st == -1)
        deltas = []
        for bits in itertools.product([0, 1], repeat=U.size):
            x = (st == 1).astype(float)
            x[U] = bits
            M = np.zeros((S, Q))
            np.maximum.at(M.T, item_q, (W * x).T)
            m = M.sum(1) / Q
            deltas.append(m[a] - m[b])
        deltas = np.array(deltas)
        return deltas.min(0), deltas.max(0)

    strategies = {"mtc": MTC(0.5, "RR@k", draws=16), "mtf": MoveToFront(1)}
    built = compare_strategies(cand, truth, strategies, metric="RR@k", batch=2)
    hooked = compare_strategies(cand, truth, strategies, metric="RR@k", batch=2, pair_bounds=brute)
    assert calls and built[1].judgments_needed.notna().all() and built[0].decided.max() > 0
    assert built[0].to_csv() == hooked[0].to_csv() and built[1].to_csv() == hooked[1].to_csv()
    with pytest.raises(InputError, match="share a rank"):
        MoveToFront().start(Candidates([0, 0], [[1, 1]], [-1, -1], 1, k=1), np.ones(2, bool))
