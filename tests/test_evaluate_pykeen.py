"""A PyKEEN model saved by ``save_to_directory`` as a ``kgeval evaluate`` system: kgeval's micro MRR (filtered,
realistic, both sides) equals PyKEEN's own ``RankBasedEvaluator`` on the same triples."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import torch

from kgeval.data.testsets import full_test
from kgeval.errors import InputError
from kgeval.external import pykeen as pykeen_io
from kgeval.external.systems import System, dump_system, load_scorer, parse_system
from kgeval.metrics.evaluate import evaluate, qrels_at_depth
from kgeval.scores.dumps import load_dump

pykeen = pytest.importorskip("pykeen")
from pykeen.evaluation import RankBasedEvaluator  # noqa: E402
from pykeen.pipeline import pipeline  # noqa: E402
from pykeen.triples import TriplesFactory  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory, synth_kg):
    """A DistMult trained for three epochs on the synthetic graph, saved as PyKEEN saves it. The factories share
    label maps that PyKEEN numbers its own way (sorted labels), not kgeval's."""
    kg = synth_kg
    e2id = {e: i for i, e in enumerate(sorted(kg.entities))}
    r2id = {r: i for i, r in enumerate(sorted(kg.relations))}

    def factory(split):
        labeled = np.array(kg.decode(kg.splits[split]), dtype=str)
        return TriplesFactory.from_labeled_triples(labeled, entity_to_id=e2id, relation_to_id=r2id)

    train, valid, test = factory("train"), factory("valid"), factory("test")
    result = pipeline(training=train, validation=valid, testing=test, model="DistMult",
                      model_kwargs={"embedding_dim": 16}, training_kwargs={"num_epochs": 3, "batch_size": 256,
                                                                           "use_tqdm": False},
                      evaluation_kwargs={"use_tqdm": False}, random_seed=0, device="cpu")
    folder = tmp_path_factory.mktemp("pk") / "distmult"
    result.save_to_directory(folder)
    return folder, result.model, train, valid, test


@pytest.mark.peer
def test_micro_mrr_equals_pykeen_evaluator(trained, synth_kg, tmp_path):
    folder, model, train, valid, test = trained
    kg = synth_kg
    ts = full_test(kg, "Synth-Test-O")
    files = {"tsv": tmp_path / "O.tsv", "questions": tmp_path / "O.questions.tsv"}
    ts.save(files["tsv"], kg)
    from kgeval.data.questions import save_questions

    save_questions(ts.questions(kg), files["questions"], kg)
    with pytest.raises(InputError, match=r"trained_model.pkl: a PyKEEN model is a full pickle.*--trust-pickle"):
        parse_system(str(folder), ["Synth-Test-O"])
    system = parse_system(str(folder), ["Synth-Test-O"], trust_pickle=True)
    assert system.kind == "pykeen" and system.name == "distmult"
    meta = dump_system(system, kg, "Synth-Test-O", {k: str(v) for k, v in files.items()}, tmp_path / "d", k=50,
                       scorer=load_scorer(system, kg))
    assert meta["run_complete"]
    dump = load_dump(tmp_path / "d")
    ours = evaluate(dump, qrels_at_depth(dump), measures=[]).summary

    evaluator = RankBasedEvaluator(filtered=True, clear_on_finalize=False)
    res = evaluator.evaluate(model, test.mapped_triples, batch_size=256, use_tqdm=False,
                             additional_filter_triples=[train.mapped_triples, valid.mapped_triples])
    theirs = np.concatenate([np.concatenate(evaluator.ranks[side, "realistic"]) for side in ("head", "tail")])
    assert len(theirs) == 2 * len(ts) == len(evaluate(dump, qrels_at_depth(dump), measures=[]).per_answer)
    assert ours["micro_mrr"] == pytest.approx(res.get_metric("both.realistic.inverse_harmonic_mean_rank"),
                                              abs=1e-6)
    assert ours["micro_mrr"] == pytest.approx(np.mean(1.0 / theirs.astype(np.float64)), abs=1e-9)
    assert ours["micro_hits@10"] == pytest.approx(res.get_metric("both.realistic.hits_at_10"), abs=1e-6)


def test_unknown_label_and_missing_pykeen(trained, synth_kg, tmp_path, monkeypatch):
    folder, *_ = trained
    other = synth_kg.__class__(synth_kg.name, synth_kg.entities[:-1] + ["/m/new"], synth_kg.relations,
                               synth_kg.splits)
    with pytest.raises(InputError, match=r"does not know 1 of the 241 entities of Synth \(first: '/m/new'\)"):
        load_scorer(System("x", "pykeen", folder, trust_pickle=True), other)
    real_import = builtins.__import__

    def no_pykeen(name, *args, **kwargs):
        if name == "pykeen" or name.startswith("pykeen."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pykeen)
    with pytest.raises(pykeen_io.PyKEENMissingError, match=r'pip install "kgeval\[pykeen\]"'):
        pykeen_io.load_pykeen(folder, synth_kg)


def test_scores_are_in_kgeval_entity_order(trained, synth_kg):
    folder, model, train, *_ = trained
    scorer = pykeen_io.load_pykeen(folder, synth_kg)
    q = torch.tensor([[3, 1], [10, 2]])
    s = scorer.score_questions(q, 1)
    e2id, r2id = train.entity_to_id, train.relation_to_id
    e, r = synth_kg.entities, synth_kg.relations
    hr = torch.tensor([[e2id[e[3]], r2id[r[1]]], [e2id[e[10]], r2id[r[2]]]])
    ref = model.predict_t(hr)[:, [e2id[x] for x in e]]
    assert torch.equal(s, ref)
