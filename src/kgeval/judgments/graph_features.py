"""Graph evidence for the relevance prior: what the training split says about a (question, candidate) item, and
each compared system's reciprocal rank of it (issue 50 §2).

Per item, from the training triples only (the valid and test splits hold the very answers being judged):

* ``side_frequency``: the training triples of the question's relation with the candidate on the asked side (a
  head question (?, r, t) counts the triples (candidate, r, ·)): how often the candidate answers this relation
  this way;
* ``linked``: 1 when a training triple joins the candidate and the question's known entity, in either direction
  and by any relation, else 0;
* ``degree``: the training triples that have the candidate as head or tail.

Counts enter as log(1 + count) (the boosted trees do not care; a linear model would). Everything is looked up in
sorted keys (``np.searchsorted``), so memory grows with the training triples, not with entities × relations.
"""

from __future__ import annotations

import numpy as np

from kgeval.data.kg import HEAD, KnowledgeGraph

GRAPH_COLUMNS = ("log_side_frequency", "linked", "log_degree")


def _count_lookup(keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """How often each ``query`` value occurs in ``keys``."""
    uniq, counts = np.unique(keys, return_counts=True)
    if uniq.size == 0:
        return np.zeros(np.shape(query), np.int64)
    pos = np.minimum(np.searchsorted(uniq, query), uniq.size - 1)
    return np.where(uniq[pos] == query, counts[pos], 0)


def graph_counts(train: np.ndarray, num_entities: int, relation, side, known, candidate) -> np.ndarray:
    """(n, 3) raw counts per item: side frequency, linked (0/1), degree (module docstring). ``train`` is the
    (m, 3) id triples (head, relation, tail); ``relation``, ``side`` (0 head question, 1 tail question),
    ``known`` (the question's given entity) and ``candidate`` are one entry per item."""
    tr = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    r, s = np.asarray(relation, np.int64), np.asarray(side, np.int64)
    k, c = np.asarray(known, np.int64), np.asarray(candidate, np.int64)
    E = np.int64(num_entities)
    h, rel, t = tr[:, 0], tr[:, 1], tr[:, 2]
    # one key space for both sides: (relation, side the entity stands on, entity)
    side_keys = np.concatenate([(rel * 2 + HEAD) * E + h, (rel * 2 + (1 - HEAD)) * E + t])
    freq = _count_lookup(side_keys, (r * 2 + np.where(s == HEAD, HEAD, 1 - HEAD)) * E + c)
    pair_keys = np.minimum(h, t) * E + np.maximum(h, t)  # unordered: a link in either direction
    linked = _count_lookup(pair_keys, np.minimum(k, c) * E + np.maximum(k, c)) > 0
    degree = _count_lookup(np.concatenate([h, t]), c)
    return np.column_stack([freq, linked, degree]).astype(np.int64)


def reciprocal_ranks(ranks: np.ndarray, k: int) -> np.ndarray:
    """(n, S): 1/rank of each item in each system's list, 0 outside its top k (rank 0 or > k)."""
    r = np.asarray(ranks, dtype=float)
    inside = (r >= 1) & (r <= k)
    return np.where(inside, 1.0 / np.where(inside, r, 1.0), 0.0).T


def item_graph_features(kg: KnowledgeGraph, relation, side, known, candidate, ranks: np.ndarray,
                        k: int) -> np.ndarray:
    """(n, 3 + S) extra prior features per item: :data:`GRAPH_COLUMNS` from ``kg``'s training split, then each
    system's reciprocal rank (``ranks``: systems × items)."""
    counts = graph_counts(kg.splits["train"], kg.num_entities, relation, side, known, candidate).astype(float)
    graph = np.column_stack([np.log1p(counts[:, 0]), counts[:, 1], np.log1p(counts[:, 2])])
    return np.column_stack([graph, reciprocal_ranks(ranks, k)])
