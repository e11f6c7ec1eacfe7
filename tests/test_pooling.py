"""Pools, rebuilt/published qrels and TREC export."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from kgeval.data.kg import HEAD, KnowledgeGraph
from kgeval.metrics.evaluate import evaluate
from kgeval.pools.pooling import Pool, build_pool, coverage_table, prefilter
from kgeval.pools.qrels import (
    export_trec_qrels,
    export_trec_run,
    labels_of,
    published_judgments,
    qrels_for_dump,
    rebuilt_judgments,
)


def test_pool_equals_brute_force_union(synth_kg, pooled):
    seed, _, runs, _ = pooled
    pool = build_pool(runs, synth_kg, max_depth=10)
    known = {tuple(t) for t in synth_kg.known().tolist()}
    expect: dict[tuple, int] = {}
    for dump in runs.values():
        qs = dump.questions
        for q in range(len(qs)):
            for rank, e in enumerate(dump.run_entity[q][:10].tolist(), start=1):
                if e < 0:
                    continue
                triple = (e, int(qs.relation[q]), int(qs.entity[q])) if qs.side[q] == HEAD else (
                    int(qs.entity[q]), int(qs.relation[q]), e)
                if triple not in known:
                    expect[triple] = min(expect.get(triple, rank), rank)
    got = {tuple(t): int(d) for t, d in zip(pool.triples.tolist(), pool.depth)}
    assert got == expect and len(got) > 100
    for d in (1, 4):
        assert {tuple(t) for t in pool.at_depth(d).tolist()} == {t for t, x in expect.items() if x <= d}


def test_pool_roundtrip_and_coverage(synth_kg, synth_dir, pooled, tmp_path):
    _, sc, runs, _ = pooled
    pool = build_pool(runs, synth_kg, max_depth=10)
    pool.save(tmp_path / "pool.tsv", synth_kg)
    back = Pool.load(tmp_path / "pool.tsv", synth_kg)
    assert np.array_equal(back.triples, pool.triples) and np.array_equal(back.depth, pool.depth)
    labels = labels_of(synth_dir["annotations"], synth_kg)
    pub = {tuple(t): int(d) for t, d, lab in zip(sc.triples.tolist(), sc.depth, sc.label) if d > 0}
    cov = coverage_table(pool, synth_kg, labels, pub, 10)
    d10 = cov.iloc[-1]
    in_pool = [tuple(t) for t in pool.triples.tolist()]
    assert d10["pool_size"] == len(pool)
    assert d10["judged"] == sum(t in labels for t in in_pool)
    assert d10["new_positives"] == sum(labels.get(t) == 1 for t in in_pool)
    assert (cov["pool_size"].diff().dropna() >= 0).all()


def test_prefilter_by_category_and_type():
    ents = list("abcdef")
    kg = KnowledgeGraph("p", ents, ["one", "many"], {
        "train": np.array([[0, 0, 1], [2, 1, 3], [2, 1, 4]]), "valid": np.zeros((0, 3), int),
        "test": np.zeros((0, 3), int)}, relation_category=["one_to_one", "many_to_many"],
        relation_domain=["/p", "/p"], relation_range=["/c", "/c"], entity_types=["/p", "/c", "/p", "/c", "/c", "/p"])
    pool = Pool(np.array([[0, 0, 3], [5, 1, 1], [2, 1, 1], [0, 1, 5]]), np.array([1, 1, 2, 3], np.int16),
                np.array([2, 1, 3, 2], np.int8), ["x"] * 4)
    removed, report = prefilter(pool, kg)
    # (a one d): tail question of a 1-1 relation; (f many b) type ok, from a head question of N-N: kept;
    # (c many b) kept; (a many f): f is /p but the range is /c -> type violation
    assert removed.tolist() == [True, False, False, True]
    assert report["type_constraint"] == 1 and report["category_side"] == 1 and report["removed"] == 2
    kg.entity_types = None
    assert "skipped" in prefilter(pool, kg)[1]["type_constraint"]


def test_published_and_rebuilt_qrels(synth_kg, synth_dir, pooled):
    seed, sc, runs, sc_dumps = pooled
    pub = published_judgments(sc)
    for d in (0, 3, 10):
        j = pub.at_depth(d)
        assert j.counts()["relevant"] == int(((sc.depth <= d) & (sc.label == 1)).sum())
    pool = build_pool(runs, synth_kg, max_depth=10)
    labels = labels_of(synth_dir["annotations"], synth_kg)
    reb = rebuilt_judgments(seed, pool, labels, synth_kg)
    in_pool = {tuple(t) for t in pool.at_depth(5).tolist()}
    r5 = reb.at_depth(5)
    assert r5.counts()["pooled_unjudged"] == sum(t not in labels for t in in_pool)
    assert r5.counts()["relevant"] == len(seed) + sum(labels.get(t) == 1 for t in in_pool)
    # rebuilt relevant triples are published positives, so every depth evaluates on the S-C dump
    dump = sc_dumps["A"]
    for d in (0, 5, 10):
        ev = evaluate(dump, qrels_for_dump(dump, reb, d), measures=["infAP", "map"])
        # every relevant triple answers its head and its tail question, both questions of the S-C(10) dump
        assert len(ev.per_answer) == 2 * (reb.at_depth(d).rel == 1).sum()
    removed, _ = prefilter(pool, synth_kg)
    reb_f = rebuilt_judgments(seed, pool, labels, synth_kg, removed)
    assert reb_f.counts()["pooled_unjudged"] < reb.counts()["pooled_unjudged"]


@pytest.mark.peer
def test_trec_export_read_back_by_pytrec_eval(synth_kg, pooled, tmp_path):
    _, sc, _, sc_dumps = pooled
    dump = sc_dumps["C"]  # the one with ties
    pub = published_judgments(sc)
    qrels = qrels_for_dump(dump, pub, 4)
    export_trec_run(dump, synth_kg, tmp_path / "run.txt", "C")
    export_trec_qrels(dump.questions.qid, qrels, synth_kg, tmp_path / "qrels.txt")
    run: dict = {}
    for line in (tmp_path / "run.txt").read_text().splitlines():
        qid, _, doc, _, score, tag = line.split()
        run.setdefault(qid, {})[doc] = float(score)
        assert tag == "C"
    qd: dict = {}
    for line in (tmp_path / "qrels.txt").read_text().splitlines():
        qid, _, doc, rel = line.split()
        qd.setdefault(qid, {})[doc] = int(rel)
    names = ["map", "map_cut_20", "ndcg_cut_20", "recip_rank", "P_10", "bpref", "Rprec", "infAP"]
    ev = evaluate(dump, qrels, measures=names)
    evaluated = set(ev.per_question["qid"])
    ref = pytrec_eval.RelevanceEvaluator({q: v for q, v in qd.items() if q in evaluated},
                                         {"map", "map_cut.20", "ndcg_cut.20", "recip_rank", "P.10", "bpref", "Rprec",
                                          "infAP"}).evaluate({q: v for q, v in run.items() if q in evaluated})
    assert len(ref) == len(evaluated) > 50
    for _, row in ev.per_question.iterrows():
        for m in names:
            assert row[m] == pytest.approx(ref[row["qid"]][m], abs=1e-12), (row["qid"], m)
