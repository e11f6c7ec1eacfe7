"""The bounds stage's wiring of issue 30 (kgeval.bounds.decide): candidates from the stage's relevance codes by
hand, items back to triples, and next_judgments.tsv through the annotation round trip's reader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import tiny_kg

from kgeval.bounds.decide import write_next_judgments
from kgeval.bounds.greedy import make_engine, plan
from kgeval.data.questions import Questions
from kgeval.judgments.candidates import Candidates
from kgeval.judgments.items import candidates, item_features, item_triples
from kgeval.judgments.labels import ABSENT, NONREL, REL, UNKNOWN
from kgeval.metrics.trec import pair_lookup
from kgeval.pools.annotation import EXPORT_HEADER, read_annotations, read_export

U, R, N, A = UNKNOWN, REL, NONREL, ABSENT


def hand_case():
    """Two systems, three questions, k = 2; question 1 is outside the macro filter."""
    entity = np.array([[[1, 2], [3, 0], [4, -1]],
                       [[2, 3], [0, 1], [4, 1]]])
    code = np.array([[[R, U], [N, U], [U, A]],
                     [[U, U], [U, U], [U, U]]], dtype=np.int8)
    return entity, code, np.array([True, False, True])


def test_candidates_by_hand():
    entity, code, qmask = hand_case()
    items = candidates(entity, code, qmask, ["A", "B"], 2)
    c = items.cand
    # items sorted by (question, entity): q0 e1, q0 e2, q0 e3, q2 e1, q2 e4
    assert items.q.tolist() == [0, 0, 0, 2, 2]
    assert items.entity.tolist() == [1, 2, 3, 1, 4]
    assert c.item_q.tolist() == [0, 0, 0, 1, 1] and c.n_questions == 2
    assert c.ranks.tolist() == [[1, 2, 0, 0, 1], [0, 1, 2, 2, 1]]
    assert c.state.tolist() == [1, -1, -1, -1, -1]
    assert c.systems == ("A", "B")


def test_pair_lookup_of_judged_depths():
    out = pair_lookup(np.array([0, 0, 2, 5]), np.array([1, 3, 1, 0]), np.array([2, 0, 0]), np.array([1, 3, 1]),
                      np.array([7, 4, 9]), 10, -1)
    assert out.tolist() == [9, 4, 7, -1]
    assert pair_lookup(np.array([0]), np.array([0]), np.zeros(0, int), np.zeros(0, int), np.zeros(0, int), 10,
                       -1).tolist() == [-1]


def tiny_questions(kg):
    # q0: head question (?, r, b) -- known entity b; q1: tail question (c, s, ?)
    return Questions(np.array([0, 1]), np.array([1, 2]), np.array([0, 1]), ["head0", "tail0"], kg.num_entities,
                     kg.num_relations)


def test_item_triples_follow_the_question_side():
    kg = tiny_kg()
    qs = tiny_questions(kg)
    entity = np.array([[[0, 3], [4, 3]]])
    code = np.full(entity.shape, U, np.int8)
    items = candidates(entity, code, np.array([True, True]), ["A"], 2)
    tri = item_triples(items, qs, np.arange(items.cand.n_items))
    # head question (?, r=0, b=1): the candidate is the head; tail question (c=2, s=1, ?): the tail
    assert tri.tolist() == [[0, 0, 1], [3, 0, 1], [2, 1, 3], [2, 1, 4]]
    f = item_features(items, kg, qs)
    assert f.best_rank.tolist() == [1, 2, 2, 1] and f.n_top.tolist() == [1, 1, 1, 1]
    # relation r has 4 known triples, s 2
    assert f.answer_count.tolist() == [4, 4, 2, 2]


def test_next_judgments_go_through_the_annotation_round_trip(tmp_path):
    kg = tiny_kg()
    qs = tiny_questions(kg)
    # A holds (q0, e0) at rank 1; B holds (q1, e4) at rank 1; both hold (q0, e3) at rank 2: it bears on no pair
    entity = np.array([[[0, 3], [2, 1]], [[2, 3], [4, 1]]])
    code = np.array([[[U, U], [N, R]], [[N, U], [U, R]]], dtype=np.int8)
    items = candidates(entity, code, np.array([True, True]), ["A", "B"], 2)
    eng = make_engine(items.cand, np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.5])[:items.cand.n_items], "P@k")
    pl = plan(eng)
    tri = item_triples(items, qs, pl.items)
    sheet, side = tmp_path / "next_judgments.tsv", tmp_path / "next_judgments.csv"
    write_next_judgments(kg, {"r": "Is {head} r of {tail}?", "s": "Is {head} s of {tail}?"}, tri, pl, pl.bears_on_labels(["A", "B"]), "next-tiny", sheet, side)
    rows = read_export(sheet)
    # (q0, e0) has p = 0.9: p(1-p) = 0.09 < 0.25 of (q1, e4), so e4's triple (c, s, e) comes first
    assert [r.triple for r in rows] == [("c", "s", "e"), ("a", "r", "b")]
    assert [r.item for r in rows] == ["1", "2"] and {r.batch for r in rows} == {"next-tiny"}
    table = pd.read_csv(side)
    assert table["item"].tolist() == [1, 2]
    assert table["bears_on"].tolist() == ["A|B", "A|B"]
    assert table["p"].tolist() == pytest.approx([0.5, 0.9])
    assert table["priority"].tolist() == pytest.approx([0.25 / 16, 0.09 / 16])  # (1/k / Q)^2 p(1-p), k = Q = 2
    # an annotator fills it in; the round trip reads the completed sheet against the export
    lines = sheet.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == EXPORT_HEADER
    filled = [lines[0]] + ["\t".join(line.split("\t")[:8] + ["Y", "https://en.wikipedia.org/wiki/X", ""])
                           for line in lines[1:]]
    done = tmp_path / "next_judgments.A.tsv"
    done.write_text("\n".join(filled) + "\n", encoding="utf-8")
    judg = read_annotations(done, rows)
    assert [j.label for j in judg.values()] == [1, 1]


def test_candidates_keep_shared_unknowns_once():
    entity = np.array([[[5, 6]], [[6, 5]]])
    code = np.full(entity.shape, U, np.int8)
    c: Candidates = candidates(entity, code, np.array([True]), ["A", "B"], 2).cand
    assert c.n_items == 2 and c.ranks.tolist() == [[1, 2], [2, 1]]


def test_findings_give_the_judgments_to_decide_an_undecided_claim():
    from test_bounds import bounds_tau

    from kgeval.analysis import findings as F

    names = {"original": "O", "sample": "S", "complete": "SC", "second": "W"}
    f5 = pd.DataFrame([{"Flavour": "published", "Depth": 4, "Metric": m, "tau": t} for m, t in
                       (("micro_mrr", -0.23), ("macro_mrr", 0.6), ("micro_hits@10", 0.3), ("macro_hits@10", 0.7))])
    counts = pd.DataFrame([{"Metric": "RR", "expected_judgments": 1234.4, "worst_case_upper": 20000},
                           {"Metric": "P", "expected_judgments": 10.0, "worst_case_upper": 50}])
    claim = next(c for c in F.CLAIMS if c.claim.startswith("4. "))

    def row(tau):
        return F.findings(F.Outputs(names, figure5=f5, bounds_tau=tau, bounds_counts=counts), [claim]).iloc[0]

    # only the RR@10 interval holds the paper's value: its counts; Success@10 is decided, so not listed
    r = row(bounds_tau((0.6, 0.1, 0.9), (0.7, 0.5, 0.8)))
    assert r["holds"] == "undecided"
    assert r["ours"].endswith("; judgments to decide every pair: macro RR@10: 1,234 expected, worst case ≤ 20,000")
    # both intervals undecided; Success is not among the selection's metrics
    r = row(bounds_tau((0.6, 0.1, 0.9), (0.7, 0.3, 0.8)))
    assert r["ours"].endswith("macro RR@10: 1,234 expected, worst case ≤ 20,000, macro Success@10: not computed "
                              "(bounds.decide_metrics lacks Success)")
    # a decided claim gains no counts
    assert "judgments to decide" not in row(bounds_tau((0.6, 0.5, 0.7), (0.7, 0.6, 0.8)))["ours"]


def test_the_simulations_prior_never_sees_its_own_questions_labels():
    from kgeval.judgments.items import out_of_fold_prior
    from kgeval.judgments.prior import group_folds, triple_features

    rng = np.random.default_rng(3)
    n, Q = 400, 40
    item_q = np.repeat(np.arange(Q), n // Q)
    ranks = rng.integers(0, 12, (3, n))
    feats = triple_features(ranks, item_q % 4, item_q % 2, item_q % 5 + 1, 10)
    labels = (rng.random(n) < 0.3).astype(np.int8)
    hidden = rng.random(n) < 0.8
    p = out_of_fold_prior(feats, labels, hidden, item_q, "logistic", 5, 0)
    assert (p[~hidden] == 0.5).all() and not np.allclose(p[hidden], 0.5)
    # flip every label of the hidden items of one fold: that fold's predictions do not move, the others' do
    fold = np.full(n, -1)
    fold[hidden] = group_folds(item_q[hidden], 5, 0)
    flipped = np.where(fold == 2, 1 - labels, labels).astype(np.int8)
    q = out_of_fold_prior(feats, flipped, hidden, item_q, "logistic", 5, 0)
    assert np.array_equal(p[fold == 2], q[fold == 2])
    assert not np.allclose(p[(fold >= 0) & (fold != 2)], q[(fold >= 0) & (fold != 2)])
    assert (out_of_fold_prior(feats, labels, hidden, item_q, "uniform", 5, 0) == 0.5).all()
