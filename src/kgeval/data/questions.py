"""Questions and the answer index.

A test triple (h, r, t) yields a head question (?, r, t) with answer h and a tail question (h, r, ?) with
answer t. Identical questions (same side, known entity and relation) are aggregated for macro evaluation.
Question ids follow the published ``trec_queries.txt``: ``head<i>`` then ``tail<i>``, numbered in order of first
appearance in the test file.

``AnswerIndex`` holds the answers of every question over a set of triples in CSR form and answers batched
look-ups without a Python loop; it is the filter index of the ranking engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from .kg import HEAD, SIDE_NAMES, TAIL, KnowledgeGraph
from .tsv import iter_rows


def question_key(side, entity, relation, num_entities: int, num_relations: int):
    """A unique int64 per question (side, known entity, relation)."""
    side = np.asarray(side, dtype=np.int64)
    return (side * num_relations + np.asarray(relation, dtype=np.int64)) * num_entities + np.asarray(
        entity, dtype=np.int64)


def triple_questions(triples: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each triple both questions: (side, known entity, relation, answer), heads first then tails."""
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    n = len(triples)
    side = np.concatenate([np.full(n, HEAD), np.full(n, TAIL)])
    known = np.concatenate([triples[:, 2], triples[:, 0]])
    rel = np.concatenate([triples[:, 1], triples[:, 1]])
    answer = np.concatenate([triples[:, 0], triples[:, 2]])
    return side, known, rel, answer


def unique_pairs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The distinct (first, second) int64 pairs as rows, sorted by first then second: what
    ``np.unique(np.stack([first, second], 1), axis=0)`` returns, without numpy's row-as-record sort, which took
    half of every validation evaluation in training (3.9 s of 7.9 s on FB15k-237's 544k training questions;
    benchmarks/default_time.py measures it)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    if not len(first):
        return np.zeros((0, 2), np.int64)
    span = int(second.max()) + 1
    if first.min() >= 0 and second.min() >= 0 and int(first.max()) < np.iinfo(np.int64).max // span:
        # one int64 key per pair (first · span + second keeps the order) and a plain sort: 15× faster than the
        # lexsort, and than np.unique, whose hash-based path (numpy 2.4) is 100× slower than np.sort here
        combined = np.sort(first * span + second)
        combined = combined[np.concatenate([[True], combined[1:] != combined[:-1]])]
        return np.stack([combined // span, combined % span], axis=1)
    order = np.lexsort((second, first))
    a, b = first[order], second[order]
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return np.stack([a[keep], b[keep]], axis=1)


def _unique_rows3(a: np.ndarray, b: np.ndarray, c: np.ndarray, b_range: int, c_range: int) -> np.ndarray:
    """The distinct (a, b, c) rows (0 ≤ b < b_range, 0 ≤ c < c_range, a ≥ 0), sorted as ``np.unique(rows,
    axis=0)`` sorts them, through one int64 key per row and a plain sort (numpy 2.4's row-wise unique sorts
    records: 2.8 s against 0.03 s on FB15k-237's training questions)."""
    key = (np.asarray(a, dtype=np.int64) * b_range + np.asarray(b, dtype=np.int64)) * c_range \
        + np.asarray(c, dtype=np.int64)
    key = np.sort(key)
    key = key[np.concatenate([[True], key[1:] != key[:-1]])] if len(key) else key
    rest, c_out = np.divmod(key, c_range)
    return np.stack([*np.divmod(rest, b_range), c_out], axis=1)


def unique_questions(side: np.ndarray, known: np.ndarray, relation: np.ndarray, num_entities: int,
                     num_relations: int) -> np.ndarray:
    """The distinct (side, known entity, relation) rows, sorted by side, then entity, then relation."""
    return _unique_rows3(side, known, relation, num_entities, num_relations)


def unique_triples(triples: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    """The distinct (h, r, t) rows of in-range triples, sorted as ``np.unique(triples, axis=0)``."""
    t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    return _unique_rows3(t[:, 0], t[:, 1], t[:, 2], num_relations, num_entities)


class AnswerIndex:
    """Answers per question over a set of triples (CSR over sorted question keys)."""

    def __init__(self, triples: np.ndarray, num_entities: int, num_relations: int):
        self.num_entities, self.num_relations = num_entities, num_relations
        side, known, rel, answer = triple_questions(triples)
        keys = question_key(side, known, rel, num_entities, num_relations)
        pairs = unique_pairs(keys, answer)
        # pairs are sorted by key: each key starts where it differs from the one before
        starts = np.flatnonzero(np.concatenate([[True], pairs[1:, 0] != pairs[:-1, 0]])) if len(pairs) else \
            np.zeros(0, np.int64)
        self.keys = pairs[starts, 0]
        self.offsets = np.append(starts, len(pairs)).astype(np.int64)
        self.answers = pairs[:, 1].copy()

    def _ranges(self, qkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        qkeys = np.asarray(qkeys, dtype=np.int64)
        pos = np.searchsorted(self.keys, qkeys)
        pos_c = np.minimum(pos, max(len(self.keys) - 1, 0))
        found = (pos < len(self.keys)) & (self.keys[pos_c] == qkeys) if len(self.keys) else np.zeros(
            len(qkeys), bool)
        start = np.where(found, self.offsets[pos_c], 0)
        stop = np.where(found, self.offsets[np.minimum(pos_c + 1, len(self.offsets) - 1)], 0)
        return start, stop

    def count(self, qkeys: np.ndarray) -> np.ndarray:
        start, stop = self._ranges(qkeys)
        return stop - start

    def lookup(self, qkeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All answers of the given questions as flat ``(row, answer)`` pairs (row indexes ``qkeys``)."""
        start, stop = self._ranges(qkeys)
        lengths = stop - start
        rows = np.repeat(np.arange(len(lengths)), lengths)
        first = np.repeat(start - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        idx = first + np.arange(lengths.sum())
        return rows, self.answers[idx]


@dataclass
class Questions:
    """Aggregated questions of a set of positive triples, in published order."""

    side: np.ndarray
    entity: np.ndarray
    relation: np.ndarray
    qid: list[str]
    num_entities: int
    num_relations: int

    def __len__(self) -> int:
        return len(self.side)

    @property
    def keys(self) -> np.ndarray:
        return question_key(self.side, self.entity, self.relation, self.num_entities, self.num_relations)

    @classmethod
    def from_triples(cls, triples: np.ndarray, num_entities: int, num_relations: int) -> Questions:
        side, known, rel, _ = triple_questions(triples)
        keys = question_key(side, known, rel, num_entities, num_relations)
        _, first = np.unique(keys, return_index=True)
        order = np.sort(first)  # first appearance; heads precede tails because they come first
        side, known, rel = side[order], known[order], rel[order]
        qid = []
        counters = [0, 0]
        for s in side.tolist():
            qid.append(f"{SIDE_NAMES[s]}{counters[s]}")
            counters[s] += 1
        return cls(side, known, rel, qid, num_entities, num_relations)


def adopt_published_queries(questions: Questions, path: str | Path, kg: KnowledgeGraph) -> Questions:
    """Check that a published ``trec_queries.txt`` lists exactly our questions; return them in its order and
    under its ids (so exported runs use the published question ids)."""
    rows = []
    seen: dict[str, int] = {}
    for lineno, (qid, ent, rel) in iter_rows(path, 3):
        if not (qid.startswith("head") or qid.startswith("tail")) or not qid[4:].isdigit():
            raise InputError(path, lineno, f"question id {qid!r} is not head<i> or tail<i>")
        if qid in seen:
            raise InputError(path, lineno, f"question id {qid} repeats line {seen[qid]}")
        seen[qid] = lineno
        side = HEAD if qid.startswith("head") else TAIL
        e, r, _ = kg.encode_row(path, lineno, ent, rel, ent)
        rows.append((lineno, qid, side, e, r))
    ours = {k: i for i, k in enumerate(questions.keys.tolist())}
    if len(rows) != len(questions):
        raise InputError(path, None, f"lists {len(rows)} questions, the test set has {len(questions)}")
    order = []
    for lineno, qid, side, e, r in rows:
        key = int(question_key(side, e, r, kg.num_entities, kg.num_relations))
        if key not in ours:
            raise InputError(path, lineno, f"question {qid} ({SIDE_NAMES[side]}, {kg.entities[e]}, "
                                           f"{kg.relations[r]}) is not a question of the test set")
        order.append(ours[key])
    if len(set(order)) != len(order):
        raise InputError(path, None, "lists a question twice under different ids")
    idx = np.array(order, dtype=np.int64)
    return Questions(questions.side[idx], questions.entity[idx], questions.relation[idx],
                     [row[1] for row in rows], questions.num_entities, questions.num_relations)


QUESTION_HEADER = ["qid", "side", "entity", "relation"]


def save_questions(questions: Questions, path: str | Path, kg: KnowledgeGraph) -> None:
    from .tsv import write_rows

    rows = [(q, SIDE_NAMES[s], kg.entities[e], kg.relations[r]) for q, s, e, r in
            zip(questions.qid, questions.side.tolist(), questions.entity.tolist(), questions.relation.tolist())]
    write_rows(path, rows, header=QUESTION_HEADER)


def load_questions(path: str | Path, kg: KnowledgeGraph) -> Questions:
    side, ent, rel, qid = [], [], [], []
    for lineno, fields in iter_rows(path, 4):
        if lineno == 1:
            if fields != QUESTION_HEADER:
                raise InputError(path, 1, f"expected header {QUESTION_HEADER}")
            continue
        q, s, e, r = fields
        if s not in SIDE_NAMES:
            raise InputError(path, lineno, f"side {s!r} is not head or tail")
        e_id, r_id, _ = kg.encode_row(path, lineno, e, r, e)
        qid.append(q)
        side.append(SIDE_NAMES.index(s))
        ent.append(e_id)
        rel.append(r_id)
    if not qid:  # an emptied (or truncated) file: every later step would fail on zero questions, less clearly
        raise InputError(path, None, "no questions (an empty or truncated questions file; a file of the data "
                                     "cache or resources/ is rebuilt once deleted)")
    return Questions(np.array(side, np.int64), np.array(ent, np.int64), np.array(rel, np.int64), qid,
                     kg.num_entities, kg.num_relations)
