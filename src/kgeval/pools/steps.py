"""Steps of the pool stage: rebuild the pools, coverage, metrics per pooling depth, TREC export."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..data.kg import KnowledgeGraph
from ..data.labels import read_depths
from ..data.testsets import TestSet
from ..io import write_csv, write_json
from ..metrics.steps import pooling_depth_table
from ..scores.dumps import load_dump
from .pooling import Pool, build_pool, coverage_table, prefilter
from .qrels import (
    export_trec_qrels,
    export_trec_run,
    labels_of,
    published_judgments,
    qrels_for_dump,
    rebuilt_judgments,
)

log = logging.getLogger(__name__)


def build_pool_step(runs: dict[str, str], kg_path: str, annotations: str, pooling_depth: str, out_pool: str,
                    out_coverage: str, out_prefilter: str, max_depth: int = 10) -> None:
    """Pool the pooling systems' runs on the sampled test set; compare with the published pool."""
    kg = KnowledgeGraph.load(kg_path)
    pool = build_pool({s: load_dump(p) for s, p in runs.items()}, kg, max_depth)
    removed, report = prefilter(pool, kg)
    labels = labels_of(annotations, kg)
    published = {t: d for t, (d, _) in read_depths(pooling_depth, kg).items()}
    cov = coverage_table(pool, kg, labels, published, max_depth, removed)
    pool.save(out_pool, kg)
    write_csv(cov, out_coverage)
    write_json(out_prefilter, {"systems": sorted(runs), "max_depth": max_depth, "pool_size": len(pool), **report})
    log.info("rebuilt pool: %d triples; coverage at depth %d: %s", len(pool), max_depth, cov.iloc[-1].to_dict())


def depth_tables_step(dumps: dict[str, str], kg_path: str, pooled_testset: str, seed_testset: str, pool: str,
                      annotations: str, out_published: str, out_rebuilt: str, measures: list[str],
                      max_depth: int = 10, use_prefilter: bool = False,
                      items_out: tuple[str, str] | None = None) -> None:
    """Every system's metrics at pooling depths 0 … max_depth, with published and with rebuilt qrels."""
    kg = KnowledgeGraph.load(kg_path)
    pooled = TestSet.load(pooled_testset, kg)
    seed = TestSet.load(seed_testset, kg)
    pub = published_judgments(pooled)
    pooling_depth_table(dumps, kg_path, out_published, max_depth, measures,
                        qrels_by_depth=lambda dump, d: qrels_for_dump(dump, pub, d), items_out=items_out)
    p = Pool.load(pool, kg)
    removed = prefilter(p, kg)[0] if use_prefilter else None
    reb = rebuilt_judgments(seed, p, labels_of(annotations, kg), kg, removed)
    pooling_depth_table(dumps, kg_path, out_rebuilt, max_depth, measures,
                        qrels_by_depth=lambda dump, d: qrels_for_dump(dump, reb, d))


def export_trec_run_step(dump: str, kg_path: str, out: str, tag: str, depth: int | None = None) -> None:
    """A dump's run as a TREC run file, for trec_eval itself."""
    n = export_trec_run(load_dump(dump), KnowledgeGraph.load(kg_path), out, tag, depth)
    log.info("%s: %d run lines", Path(dump).name, n)


def export_trec_qrels_step(testset: str, questions: str, kg_path: str, out: str,
                           depth: int | None = None) -> None:
    """A test set's judgments (all, or up to a pooling depth) as a TREC qrels file."""
    from ..data.questions import load_questions
    from ..metrics.evaluate import Qrels
    from ..scores.ranking import judged_entities

    kg = KnowledgeGraph.load(kg_path)
    ts = TestSet.load(testset, kg)
    if depth is not None:
        ts = ts.at_depth(depth)
    qs = load_questions(questions, kg)
    j = judged_entities(ts, qs)
    n = export_trec_qrels(qs.qid, Qrels(j.q, j.entity, j.label.astype(np.int8)), kg, out)
    log.info("%s: %d qrels lines", Path(testset).name, n)


def annotation_batch_step(pool: str, kg_path: str, annotations: str, templates: str, out: str, batch: str,
                          use_prefilter: bool = False) -> None:
    """The annotation sheet of the rebuilt pool's triples that have no published judgment (and that the
    pre-filter, when on, does not already label N): the next batch for human judges."""
    from .annotation import export_batch, load_templates

    kg = KnowledgeGraph.load(kg_path)
    p = Pool.load(pool, kg)
    labels = labels_of(annotations, kg)
    todo = np.array([tuple(t) not in labels for t in p.triples.tolist()], bool)
    if use_prefilter:
        todo &= ~prefilter(p, kg)[0]
    triples = p.triples[todo]
    if len(triples) == 0:
        log.info("every pooled triple is judged: the batch is empty")
        from ..io import atomic_open
        from .annotation import EXPORT_HEADER

        with atomic_open(out) as fh:
            fh.write("\t".join(EXPORT_HEADER) + "\n")
        return
    export_batch(triples, kg, load_templates(templates), out, batch)
