"""TREC-style pools from the pooling systems' runs.

The pool of a question at depth d is the union of the top-d candidates (macro filter: train ∪ valid answers
removed, trec_eval order) of the pooling systems, for both questions of every triple of the sampled test set.
A pooled triple is a candidate that is not already a known fact (train ∪ valid ∪ test); its **pooling depth**
is the smallest rank at which any system retrieved it for either of its questions, so the pool at depth d is
every triple with depth ≤ d. This is how the published ``pooling_depth.txt`` was made (paper, Sec. 3.1).

Optional pre-filtering, as in the paper, labels trivially false triples N without annotation:

* **type constraints**: the head's type differs from the relation's domain or the tail's from its range
  (``relation_specific.txt``). It needs entity types, which FB15k-237 does not ship: without them this filter
  is skipped and the report says so;
* **relation category**: triples pooled only from head questions of 1-1 / 1-N relations (a tail has one head,
  already known) or only from tail questions of 1-1 / N-1 relations.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.kg import HEAD, KnowledgeGraph, triple_keys
from ..data.tsv import iter_rows, write_rows
from ..errors import InputError
from ..scores.dumps import Dump

log = logging.getLogger(__name__)

POOL_HEADER = ["head", "relation", "tail", "depth", "sides", "systems"]


def triple_key(triples: np.ndarray, kg: KnowledgeGraph) -> np.ndarray:
    return triple_keys(np.asarray(triples).reshape(-1, 3), kg.num_entities, kg.num_relations)


@dataclass
class Pool:
    """Pooled triples with their pooling depth, the sides they were pooled from (bit 1 head question, bit 2
    tail question) and the systems that retrieved them."""

    triples: np.ndarray
    depth: np.ndarray
    sides: np.ndarray
    systems: list[str]
    notes: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.triples)

    def at_depth(self, d: int) -> np.ndarray:
        return self.triples[self.depth <= d]

    def save(self, path: str | Path, kg: KnowledgeGraph) -> None:
        rows = [(*kg.decode(self.triples[i:i + 1])[0], int(self.depth[i]),
                 {1: "head", 2: "tail", 3: "head,tail"}[int(self.sides[i])], self.systems[i])
                for i in range(len(self))]
        write_rows(path, rows, header=POOL_HEADER)

    @classmethod
    def load(cls, path: str | Path, kg: KnowledgeGraph) -> Pool:
        triples, depth, sides, systems = [], [], [], []
        code = {"head": 1, "tail": 2, "head,tail": 3}
        for lineno, fields in iter_rows(path, 6):
            if lineno == 1:
                if fields != POOL_HEADER:
                    raise InputError(path, 1, f"expected header {POOL_HEADER}")
                continue
            h, r, t, d, s, sy = fields
            if not d.isdigit() or s not in code:
                raise InputError(path, lineno, f"bad depth {d!r} or sides {s!r}")
            triples.append(kg.encode_row(path, lineno, h, r, t))
            depth.append(int(d))
            sides.append(code[s])
            systems.append(sy)
        return cls(np.array(triples, np.int64).reshape(-1, 3), np.array(depth, np.int16), np.array(sides, np.int8),
                   systems)


def build_pool(runs: dict[str, Dump], kg: KnowledgeGraph, max_depth: int = 10) -> Pool:
    """Pool the top-``max_depth`` candidates of every system's run (all runs over the same questions)."""
    known = np.unique(triple_key(kg.known(), kg))
    parts = []
    for s_idx, (system, dump) in enumerate(sorted(runs.items())):
        if dump.k < max_depth:
            raise ValueError(f"{system}: run depth {dump.k} is below the pool depth {max_depth}")
        qs = dump.questions
        ent = dump.run_entity[:, :max_depth].astype(np.int64)
        Q = len(qs)
        rank = np.broadcast_to(np.arange(1, max_depth + 1), (Q, max_depth))
        side = np.broadcast_to(qs.side[:, None], (Q, max_depth))
        known_e = np.broadcast_to(qs.entity[:, None], (Q, max_depth))
        rel = np.broadcast_to(qs.relation[:, None], (Q, max_depth))
        ok = ent >= 0
        head = np.where(side == HEAD, ent, known_e)[ok]
        tail = np.where(side == HEAD, known_e, ent)[ok]
        parts.append(np.stack([head, rel[ok], tail, rank[ok], np.where(side[ok] == HEAD, 1, 2),
                               np.full(ok.sum(), s_idx)], 1))
    names = sorted(runs)
    allp = np.concatenate(parts) if parts else np.zeros((0, 6), np.int64)
    keys = triple_key(allp[:, :3], kg)
    fresh = ~np.isin(keys, known)
    allp, keys = allp[fresh], keys[fresh]
    order = np.lexsort((allp[:, 3], keys))
    allp, keys = allp[order], keys[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
    depth = allp[first, 3]  # lexsort put the smallest rank first within each triple
    sides = np.bitwise_or.reduceat(allp[:, 4], first) if len(first) else np.zeros(0, np.int64)
    systems = []
    bounds = np.r_[first, len(allp)]
    for i in range(len(first)):
        members = np.unique(allp[bounds[i]:bounds[i + 1], 5])
        systems.append(",".join(names[m] for m in members))
    pool = Pool(allp[first, :3], depth.astype(np.int16), sides.astype(np.int8), systems)
    log.info("pool of %d systems to depth %d: %d triples", len(runs), max_depth, len(pool))
    return pool


def prefilter(pool: Pool, kg: KnowledgeGraph) -> tuple[np.ndarray, dict]:
    """Mask of pooled triples that the paper's pre-filter removes as trivially false, and the counts."""
    removed = np.zeros(len(pool), bool)
    report: dict = {}
    t = pool.triples
    if kg.entity_types is not None and kg.relation_domain is not None:
        et = np.array(kg.entity_types, dtype=object)
        dom = np.array(kg.relation_domain, dtype=object)[t[:, 1]]
        rng = np.array(kg.relation_range, dtype=object)[t[:, 1]]
        typed = (dom != "") & (rng != "") & (et[t[:, 0]] != "") & (et[t[:, 2]] != "")
        bad_type = typed & ((et[t[:, 0]] != dom) | (et[t[:, 2]] != rng))
        removed |= bad_type
        report["type_constraint"] = int(bad_type.sum())
    else:
        report["type_constraint"] = "skipped: the knowledge graph has no entity types"
    cat = np.array(kg.relation_category, dtype=object)[t[:, 1]]
    head_only = pool.sides == 1
    tail_only = pool.sides == 2
    bad_side = (head_only & np.isin(cat, ["one_to_one", "one_to_many"])) | (
        tail_only & np.isin(cat, ["one_to_one", "many_to_one"]))
    report["category_side"] = int((bad_side & ~removed).sum())
    removed |= bad_side
    report["removed"] = int(removed.sum())
    report["kept"] = int((~removed).sum())
    return removed, report


def coverage_table(pool: Pool, kg: KnowledgeGraph, labels: dict[tuple[int, int, int], int],
                   published_depth: dict[tuple[int, int, int], int], max_depth: int,
                   removed: np.ndarray | None = None) -> pd.DataFrame:
    """Per depth: rebuilt pool size, how much of it the published judgments cover, new positives found, and the
    overlap with the published pool of the same depth."""
    rows = []
    keys = [tuple(x) for x in pool.triples.tolist()]
    label = np.array([labels.get(k, -1) for k in keys], dtype=np.int64)
    pub = np.array([published_depth.get(k, 10**6) for k in keys])
    pub_depths = np.array(list(published_depth.values()) or [0])
    for d in range(1, max_depth + 1):
        inp = pool.depth <= d
        judged = inp & (label >= 0)
        row = {"Depth": d, "pool_size": int(inp.sum()), "judged": int(judged.sum()),
               "judged_share": float(judged.sum() / max(inp.sum(), 1)),
               "new_positives": int((inp & (label == 1)).sum()),
               "published_pool_size": int((pub_depths <= d).sum()),
               "overlap_with_published": int((inp & (pub <= d)).sum())}
        if removed is not None:
            row["prefiltered"] = int((inp & removed).sum())
        rows.append(row)
    return pd.DataFrame(rows)
