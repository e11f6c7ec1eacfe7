"""The items of the compared top-k lists: the distinct (question, entity) pairs of every system's top k
(:class:`kgeval.judgments.candidates.Candidates`, their state from the published relevance codes), the prior's
features of each item and the out-of-fold prior the simulations use. Bounds, sampling and the judging campaign
build their universe with these functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..data.kg import HEAD, KnowledgeGraph, infer_categories
from .candidates import Candidates
from .graph_features import item_graph_features
from .labels import ABSENT, REL, UNKNOWN
from .prior import Features, cross_validate, triple_features

METRIC_NAMES = {"P": "P@k", "DCG": "DCG@k", "RBP": "RBP", "RR": "RR@k", "Success": "Success@k"}

# relation categories of kgeval.data.kg → the prior's names
_CATEGORY = {"one_to_one": "1-1", "one_to_many": "1-N", "many_to_one": "N-1", "many_to_many": "N-N"}


@dataclass
class Items:
    """The candidates and, per item, its question index in the dump (``q``) and its entity."""

    cand: Candidates
    q: np.ndarray
    entity: np.ndarray


def candidates(entity: np.ndarray, code: np.ndarray, qmask: np.ndarray, systems, k: int) -> Items:
    """Candidates of the top-k lists ``entity`` (S, Q, k) with relevance ``code`` on the questions of ``qmask``;
    an unknown (pooled or not) is −1, a judged pair keeps its label."""
    S, Q, _ = entity.shape
    width = int(entity.max(initial=0)) + 1
    s, q, i = np.nonzero((code != ABSENT) & (entity >= 0) & qmask[None, :, None])
    keys = q.astype(np.int64) * width + entity[s, q, i]
    uniq, inv = np.unique(keys, return_inverse=True)
    ranks = np.zeros((S, uniq.size), np.int64)
    ranks[s, inv] = i + 1
    c = code[s, q, i]
    state = np.empty(uniq.size, np.int8)
    state[inv] = np.where(c == UNKNOWN, -1, np.where(c == REL, 1, 0))
    newq = np.cumsum(qmask) - 1
    uq = uniq // width
    cand = Candidates(newq[uq], ranks, state, int(qmask.sum()), k, tuple(systems))
    return Items(cand, uq, uniq % width)


def item_features(items: Items, kg: KnowledgeGraph, questions) -> Features:
    """The prior's features: ranks over the systems, the question relation's category and side, and the
    relation's number of known triples (its answer count); as extra columns for the boosted prior, the training
    split's graph evidence and each system's reciprocal rank (:mod:`.graph_features`)."""
    rel, side = questions.relation[items.q], questions.side[items.q]
    cats = np.array([_CATEGORY[c] for c in kg.relation_category or infer_categories(kg)])
    count = np.bincount(kg.known()[:, 1], minlength=kg.num_relations)
    f = triple_features(items.cand.ranks, cats[rel], side, count[rel], items.cand.k)
    extra = item_graph_features(kg, rel, side, questions.entity[items.q], items.entity, items.cand.ranks,
                                items.cand.k)
    return replace(f, extra=extra)


def item_triples(items: Items, questions, idx: np.ndarray) -> np.ndarray:
    """(n, 3) id triples of the items ``idx``: a head question asks for the head of (?, r, known)."""
    q, e = items.q[idx], items.entity[idx]
    known, rel, side = questions.entity[q], questions.relation[q], questions.side[q]
    head = np.where(side == HEAD, e, known)
    tail = np.where(side == HEAD, known, e)
    return np.stack([head, rel, tail], 1).astype(np.int64)


def out_of_fold_prior(feats: Features, labels: np.ndarray, hidden: np.ndarray, item_q: np.ndarray, kind: str,
                      folds: int, seed: int) -> np.ndarray:
    """The simulation's prior: for each hidden item, the prediction of a prior fitted on the other folds'
    questions only (grouped cross-validation), so no item's prior saw its own question's labels; 0.5 for the
    rest (known items: their prior is never used) and everywhere when the prior is uniform or the hidden labels
    cannot be split into ``folds`` folds with both classes."""
    p = np.full(labels.size, 0.5)
    train = np.flatnonzero(hidden)
    y = labels[train].astype(np.int64)
    if kind != "uniform" and np.unique(item_q[train]).size >= folds and 0 < y.sum() < y.size:
        p[train] = cross_validate(feats.take(train), y, item_q[train], folds, seed, kind).predictions
    return p
