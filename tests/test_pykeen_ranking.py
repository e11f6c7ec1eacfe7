"""The ranking engine against PyKEEN's RankBasedEvaluator on the same model weights (filtered, realistic)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pykeen = pytest.importorskip("pykeen")
from pykeen.datasets import Kinships  # noqa: E402
from pykeen.evaluation import RankBasedEvaluator  # noqa: E402
from pykeen.models import DistMult, TransE  # noqa: E402

from kgeval.data.kg import TAIL, build_kg  # noqa: E402
from kgeval.data.questions import AnswerIndex  # noqa: E402
from kgeval.data.testsets import full_test  # noqa: E402
from kgeval.metrics.evaluate import evaluate, qrels_at_depth  # noqa: E402
from kgeval.scores.dumps import load_dump, save_ranking  # noqa: E402
from kgeval.scores.ranking import docno_ranks, judged_entities, rank_questions  # noqa: E402


@pytest.fixture(scope="module")
def kinships():
    ds = Kinships()
    kg = build_kg("Kinships", ds.training_path, ds.validation_path, ds.testing_path)
    return ds, kg


def pykeen_scorer(model, ds, kg):
    e2id, r2id = ds.training.entity_to_id, ds.training.relation_to_id
    ent_map = torch.tensor([e2id[e] for e in kg.entities])  # our id -> PyKEEN id
    rel_map = torch.tensor([r2id[r] for r in kg.relations])

    def score(queries, side):
        e, r = ent_map[queries[:, 0]], rel_map[queries[:, 1]]
        if side == TAIL:
            s = model.score_t(torch.stack([e, r], 1))
        else:
            s = model.score_h(torch.stack([r, e], 1))
        return s[:, ent_map]

    return score


@pytest.mark.peer
@pytest.mark.parametrize("model_cls", [DistMult, TransE])
def test_mrr_and_hits_equal_pykeen(kinships, model_cls, tmp_path):
    ds, kg = kinships
    torch.manual_seed(0)
    model = model_cls(triples_factory=ds.training, embedding_dim=16, random_seed=0)
    model.eval()
    test = full_test(kg, "test")
    assert len(test) == ds.testing.num_triples
    questions = test.questions(kg)
    ranking = rank_questions(pykeen_scorer(model, ds, kg), questions, judged_entities(test, questions),
                             AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations),
                             docno_ranks(kg.entities), k=10)
    save_ranking(ranking, tmp_path / "d", {"model": model_cls.__name__})
    dump = load_dump(tmp_path / "d")
    ev = evaluate(dump, qrels_at_depth(dump), measures=[])
    ours = ev.summary

    evaluator = RankBasedEvaluator(filtered=True, clear_on_finalize=False)
    res = evaluator.evaluate(model, ds.testing.mapped_triples, batch_size=64, use_tqdm=False,
                             additional_filter_triples=[ds.training.mapped_triples, ds.validation.mapped_triples])
    # PyKEEN's realistic ranks, both sides; its own aggregates are float32, so aggregate them in float64 too
    theirs = np.concatenate([np.concatenate(evaluator.ranks[side, "realistic"]) for side in ("head", "tail")])
    ours_ranks = ev.per_answer["rank"].to_numpy(dtype=float)
    assert np.array_equal(np.sort(ours_ranks), np.sort(theirs.astype(float)))
    assert ours["micro_mrr"] == pytest.approx(np.mean(1.0 / theirs.astype(float)), abs=1e-9)
    assert ours["micro_mrr"] == pytest.approx(res.get_metric("both.realistic.inverse_harmonic_mean_rank"),
                                              abs=1e-6)
    assert ours["micro_mr"] == pytest.approx(res.get_metric("both.realistic.arithmetic_mean_rank"), abs=1e-4)
    for k in (1, 3, 5, 10):
        assert ours[f"micro_hits@{k}"] == pytest.approx(np.mean(theirs <= k), abs=1e-9)
        assert ours[f"micro_hits@{k}"] == pytest.approx(res.get_metric(f"both.realistic.hits_at_{k}"), abs=1e-6)
    assert np.isfinite(ours["macro_mrr"])
