"""Baselines written as TREC run files: outside systems that need no training, to try ``kgeval evaluate``,
``place`` and a sampling plan on the real test sets, and to give a new model a floor to beat.

* ``popularity``: for a question (side, entity, relation) the entities ranked by how often they fill that side of
  that relation in the training triples, then by how often they occur in training at all, then by id;
* ``frequency``: the entities ranked by how often they occur in training at all, then by id, the same list for
  every question (the relation is ignored).

The score is the count plus the overall frequency as a fraction below one, so that trec_eval's score order (score
descending, then docno descending) is the ranking; ties in both counts keep the entity-id order only in the rank
column, which kgeval reads. Every question of one (side, relation) gets the same list; kgeval removes the
question's known answers itself, so the lists are not filtered.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import HEAD, KnowledgeGraph
from ..data.questions import Questions
from ..progress import Progress

KINDS = ("popularity", "frequency")


def overall_frequency(kg: KnowledgeGraph) -> np.ndarray:
    """(entities,) how often each entity occurs as head or tail of a training triple."""
    train = kg.splits["train"]
    return np.bincount(train[:, [0, 2]].ravel(), minlength=kg.num_entities).astype(float)


def baseline_scores(kg: KnowledgeGraph, kind: str) -> np.ndarray:
    """(2, relations, entities) scores of ``kind``: side-and-relation counts (popularity only) plus the overall
    frequency scaled below one, so the overall frequency breaks the ties of the counts."""
    if kind not in KINDS:
        raise ValueError(f"unknown baseline {kind!r} (expected one of {', '.join(KINDS)})")
    overall = overall_frequency(kg)
    scores = np.zeros((2, kg.num_relations, kg.num_entities))
    if kind == "popularity":
        train = kg.splits["train"]
        np.add.at(scores, (HEAD, train[:, 1], train[:, 0]), 1.0)
        np.add.at(scores, (1 - HEAD, train[:, 1], train[:, 2]), 1.0)
        return scores + overall / (overall.max() + 1.0)
    return scores + overall  # frequency: the same list for every (side, relation)


def run_table(kg: KnowledgeGraph, qs: Questions, scores: np.ndarray, order: np.ndarray, tag: str) -> pd.DataFrame:
    """The run of every question (``qid Q0 docno rank score tag``), the top of its (side, relation) list."""
    top = order[qs.side, qs.relation]  # (questions, depth)
    top_scores = np.take_along_axis(scores[qs.side, qs.relation], top, axis=1)
    n, k = top.shape
    return pd.DataFrame({"qid": np.repeat(np.asarray(qs.qid), k), "Q0": "Q0",
                         "docno": np.asarray(kg.entities)[top.ravel()], "rank": np.tile(np.arange(1, k + 1), n),
                         "score": np.char.mod("%.6f", top_scores.ravel()), "tag": tag})


def write_baseline_runs(kg: KnowledgeGraph, questions: Mapping[str, Questions], kind: str, folder: Path,
                        depth: int, tag: str) -> dict[str, tuple[Path, int]]:
    """``folder/<test set>.run.gz`` for every test set of ``questions``, the top ``depth`` entities of the baseline
    per question; returns test set -> (file, lines). Reports progress per test set (FB-Test-O's 2.3 M lines take
    tens of seconds on a loaded 2-core machine)."""
    scores = baseline_scores(kg, kind)
    # the top `depth` of every (side, relation), best first; ties by entity id (stable sort of -score)
    order = np.argsort(-scores, axis=2, kind="stable")[:, :, :depth]
    written = {}
    with Progress(len(questions), f"{kind} runs", unit="test sets") as progress:
        for name, qs in questions.items():
            run = run_table(kg, qs, scores, order, tag)
            path = folder / f"{name}.run.gz"
            # no name, mtime 0: the same config gives the same bytes (gzip would stamp the file's name and time)
            with open(path, "wb") as raw, gzip.GzipFile("", "wb", 6, raw, mtime=0) as gz:
                gz.write(run.to_csv(sep=" ", header=False, index=False).encode())
            written[name] = (path, len(run))
            progress.update(1, last=name)
    return written
