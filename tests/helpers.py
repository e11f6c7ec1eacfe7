"""Helpers shared by several test modules: a random scorer, the ranking engine on a test set, a TREC run writer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from kgeval.data.kg import TAIL, KnowledgeGraph
from kgeval.data.questions import AnswerIndex
from kgeval.data.testsets import TestSet
from kgeval.scores.ranking import docno_ranks, judged_entities, rank_questions


def run_engine(kg: KnowledgeGraph, ts: TestSet, scorer, k=10, **kw):
    questions = ts.questions(kg)
    judged = judged_entities(ts, questions)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    return rank_questions(scorer, questions, judged, known, docno_ranks(kg.entities), k=k, **kw)


def random_scorer(kg: KnowledgeGraph, seed=0, ties=False):
    g = torch.Generator().manual_seed(seed)
    ent = torch.randn(kg.num_entities, 4, generator=g)
    rel = torch.randn(2 * kg.num_relations, 4, generator=g)

    def score(queries, side):
        e, r = queries[:, 0], queries[:, 1] + (0 if side == TAIL else kg.num_relations)
        s = (ent[e] * rel[r]) @ ent.T
        return torch.round(s * 2) / 2 if ties else s

    return score


def write_run(path: Path, kg: KnowledgeGraph, questions, scorer, depth: int | None = None,
              drop: set[str] = frozenset()) -> None:
    """Every entity (filtered ones included: kgeval filters) of every question, best first, cut at ``depth``."""
    S = np.concatenate([scorer(torch.as_tensor(np.stack([questions.entity[i:i + 1], questions.relation[i:i + 1]], 1)),
                               int(questions.side[i])).numpy() for i in range(len(questions))])
    order = np.argsort(-S, axis=1, kind="stable")[:, :depth]
    qi = np.repeat(np.arange(len(questions)), order.shape[1])
    df = pd.DataFrame({"qid": np.array(questions.qid)[qi], "Q0": "Q0", "docno": np.array(kg.entities)[order.ravel()],
                       "rank": np.tile(np.arange(1, order.shape[1] + 1), len(questions)),
                       "score": [f"{v:.9g}" for v in S[qi, order.ravel()]], "tag": "rnd"})
    df[~df["qid"].isin(drop)].to_csv(path, sep=" ", header=False, index=False)
