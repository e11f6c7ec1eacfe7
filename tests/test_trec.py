"""trec_eval measures: hand-computed cases and agreement with pytrec_eval (trec_eval itself)."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from kgeval.metrics.trec import (
    ABSENT,
    NONREL,
    POOLED_UNJUDGED,
    REL,
    UNJUDGED,
    RunRelevance,
    evaluate_run,
    parse_measure,
)

MEASURES = ["map", "map_cut_5", "map_cut_20", "ndcg", "ndcg_cut_3", "ndcg_cut_20", "P_1", "P_5", "P_10",
            "recip_rank", "Rprec", "recall_5", "recall_100", "success_1", "success_5", "bpref", "infAP",
            "num_ret", "num_rel", "num_rel_ret"]


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then docno descending."""
    return sorted(docs, key=lambda d: (-docs[d], [-b for b in d.encode()] + [1]))


def to_codes(run: dict, qrels: dict, K: int) -> tuple[list[str], RunRelevance]:
    qids = sorted(qrels)
    codes = np.full((len(qids), K), ABSENT, np.int8)
    for i, q in enumerate(qids):
        for j, d in enumerate(trec_order(run.get(q, {}))[:K]):
            codes[i, j] = qrels[q].get(d, UNJUDGED)
    n_rel = np.array([sum(v >= 1 for v in qrels[q].values()) for q in qids])
    n_nonrel = np.array([sum(v == 0 for v in qrels[q].values()) for q in qids])
    return qids, RunRelevance(codes, n_rel, n_nonrel)


def random_case(rng, n_queries=40, n_docs=60):
    docs = [f"d{i:03d}" for i in range(n_docs)]
    run, qrels = {}, {}
    for qi in range(n_queries):
        q = f"q{qi}"
        n_ret = 0 if qi % 13 == 0 else int(rng.integers(1, n_docs))
        retrieved = rng.choice(docs, size=n_ret, replace=False)
        scores = rng.integers(0, 6, size=n_ret).astype(float) / 2  # many ties
        if n_ret:
            run[q] = {d: float(s) for d, s in zip(retrieved, scores)}
        judged = rng.choice(docs, size=int(rng.integers(1, n_docs // 2)), replace=False)
        labels = rng.choice([1, 0, 0, -1], size=len(judged))
        labels[0] = 1  # every question has a relevant document
        qrels[q] = {d: int(v) for d, v in zip(judged, labels)}
    return run, qrels


@pytest.mark.peer
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_measure_equals_pytrec_eval(seed):
    rng = np.random.default_rng(seed)
    run, qrels = random_case(rng)
    qids, rr = to_codes(run, qrels, K=60)
    ours = evaluate_run(rr, MEASURES)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut.5,20", "ndcg", "ndcg_cut.3,20", "P.1,5,10",
                                                 "recip_rank", "Rprec", "recall.5,100", "success.1,5", "bpref",
                                                 "infAP", "num_ret", "num_rel", "num_rel_ret"}).evaluate(run)
    checked = 0
    for i, q in enumerate(qids):
        if q not in ref:  # trec_eval skips questions without a run; ours scores them 0
            assert ours["map"][i] == 0 and ours["num_ret"][i] == 0 and ours["num_rel"][i] > 0
            continue
        for m in MEASURES:
            assert ours[m][i] == pytest.approx(ref[q][m], abs=1e-9), (q, m)
            checked += 1
    assert checked > 500


@pytest.mark.peer
def test_truncated_run_equals_trec_eval_on_truncated_run():
    rng = np.random.default_rng(7)
    run, qrels = random_case(rng, n_queries=20)
    K = 10
    truncated = {q: {d: docs[d] for d in trec_order(docs)[:K]} for q, docs in run.items()}
    qids, rr = to_codes(run, qrels, K=K)
    ours = evaluate_run(rr, ["map", "bpref", "P_20", "ndcg"])
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "bpref", "P.20", "ndcg"}).evaluate(truncated)
    for i, q in enumerate(qids):
        if q in ref:
            for m in ("map", "bpref", "P_20", "ndcg"):
                assert ours[m][i] == pytest.approx(ref[q][m], abs=1e-9)


def test_hand_computed():
    # ranks: 1 R, 2 N, 3 unjudged, 4 R ; 3 relevant in qrels, 2 judged non-relevant
    rr = RunRelevance(np.array([[REL, NONREL, UNJUDGED, REL]]), np.array([3]), np.array([2]))
    v = evaluate_run(rr, ["map", "P_2", "recip_rank", "Rprec", "bpref", "ndcg_cut_2", "success_1",
                          "unjudged_4", "condensed_map", "condensed_P_2"])
    assert v["map"][0] == pytest.approx((1 + 2 / 4) / 3)
    assert v["P_2"][0] == 0.5 and v["recip_rank"][0] == 1 and v["success_1"][0] == 1
    assert v["Rprec"][0] == pytest.approx(1 / 3)
    assert v["bpref"][0] == pytest.approx((1 + (1 - 1 / 2)) / 3)
    assert v["ndcg_cut_2"][0] == pytest.approx(1 / (1 + 1 / np.log2(3)))
    assert v["unjudged_4"][0] == 0.25
    # condensed: R N R -> AP = (1 + 2/3) / 3
    assert v["condensed_map"][0] == pytest.approx((1 + 2 / 3) / 3)
    assert v["condensed_P_2"][0] == 0.5


def test_infap_treats_pooled_unjudged_as_sampled():
    rr = RunRelevance(np.array([[POOLED_UNJUDGED, REL]]), np.array([1]), np.array([0]))
    got = evaluate_run(rr, ["infAP"])["infAP"][0]
    # j = 1: 1/2 + 1/2 * ((0 + 0 + 1) / 1) * ((0 + eps) / (0 + 0 + 2 eps)) = 1/2 + 1/4
    assert got == pytest.approx(0.75)


def test_parse_measure_errors():
    with pytest.raises(ValueError, match="unknown trec measure"):
        parse_measure("mapp")
    with pytest.raises(ValueError, match="needs a cutoff"):
        parse_measure("P")
    with pytest.raises(ValueError, match="takes no cutoff"):
        parse_measure("map_5")


def test_ir_measures_names_are_aliases_of_trec_eval_names():
    """ir_measures' names give the trec_eval measure, under the name asked for."""
    pairs = {"nDCG@20": "ndcg_cut_20", "nDCG": "ndcg", "AP@20": "map_cut_20", "AP": "map", "RR": "recip_rank",
             "P@10": "P_10", "R@100": "recall_100", "Success@10": "success_10", "Bpref": "bpref"}
    for alias, name in pairs.items():
        assert parse_measure(alias) == parse_measure(name), alias
    # one question: R N (not in qrels) R (pooled, unjudged) then an absent position
    rr = RunRelevance(np.array([[REL, NONREL, UNJUDGED, REL, POOLED_UNJUDGED, ABSENT]]), np.array([2]),
                      np.array([1]))
    v = evaluate_run(rr, ["AP@20", "map_cut_20", "Judged@10", "Judged@3", "RR"])
    assert v["AP@20"][0] == v["map_cut_20"][0] == pytest.approx((1 + 2 / 4) / 2)
    # Judged@k as ir_measures computes it: documents with a qrels entry in the top k over min(k, retrieved)
    assert v["Judged@10"][0] == pytest.approx(4 / 5) and v["Judged@3"][0] == pytest.approx(2 / 3)
    assert v["RR"][0] == 1.0
    with pytest.raises(ValueError, match="takes no cutoff"):
        parse_measure("RR@10")
    # names resolve as PyKEEN's class resolver reads them: case does not matter
    assert parse_measure("NDCG@20") == parse_measure("nDCG@20") == parse_measure("ndcg_cut_20")
    with pytest.raises(ValueError, match=r"ir_measures' .*nDCG@20"):
        parse_measure("NDCG_at_20")
