"""How reusable the judged pool is for an evaluated system: its top-k candidates on the pooled test set
(FB-Test-S-C: FB-Test-S's questions with the human judgments) that no judgment covers, per question
(``DIR/unjudged_questions.csv``) and per triple (``DIR/unjudged.csv``), and the annotation sheet of those
triples (``DIR/annotation_sheet.tsv``, written by ``kgeval.pools.annotation.export_batch``) for the existing round trip
``annotate-export`` → two annotators → ``annotate-merge``, whose judgments extend the qrels.

The top k is the system's run under the macro filter in trec_eval's order (the run the trec measures read), so
a question's unjudged share (unjudged entries / k, absent positions of a short run counting as judged) is the
system's ``unjudged_<k>`` on that question. A triple is *covered* when the pooled test set judges it, Y or N
(seed answers included). Unjudged triples that are already facts of the graph (its test split: train and
valid facts are filtered out of the run) are listed with ``known_fact`` true and left off the sheet, as the
study's pooling leaves them out of the pool.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import HEAD, SIDE_NAMES, KnowledgeGraph
from ..data.testsets import TestSet
from ..pools.pooling import triple_key
from ..scores.dumps import Dump
from ..scores.ranking import judged_entities


def covered_keys(dump: Dump, extra: np.ndarray | None = None) -> np.ndarray:
    """``q · |E| + entity`` of every judged (question, entity) of the dump, plus those ``extra`` judged triples
    (``(n, 3)`` ids, e.g. newly merged judgments) judge for the dump's questions."""
    E = dump.questions.num_entities
    keys = dump.judged.q * E + dump.judged.entity
    if extra is not None and len(extra):
        extra = np.asarray(extra, dtype=np.int64).reshape(-1, 3)
        more = judged_entities(TestSet("extra", extra, np.ones(len(extra), np.int8), np.zeros(len(extra), np.int16)),
                               dump.questions)
        keys = np.concatenate([keys, more.q * E + more.entity])
    return np.unique(keys)


def unjudged(dump: Dump, kg: KnowledgeGraph, k: int = 10,
             extra: np.ndarray | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per question, per unjudged triple) of the dump's top ``k``; see the module docstring."""
    qs = dump.questions
    E = qs.num_entities
    top = dump.run_entity[:, :k].astype(np.int64)
    present = top >= 0
    keys = np.arange(len(qs))[:, None] * E + np.where(present, top, 0)
    unj = present & ~np.isin(keys, covered_keys(dump, extra))
    questions = pd.DataFrame({
        "qid": qs.qid, "side": np.array(SIDE_NAMES)[qs.side], "relation": np.asarray(kg.relations)[qs.relation],
        "k": k, "retrieved": present.sum(1), "unjudged": unj.sum(1), "unjudged_share": unj.sum(1) / k})
    q, rank = np.nonzero(unj)
    ent, known, rel, side = top[q, rank], qs.entity[q], qs.relation[q], qs.side[q]
    triples = np.stack([np.where(side == HEAD, ent, known), rel, np.where(side == HEAD, known, ent)], 1)
    fact = np.isin(triple_key(triples, kg), triple_key(kg.known(), kg))
    names = np.asarray(kg.entities, dtype=object)
    display = np.asarray(kg.entity_names or kg.entities, dtype=object)  # kg.display_name, for every entity
    per_triple = pd.DataFrame({
        "qid": np.asarray(qs.qid, dtype=object)[q], "rank": rank + 1, "head": names[triples[:, 0]],
        "relation": np.asarray(kg.relations, dtype=object)[rel], "tail": names[triples[:, 2]],
        "head_name": display[triples[:, 0]], "tail_name": display[triples[:, 2]], "known_fact": fact,
        "question_unjudged_share": questions["unjudged_share"].to_numpy()[q]})
    return questions, per_triple


def sheet_triples(per_triple: pd.DataFrame, kg: KnowledgeGraph) -> np.ndarray:
    """The id triples of ``unjudged``'s per-triple rows that need judging (not already facts), deduplicated."""
    todo = per_triple[~per_triple["known_fact"]]
    ent, rel = pd.Index(kg.entities), pd.Index(kg.relations)
    ids = np.stack([ent.get_indexer(todo["head"]), rel.get_indexer(todo["relation"]),
                    ent.get_indexer(todo["tail"])], 1).astype(np.int64).reshape(-1, 3)
    return np.unique(ids, axis=0)
