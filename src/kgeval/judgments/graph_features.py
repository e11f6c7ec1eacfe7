"""Graph evidence for the relevance prior: what the training split says about a (question, candidate) item, and
each compared system's reciprocal rank of it (issue 50 §2).

Per item, from the training triples only (the valid and test splits hold the very answers being judged):

* ``side_frequency``: the training triples of the question's relation with the candidate on the asked side (a
  head question (?, r, t) counts the triples (candidate, r, ·)): how often the candidate answers this relation
  this way;
* ``linked``: 1 when a training triple joins the candidate and the question's known entity, in either direction
  and by any relation, else 0;
* ``degree``: the training triples that have the candidate as head or tail;
* ``common_neighbours``: the entities joined to both the known entity and the candidate in the undirected training
  graph, and their ``adamic_adar`` index (each common neighbour weighted by 1 / log of its degree): the textbook
  link-prediction scores (Liben-Nowell and Kleinberg 2007);
* ``question_answers``: the training answers the question already has (a head question (?, r, t) counts the
  triples (·, r, t)): a question with many known answers has many relevant candidates;
* ``type_match``: how well the candidate's relation profile (the (relation, side) slots it fills in training,
  each once) matches that of the entities answering the question's relation on the asked side, as a cosine: the
  type constraint a relation puts on its answers (Krompaß et al. 2015), learnt from the graph, no schema needed.

Then the pool's own evidence within the question, as in rank fusion (CombSUM of reciprocal ranks): the
candidate's reciprocal rank summed over the systems, that sum over the question's largest and over its total, and
the question's number of candidates (issue 62: together they raise the grouped-CV AUC on FB-Test-S-C from 0.875 to
0.89, ``benchmarks/sampling_prior_variants.py``).

Counts enter as log(1 + count) (the boosted trees do not care; a linear model would). The counts are looked up in
sorted keys (``np.searchsorted``) and the neighbourhoods read from sparse incidence matrices, so memory grows with
the training triples, not with entities × entities; only the type match holds a dense block, the asked (relation,
side) slots × every slot (at most 2R × 2R).
"""

from __future__ import annotations

import numpy as np

from kgeval.data.kg import HEAD, KnowledgeGraph

GRAPH_COLUMNS = ("log_side_frequency", "linked", "log_degree", "log_common_neighbours", "adamic_adar",
                 "log_question_answers", "type_match")
FUSION_COLUMNS = ("fused_rr", "fused_rr_of_top", "fused_rr_share", "question_candidates")


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


def _incidence(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]):
    """A CSR matrix with 1 wherever (row, col) occurs, however often."""
    import scipy.sparse as sp

    m = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def neighbourhood_scores(train: np.ndarray, num_entities: int, known, candidate) -> np.ndarray:
    """(n, 2) per item: the common neighbours of ``known`` and ``candidate`` in the undirected training graph
    (self-loops and parallel triples count once) and their Adamic-Adar index."""
    import scipy.sparse as sp

    tr = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    k, c = np.asarray(known, np.int64), np.asarray(candidate, np.int64)
    E = int(num_entities)
    ends = np.concatenate([tr[:, [0, 2]], tr[:, [2, 0]]])
    adj = _incidence(ends[:, 0], ends[:, 1], (E, E))
    deg = np.asarray(adj.sum(1)).ravel()
    # a common neighbour of degree 1 cannot exist (it touches both ends); log 2 keeps the weight finite anyway
    weighted = adj @ sp.diags(1.0 / np.log(np.maximum(deg, 2.0)))
    both = adj[k].multiply(adj[c])
    return np.column_stack([np.asarray(both.sum(1)).ravel(), np.asarray(weighted[k].multiply(adj[c]).sum(1)).ravel()])


def type_match(train: np.ndarray, num_entities: int, num_relations: int, relation, side, candidate) -> np.ndarray:
    """(n,) per item: the cosine between the candidate's row of the entity × (relation, side) incidence of the
    training split (each slot 0 or 1) and the sum of the rows of the entities that fill the slot (``relation``,
    asked ``side``): 0 for a candidate or a slot without training triples."""
    tr = np.asarray(train, dtype=np.int64).reshape(-1, 3)
    E, R2 = int(num_entities), 2 * int(num_relations)
    ent = np.concatenate([tr[:, 0], tr[:, 2]])
    slot = np.concatenate([tr[:, 1] * 2 + HEAD, tr[:, 1] * 2 + (1 - HEAD)])
    inc = _incidence(ent, slot, (E, R2))
    s = np.asarray(side, np.int64)
    asked = np.asarray(relation, np.int64) * 2 + np.where(s == HEAD, HEAD, 1 - HEAD)
    slots, which = np.unique(asked, return_inverse=True)
    # per asked slot, the slots its fillers fill, summed over them (only the asked slots' rows: R may be large)
    profile = (inc[:, slots].T @ inc).toarray()
    norm = np.sqrt(np.asarray(inc.sum(1)).ravel())  # a 0/1 row's length
    pnorm = np.sqrt(np.square(profile).sum(1))
    c = np.asarray(candidate, np.int64)
    rows = inc[c]
    item = np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr))
    dot = np.bincount(item, profile[which[item], rows.indices], rows.shape[0])
    denom = norm[c] * pnorm[which]
    return np.where(denom > 0, dot / np.where(denom > 0, denom, 1.0), 0.0)


def fusion_scores(rr: np.ndarray, question: np.ndarray) -> np.ndarray:
    """(n, 4) per item from ``rr`` (n, S) reciprocal ranks and its ``question`` index: the summed reciprocal rank,
    that over the question's largest and over the question's total, and the question's number of items."""
    fused = np.asarray(rr, float).sum(1)
    _, g = np.unique(np.asarray(question), return_inverse=True)
    top = np.zeros(g.max(initial=-1) + 1)
    np.maximum.at(top, g, fused)
    total, n = np.bincount(g, fused, top.size), np.bincount(g, minlength=top.size)
    return np.column_stack([fused, fused / np.maximum(top[g], 1e-12), fused / np.maximum(total[g], 1e-12), n[g]])


def reciprocal_ranks(ranks: np.ndarray, k: int) -> np.ndarray:
    """(n, S): 1/rank of each item in each system's list, 0 outside its top k (rank 0 or > k)."""
    r = np.asarray(ranks, dtype=float)
    inside = (r >= 1) & (r <= k)
    return np.where(inside, 1.0 / np.where(inside, r, 1.0), 0.0).T


def item_graph_features(kg: KnowledgeGraph, relation, side, known, candidate, ranks: np.ndarray,
                        k: int) -> np.ndarray:
    """(n, 11 + S) extra prior features per item: :data:`GRAPH_COLUMNS` from ``kg``'s training split, each
    system's reciprocal rank (``ranks``: systems × items), then :data:`FUSION_COLUMNS` within each question (a
    question is its (relation, side, known entity))."""
    train, E = kg.splits["train"], kg.num_entities
    s, r, kn = np.asarray(side, np.int64), np.asarray(relation, np.int64), np.asarray(known, np.int64)
    # one lookup for the candidates' counts and the questions' own answers (the side frequency of the known entity
    # on the other side), so the training keys are sorted once
    n = s.size
    both = graph_counts(train, E, np.concatenate([r, r]), np.concatenate([s, np.where(s == HEAD, 1 - HEAD, HEAD)]),
                        np.concatenate([kn, kn]), np.concatenate([np.asarray(candidate, np.int64), kn]))
    counts, answers = both[:n].astype(float), both[n:, 0]
    near = neighbourhood_scores(train, E, known, candidate)
    types = type_match(train, E, kg.num_relations, relation, side, candidate)
    graph = np.column_stack([np.log1p(counts[:, 0]), counts[:, 1], np.log1p(counts[:, 2]), np.log1p(near[:, 0]),
                             near[:, 1], np.log1p(answers), types])
    rr = reciprocal_ranks(ranks, k)
    question = (r * 2 + s) * np.int64(E) + kn
    return np.column_stack([graph, rr, fusion_scores(rr, question)])
