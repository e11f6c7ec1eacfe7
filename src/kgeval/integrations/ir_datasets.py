"""kgeval's test collections in ir_datasets (its extension mechanism, ``ir_datasets.registry.register``)::

    import ir_datasets, kgeval                       # kgeval registers them when ir_datasets is imported
    ds = ir_datasets.load("kgeval/fb15k-237/test-s-c")
    ds.queries_iter()    # query_id, text (the relation's question template), relation, entity, side
    ds.qrels_iter()      # query_id, doc_id, relevance (1 an answer or a Y judgment, 0 an N judgment), iteration
    ds.docs_iter()       # doc_id (the entity id), text (its name)
    ds.filtered_dict()   # {query_id: [doc_id, ...]}: remove these from a run to rank as KGC's filtered setting

Names: ``kgeval/fb15k-237/test-o``, ``/test-s``, ``/test-s-c``, ``/test-s-c/depth-<d>`` (the judgments made at
pooling depth ≤ d) and ``kgeval/wn18rr/test``. A dataset loads its test set (:func:`kgeval.api.load_testset`,
which builds the data once when missing) on first use, not when it is registered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import cached_property
from typing import NamedTuple

log = logging.getLogger(__name__)

PREFIX = "kgeval/"
COLLECTIONS = {"kgeval/fb15k-237/test-o": "FB-Test-O", "kgeval/fb15k-237/test-s": "FB-Test-S",
               "kgeval/fb15k-237/test-s-c": "FB-Test-S-C", "kgeval/wn18rr/test": "WN18RR"}
DEPTH_PATTERN = r"^kgeval/fb15k-237/test-s-c/depth-(\d+)$"
QRELS_DEFS = {1: "an answer: a test triple or a pooled candidate judged Y",
              0: "judged not an answer: a pooled candidate judged N"}


class KgevalDoc(NamedTuple):
    doc_id: str  # the entity id (FB15k-237's Freebase mid, WN18RR's synset offset)
    text: str  # the entity's name (its id when the dataset has no names)

    def default_text(self) -> str:
        return self.text


class KgevalQuery(NamedTuple):
    query_id: str  # the published question id (head<i>, tail<i>)
    text: str  # the relation's question template, the known entity's name in, "?" for the asked side
    relation: str
    entity: str  # the known entity's id
    side: str  # the side asked for: head (?, r, t) or tail (h, r, ?)

    def default_text(self) -> str:
        return self.text


class KgevalQrel(NamedTuple):
    query_id: str
    doc_id: str
    relevance: int
    iteration: str


class KgevalFiltered(NamedTuple):
    query_id: str
    doc_ids: tuple[str, ...]  # removed before ranking: the question's train ∪ valid answers


class _Source:
    """One test set, loaded on first use (:func:`kgeval.api.load_testset`) and shared by the handlers."""

    def __init__(self, name: str, depth: int | None = None):
        self.name, self.depth = name, depth

    @cached_property
    def testset(self):
        from ..api import load_testset

        return load_testset(self.name, depth=self.depth)

    @cached_property
    def kg(self):
        return self.testset.load_kg()


def _handlers(source: _Source) -> list:
    from ir_datasets.formats.base import BaseDocs, BaseQrels, BaseQueries

    class Docs(BaseDocs):
        def docs_iter(self) -> Iterator[KgevalDoc]:
            kg = source.kg
            for e, eid in enumerate(kg.entities):
                yield KgevalDoc(eid, kg.display_name(e))

        def docs_count(self) -> int:
            return source.kg.num_entities

        def docs_cls(self):
            return KgevalDoc

        def docs_namespace(self):
            return "kgeval"

        def docs_lang(self):
            return "en"

    class Queries(BaseQueries):
        def queries_iter(self) -> Iterator[KgevalQuery]:
            from ..home import default_file
            from ..pools.annotation.templates import load_templates, relation_question

            path = default_file("annotations/templates.tsv")
            templates = load_templates(path) if path.is_file() else {}
            kg = source.kg
            names = {eid: kg.display_name(e) for e, eid in enumerate(kg.entities)}
            rows = source.testset.questions[["qid", "side", "entity", "relation"]].itertuples(index=False)
            for qid, side, entity, relation in rows:
                head, tail = ("?", names[entity]) if side == "head" else (names[entity], "?")
                yield KgevalQuery(qid, relation_question(relation, head, tail, templates), relation, entity, side)

        def queries_cls(self):
            return KgevalQuery

        def queries_namespace(self):
            return "kgeval"

        def queries_lang(self):
            return "en"

    class Qrels(BaseQrels):
        def qrels_iter(self) -> Iterator[KgevalQrel]:
            qrels = source.testset.qrels[["qid", "docno", "relevance"]]
            for qid, docno, rel in qrels.itertuples(index=False):
                yield KgevalQrel(qid, docno, int(rel), "0")

        def qrels_defs(self) -> dict[int, str]:
            return dict(QRELS_DEFS)

        def qrels_cls(self):
            return KgevalQrel

    class Filtered:
        def filtered_dict(self) -> dict[str, list[str]]:
            """``{query_id: [doc_id, ...]}``: each question's entities kgeval removes before ranking."""
            from .filters import filtered_entities

            return filtered_entities(source.testset)

        def filtered_iter(self) -> Iterator[KgevalFiltered]:
            for qid, docs in self.filtered_dict().items():
                yield KgevalFiltered(qid, tuple(docs))

        def testset(self):
            """The :class:`kgeval.api.TestCollection` behind this dataset."""
            return source.testset

    return [Docs(), Queries(), Qrels(), Filtered()]


def _dataset(name: str, depth: int | None = None):
    from ir_datasets.datasets.base import Dataset

    return Dataset(*_handlers(_Source(name, depth)))


def register() -> None:
    """Register kgeval's test collections in ir_datasets (idempotent)."""
    import ir_datasets

    registry = ir_datasets.registry
    for key, name in COLLECTIONS.items():
        if key not in registry._registered:
            registry.register(key, _dataset(name))
    if not any(p.pattern == DEPTH_PATTERN for p, _ in registry._patterns):
        registry.register_pattern(DEPTH_PATTERN, lambda key, groups: _dataset("FB-Test-S-C", int(groups[0])))
