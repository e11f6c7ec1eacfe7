"""Judgments (qrels) of the pooled test set in two flavours, per pooling depth, and TREC file export.

* **published**: FB-Test-S plus the annotated triples whose published pooling depth is ≤ d (exact paper
  reproduction); judged non-relevant = the N triples of depth ≤ d;
* **rebuilt**: FB-Test-S plus the triples of this pipeline's own pool at depth ≤ d (``kgeval.pools.pooling``),
  labelled by the published annotations where a label exists; a pooled triple without a published label is
  *pooled but unjudged* (trec_eval's qrels value −1, which infAP uses; every other measure treats it as
  non-relevant, like any unjudged document). With pre-filtering, triples the filter removes count as judged
  non-relevant, as in the paper.

``qrels_for_dump`` turns judged triples into the (question, entity, rel) rows of a dump's questions: a triple
(h, r, t) judges entity h for the head question (?, r, t) and entity t for the tail question (h, r, ?),
wherever those questions exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.judged import judged_entities
from ..data.kg import KnowledgeGraph
from ..data.labels import read_labels
from ..data.testsets import TestSet
from ..io import atomic_open
from ..metrics.evaluate import Qrels
from ..scores.dumps import Dump
from .pooling import Pool, triple_key


@dataclass
class Judgments:
    name: str
    triples: np.ndarray
    rel: np.ndarray  # 1 relevant, 0 judged non-relevant, -1 pooled but unjudged
    depth: np.ndarray  # 0 = seed (original test triple)

    def at_depth(self, d: int) -> Judgments:
        keep = self.depth <= d
        return Judgments(f"{self.name}({d})", self.triples[keep], self.rel[keep], self.depth[keep])

    def counts(self) -> dict[str, int]:
        return {"relevant": int((self.rel == 1).sum()), "nonrelevant": int((self.rel == 0).sum()),
                "pooled_unjudged": int((self.rel == -1).sum())}


def published_judgments(pooled: TestSet) -> Judgments:
    return Judgments("published", pooled.triples, pooled.label.astype(np.int8), pooled.depth)


def rebuilt_judgments(seed: TestSet, pool: Pool, labels: dict[tuple[int, int, int], int], kg: KnowledgeGraph,
                      removed: np.ndarray | None = None) -> Judgments:
    """Seeds (depth 0, relevant) plus every pooled triple at its rebuilt depth, labelled where possible."""
    keys = [tuple(t) for t in pool.triples.tolist()]
    rel = np.array([labels.get(k, -1) for k in keys], dtype=np.int8)
    if removed is not None:
        rel = np.where(removed & (rel == -1), 0, rel).astype(np.int8)
    seed_keys = set(triple_key(seed.positives, kg).tolist())
    not_seed = ~np.isin(triple_key(pool.triples, kg), list(seed_keys))
    triples = np.concatenate([seed.positives, pool.triples[not_seed]])
    return Judgments("rebuilt", triples, np.concatenate([np.ones(len(seed.positives), np.int8), rel[not_seed]]),
                     np.concatenate([np.zeros(len(seed.positives), np.int16), pool.depth[not_seed]]))


def labels_of(path: str | Path, kg: KnowledgeGraph) -> dict[tuple[int, int, int], int]:
    return {t: lab for t, (lab, _) in read_labels(path, kg).items()}


def qrels_for_dump(dump: Dump, judgments: Judgments, depth: int | None = None) -> Qrels:
    j = judgments if depth is None else judgments.at_depth(depth)
    ts = TestSet(j.name, j.triples, j.rel, j.depth)
    rows = judged_entities(ts, dump.questions)
    return Qrels(rows.q, rows.entity, rows.label.astype(np.int8), j.name)


# ---- TREC files ------------------------------------------------------------------------------------------------
def _docno(name: str) -> str:
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"entity id {name!r} cannot be a TREC docno (empty or contains whitespace)")
    return name


def export_trec_run(dump: Dump, kg: KnowledgeGraph, out: str | Path, tag: str, depth: int | None = None) -> int:
    """The dump's run in TREC format ``qid Q0 docno rank score tag`` (scores exact: float32 printed with 9
    significant digits round-trips), to ``depth`` candidates per question (default: the whole stored run);
    returns the number of lines."""
    if any(c.isspace() for c in tag):
        raise ValueError(f"run tag {tag!r} contains whitespace")
    names = [_docno(e) for e in kg.entities]
    n = 0
    with atomic_open(out) as fh:
        for q, qid in enumerate(dump.questions.qid):
            for rank, (e, s) in enumerate(zip(dump.run_entity[q], dump.run_score[q]), start=1):
                if e < 0 or (depth is not None and rank > depth):
                    break
                fh.write(f"{qid} Q0 {names[e]} {rank} {float(s):.9g} {tag}\n")
                n += 1
    return n


def export_trec_qrels(qids: list[str], qrels: Qrels, kg: KnowledgeGraph, out: str | Path) -> int:
    """Qrels in TREC format ``qid 0 docno rel`` (rel 1, 0 or −1); ``qids`` are the questions' ids."""
    order = np.lexsort((qrels.entity, qrels.q))
    with atomic_open(out) as fh:
        for i in order.tolist():
            fh.write(f"{qids[qrels.q[i]]} 0 {_docno(kg.entities[qrels.entity[i]])} {int(qrels.rel[i])}\n")
    return len(order)
