"""Workflow step of the score stage: rank every question of a test set with one model and store the dump."""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from ..data.kg import KnowledgeGraph
from ..data.questions import AnswerIndex, load_questions
from ..data.testsets import TestSet
from ..io import sha256_file
from ..models.checkpoint import load_model, resolve_device
from ..progress import Progress
from .dumps import save_ranking
from .ranking import docno_ranks, judged_entities, rank_questions

log = logging.getLogger(__name__)


def dump_scores(model_path: str | Path, kg_path: str | Path, testset_path: str | Path,
                questions_path: str | Path, out: str | Path, model_name: str, testset_name: str, k: int = 1000,
                keep_scores: bool = False, memory_budget_mb: float = 1024, device: str | None = "auto",
                compile: bool = False) -> None:
    kg = KnowledgeGraph.load(kg_path)
    dev = resolve_device(device)
    model = load_model(model_path, kg, device=dev, compile_distances=compile)
    dump_model_scores(model, kg, testset_path, questions_path, out, model_name, testset_name, k, keep_scores,
                      memory_budget_mb, dev, {"model_sha256": sha256_file(model_path)})


def dump_model_scores(model, kg: KnowledgeGraph, testset_path: str | Path, questions_path: str | Path,
                      out: str | Path, model_name: str, testset_name: str, k: int = 1000, keep_scores: bool = False,
                      memory_budget_mb: float = 1024, device: torch.device | None = None,
                      meta: dict | None = None) -> None:
    """The dump of any model object with ``score_questions(queries, side)`` (a kgeval model, or an adapter such
    as ``kgeval.external.pykeen``'s) on one test set; ``meta`` adds to the dump's meta.json."""
    dev = device or torch.device("cpu")
    ts = TestSet.load(testset_path, kg, testset_name)
    questions = load_questions(questions_path, kg)
    judged = judged_entities(ts, questions)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    progress = Progress(len(questions), f"{model_name} on {testset_name}", unit="questions", logger=log)

    def scorer(queries, side):
        # the engine asks for one batch of questions at a time: counting them here reports its progress
        scores = model.score_questions(queries, side)
        progress.update(len(queries))
        return scores

    ranking = rank_questions(scorer, questions, judged, known, docno_ranks(kg.entities), k=k,
                             keep_scores=keep_scores, memory_budget_mb=memory_budget_mb, device=dev,
                             model_name=model_name)
    progress.close()
    save_ranking(ranking, out, {"model": model_name, "test_set": testset_name, "dataset": kg.name,
                                "dataset_fingerprint": kg.fingerprint(), **(meta or {})})
    log.info("%s on %s: %d questions, %d judged entities", model_name, testset_name, len(questions), len(judged))


def split_ranks_step(model_path: str | Path, kg_path: str | Path, out: str | Path, split: str = "test",
                     device: str | None = "auto") -> None:
    """Filtered ranks of every triple of a split, both sides (:func:`kgeval.scores.split_ranks.split_ranks`),
    as a parquet file."""
    from ..io import atomic_path
    from .split_ranks import split_ranks

    kg = KnowledgeGraph.load(kg_path)
    dev = resolve_device(device)
    model = load_model(model_path, kg, device=dev)
    model.eval()
    ranks = split_ranks(model, kg, split)
    with atomic_path(out) as tmp:
        ranks.to_parquet(tmp, index=False)
    log.info("%s on %s %s: %d ranking tasks, MRR %.4f", Path(model_path).parent.name, kg.name, split, len(ranks),
             float((1.0 / ranks["rank"]).mean()))
