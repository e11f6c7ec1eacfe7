"""The unknown set: unjudged (question, entity) pairs in any compared system's top k.

An instance holds, for S systems over the same Q questions, each system's top-k entities in trec_eval's order and
the relevance code of every position: ``REL`` (1), ``NONREL`` (0), ``UNKNOWN`` (−1: unjudged, whether pooled or
not) or ``ABSENT`` (−3: the run has fewer than k candidates). A judged pair keeps its label; the unknown pairs
are the labels a bound ranges over. Labels belong to (question, entity), so one unknown shared by two systems'
lists takes the same value in both: that is what makes the bounds of a *difference* tighter than the difference
of two intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..metrics import trec

if TYPE_CHECKING:  # an annotation only: the campaign's server imports this module and must start fast
    from ..metrics.evaluate import Qrels

REL, NONREL, UNKNOWN, ABSENT = 1, 0, -1, -3


@dataclass
class Instance:
    """Top-k lists of S systems over Q questions (the questions of the macro filter)."""

    systems: list[str]
    entity: np.ndarray  # (S, Q, k) int64, −1 where absent
    code: np.ndarray  # (S, Q, k) int8: REL, NONREL, UNKNOWN, ABSENT

    @property
    def k(self) -> int:
        return self.entity.shape[2]

    @property
    def num_questions(self) -> int:
        return self.entity.shape[1]

    def unknown_pairs(self) -> np.ndarray:
        """(n, 2) array of the distinct unknown (question, entity) pairs, sorted."""
        s, q, i = np.nonzero(self.code == UNKNOWN)
        width = int(self.entity.max(initial=0)) + 1
        keys = np.unique(q.astype(np.int64) * width + self.entity[s, q, i])
        return np.stack([keys // width, keys % width], 1)

    def unknown_ids(self) -> tuple[np.ndarray, int]:
        """Per position, the index of its unknown pair in :meth:`unknown_pairs` (−1 for a judged or absent
        position), and the number of unknown pairs."""
        mask = self.code == UNKNOWN
        ids = np.full(self.code.shape, -1, np.int64)
        if not mask.any():
            return ids, 0
        width = int(self.entity.max()) + 1
        q = np.broadcast_to(np.arange(self.num_questions)[None, :, None], self.code.shape)
        keys = q[mask].astype(np.int64) * width + self.entity[mask]
        uniq, inv = np.unique(keys, return_inverse=True)
        ids[mask] = inv
        return ids, len(uniq)


def codes_from_qrels(run_entity: np.ndarray, q_index: np.ndarray, qrels_q: np.ndarray, qrels_entity: np.ndarray,
                     qrels_rel: np.ndarray, num_entities: int) -> np.ndarray:
    """Relevance codes of one system's top-k rows (trec_eval codes mapped to the four of this package)."""
    run = trec.relevance_codes(run_entity, q_index, qrels_q, qrels_entity, qrels_rel, num_entities)
    c = run.codes
    out = np.where(c >= trec.REL, REL, NONREL).astype(np.int8)
    out[(c == trec.UNJUDGED) | (c == trec.POOLED_UNJUDGED)] = UNKNOWN
    out[c == trec.ABSENT] = ABSENT
    return out


def match_positions(entity: np.ndarray) -> np.ndarray:
    """``pos[a, b, q, i]``: the 0-based position of system a's i-th entity of question q in system b's top k, or −1.

    Computed once per test set (the lists do not depend on the judgments); (S, S, Q, k, k) comparisons."""
    eq = (entity[:, None, :, :, None] == entity[None, :, :, None, :]) & (entity[:, None, :, :, None] >= 0)
    found = eq.any(-1)
    return np.where(found, eq.argmax(-1), -1).astype(np.int16)


def state(entity: np.ndarray, qrels: Qrels, num_entities: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes (S, Q, k) of every system's top k under ``qrels`` and the macro filter's question mask (Q,)."""
    S, Q, k = entity.shape
    # the S systems' rows as one (S·Q, k) run: one lookup, not one per system
    code = codes_from_qrels(entity.reshape(S * Q, k), np.tile(np.arange(Q), S), qrels.q, qrels.entity, qrels.rel,
                            num_entities).reshape(S, Q, k)
    qmask = np.zeros(Q, bool)
    qmask[qrels.q[qrels.rel >= 1]] = True
    return code, qmask
