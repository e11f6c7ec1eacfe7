"""Which entities are judged for which question: every judged triple of a test set attached to the questions it
answers. Numpy only (no torch), so that loading a test set (:func:`kgeval.api.load_testset`) does not import the
ranking engine; :mod:`kgeval.scores.ranking` uses it for every model it ranks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kg import HEAD, TAIL
from .questions import Questions, question_key
from .testsets import TestSet


@dataclass
class Judged:
    """Judged entities of the questions: one row per (question, entity)."""

    q: np.ndarray  # question index
    entity: np.ndarray
    label: np.ndarray  # 1 relevant, 0 judged non-relevant
    depth: np.ndarray  # pooling depth of the triple (0 = original test triple)

    def __len__(self) -> int:
        return len(self.q)


def judged_entities(testset: TestSet, questions: Questions) -> Judged:
    """Attach every judged triple of ``testset`` to the questions it answers or is judged for.

    A triple (h, r, t) is judged for the head question (?, r, t) with entity h and for the tail question
    (h, r, ?) with entity t, wherever that question exists (questions come from the positives).
    """
    keys = questions.keys
    order = np.argsort(keys)
    sorted_keys = keys[order]
    tr = testset.triples
    rows_q, rows_e, rows_l, rows_d = [], [], [], []
    for side, known_col, ans_col in ((HEAD, 2, 0), (TAIL, 0, 2)):
        k = question_key(np.full(len(tr), side), tr[:, known_col], tr[:, 1], questions.num_entities,
                         questions.num_relations)
        pos = np.searchsorted(sorted_keys, k)
        pos_c = np.minimum(pos, len(sorted_keys) - 1)
        hit = (pos < len(sorted_keys)) & (sorted_keys[pos_c] == k)
        rows_q.append(order[pos_c[hit]])
        rows_e.append(tr[hit, ans_col])
        rows_l.append(testset.label[hit])
        rows_d.append(testset.depth[hit])
    q = np.concatenate(rows_q)
    srt = np.lexsort((np.concatenate(rows_e), q))
    return Judged(q[srt].astype(np.int64), np.concatenate(rows_e)[srt].astype(np.int64),
                  np.concatenate(rows_l)[srt].astype(np.int8), np.concatenate(rows_d)[srt].astype(np.int16))
