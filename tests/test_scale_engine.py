"""The block engine (kgeval.scale.engine): hand-computed ranks with ties and filters, and the same counts, ranks
and top-k lists as today's engine (kgeval.scores.ranking) wherever both run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.data.questions import AnswerIndex, Questions
from kgeval.data.testsets import TestSet
from kgeval.metrics.ranks import micro_ranks
from kgeval.scale.engine import rank_blocks
from kgeval.scale.scorers import BilinearBlocks
from kgeval.scores.ranking import judged_entities, rank_questions


def _setup(test: np.ndarray, known_triples: np.ndarray, E: int, R: int, labels=None):
    ts = TestSet("T", test, np.ones(len(test), np.int8) if labels is None else labels, np.zeros(len(test), np.int16))
    questions = Questions.from_triples(ts.positives, E, R)
    judged = judged_entities(ts, questions)
    known = AnswerIndex(known_triples, E, R)
    return questions, judged, known


def test_hand_computed_ranks_ties_filter_and_top_k():
    # one relation w = (1, 1); entity vectors chosen so that scores tie exactly
    ent = torch.tensor([[1, 0], [0, 1], [2, 0], [1, 1], [0, 0], [1, 0]], dtype=torch.float32)
    scorer = BilinearBlocks(ent, torch.ones(1, 2))
    questions, judged, known = _setup(np.array([[0, 0, 3]]), np.array([[0, 0, 2]]), 6, 1)
    for block in (2, 4, 6):
        r = rank_blocks(scorer, questions, judged, known, k=3, block=block, show_progress=False)
        # head question (?, r, 3): scores e_h·(1,1) = [1, 1, 2, 2, 0, 1], answer 0: 2 above (2, 3), 2 tied (1, 5)
        # tail question (0, r, ?): scores e_t[0] = [1, 0, 2, 1, 0, 1], 2 filtered (train); answer 3 ties 0 and 5
        assert r.questions.qid == ["head0", "tail0"]
        assert r.n_candidates.tolist() == [6, 5]
        assert r.n_gt.tolist() == [2, 0] and r.n_eq.tolist() == [2, 2]
        assert r.candidate.tolist() == [True, True]
        ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
        assert ranks.optimistic.tolist() == [3, 1] and ranks.pessimistic.tolist() == [5, 3]
        # trec order: score descending, then docno (here the entity index) descending; 2 filtered away
        assert r.run_entity.tolist() == [[3, 2, 5], [5, 3, 0]]
        assert r.run_score.tolist() == [[2.0, 2.0, 1.0], [1.0, 1.0, 1.0]]


def _random_graph(seed: int, E=300, R=4, n_known=2500, n_test=150):
    rng = np.random.default_rng(seed)
    known = np.stack([rng.integers(0, E, n_known), rng.integers(0, R, n_known), rng.integers(0, E, n_known)], 1)
    # a third of the test triples share a question with another (several answers) or are known facts too
    test = np.stack([rng.integers(0, E, n_test), rng.integers(0, R, n_test), rng.integers(0, E, n_test)], 1)
    test[: n_test // 3, :2] = test[n_test // 3: 2 * (n_test // 3), :2]
    test[-5:] = known[:5]
    return np.unique(test, axis=0), known, E, R


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_equals_todays_engine(seed, ties):
    test, known_triples, E, R = _random_graph(seed)
    g = torch.Generator().manual_seed(seed)
    if ties:  # entries in {-1, 0, 1}: every score an exact small integer, many ties, the same in any summation order
        ent = torch.randint(-1, 2, (E, 8), generator=g).float()
        rel = torch.randint(-1, 2, (R, 8), generator=g).float()
    else:
        ent, rel = torch.randn(E, 16, generator=g), torch.randn(R, 16, generator=g)
    scorer = BilinearBlocks(ent, rel)
    # judged negatives as well (label 0), as a pooled test set has
    labels = np.ones(len(test), np.int8)
    labels[::7] = 0
    labels[-5:] = 1
    questions, judged, known = _setup(test, known_triples, E, R, labels)
    docno = np.random.default_rng(seed).permutation(E)
    ref = rank_questions(scorer.full, questions, judged, known, docno, k=20, batch_size=37)
    for block, batch in ((64, 16), (E, 1024), (1000, 7)):
        r = rank_blocks(scorer, questions, judged, known, docno, k=20, batch=batch, block=block, show_progress=False)
        np.testing.assert_array_equal(r.n_candidates, ref.n_candidates)
        np.testing.assert_array_equal(r.candidate, ref.candidate)
        np.testing.assert_array_equal(r.n_gt, ref.n_gt)
        np.testing.assert_array_equal(r.n_eq, ref.n_eq)
        np.testing.assert_array_equal(r.run_entity, ref.run_entity)
        # the same ranks; a score may differ in its last bit where BLAS takes another kernel for another shape
        np.testing.assert_allclose(r.run_score, ref.run_score, rtol=0 if ties else 1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_equals_cpu():
    test, known_triples, E, R = _random_graph(3)
    g = torch.Generator().manual_seed(3)
    scorer = BilinearBlocks(torch.randint(-1, 2, (E, 8), generator=g).float(),
                            torch.randint(-1, 2, (R, 8), generator=g).float())
    questions, judged, known = _setup(test, known_triples, E, R)
    a = rank_blocks(scorer, questions, judged, known, k=10, block=50, show_progress=False)
    b = rank_blocks(scorer.to("cuda"), questions, judged, known, k=10, block=50, show_progress=False)
    for field in ("n_gt", "n_eq", "candidate", "run_entity"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_sharded_ranking_gathers_to_the_unsharded_one():
    from kgeval.errors import KgevalError
    from kgeval.scale.shards import gather, shard

    test, known_triples, E, R = _random_graph(4)
    g = torch.Generator().manual_seed(4)
    scorer = BilinearBlocks(torch.randint(-1, 2, (E, 8), generator=g).float(),
                            torch.randint(-1, 2, (R, 8), generator=g).float())
    labels = np.ones(len(test), np.int8)
    labels[::5] = 0
    questions, judged, known = _setup(test, known_triples, E, R, labels)
    whole = rank_blocks(scorer, questions, judged, known, k=15, block=100, show_progress=False)
    parts = [shard(questions, judged, i, 3) for i in range(3)]
    ranked = [(p, rank_blocks(scorer, p.questions, p.judged, known, k=15, block=100, show_progress=False))
              for p in parts]
    assert sum(len(p.q_idx) for p in parts) == len(questions) and sum(len(p.rows) for p in parts) == len(judged)
    merged = gather(questions, judged, ranked[::-1])
    for name in ("n_candidates", "score", "n_gt", "n_eq", "candidate", "run_entity", "run_score"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))
    with pytest.raises(KgevalError, match="not one full split"):
        gather(questions, judged, ranked[:2])


def test_transe_full_rows_are_minus_p_distances_and_sides_are_checked():
    from kgeval.scale.scorers import TransEBlocks

    ent = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    scorer = TransEBlocks(ent, torch.tensor([[1.0, 0.0]]), p=1)
    # tail question (0, r, ?): query e_0 + w = (1, 0); L1 distances to the rows 1, 0, 3
    assert scorer.full(torch.tensor([[0, 0]]), 1).tolist() == [[-1.0, -0.0, -3.0]]
    # head question (?, r, 1): query e_1 - w = (0, 0); distances 0, 1, 2
    assert scorer.full(torch.tensor([[1, 0]]), 0).tolist() == [[-0.0, -1.0, -2.0]]
    with pytest.raises(ValueError, match="unknown side 2"):
        scorer.query(torch.tensor([0]), torch.tensor([0]), 2)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_counting_some_answers_leaves_their_ranks_and_the_lists_unchanged(ties, fused):
    """count= ranks only the wanted rows' n_gt / n_eq (a sampled estimate's answers); the others keep their
    score and candidate flag, which is all the micro filter takes of them, so the wanted answers' micro ranks
    equal the ranks with every row counted."""
    test, known_triples, E, R = _random_graph(5, n_test=300)
    test[:40, :2] = test[0, :2]  # one question with 40 answers, as ogbl-wikikg2's head questions have thousands
    # two judged negatives of that question that are known facts: filtered, so no candidate (the flag the
    # uncounted rows still need)
    known_triples = np.r_[known_triples, [[*test[0, :2], 7], [*test[0, :2], 8]]]
    test = np.r_[test, [[*test[0, :2], 7], [*test[0, :2], 8]]]
    n = len(test)
    test, first = np.unique(test, axis=0, return_index=True)
    g = torch.Generator().manual_seed(5)
    if ties:
        scorer = BilinearBlocks(torch.randint(-1, 2, (E, 8), generator=g).float(),
                                torch.randint(-1, 2, (R, 8), generator=g).float())
    else:
        scorer = BilinearBlocks(torch.randn(E, 16, generator=g), torch.randn(R, 16, generator=g))
    labels = np.ones(len(test), np.int8)
    labels[::6] = 0
    labels[first >= n - 2] = 0
    questions, judged, known = _setup(test, known_triples, E, R, labels)
    count = np.random.default_rng(5).random(len(judged)) < 0.3  # questions with none, first rows not counted
    kw = dict(k=12, batch=16, block=64, show_progress=False, fused=fused)
    ref = rank_blocks(scorer, questions, judged, known, **kw)
    r = rank_blocks(scorer, questions, judged, known, count=count, **kw)
    np.testing.assert_array_equal(r.n_gt[count], ref.n_gt[count])
    np.testing.assert_array_equal(r.n_eq[count], ref.n_eq[count])
    assert (r.n_gt[~count] == -1).all() and (r.n_eq[~count] == -1).all()
    np.testing.assert_array_equal(r.score, ref.score)
    np.testing.assert_array_equal(r.candidate, ref.candidate)
    assert not ref.candidate.all()  # test triples that are known facts too: the flag is exercised
    np.testing.assert_array_equal(r.run_entity, ref.run_entity)
    np.testing.assert_array_equal(r.n_candidates, ref.n_candidates)
    relevant = judged.label == 1
    a = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, relevant)
    b = micro_ranks(judged.q, ref.score, ref.n_gt, ref.n_eq, ref.n_candidates, relevant)
    want = np.isin(a.rows, np.flatnonzero(count))
    assert want.sum() > 20
    np.testing.assert_array_equal(a.realistic[want], b.realistic[want])
    with pytest.raises(ValueError, match="count: "):
        rank_blocks(scorer, questions, judged, known, count=count[1:], **kw)
