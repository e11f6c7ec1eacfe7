"""The block engine's fused CPU pass (kgeval.scale.tiles), on its numpy and its compiled (numba) tile path, and
its device pass, against a brute-force numpy reference: the full score matrix in float64, the macro filter from
the raw triples, counts by comparison and the top-k by a full lexicographic sort. Integer embeddings make every
score exact in float32 and float64 and tie often, at the k-th place too. The two tile paths also give the same
outputs on random float scores."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.data.kg import HEAD
from kgeval.data.questions import AnswerIndex, Questions
from kgeval.data.testsets import TestSet
from kgeval.scale import tiles
from kgeval.scale.engine import rank_blocks
from kgeval.scale.scorers import BilinearBlocks
from kgeval.scale.tiles import _counts
from kgeval.scores.ranking import judged_entities


def _reference(ent, rel, questions, judged, known_triples, test, docno, k):
    """n_gt, n_eq, candidate per judged entity and the top-k entities and scores per question, by brute force."""
    q_vec = ent[questions.entity] * rel[questions.relation]
    S = q_vec @ ent.T  # float64, exact: small integers
    filt = np.zeros_like(S, dtype=bool)
    test_pos = {tuple(t) for t in test}
    for qi in range(len(questions)):
        known_e, r = questions.entity[qi], questions.relation[qi]
        for h, rr, t in known_triples:
            if rr != r:
                continue
            if questions.side[qi] == HEAD and t == known_e and (h, r, t) not in test_pos:
                filt[qi, h] = True
            if questions.side[qi] != HEAD and h == known_e and (h, r, t) not in test_pos:
                filt[qi, t] = True
    S_f = np.where(filt, -np.inf, S)
    n_gt, n_eq, cand = [], [], []
    for q, e in zip(judged.q, judged.entity):
        s = S[q, e]
        others = np.delete(S_f[q], e)
        n_gt.append(int((others > s).sum()))
        n_eq.append(int((others == s).sum()))
        cand.append(not filt[q, e])
    run_entity = np.full((len(questions), k), -1)
    run_score = np.full((len(questions), k), np.nan)
    ties_at_k = 0
    for qi in range(len(questions)):
        ok = np.flatnonzero(~filt[qi])
        order = ok[np.lexsort((-docno[ok], -S[qi, ok]))]  # score descending, then docno descending
        run_entity[qi, :min(k, len(order))] = order[:k]
        run_score[qi, :min(k, len(order))] = S[qi, order[:k]]
        ties_at_k += len(order) > k and S[qi, order[k - 1]] == S[qi, order[k]]
    return np.array(n_gt), np.array(n_eq), np.array(cand), run_entity, run_score, ties_at_k


def _graph(seed, E=2600, R=3, dim=6, n_known=6000, n_test=200):
    rng = np.random.default_rng(seed)
    ent = rng.integers(-2, 3, (E, dim)).astype(np.float64)
    ent[rng.integers(0, E, 40)] = ent[rng.integers(0, E, 40)]  # duplicate entities: equal scores everywhere
    rel = rng.integers(-1, 2, (R, dim)).astype(np.float64)
    popular = rng.integers(0, E, 30)  # questions with large filters
    known = np.stack([rng.choice(popular, n_known), rng.integers(0, R, n_known), rng.integers(0, E, n_known)], 1)
    test = np.stack([rng.choice(popular, n_test), rng.integers(0, R, n_test), rng.integers(0, E, n_test)], 1)
    test[: n_test // 4, :2] = test[n_test // 4: n_test // 2, :2]  # questions with several answers
    test[-6:] = known[:6]  # test answers that are known facts too: candidates all the same
    test = np.unique(test, axis=0)
    labels = np.ones(len(test), np.int8)
    labels[::6] = 0  # judged negatives: compared like the answers, not taken out of the filter
    ts = TestSet("T", test, labels, np.zeros(len(test), np.int16))
    questions = Questions.from_triples(ts.positives, E, R)
    judged = judged_entities(ts, questions)
    return ent, rel, known, ts.positives, questions, judged


@pytest.fixture(params=["numpy", "numba"])
def tile_path(request, monkeypatch):
    """Each test on both tile paths: the numpy passes and the compiled step (skipped without numba)."""
    if request.param == "numba":
        pytest.importorskip("numba")
        from kgeval.scale.tilepass import tile_pass

        monkeypatch.setattr(tiles, "_TILE_PASS", tile_pass)
    else:
        monkeypatch.setattr(tiles, "_TILE_PASS", None)
    assert tiles.tile_path() == request.param
    return request.param


@pytest.fixture(scope="module")
def case():
    ent, rel, known, pos, questions, judged = _graph(0)
    docno = np.random.default_rng(1).permutation(len(ent))
    k = 25
    ref = _reference(ent, rel, questions, judged, known, pos, docno, k)
    assert ref[5] >= 10  # ties straddle the k-th place in many questions
    assert (ref[1] > 0).mean() > 0.3 and (~ref[2]).any()  # ties at the answers and filtered judged entities
    return ent, rel, known, questions, judged, docno, k, ref


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("block,batch", [(None, 1024), (64, 1024), (700, 50), (2100, 1024), (None, 7)])
def test_equals_brute_force_reference(case, fused, block, batch, tile_path):
    ent, rel, known, questions, judged, docno, k, (n_gt, n_eq, cand, run_entity, run_score, _) = case
    scorer = BilinearBlocks(torch.as_tensor(ent, dtype=torch.float32), torch.as_tensor(rel, dtype=torch.float32))
    threads = torch.get_num_threads()
    torch.set_num_threads(3)  # three workers on batches of 192 rows or more, whatever the machine
    try:
        r = rank_blocks(scorer, questions, judged, AnswerIndex(known, len(ent), len(rel)), docno, k=k, batch=batch,
                        block=block, show_progress=False, fused=fused)
        assert torch.get_num_threads() == 3  # the workers' single-threaded setting does not leak
    finally:
        torch.set_num_threads(threads)
    assert r.meta["fused"] is fused and (not fused or batch < 192 or r.meta["workers"] == 3)
    np.testing.assert_array_equal(r.n_gt, n_gt)
    np.testing.assert_array_equal(r.n_eq, n_eq)
    np.testing.assert_array_equal(r.candidate, cand)
    np.testing.assert_array_equal(r.run_entity, run_entity)
    np.testing.assert_array_equal(r.run_score, run_score.astype(np.float32))


def test_counts_only_without_top_k(case, tile_path):
    ent, rel, known, questions, judged, docno, _, (n_gt, n_eq, cand, *_) = case
    scorer = BilinearBlocks(torch.as_tensor(ent, dtype=torch.float32), torch.as_tensor(rel, dtype=torch.float32))
    r = rank_blocks(scorer, questions, judged, AnswerIndex(known, len(ent), len(rel)), docno, k=0, block=300,
                    show_progress=False)
    np.testing.assert_array_equal(r.n_gt, n_gt)
    np.testing.assert_array_equal(r.n_eq, n_eq)
    assert r.run_entity.shape == (len(questions), 0)


@pytest.mark.parametrize("questions", [8, 16, 520])
@pytest.mark.parametrize("entities", [128, 384])
def test_counts_sum_bytes_as_words(questions, entities):
    rng = np.random.default_rng(questions + entities)
    mask = rng.random((entities, questions)) < 0.7
    mask[:, 0] = True  # every byte lane of a word at its largest
    np.testing.assert_array_equal(_counts(np.stack([mask, ~mask])), [mask.sum(axis=0), (~mask).sum(axis=0)])


def _scan_random(seed, E, B, k, width, nan=False):
    """scan_batch on random float32 DistMult scores: several judged entities per question (gathered columns),
    judged entities under the filter, a filter of random cells, docno a permutation; ``nan``: a few unjudged
    entities score NaN in every column (a model's overflow), beside finite cells of their groups."""
    rng = np.random.default_rng(seed)
    ent = torch.as_tensor(rng.standard_normal((E, 16)), dtype=torch.float32)
    ent[rng.integers(0, E, E // 20)] = ent[rng.integers(0, E, E // 20)]  # ties: equal scores in every column
    jloc = np.sort(rng.integers(0, B, 2 * B))
    jent = rng.integers(0, E, len(jloc))
    ent[rng.integers(0, E, 4)] = ent[jent[:4]]  # ties at judged entities
    scorer = BilinearBlocks(ent, torch.ones(1, 16))
    qv = ent[rng.integers(0, E, B)]
    first = np.r_[True, jloc[1:] != jloc[:-1]]
    s_j = scorer.some(qv[torch.as_tensor(jloc)], torch.as_tensor(jent)).numpy()
    if nan:
        ent[np.setdiff1d(rng.integers(0, E, 9), jent)] = float("nan")
    f_rows = rng.integers(0, B, 20 * B)
    f_ents = np.sort(rng.integers(0, E, 20 * B))
    f_rows[:B], f_ents[:B] = jloc[:B], jent[:B]  # judged entities under the filter
    order = np.argsort(f_ents, kind="stable")
    f_rows, f_ents = f_rows[order], f_ents[order]
    docno = rng.permutation(E).astype(np.int64)
    timings = {}
    out = tiles.scan_batch(scorer, qv, E, s_j, jloc, first, jent, f_rows, f_ents, k, width, docno, 2, timings)
    return out, first


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("E,B,k,width", [(5000, 300, 50, None), (3000, 70, 200, 128), (900, 130, 0, 256),
                                         (700, 9, 700, 128)])
def test_compiled_path_equals_numpy_path(E, B, k, width, nan, monkeypatch):
    """Counts, candidate flags and top-k keys of the two tile paths, equal to the bit; k past a tile's width
    and k = E (every entity that the filter leaves); with NaN scores, which neither path counts or lists."""
    pytest.importorskip("numba")
    from kgeval.scale.tilepass import tile_pass

    monkeypatch.setattr(tiles, "_TILE_PASS", None)
    ref, first = _scan_random(E, E, B, k, width, nan)
    monkeypatch.setattr(tiles, "_TILE_PASS", tile_pass)
    out, _ = _scan_random(E, E, B, k, width, nan)
    for a, b in zip(ref, out):
        np.testing.assert_array_equal(a, b)
    assert (~ref[2]).any() and (ref[1] > 0).any() and (~first).any()  # what the draws are to exercise
    valid = ref[3] != np.iinfo(np.int64).min
    assert valid.all() if k < E // 2 else not valid.all()  # at k = E the filtered cells are missing


def test_path_is_chosen_at_import(monkeypatch):
    """KGEVAL_NO_NUMBA=1 selects the numpy path; otherwise numba where it imports."""
    monkeypatch.setenv("KGEVAL_NO_NUMBA", "1")
    assert tiles._compiled() is None
    monkeypatch.setenv("KGEVAL_NO_NUMBA", "0")
    try:
        import numba  # noqa: F401
    except ImportError:
        assert tiles._compiled() is None
    else:
        assert tiles._compiled() is not None
