"""Interoperability: the TREC run and qrels files kgeval exports (``kgeval.pools.qrels.export_trec_run`` /
``export_trec_qrels``) are read unchanged by ir_measures and ranx, which give kgeval's macro values; and
ir_measures' measure names mean in kgeval what they mean in ir_measures.

The run is a random bilinear scorer without ties on the judged synthetic pools (Synth-Test-S-C, depth-100 run):
ranx orders tied scores its own way, trec_eval (and kgeval) by docno, so a tie-free run keeps the comparison
about the measures.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_scorer, run_engine

from kgeval.data.testsets import pooled_test, sample_test
from kgeval.metrics.evaluate import evaluate, qrels_at_depth
from kgeval.metrics.trec import parse_measure
from kgeval.pools.qrels import export_trec_qrels, export_trec_run
from kgeval.scores.dumps import load_dump, save_ranking

ir_measures = pytest.importorskip("ir_measures")

IR_NAMES = ["P@10", "nDCG@20", "AP@20", "RR", "Judged@10"]
TREC_NAMES = {"P@10": "P_10", "nDCG@20": "ndcg_cut_20", "AP@20": "map_cut_20", "RR": "recip_rank"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory, synth_kg, synth_dir):
    """A dump on the pooled synthetic test set, its kgeval evaluation, and the exported run and qrels files."""
    kg = synth_kg
    d = tmp_path_factory.mktemp("interop")
    seed = sample_test(kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    ts = pooled_test(kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    ranking = run_engine(kg, ts, random_scorer(kg, seed=5, ties=False), k=100)
    save_ranking(ranking, d / "dump", {"model": "rnd"})
    dump = load_dump(d / "dump")
    qrels = qrels_at_depth(dump)
    assert set(np.unique(qrels.rel)) == {0, 1}  # judged non-relevant documents are in the qrels file too
    export_trec_run(dump, kg, d / "run.txt", "rnd")
    export_trec_qrels(list(ranking.questions.qid), qrels, kg, d / "qrels.txt")
    ev = evaluate(dump, qrels, measures=IR_NAMES + list(TREC_NAMES.values()))
    return ev, d / "run.txt", d / "qrels.txt"


@pytest.mark.peer
def test_ir_measures_reads_the_files_and_agrees(exported):
    ev, run, qrels = exported
    measures = [ir_measures.parse_measure(n) for n in IR_NAMES]
    ref = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        measures, ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run)))}
    pq = ev.per_question.set_index("qid")
    for name in IR_NAMES:
        got = pq[name].to_numpy()
        want = np.array([ref[(q, name)] for q in pq.index])
        assert got == pytest.approx(want, abs=1e-12), name
        if name in TREC_NAMES:  # the ir_measures name and trec_eval's name are the same column
            assert np.array_equal(got, pq[TREC_NAMES[name]].to_numpy()), name
    agg = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(str(qrels)),
                                     ir_measures.read_trec_run(str(run)))
    for m in measures:
        assert agg[m] == pytest.approx(ev.summary[str(m)], abs=1e-12), str(m)
    assert 0 < ev.summary["nDCG@20"] < 1 and 0 < ev.summary["Judged@10"] < 1


@pytest.mark.peer
def test_ranx_reads_the_files_and_agrees(exported):
    ranx = pytest.importorskip("ranx")
    ev, run, qrels = exported
    q = ranx.Qrels.from_file(str(qrels), kind="trec")
    r = ranx.Run.from_file(str(run), kind="trec")
    names = {"precision@10": "P_10", "ndcg@20": "ndcg_cut_20", "map@20": "map_cut_20", "mrr": "recip_rank"}
    got = ranx.evaluate(q, r, list(names), make_comparable=True)
    for theirs, ours in names.items():
        assert got[theirs] == pytest.approx(ev.summary[ours], abs=1e-9), theirs


@pytest.mark.peer
@pytest.mark.parametrize("name", IR_NAMES)
def test_measure_aliases_parse_as_ir_measures(name):
    """kgeval's reading of an ir_measures name: the same measure (trec_eval's equivalent) and cutoff."""
    same = {"nDCG": "ndcg_cut", "AP": "map_cut", "RR": "recip_rank", "P": "P", "Judged": "judged"}
    theirs = ir_measures.parse_measure(name)
    func, k, condensed = parse_measure(name)
    assert func.__name__ == same[theirs.NAME] and not condensed
    assert k == theirs.params.get("cutoff")
    assert str(theirs) == name  # ir_measures writes the name back as kgeval's column is called
