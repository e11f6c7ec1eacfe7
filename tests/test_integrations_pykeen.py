"""kgeval's evaluator inside PyKEEN (kgeval.integrations.pykeen): a model trained by PyKEEN's pipeline in the
test, evaluated by pipeline(..., evaluator="kgeval"), gives the values kgeval evaluate gives for the same model
saved to a folder; an early stopper gets PyKEEN's validation metrics and is refused kgeval's test labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pykeen = pytest.importorskip("pykeen")
from pykeen.pipeline import pipeline  # noqa: E402
from pykeen.triples import TriplesFactory  # noqa: E402

from kgeval.cli import main as cli_main  # noqa: E402
from kgeval.errors import KgevalError  # noqa: E402

TESTSETS = ["Synth-Test-O", "Synth-Test-S", "Synth-Test-S-C"]


def _factories(kg):
    e2id = {e: i for i, e in enumerate(sorted(kg.entities))}  # PyKEEN's own numbering, not kgeval's
    r2id = {r: i for i, r in enumerate(sorted(kg.relations))}

    def factory(split):
        labeled = np.array(kg.decode(kg.splits[split]), dtype=str)
        return TriplesFactory.from_labeled_triples(labeled, entity_to_id=e2id, relation_to_id=r2id)

    return factory("train"), factory("valid"), factory("test")


def _kwargs(workdir, train, **extra):
    return dict(model="DistMult", model_kwargs={"embedding_dim": 16}, random_seed=0, device="cpu",
                training_kwargs={"num_epochs": 2, "batch_size": 256, "use_tqdm": False},
                evaluator="kgeval", evaluator_kwargs={"triples_factory": train, "testsets": TESTSETS,
                                                      "workdir": str(workdir), "config": "config/tiny.yaml"},
                evaluation_kwargs={"use_tqdm": False}, **extra)


@pytest.mark.peer
def test_pipeline_with_the_kgeval_evaluator_equals_kgeval_evaluate(workdir, synth_kg, tmp_path):
    import kgeval.integrations.pykeen as integration

    train, valid, test = _factories(synth_kg)
    result = pipeline(training=train, validation=valid, testing=test, **_kwargs(workdir, train))
    assert isinstance(result.metric_results, integration.KgevalMetricResults)
    got = result.metric_results.to_flat_dict()
    folder = tmp_path / "distmult"
    result.save_to_directory(folder)
    assert cli_main(["evaluate", str(folder), "--trust-pickle", "--name", "pykeen", "--dataset", "Synth",
                     "--testsets", ",".join(TESTSETS), "--config", str(workdir / "config/tiny.yaml"),
                     "--schema", str(workdir / "config/schema.yaml"), "--resources", str(workdir / "resources"),
                     "--out", str(tmp_path / "eval"), "--bootstrap", "20", "--results",
                     str(tmp_path / "none")]) == 0
    table = pd.read_csv(tmp_path / "eval" / "evaluation.csv").set_index("TestSet")
    compared = 0
    for t in TESTSETS:
        for column in ("micro_mrr", "macro_mrr", "micro_hits@10", "macro_hits@10", "micro_mr", "ndcg_cut_20",
                       "map_cut_20", "P_10"):
            assert got[f"{t}.{column}"] == pytest.approx(table.loc[t, column], rel=1e-9, abs=1e-9), (t, column)  # csv: 10 digits
            compared += 1
    assert compared == 24 and 0 < got["Synth-Test-O.micro_mrr"] < 1
    # the pooled test set: Judged@10 and the unjudged share of the top 10
    sc = "Synth-Test-S-C"
    assert got[f"{sc}.unjudged_10"] == pytest.approx(table.loc[sc, "unjudged_10"], abs=1e-9)
    assert got[f"{sc}.judged_10"] == pytest.approx(1 - got[f"{sc}.unjudged_10"], abs=1e-15)
    assert 0 < got[f"{sc}.judged_10"] < 1
    assert result.metric_results.get_metric(f"{sc}.macro_mrr") == got[f"{sc}.macro_mrr"]


def test_early_stopping_uses_validation_and_refuses_test_labels(workdir, synth_kg):
    import kgeval.integrations.pykeen  # noqa: F401

    train, valid, test = _factories(synth_kg)
    stopper = {"frequency": 1, "patience": 1}
    result = pipeline(training=train, validation=valid, testing=test, stopper="early",
                      stopper_kwargs={**stopper, "metric": "hits_at_10"}, **_kwargs(workdir, train))
    assert len(result.stopper.results) >= 1 and 0 <= result.stopper.results[0] <= 1  # PyKEEN's, on validation
    assert "Synth-Test-S-C.macro_mrr" in result.metric_results.to_flat_dict()  # the final evaluation: kgeval's
    with pytest.raises(KgevalError, match="Synth-Test-S-C's judgments are test labels"):
        pipeline(training=train, validation=valid, testing=test, stopper="early",
                 stopper_kwargs={**stopper, "metric": "Synth-Test-S-C.macro_mrr"}, **_kwargs(workdir, train))


def test_the_evaluator_needs_the_models_labels():
    from kgeval.integrations.pykeen import KgevalEvaluator

    with pytest.raises(KgevalError, match="triples_factory"):
        KgevalEvaluator()


@pytest.mark.slow
@pytest.mark.peer
def test_on_the_real_fb_test_sets(as_installed):
    """FB-Test-O, FB-Test-S and FB-Test-S-C from the mirror: the evaluator's values, Judged@10 and the unjudged
    share on S-C included, equal kgeval evaluate's on the same model saved to a folder."""
    from conftest import MIRROR

    if MIRROR is None:
        pytest.skip("no data mirror (set KGEVAL_MIRROR)")
    import kgeval.integrations.pykeen  # noqa: F401
    from kgeval import api, home

    testsets = ["FB-Test-O", "FB-Test-S", "FB-Test-S-C"]
    kg = api.load_testset("FB-Test-S-C").load_kg()
    train, valid, test = _factories(kg)
    result = pipeline(training=train, validation=valid, testing=test, model="DistMult",
                      model_kwargs={"embedding_dim": 8}, random_seed=0, device="cpu",
                      training_kwargs={"num_epochs": 1, "batch_size": 16384, "use_tqdm": False},
                      evaluator="kgeval", evaluator_kwargs={"triples_factory": train, "testsets": testsets},
                      evaluation_kwargs={"use_tqdm": False})
    got = result.metric_results.to_flat_dict()
    result.save_to_directory(as_installed / "distmult")
    assert cli_main(["evaluate", "distmult", "--trust-pickle", "--dataset", "FB15k-237", "--testsets",
                     ",".join(testsets), "--resources", str(home.data_home()), "--out", "eval", "--bootstrap",
                     "20", "--results", "none", "--reference", str(as_installed / "none")]) == 0
    table = pd.read_csv(as_installed / "eval" / "evaluation.csv").set_index("TestSet")
    for t in testsets:
        for column in ("micro_mrr", "macro_mrr", "micro_hits@10", "macro_hits@10", "ndcg_cut_20", "unjudged_10"):
            assert got[f"{t}.{column}"] == pytest.approx(table.loc[t, column], rel=1e-9, abs=1e-9), (t, column)
    assert got["FB-Test-S-C.judged_10"] == pytest.approx(1 - table.loc["FB-Test-S-C", "unjudged_10"], abs=1e-9)


def test_kgevals_dataset_for_pykeen_has_kgevals_ids(workdir, synth_kg):
    """The dataset class PyKEEN loads through the pykeen.datasets entry point: the splits with kgeval's ids."""
    from kgeval.integrations.pykeen import KgevalFB15k237

    class Synth(KgevalFB15k237):
        testset = "Synth-Test-O"

    ds = Synth(workdir=workdir, config="config/tiny.yaml")
    assert ds.training.entity_to_id == {e: i for i, e in enumerate(synth_kg.entities)}
    for split, factory in (("train", ds.training), ("valid", ds.validation), ("test", ds.testing)):
        np.testing.assert_array_equal(np.unique(factory.mapped_triples.numpy(), axis=0),
                                      np.unique(synth_kg.splits[split], axis=0))  # PyKEEN sorts them


def test_the_evaluators_arguments_are_checked():
    from kgeval.integrations.pykeen import KgevalEvaluator

    maps = {"entity_to_id": {"a": 0}, "relation_to_id": {"r": 0}}
    for kwargs, message in (({"triples_factory": "train"}, "triples_factory: expected the training TriplesFactory"),
                            ({"testsets": [], **maps}, "testsets=\\[\\]"),
                            ({"testsets": "FB-Test-O", **maps}, "non-empty list"),
                            ({"k": -5, **maps}, "k=-5"), ({"k": 0, **maps}, "k=0"), ({"k": True, **maps}, "k=True")):
        with pytest.raises(KgevalError, match=message):
            KgevalEvaluator(**kwargs)


def test_a_factory_that_is_not_the_datasets_is_refused(workdir, synth_kg):
    """20 training entities missing from the factory, or its ids permuted against the model's: refused with one
    line, never answered silently with PyKEEN's own metrics (the early stopper's fallback)."""
    from types import SimpleNamespace

    from pykeen.models import DistMult

    from kgeval.integrations.pykeen import KgevalEvaluator

    train, valid, test = _factories(synth_kg)
    model = DistMult(triples_factory=train, embedding_dim=8, random_seed=0)
    kw = {"testsets": TESTSETS, "workdir": str(workdir), "config": "config/tiny.yaml"}
    entities = sorted(train.entity_to_id)
    short = SimpleNamespace(entity_to_id={e: i for e, i in train.entity_to_id.items() if e not in entities[:20]},
                            relation_to_id=train.relation_to_id)
    with pytest.raises(KgevalError, match="lacks 20 entities"):
        KgevalEvaluator(triples_factory=short, **kw).evaluate(model, test.mapped_triples)
    ids = np.random.default_rng(0).permutation(len(entities))
    labeled = np.array(synth_kg.decode(synth_kg.splits["train"]), dtype=str)
    permuted = TriplesFactory.from_labeled_triples(labeled, entity_to_id=dict(zip(entities, ids.tolist())),
                                                   relation_to_id=train.relation_to_id)
    for mapped in (test.mapped_triples, valid.mapped_triples):
        with pytest.raises(KgevalError, match="neither the test nor the validation triples"):
            KgevalEvaluator(triples_factory=permuted, **kw).evaluate(model, mapped)
    # the right factory: the validation triples get PyKEEN's metrics (early stopping), as before
    out = KgevalEvaluator(triples_factory=train, **kw).evaluate(model, valid.mapped_triples, use_tqdm=False)
    assert 0 <= out.get_metric("hits_at_10") <= 1
