"""The default run's speed-ups that must not change a result (issue 52 item 6): each faster path against the
implementation it replaced (numpy's row-wise ``np.unique``), on hand cases and on random data with duplicates."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tiny_kg

from kgeval.data.kg import HEAD, TAIL
from kgeval.data.questions import (
    AnswerIndex,
    question_key,
    triple_questions,
    unique_pairs,
    unique_questions,
    unique_triples,
)


def _rows_unique(*cols: np.ndarray) -> np.ndarray:
    return np.unique(np.stack([np.asarray(c, dtype=np.int64) for c in cols], axis=1), axis=0)


def test_unique_pairs_hand_case():
    out = unique_pairs(np.array([3, 1, 3, 1, 0]), np.array([2, 7, 2, 5, 9]))
    assert out.tolist() == [[0, 9], [1, 5], [1, 7], [3, 2]]
    assert out.dtype == np.int64


@pytest.mark.parametrize("high", [5, 10**6, 2**62])  # 2**62: the pair no longer fits one int64 key (lexsort path)
def test_unique_pairs_equals_numpy_rows(high):
    rng = np.random.default_rng(high % 1000)
    first = rng.integers(0, high, 3000, dtype=np.int64)
    second = rng.integers(0, min(high, 50), 3000, dtype=np.int64) * (1 if high < 2**40 else 2**40)
    first = np.concatenate([first, first[:500]])  # exact duplicates
    second = np.concatenate([second, second[:500]])
    out = unique_pairs(first, second)
    ref = _rows_unique(first, second)
    assert out.dtype == ref.dtype and np.array_equal(out, ref)
    assert len(out) < len(first)


def test_unique_pairs_empty():
    out = unique_pairs(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert out.shape == (0, 2) and out.dtype == np.int64


def test_unique_questions_equals_numpy_rows():
    rng = np.random.default_rng(1)
    triples = rng.integers(0, [40, 6, 40], (4000, 3))
    side, known, rel, _ = triple_questions(triples)
    out = unique_questions(side, known, rel, 40, 6)
    assert np.array_equal(out, _rows_unique(side, known, rel))
    # hand case: (a, r, b), (a, r, c), (b, s, c) → head questions (?, r, b), (?, r, c), (?, s, c); tail (a, r, ?), (b, s, ?)
    side, known, rel, _ = triple_questions(tiny_kg().splits["train"])
    assert unique_questions(side, known, rel, 5, 2).tolist() == [
        [HEAD, 1, 0], [HEAD, 2, 0], [HEAD, 2, 1], [TAIL, 0, 0], [TAIL, 1, 1]]


def test_answer_index_equals_row_unique_construction():
    """The CSR arrays are those of the former construction (np.unique over (key, answer) rows, then over keys)."""
    rng = np.random.default_rng(2)
    E, R = 60, 7
    triples = rng.integers(0, [E, R, E], (5000, 3))
    idx = AnswerIndex(triples, E, R)
    side, known, rel, answer = triple_questions(triples)
    pairs = _rows_unique(question_key(side, known, rel, E, R), answer)
    keys, starts = np.unique(pairs[:, 0], return_index=True)
    assert np.array_equal(idx.keys, keys)
    assert np.array_equal(idx.offsets, np.append(starts, len(pairs)))
    assert np.array_equal(idx.answers, pairs[:, 1])
    # every question's answers are exactly the triples' answers
    q = rng.integers(0, len(triples))
    s, p, o = triples[q]
    rows, ans = idx.lookup(question_key([TAIL], [s], [p], E, R))
    assert sorted(ans.tolist()) == sorted(set(triples[(triples[:, 0] == s) & (triples[:, 1] == p), 2].tolist()))


def test_answer_index_empty():
    idx = AnswerIndex(np.zeros((0, 3), np.int64), 5, 2)
    assert len(idx.keys) == 0 and idx.offsets.tolist() == [0] and idx.count(np.array([3])).tolist() == [0]


def test_trainer_validation_equals_a_fresh_evaluation(synth_kg):
    """The trainer builds the validation inputs once per training: three epochs give three distinct recorded
    validation MRRs, and the kept (best) weights evaluated afresh give the recorded best."""
    import torch

    from kgeval.training.config import TrainConfig
    from kgeval.training.trainer import Trainer, evaluate_mrr, ranking_inputs, ranking_of

    cfg = TrainConfig(regime="1vsAll", grouped=True, lr=0.01, batch_size=256, max_epochs=3, valid_max_triples=200,
                      compile=False)
    tr = Trainer(synth_kg, "DistMult", {"dim": 16, "reciprocal": True}, cfg, seed=0, device="cpu")
    res = tr.fit(snapshot_dir=None)
    recorded = [t["valid_mrr"] for t in res.trace]
    assert len(recorded) == 3 and len(set(recorded)) == 3  # three distinct evaluations, no stale cached result
    assert res.best_valid_mrr == max(recorded)
    assert evaluate_mrr(res.model, synth_kg, "valid", 200, seed=0) == res.best_valid_mrr
    # prepared inputs give the same ranking as evaluate_ranking, and reusing them across models changes nothing
    inputs = ranking_inputs(synth_kg, "valid", 200, 0)
    other = Trainer(synth_kg, "DistMult", {"dim": 16, "reciprocal": True}, cfg, seed=1, device="cpu").model
    with torch.no_grad():
        assert ranking_of(other, inputs)["mrr"] == evaluate_mrr(other, synth_kg, "valid", 200, seed=0)
        assert ranking_of(res.model, inputs)["mrr"] == res.best_valid_mrr


def test_autocast_off_keeps_the_former_hashes():
    """train.autocast is left out of the identity of a float32 training: the hashes are those main computed
    before the key existed (a1ff053), so work checkpoints and snapshots of existing runs keep their names."""
    from dataclasses import asdict

    from kgeval.training.config import TrainConfig, config_hash, train_settings

    assert "autocast" not in train_settings(TrainConfig())
    assert config_hash({"model": "DistMult", "hparams": {"dim": 16}, "train": train_settings(TrainConfig()),
                        "seed": 0}) == "f69eea7cc4feab02129d19143ccbdb6d0e1bb7d9389606916d1cfa328aaed7db"
    assert config_hash(TrainConfig(regime="negative_sampling", loss="self_adversarial")) == \
        "a7a8970a61ab670f98ce4b90a24f49268c890019e89c0324c170755bfd0233e3"
    bf16 = TrainConfig(autocast="bf16")
    assert train_settings(bf16)["autocast"] == "bf16" and config_hash(bf16) != config_hash(TrainConfig())
    assert asdict(bf16)["autocast"] == "bf16"
    with pytest.raises(ValueError, match="train.autocast 'fp16' is not bf16 or null"):
        TrainConfig(autocast="fp16")


def test_bf16_autocast_trains_and_differs(synth_kg):
    """Opt-in bf16 autocast runs the same training in lower precision: its losses differ from float32's (so it is
    not silently off) by little, and the model still learns (4x a random ranking's MRR, as test_training, and
    within a quarter of float32's validation MRR)."""
    from kgeval.training.config import TrainConfig
    from kgeval.training.trainer import Trainer

    runs = {}
    for autocast in (None, "bf16"):
        cfg = TrainConfig(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=15, eval_every=15, compile=False,
                          autocast=autocast)
        runs[autocast] = Trainer(synth_kg, "DistMult", {"dim": 32, "reciprocal": True}, cfg, seed=0,
                                 device="cpu").fit()
    f32 = [t["loss"] for t in runs[None].trace]
    b16 = [t["loss"] for t in runs["bf16"].trace]
    assert f32 != b16
    assert np.allclose(f32, b16, rtol=0.05)
    chance = 6.0 / synth_kg.num_entities  # about H_N / N
    assert runs["bf16"].best_valid_mrr > 4 * chance
    assert abs(runs["bf16"].best_valid_mrr - runs[None].best_valid_mrr) < 0.25 * runs[None].best_valid_mrr


def test_unique_triples_equals_numpy_rows():
    rng = np.random.default_rng(3)
    triples = rng.integers(0, [30, 4, 30], (3000, 3))
    assert np.array_equal(unique_triples(triples, 30, 4), np.unique(triples, axis=0))
    assert unique_triples(np.array([[2, 1, 0], [0, 1, 2], [2, 1, 0], [0, 0, 3]]), 4, 2).tolist() == [
        [0, 0, 3], [0, 1, 2], [2, 1, 0]]


def test_hitter_adjacency_unchanged(synth_kg, monkeypatch):
    """HittER's context adjacency (with its seeded shuffle) is the one the row-wise np.unique gave."""
    import kgeval.models.hitter as hitter

    graph = np.concatenate([synth_kg.splits["train"], synth_kg.splits["train"][:50]])  # duplicates too
    now = hitter.HittER._adjacency(graph, synth_kg.num_entities, synth_kg.num_relations, 0)
    monkeypatch.setattr(hitter, "unique_triples", lambda g, E, R: np.unique(g, axis=0))
    before = hitter.HittER._adjacency(graph, synth_kg.num_entities, synth_kg.num_relations, 0)
    assert len(now) == len(before) == 3
    assert all(a.dtype == b.dtype and bool((a == b).all()) for a, b in zip(now, before))
