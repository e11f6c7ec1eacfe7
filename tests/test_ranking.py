"""The ranking engine and the KGC metrics: hand-computed cases, brute force, pytrec_eval, PyKEEN."""

from __future__ import annotations

import math

import numpy as np
import pytest
import pytrec_eval
import torch
from conftest import tiny_kg
from helpers import random_scorer, run_engine

from kgeval.data.kg import HEAD, TAIL, KnowledgeGraph
from kgeval.data.testsets import full_test, pooled_test, sample_test
from kgeval.errors import CorruptFileError, ScoreError
from kgeval.metrics.evaluate import evaluate, qrels_at_depth
from kgeval.metrics.rank_based import HitsAtK, MeanRank, MeanReciprocalRank
from kgeval.scores.dumps import load_dump, save_ranking


def table_scorer(table: dict[tuple[int, int, int], list[float]]):
    """A scorer that looks up fixed scores per (side, entity, relation)."""

    def score(queries: torch.Tensor, side: int) -> torch.Tensor:
        return torch.tensor([table[(side, int(e), int(r))] for e, r in queries.tolist()], dtype=torch.float32)

    return score


# Hand-computed case on tiny_kg: entities a b c d e (0..4), relations r s.
# train: (a r b) (a r c) (b s c); valid: (c r d); test: (a r d) (d s e).
# Test questions: heads (?, r, d) [answer a], (?, s, e) [answer d]; tails (a, r, ?) [answer d], (d, s, ?) [e].
SCORES = {
    (HEAD, 3, 0): [2.0, 3.0, 5.0, 2.0, 1.0],  # (?, r, d): c filtered (valid); b above a; d ties with a
    (HEAD, 4, 1): [1.0, 1.0, 1.0, 0.5, 1.0],  # (?, s, e): answer d below a b c e (tied)
    (TAIL, 0, 0): [9.0, 8.0, 7.0, 7.0, 7.0],  # (a, r, ?): b, c filtered (train); a above d; e ties with d
    (TAIL, 3, 1): [0.0, 0.0, 0.0, 0.0, 4.0],  # (d, s, ?): e first
}


def test_hand_computed_ranks_and_run():
    kg = tiny_kg()
    r = run_engine(kg, full_test(kg, "T"), table_scorer(SCORES), k=5)
    qs = r.questions
    assert qs.qid == ["head0", "head1", "tail0", "tail1"]
    # n_candidates: (?, r, d) removes c (valid); (a, r, ?) removes b and c (train)
    assert r.n_candidates.tolist() == [4, 5, 3, 5]
    by_q = {int(q): (int(g), int(e)) for q, g, e in zip(r.judged.q, r.n_gt, r.n_eq)}
    assert by_q == {0: (1, 1), 1: (4, 0), 2: (1, 1), 3: (0, 0)}
    # trec order: score desc, then docno desc; filtered entities absent, short runs padded with -1
    assert r.run_entity[0].tolist() == [1, 3, 0, 4, -1]  # b, then d before a (tie, 'd' > 'a'), e
    assert r.run_entity[1].tolist() == [4, 2, 1, 0, 3]
    assert r.run_entity[2].tolist() == [0, 4, 3, -1, -1]
    assert r.run_entity[3].tolist() == [4, 3, 2, 1, 0]


def test_hand_computed_metrics(tmp_path):
    kg = tiny_kg()
    r = run_engine(kg, full_test(kg, "T"), table_scorer(SCORES), k=5)
    save_ranking(r, tmp_path / "d", {"model": "table"})
    dump = load_dump(tmp_path / "d")
    ev = evaluate(dump, qrels_at_depth(dump), measures=["recip_rank", "P_1", "map"])
    # realistic ranks: 1 + n_gt + n_eq / 2
    ranks = dict(zip(ev.per_answer["qid"], ev.per_answer["rank"]))
    assert ranks == {"head0": 2.5, "head1": 5.0, "tail0": 2.5, "tail1": 1.0}
    assert ev.summary["micro_mr"] == pytest.approx(2.75)
    assert ev.summary["micro_mrr"] == pytest.approx((0.4 + 0.2 + 0.4 + 1) / 4)
    assert ev.summary["micro_hits@1"] == 0.25 and ev.summary["micro_hits@3"] == 0.75
    assert ev.summary["macro_mrr"] == pytest.approx(0.5)  # one answer per question: macro = micro
    # trec_eval's order breaks the ties: head0 b d a -> 1/3; tail0 a e d -> 1/3
    rr = dict(zip(ev.per_question["qid"], ev.per_question["recip_rank"]))
    assert rr == {"head0": pytest.approx(1 / 3), "head1": 0.2, "tail0": pytest.approx(1 / 3), "tail1": 1.0}
    assert ev.summary["P_1"] == 0.25


def test_multi_answer_micro_vs_macro():
    # one question (a, r, ?) with answers b and d in test; train has (a r c); scores e > b > c = d > a
    kg = KnowledgeGraph("m", list("abcde"), ["r"], {
        "train": np.array([[0, 0, 2]]), "valid": np.zeros((0, 3), int),
        "test": np.array([[0, 0, 1], [0, 0, 3]])})
    scores = {(TAIL, 0, 0): [0.0, 3.0, 2.0, 2.0, 5.0], (HEAD, 1, 0): [1, 0, 0, 0, 0],
              (HEAD, 3, 0): [1, 0, 0, 0, 0]}
    r = run_engine(kg, full_test(kg, "T"), table_scorer(scores), k=5)
    qrels = qrels_at_depth(_dump(r))
    ev = evaluate(_dump(r), qrels, measures=["recip_rank"])
    pa = ev.per_answer[ev.per_answer["side"] == "tail"].set_index("entity")
    # micro: b is behind e only -> 2; d behind e, (b filtered as the other answer), c filtered (train) -> 2
    assert pa.loc[1, "rank"] == 2.0 and pa.loc[3, "rank"] == 2.0
    assert pa.loc[3, "num_candidates"] == 3  # 5 entities - c (train) - b (other answer)
    pq = ev.per_question[ev.per_question["side"] == "tail"].iloc[0]
    # macro: best answer b at rank 2 among candidates a b d e
    assert pq["rank"] == 2.0 and pq["macro_mrr"] == 0.5 and pq["num_candidates"] == 4


def test_every_candidate_filtered_gives_rank_one():
    kg = KnowledgeGraph("f", list("abc"), ["r"], {
        "train": np.array([[0, 0, 1], [0, 0, 0]]), "valid": np.zeros((0, 3), int),
        "test": np.array([[0, 0, 2]])})
    scores = {(TAIL, 0, 0): [5.0, 4.0, 1.0], (HEAD, 2, 0): [0.0, 0.0, 0.0]}
    r = run_engine(kg, full_test(kg, "T"), table_scorer(scores), k=3)
    ev = evaluate(_dump(r), qrels_at_depth(_dump(r)), measures=["recip_rank"])
    tail = ev.per_answer[ev.per_answer["side"] == "tail"].iloc[0]
    assert tail["rank"] == 1.0 and tail["num_candidates"] == 1
    head = ev.per_answer[ev.per_answer["side"] == "head"].iloc[0]  # all three tie: realistic 2
    assert head["rank"] == 2.0


_DUMPS = {}


def _dump(r):
    import tempfile

    key = id(r)
    if key not in _DUMPS:
        d = tempfile.mkdtemp()
        save_ranking(r, d, {"model": "t"})
        _DUMPS[key] = load_dump(d)
    return _DUMPS[key]


def test_nan_score_names_model_and_question():
    kg = tiny_kg()
    bad = dict(SCORES)
    bad[(TAIL, 0, 0)] = [9.0, float("nan"), 7.0, 7.0, 7.0]
    with pytest.raises(ScoreError, match=r"model M: non-finite score nan for question tail0 .* candidate 1"):
        run_engine(kg, full_test(kg, "T"), table_scorer(bad), model_name="M")


def test_infinite_score_is_caught_and_huge_finite_scores_are_not():
    # the engine checks a batch's sum first: +inf must still be reported, and finite scores whose sum
    # overflows float32 must pass the exact check and rank as usual
    kg = tiny_kg()
    bad = dict(SCORES)
    bad[(TAIL, 0, 0)] = [9.0, 7.0, float("inf"), 7.0, 7.0]
    with pytest.raises(ScoreError, match=r"non-finite score inf for question tail0 .* candidate 2"):
        run_engine(kg, full_test(kg, "T"), table_scorer(bad), model_name="M")
    big = {key: [{9.0: 3.0e38, 8.0: 2.9e38}.get(v, v) for v in row] for key, row in SCORES.items()}
    a = run_engine(kg, full_test(kg, "T"), table_scorer(SCORES))
    b = run_engine(kg, full_test(kg, "T"), table_scorer(big))
    assert np.array_equal(a.n_gt, b.n_gt) and np.array_equal(a.n_eq, b.n_eq)


def brute_force_micro(kg, ts, scorer):
    """Realistic micro ranks by the textbook loop: filter every other known answer."""
    known = {tuple(t) for t in kg.known(("train", "valid")).tolist()} | {tuple(t) for t in ts.positives.tolist()}
    out = {}
    for h, r, t in ts.positives.tolist():
        for side, e_known, ans in ((HEAD, t, h), (TAIL, h, t)):
            s = scorer(torch.tensor([[e_known, r]]), side)[0].numpy()
            cand = [c for c in range(kg.num_entities) if c == ans or
                    ((c, r, t) if side == HEAD else (h, r, c)) not in known]
            gt = sum(s[c] > s[ans] for c in cand)
            eq = sum(s[c] == s[ans] for c in cand) - 1
            out[(side, e_known, r, ans)] = gt + 1 + eq / 2
    return out


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("block_cells", [None, 1, 3 * 128])
def test_engine_equals_brute_force_on_synthetic(synth_kg, synth_dir, ties, block_cells, monkeypatch):
    if block_cells:  # counting in blocks of one row, or of a few rows cutting through questions' answer lists
        monkeypatch.setattr("kgeval.scores.ranking._COUNT_BLOCK_CELLS", block_cells)
    seed = sample_test(synth_kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    ts = pooled_test(synth_kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    scorer = random_scorer(synth_kg, ties=ties)
    r = run_engine(synth_kg, ts, scorer, k=50, batch_size=7)
    ev = evaluate(_dump(r), qrels_at_depth(_dump(r)), measures=[])
    ref = brute_force_micro(synth_kg, ts, scorer)
    qs = r.questions
    got = {(int(qs.side[q]), int(qs.entity[q]), int(qs.relation[q]), int(e)): rank
           for q, e, rank in zip(ev.micro.q, ev.per_answer["entity"], ev.per_answer["rank"])}
    assert got == pytest.approx(ref)


def test_batch_size_does_not_change_results(synth_kg):
    ts = full_test(synth_kg, "O")
    scorer = random_scorer(synth_kg, seed=3, ties=True)
    a = run_engine(synth_kg, ts, scorer, k=20, batch_size=1)
    b = run_engine(synth_kg, ts, scorer, k=20, batch_size=1000)
    for field in ("n_gt", "n_eq", "score", "run_entity", "n_candidates"):
        assert np.array_equal(getattr(a, field), getattr(b, field))


@pytest.mark.peer
def test_run_and_measures_equal_pytrec_eval(synth_kg, synth_dir):
    seed = sample_test(synth_kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    ts = pooled_test(synth_kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    r = run_engine(synth_kg, ts, random_scorer(synth_kg, seed=5, ties=True), k=100)
    dump = _dump(r)
    for depth in (0, 3, 10):
        qrels = qrels_at_depth(dump, depth)
        names = ["recip_rank", "map_cut_20", "ndcg_cut_20", "P_10", "Rprec", "bpref", "map", "success_10"]
        ev = evaluate(dump, qrels, measures=names)
        E = synth_kg.entities
        run = {dump.questions.qid[q]: {E[e]: float(s) for e, s in zip(dump.run_entity[q], dump.run_score[q])
                                       if e >= 0} for q in ev.per_question["q"]}
        qd: dict = {}
        for q, e, rel in zip(qrels.q, qrels.entity, qrels.rel):
            qd.setdefault(dump.questions.qid[q], {})[E[e]] = int(rel)
        ref = pytrec_eval.RelevanceEvaluator(
            {q: qd[q] for q in run}, {"recip_rank", "map_cut.20", "ndcg_cut.20", "P.10", "Rprec", "bpref", "map",
                                      "success.10"}).evaluate(run)
        for _, row in ev.per_question.iterrows():
            for m in names:
                assert row[m] == pytest.approx(ref[row["qid"]][m], abs=1e-12), (depth, row["qid"], m)


def test_dump_corruption_is_detected(tmp_path, synth_kg):
    r = run_engine(synth_kg, full_test(synth_kg, "O"), random_scorer(synth_kg), k=10)
    save_ranking(r, tmp_path / "d", {"model": "x"})
    load_dump(tmp_path / "d")
    run = tmp_path / "d/run.parquet"
    data = bytearray(run.read_bytes())
    data[len(data) // 2] ^= 0xFF
    run.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match=r"run.parquet: SHA-256 .* differs") as err:
        load_dump(tmp_path / "d")  # outside a workflow job a dump is an input: reported, never renamed
    assert "set aside" not in str(err.value) and run.read_bytes() == bytes(data)
    with pytest.raises(CorruptFileError, match=r"run.parquet: SHA-256 .* differs.*set aside"):
        load_dump(tmp_path / "d", set_aside_corrupt=True)
    # the dump is set aside whole (kept for inspection), so that a rerun rebuilds it
    assert not (tmp_path / "d").exists() and (tmp_path / "d.corrupt/run.parquet").read_bytes() == bytes(data)
    save_ranking(r, tmp_path / "d", {"model": "x"})
    run.write_bytes(bytes(data[: len(data) // 3]))
    with pytest.raises(CorruptFileError, match="run.parquet"):
        load_dump(tmp_path / "d", verify=False)
    save_ranking(r, tmp_path / "d", {"model": "x"})
    (tmp_path / "d/meta.json").unlink()
    with pytest.raises(CorruptFileError, match="incomplete score dump: meta.json is missing"):
        load_dump(tmp_path / "d")


def test_metric_classes():
    ranks = np.array([1.0, 2.5, 10.0, 11.0])
    assert MeanRank()(ranks) == pytest.approx(6.125)
    assert MeanReciprocalRank()(ranks) == pytest.approx((1 + 0.4 + 0.1 + 1 / 11) / 4)
    assert HitsAtK(10)(ranks) == 0.75 and HitsAtK(1)(ranks) == 0.25
    assert MeanReciprocalRank()(ranks, weights=np.array([1.0, 0, 0, 0])) == 1.0


@pytest.mark.parametrize("levels", [3, 50, 100000])
def test_top_k_equals_full_sort_in_trec_order(levels):
    """The fast top-k (float topk + exact re-sort, full keys where a tie crosses k) equals sorting every row by
    (score desc, docno desc), with filtered cells and short rows."""
    from kgeval.scores.ranking import top_k_trec

    g = torch.Generator().manual_seed(levels)
    B, E, k = 40, 300, 25
    S = torch.randint(0, levels, (B, E), generator=g).float() / 7
    S[torch.rand(B, E, generator=g) < 0.3] = -float("inf")
    S[0, 5:] = -float("inf")  # fewer candidates than k
    docno = torch.randperm(E, generator=g)
    ent, sc = top_k_trec(S.clone(), k, docno)
    for b in range(B):
        cand = [e for e in range(E) if S[b, e] > -float("inf")]
        want = sorted(cand, key=lambda e: (-float(S[b, e]), -int(docno[e])))[:k]
        got = [e for e in ent[b].tolist() if e >= 0]
        assert got == want
        assert sc[b, : len(want)].tolist() == [float(S[b, e]) for e in want]


@pytest.mark.parametrize("seed", range(4))
def test_cpu_threshold_top_k_equals_the_topk_path(seed):
    """The CPU path (threshold from a strided sample, sort of the candidates' keys) gives exactly what the
    float-topk path gives: ties across the k-th position, -0.0, filtered cells, rows with fewer than k
    candidates, rows whose sample misleads the threshold (the sampled columns hold the row's largest scores)."""
    from kgeval.scores.ranking import _SAMPLE_STRIDE, _top_k_trec_topk, top_k_trec

    g = torch.Generator().manual_seed(seed)
    B, E = 64, 2000
    levels = [7, 400, 10**6, 10**9][seed]
    S = (torch.randint(-levels, levels, (B, E), generator=g).float() / 7).to(torch.float32)
    S[torch.rand(B, E, generator=g) < 0.2] = -float("inf")
    S[1, 30:] = -float("inf")          # 30 candidates
    S[2, ::_SAMPLE_STRIDE] = 1e6 + torch.arange(0, E, _SAMPLE_STRIDE)  # the sample sees only the row's top:
    # too few reach its threshold
    S[3] = -0.0
    S[3, ::3] = 0.0
    S[4, :] = 1.0                      # one tie over the whole row
    docno = torch.randperm(E, generator=g)
    for k in (1, 10, 100, 250, E):
        want_e, want_s = _top_k_trec_topk(S.clone(), k, docno)
        got_e, got_s = top_k_trec(S.clone(), k, docno)
        assert torch.equal(got_e.to(torch.int64), want_e), k
        assert np.array_equal(got_s.numpy(), want_s.numpy(), equal_nan=True), k
        assert np.array_equal(np.signbit(got_s.numpy()), np.signbit(want_s.numpy())), k


def test_written_trec_run_equals_the_topk_paths_byte_for_byte(synth_kg, tmp_path, monkeypatch):
    """The TREC run file written from the engine's run is the same file with the CPU threshold path and with the
    float-topk path (tied scores: the scorer rounds to halves)."""
    from kgeval.pools.qrels import export_trec_run
    from kgeval.scores import ranking

    k = 20
    monkeypatch.setattr(ranking, "_SAMPLE_STRIDE", 2)  # a sample fine enough for the 241 entities
    r = math.ceil((math.sqrt(k / ranking._SAMPLE_STRIDE) + 3) ** 2)
    assert synth_kg.num_entities > 2 * r * ranking._SAMPLE_STRIDE  # the threshold path runs
    files = []
    for name in ("threshold", "topk"):
        if name == "topk":
            monkeypatch.setattr(ranking, "top_k_trec", ranking._top_k_trec_topk)
        res = run_engine(synth_kg, full_test(synth_kg, "O"), random_scorer(synth_kg, seed=3, ties=True), k=k)
        save_ranking(res, tmp_path / name, {"model": "x"})
        files.append(tmp_path / f"{name}.run")
        assert export_trec_run(load_dump(tmp_path / name), synth_kg, files[-1], "x") > 0
    assert files[0].read_bytes() == files[1].read_bytes()
