"""Workflow steps of the metric stage: the published result tables of one test set, from the score dumps.

Writes, per test set, in the layout of the paper's result release:

* ``evaluation.csv``: one row per system (column ``System``), micro, macro and trec measures;
* ``lp_per_rel_type.csv``: micro metrics per ``QuestionType`` (head/tail) × ``RelationType`` (category);
* ``per_question.parquet`` / ``per_answer.parquet``: the per-question (macro, trec) and per-answer (micro)
  values of every system, which the stability and significance analyses resample;
* for a pooled test set, ``pooling_depth.csv`` (the same columns plus ``Depth``, 0 … max depth) and
  ``lp_sample_rel_dist.csv`` (micro metrics re-weighted to the sample's relation distribution, Table 4).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..data.testsets import TestSet
from ..io import atomic_path, write_csv
from ..scores.dumps import Dump, load_dump
from .evaluate import Evaluation, Qrels, evaluate, per_category, qrels_at_depth
from .rank_based import RankBasedMetric, study_metrics

log = logging.getLogger(__name__)


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False, compression="zstd")


def _load(dumps: dict[str, str]) -> dict[str, Dump]:
    return {system: load_dump(path) for system, path in dumps.items()}


def summary_frame(results: dict[str, dict[str, float]], extra: dict[str, object] | None = None) -> pd.DataFrame:
    rows = [{"System": system, **(extra or {}), **summary} for system, summary in results.items()]
    return pd.DataFrame(rows)


def evaluate_systems(loaded: dict[str, Dump], qrels_for, kg: KnowledgeGraph, measures: list[str] | None,
                     metrics: list[RankBasedMetric] | None = None,
                     relation_weights: dict[int, float] | None = None, families: bool = True) -> dict[str, Evaluation]:
    """Every system's evaluation; the metric families (adjusted, z-scored, unified) are included so that
    every analysis that reads these tables covers them too."""
    return {system: evaluate(dump, qrels_for(dump), kg.relation_category, measures, relation_weights,
                             metrics=metrics, families=families) for system, dump in loaded.items()}


def evaluate_testset(dumps: dict[str, str], kg_path: str | Path, evaluation_csv: str | Path,
                     per_category_csv: str | Path, per_question_out: str | Path, per_answer_out: str | Path,
                     measures: list[str] | None = None) -> pd.DataFrame:
    """The metric tables of one test set (all judgments) for every system."""
    kg = KnowledgeGraph.load(kg_path)
    loaded = _load(dumps)
    evals = evaluate_systems(loaded, qrels_at_depth, kg, measures)
    table = summary_frame({s: e.summary for s, e in evals.items()})
    write_csv(table, evaluation_csv)
    cats = pd.concat([per_category(e).assign(System=s) for s, e in evals.items()], ignore_index=True)
    write_csv(cats[["System"] + [c for c in cats.columns if c != "System"]], per_category_csv)
    write_parquet(pd.concat([e.per_question.assign(System=s) for s, e in evals.items()], ignore_index=True),
                  per_question_out)
    write_parquet(pd.concat([e.per_answer.assign(System=s) for s, e in evals.items()], ignore_index=True),
                  per_answer_out)
    log.info("evaluated %d systems: %s", len(table), table[["System", "micro_mrr", "macro_mrr"]].to_dict("records"))
    return table


def pooling_depth_table(dumps: dict[str, str], kg_path: str | Path, out: str | Path, max_depth: int,
                        measures: list[str] | None = None, qrels_by_depth=None,
                        items_out: tuple[str, str] | None = None) -> pd.DataFrame:
    """Metrics of every system at every pooling depth 0 … max_depth (published depths unless
    ``qrels_by_depth(dump, d)`` gives other judgments, e.g. rebuilt pools). ``items_out`` = (per-answer,
    per-question) parquet paths also receive every depth's per-item values (column ``Depth``)."""
    kg = KnowledgeGraph.load(kg_path)
    loaded = _load(dumps)
    qrels_by_depth = qrels_by_depth or qrels_at_depth
    frames, answers, questions = [], [], []
    for d in range(max_depth + 1):
        evals = evaluate_systems(loaded, lambda dump, d=d: qrels_by_depth(dump, d), kg, measures)
        frames.append(summary_frame({s: e.summary for s, e in evals.items()}, {"Depth": d}))
        if items_out:
            answers += [e.per_answer.assign(System=s, Depth=d) for s, e in evals.items()]
            questions += [e.per_question.assign(System=s, Depth=d) for s, e in evals.items()]
    table = pd.concat(frames, ignore_index=True)
    write_csv(table, out)
    if items_out:
        write_parquet(pd.concat(answers, ignore_index=True), items_out[0])
        write_parquet(pd.concat(questions, ignore_index=True), items_out[1])
    return table


def relation_shares(triples: np.ndarray) -> dict[int, float]:
    rel, counts = np.unique(triples[:, 1], return_counts=True)
    return {int(r): c / counts.sum() for r, c in zip(rel, counts)}


def reweighted_table(dumps: dict[str, str], kg_path: str | Path, reference_testset: str | Path,
                     out: str | Path) -> pd.DataFrame:
    """Micro metrics with each relation weighted by its share in the reference test set (Table 4)."""
    kg = KnowledgeGraph.load(kg_path)
    ref = TestSet.load(reference_testset, kg)
    weights = relation_shares(ref.positives)
    loaded = _load(dumps)
    evals = evaluate_systems(loaded, qrels_at_depth, kg, measures=[], relation_weights=weights)
    table = summary_frame({s: {k: v for k, v in e.summary.items() if k.startswith("micro_")}
                           for s, e in evals.items()})
    write_csv(table, out)
    return table


def metric_names(max_k: int = 10) -> list[str]:
    return [f"micro_{m.key}" for m in study_metrics(max_k)] + [f"macro_{m.key}" for m in study_metrics(max_k)]


__all__ = ["Qrels", "evaluate_testset", "pooling_depth_table", "reweighted_table", "relation_shares"]
