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


def test_unknown_relation_refused_unknown_entity_accepted(trained, synth_kg, tmp_path, monkeypatch):
    folder, *_ = trained
    other = synth_kg.__class__(synth_kg.name, synth_kg.entities, synth_kg.relations[:-1] + ["/r/new"],
                               synth_kg.splits)
    with pytest.raises(InputError, match=r"does not know 1 of the 16 relations of Synth \(first: '/r/new'\)"):
        load_scorer(System("x", "pykeen", folder, trust_pickle=True), other)
    renamed = synth_kg.__class__(synth_kg.name, synth_kg.entities[:-1] + ["/m/new"], synth_kg.relations,
                                 synth_kg.splits)
    scorer = load_scorer(System("x", "pykeen", folder, trust_pickle=True), renamed)
    assert scorer.unknown.sum() == 1 and scorer.unknown[-1]
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


# ---- entities the model does not know: ranked last, hand-checked ---------------------------------------------
class FixedModel(torch.nn.Module):
    """A stand-in for a PyKEEN model: the same scores for every query, over PyKEEN's own ids."""

    def __init__(self, scores):
        super().__init__()
        self.scores = torch.tensor(scores)

    def predict_t(self, hr):
        return self.scores.expand(len(hr), -1).clone()

    def predict_h(self, rt):
        return self.scores.expand(len(rt), -1).clone()


def _tiny_dump(tmp_path, scorer):
    from conftest import tiny_kg

    from kgeval.data.questions import save_questions

    kg = tiny_kg()
    ts = full_test(kg, "T")
    files = {"tsv": str(tmp_path / "T.tsv"), "questions": str(tmp_path / "T.questions.tsv")}
    ts.save(files["tsv"], kg)
    save_questions(ts.questions(kg), files["questions"], kg)
    dump_system(System("m", "pykeen", tmp_path), kg, "T", files, tmp_path / "d", k=5, scorer=scorer)
    dump = load_dump(tmp_path / "d")
    return kg, dump, evaluate(dump, qrels_at_depth(dump), measures=[]).per_answer


def test_unknown_entities_rank_last_hand_checked(tmp_path):
    """tiny_kg: a b c d e; train a-r-b, a-r-c, b-s-c; valid c-r-d; test a-r-d, d-s-e. A model trained on the
    training split knows a, b, c (PyKEEN ids c=0, a=1, b=2) and scores them c 0.3, a 0.1, b 0.2."""
    entity_map = np.array([1, 2, 0, -1, -1])  # kgeval id -> PyKEEN id; d, e unknown
    scorer = pykeen_io.PyKEENScorer(FixedModel([0.3, 0.1, 0.2]), entity_map, np.array([0, 1]))
    kg, dump, pa = _tiny_dump(tmp_path, scorer)
    ents = np.array(kg.entities)
    got = {(str(side), str(ents[e])): r for side, e, r in zip(pa["side"], pa["entity"], pa["rank"])}
    # (a, r, ?) -> d: b and c are filtered (other answers of a-r); a scores 0.1, d and e tie at the floor
    # 0.1 - 1: d is after a, tied with e: optimistic 2, pessimistic 3, realistic 2.5
    # (?, r, d) -> a: a question about unknown d, every candidate ties; c is filtered (valid c-r-d): a, b, d, e
    # tie, realistic (1 + 4) / 2 = 2.5
    # (d, s, ?) -> e and (?, s, e) -> d: questions about unknown entities, nothing filtered: 5 tie, rank 3
    assert len(pa) == 4
    assert got == {("tail", "d"): 2.5, ("head", "a"): 2.5, ("tail", "e"): 3.0, ("head", "d"): 3.0}
    assert pykeen_io.unknown_answers(scorer.unknown, dump, pa) == 4
    # only e unknown: the two answers of the triple d-s-e are affected, those of a-r-d are not
    scorer2 = pykeen_io.PyKEENScorer(FixedModel([0.3, 0.1, 0.2, 0.05]), np.array([1, 2, 0, 3, -1]),
                                     np.array([0, 1]))
    _, dump2, pa2 = _tiny_dump(tmp_path / "two", scorer2)
    assert pykeen_io.unknown_answers(scorer2.unknown, dump2, pa2) == 2


def test_model_of_the_training_split_is_evaluated(trained, synth_kg, tmp_path, capsys):
    """A model whose label map lacks entities (as one trained on the training split alone) is evaluated: the
    command says how many answers involve an unknown entity, in its output and in summary.md."""
    import gzip
    import shutil as sh

    import pandas as pd

    from kgeval.external.evaluate import evaluate_systems

    folder, *_ = trained
    copy = tmp_path / "pk"
    sh.copytree(folder, copy)
    path = copy / "training_triples" / "entity_to_id.tsv.gz"
    labels = pd.read_csv(path, sep="\t", dtype={"label": str})
    kg = synth_kg
    ts = full_test(kg, "Synth-Test-O")
    drop = set(kg.entities[e] for e in ts.triples[:3, 2])  # tails of the first three test triples
    with gzip.open(path, "wt") as fh:
        labels[~labels["label"].isin(drop)].to_csv(fh, sep="\t", index=False)
    files = {"tsv": str(tmp_path / "O.tsv"), "questions": str(tmp_path / "O.questions.tsv")}
    ts.save(files["tsv"], kg)
    from kgeval.data.questions import save_questions

    save_questions(ts.questions(kg), files["questions"], kg)
    system = parse_system(str(copy), ["Synth-Test-O"], name="pk", trust_pickle=True)
    table, metas = evaluate_systems([system], kg, {"Synth-Test-O": files}, tmp_path / "out", [], depth_of=lambda t: 20,
                                    repeats=20)
    # brute force: test triples with an unknown head or tail give two affected answers each
    ids = np.array([kg.entities[i] in drop for i in range(kg.num_entities)])
    expected = int(2 * (ids[ts.triples[:, 0]] | ids[ts.triples[:, 2]]).sum())
    assert metas[0]["unknown_entities"] == len(drop) and metas[0]["unknown_answers"] == expected > 0
    md = (tmp_path / "out" / "summary.md").read_text()
    assert f"pk on Synth-Test-O: {expected:,} of {metas[0]['answers']:,} answers ({len(drop)} entities unknown)" in md
    assert np.isfinite(table["micro_mrr"].iloc[0])
