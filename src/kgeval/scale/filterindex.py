"""The train ∪ valid filter index of a large graph built in bounded pieces.

:class:`~kgeval.data.questions.AnswerIndex` builds its CSR from whole-split temporaries (an int64 copy of the
triples, side, entity, relation and answer columns, keys, a sorted copy, the split pairs): about 14 times the final
index at once, 4.6 GB for ogbl-wikikg2's 16M training triples, which made every rank job peak there whatever the
model's size. Here each (question, answer) pair becomes one int64 key written chunk by chunk into a single array,
sorted in place, deduplicated in place chunk by chunk and split into the CSR's arrays chunk by chunk: the peak is
the final index plus about two arrays of the pairs' size (the key array, the starts before they are joined). The result is the same index, array for array.
"""

from __future__ import annotations

import numpy as np

from ..data.kg import HEAD, TAIL
from ..data.questions import AnswerIndex

#: triples per piece: a piece's temporaries are a few times 2 × CHUNK int64 (tens of MB)
CHUNK = 1 << 20


class BoundedAnswerIndex(AnswerIndex):
    """:class:`AnswerIndex` of the triples of ``parts`` (arrays of (n, 3) ids, e.g. train and valid), built in
    pieces of ``chunk`` triples."""

    def __init__(self, parts: list[np.ndarray], num_entities: int, num_relations: int, chunk: int = CHUNK):
        E, R = int(num_entities), int(num_relations)
        if 2 * R * E * E >= np.iinfo(np.int64).max:  # one key per pair would overflow: the whole-split build
            super().__init__(np.concatenate(parts).astype(np.int64), E, R)
            return
        self.num_entities, self.num_relations = E, R
        total = sum(len(p) for p in parts)
        pairs = np.empty(2 * total, np.int64)
        at = 0
        for part in parts:
            for i in range(0, len(part), chunk):
                t = np.asarray(part[i:i + chunk], np.int64)
                h, r, tail = t[:, 0], t[:, 1], t[:, 2]
                # question_key(side, known, relation) * E + answer: the head question (?, r, t) answers h
                for side, known, answer in ((HEAD, tail, h), (TAIL, h, tail)):
                    pairs[at:at + len(t)] = ((side * R + r) * E + known) * E + answer
                    at += len(t)
        pairs.sort()  # in place: no second key array
        n = 0
        for i in range(0, len(pairs), 2 * chunk):
            piece = pairs[i:i + 2 * chunk]
            keep = piece[np.r_[True, piece[1:] != piece[:-1]]] if i == 0 else \
                piece[piece != np.r_[pairs[i - 1], piece[:-1]]]
            pairs[n:n + len(keep)] = keep  # n <= i: the write never passes what is still to be read
            n += len(keep)
        pairs = pairs[:n]
        self.answers = np.empty(n, np.int64)
        starts = []
        for i in range(0, n, 2 * chunk):
            piece = pairs[i:i + 2 * chunk]
            q, self.answers[i:i + len(piece)] = np.divmod(piece, E)
            pairs[i:i + len(piece)] = q  # the pair keys become their question keys, in place
            prev = pairs[i - 1] if i else -1
            starts.append(i + np.flatnonzero(q != np.r_[prev, q[:-1]]))
        self.offsets = np.concatenate([*starts, [n]]).astype(np.int64, copy=False)
        del starts
        self.keys = pairs[self.offsets[:-1]]
