"""The bounded-piece filter index (kgeval.scale.filterindex) equals AnswerIndex array for array, and its build's
peak of traced memory stays near the final index, where the whole-split build's is many times it."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from kgeval.data.questions import AnswerIndex
from kgeval.scale.filterindex import BoundedAnswerIndex


def _triples(rng, n, E, R):
    t = np.stack([rng.integers(0, E, n), rng.integers(0, R, n), rng.integers(0, E, n)], 1).astype(np.int32)
    return np.concatenate([t, t[: n // 5]])  # duplicates, as train and valid may share a triple's questions


@pytest.mark.parametrize("chunk", [1, 7, 1000, 1 << 20])
def test_equals_the_whole_split_index(chunk):
    rng = np.random.default_rng(3)
    E, R = 40, 3
    train, valid = _triples(rng, 500, E, R), _triples(rng, 60, E, R)
    ref = AnswerIndex(np.concatenate([train, valid]).astype(np.int64), E, R)
    got = BoundedAnswerIndex([train, valid], E, R, chunk=chunk)
    for name in ("keys", "offsets", "answers"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
        assert getattr(got, name).dtype == np.int64
    q = np.arange(2 * R * E)
    np.testing.assert_array_equal(got.count(q), ref.count(q))


def test_empty_splits():
    got = BoundedAnswerIndex([np.zeros((0, 3), np.int32)], 5, 2)
    assert len(got.keys) == 0 and got.offsets.tolist() == [0] and got.count(np.arange(3)).tolist() == [0, 0, 0]


def _peak(build):
    tracemalloc.start()  # numpy reports its array buffers to tracemalloc
    index = build()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, index.keys.nbytes + index.offsets.nbytes + index.answers.nbytes


def test_the_build_peaks_near_the_final_index():
    rng = np.random.default_rng(4)
    E, R = 200_000, 50
    train = _triples(rng, 1_000_000, E, R)
    peak, final = _peak(lambda: BoundedAnswerIndex([train], E, R, chunk=1 << 16))
    whole, _ = _peak(lambda: AnswerIndex(train.astype(np.int64), E, R))
    # 2.2 M distinct pairs of nearly as many questions: the final index (keys, offsets, answers: 3 arrays of the
    # pairs' size) plus the key array and the pieces' starts; the whole-split build holds a dozen such arrays
    assert peak < 2.0 * final
    assert whole > 4 * final
