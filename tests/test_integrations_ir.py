"""kgeval's test collections in ir_datasets (kgeval.integrations.ir_datasets), on the real data from the mirror:
the collections load after ``import kgeval``, and ranx (Qrels.from_ir_datasets) and ir_measures (calc_aggregate),
given a run with the listed filtered entities removed, compute kgeval's macro values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import needs_mirror


@pytest.mark.parametrize("order", ["kgeval first", "ir_datasets first"])
def test_import_kgeval_registers_the_collections_lazily(order):
    """Importing kgeval does not import ir_datasets; once both are imported, in either order, the collections are
    registered (without loading any data)."""
    import subprocess
    import sys

    first, second = ("kgeval", "ir_datasets") if order == "kgeval first" else ("ir_datasets", "kgeval")
    code = (f"import sys; import {first}; lazy = 'ir_datasets' in sys.modules; import {second}; import ir_datasets; "
            "r = ir_datasets.registry; print(lazy, 'kgeval/wn18rr/test' in r._registered, "
            "type(r['kgeval/fb15k-237/test-s-c/depth-4']).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(order == "ir_datasets first"), "True", "Dataset"]


def _popularity_run(sc, depth=100):
    """Every question the same list: entities by training frequency, ties broken by a distinct fraction (no tied
    scores: each tool orders ties its own way)."""
    kg = sc.load_kg()
    counts = np.bincount(kg.splits["train"][:, [0, 2]].ravel(), minlength=kg.num_entities).astype(float)
    scores = counts + np.arange(kg.num_entities) / (kg.num_entities + 1.0)
    top = np.argsort(-scores)[:depth]
    names = np.asarray(kg.entities, dtype=object)
    q = sc.questions["qid"].to_numpy()
    return pd.DataFrame({"query_id": np.repeat(q, depth), "doc_id": np.tile(names[top], len(q)),
                         "score": np.tile(scores[top], len(q))})


@needs_mirror
@pytest.mark.peer
@pytest.mark.slow
def test_ir_datasets_ranx_and_ir_measures_give_kgevals_macro_values(as_installed):
    ir_datasets = pytest.importorskip("ir_datasets")
    ir_measures = pytest.importorskip("ir_measures")
    ranx = pytest.importorskip("ranx")
    import kgeval  # noqa: F401  (registers the collections: ir_datasets was imported first here)
    from kgeval import evaluate

    ds = ir_datasets.load("kgeval/fb15k-237/test-s-c")
    sc = ds.testset()
    queries = list(ds.queries_iter())
    assert len(queries) == 2883 and queries[0].side in ("head", "tail")
    assert all("?" in q.text for q in queries)  # the asked side is the blank of the template
    qrels = pd.DataFrame(ds.qrels_iter())
    assert len(qrels) == 27568 and int(qrels["relevance"].sum()) == 5476  # as load_testset (docs/guide)
    assert ds.docs_count() == 14541 and next(iter(ds.docs_iter())).text != ""
    filtered = ds.filtered_dict()
    assert set(filtered) == set(sc.questions["qid"])

    run = _popularity_run(sc)
    res = evaluate(run, sc, measures=["RR", "nDCG@20", "P@10", "AP@20"], name="Popularity", bootstrap=20)
    drop = {(q, d) for q, docs in filtered.items() for d in docs}
    keep = [(q, d) not in drop for q, d in zip(run["query_id"], run["doc_id"])]
    cut = run[keep]
    assert len(cut) < len(run)  # the filter removed something
    theirs = ir_measures.calc_aggregate([ir_measures.RR, ir_measures.nDCG @ 20, ir_measures.P @ 10,
                                         ir_measures.AP @ 20], ds.qrels_iter(), cut)
    for ours, m in (("RR", ir_measures.RR), ("nDCG@20", ir_measures.nDCG @ 20), ("P@10", ir_measures.P @ 10),
                    ("AP@20", ir_measures.AP @ 20)):
        assert res.value(ours) == pytest.approx(theirs[m], abs=1e-12), ours
    # without the filter the tools see the known training answers as misses: a different (lower) value
    unfiltered = ir_measures.calc_aggregate([ir_measures.RR], ds.qrels_iter(), run)[ir_measures.RR]
    assert unfiltered < res.value("RR")

    qr = ranx.Qrels.from_ir_datasets("kgeval/fb15k-237/test-s-c")
    rr = ranx.Run.from_df(cut.astype({"query_id": object, "doc_id": object, "score": float}),
                          q_id_col="query_id", doc_id_col="doc_id", score_col="score")
    got = ranx.evaluate(qr, rr, ["mrr", "ndcg@20", "precision@10"])
    assert res.value("RR") == pytest.approx(got["mrr"], abs=1e-12)
    assert res.value("nDCG@20") == pytest.approx(got["ndcg@20"], abs=1e-12)
    assert res.value("P@10") == pytest.approx(got["precision@10"], abs=1e-12)


@needs_mirror
@pytest.mark.slow
def test_every_collection_name_loads(as_installed):
    ir_datasets = pytest.importorskip("ir_datasets")
    import kgeval  # noqa: F401

    d3 = ir_datasets.load("kgeval/fb15k-237/test-s-c/depth-3")
    base = ir_datasets.load("kgeval/fb15k-237/test-s")
    full = ir_datasets.load("kgeval/fb15k-237/test-s-c")
    positives = {k: sum(q.relevance for q in d.qrels_iter()) for k, d in (("s", base), ("d3", d3), ("sc", full))}
    # FB-Test-S-C at depth 3 holds 428 more positive triples than FB-Test-S (2 qrels rows each: head and tail)
    assert positives["d3"] - positives["s"] == 2 * 428 and positives["s"] < positives["d3"] < positives["sc"]
    assert ir_datasets.load("kgeval/fb15k-237/test-o").testset().name == "FB-Test-O"
    assert ir_datasets.load("kgeval/wn18rr/test").testset().dataset == "WN18RR"
