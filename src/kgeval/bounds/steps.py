"""Steps of the bounds stage: what the existing judgments decide about every system comparison on a pooled test
set, at every pooling depth, with the published and with the rebuilt judgments.

Per (flavour, depth) state: the questions are those of the macro filter (at least one relevant entity at that
depth, as ``pooling_depth.csv`` counts them); the unknowns are the unjudged (question, entity) pairs in any
system's top k (pooled-but-unjudged ones included); every judged pair keeps its label. Outputs: per-system
bounds, per-pair decisions and the τ interval against depth 0 (the seed set evaluated as the paper does).

Micro (per answer) metrics are not bounded: an unjudged entity that is relevant adds an answer (a new term of
the mean) and moves every other answer's filtered rank, so no per-label monotone form exists. Their condensed
values and ``unjudged_10`` stay in ``pooling_depth.csv`` as before.
"""

from __future__ import annotations

import logging

import numpy as np

from ..data.kg import KnowledgeGraph
from ..data.testsets import TestSet
from ..errors import InputError
from ..io import write_csv
from ..metrics.evaluate import Qrels, qrels_at_depth
from ..pools.pooling import Pool, prefilter
from ..pools.qrels import labels_of, qrels_for_dump, rebuilt_judgments
from ..scores.dumps import Dump, load_dump
from .figure import tau_band_figure
from .labels import codes_from_qrels
from .metrics import metric
from .tables import states_tables

log = logging.getLogger(__name__)


def top_k(dump: Dump, k: int) -> np.ndarray:
    if dump.k < k:  # a stored run shorter than k would turn unknown positions into absent ones
        raise InputError(dump.path, None, f"its run holds {dump.k} candidates per question, fewer than bounds.k = {k}")
    return dump.run_entity[:, :k].astype(np.int64)


def state(entity: np.ndarray, qrels: Qrels, num_entities: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes (S, Q, k) of every system's top k under ``qrels`` and the macro filter's question mask (Q,)."""
    S, Q, _ = entity.shape
    q_index = np.arange(Q)
    code = np.stack([codes_from_qrels(entity[s], q_index, qrels.q, qrels.entity, qrels.rel, num_entities)
                     for s in range(S)])
    qmask = np.zeros(Q, bool)
    qmask[qrels.q[qrels.rel >= 1]] = True
    return code, qmask


def bounds_step(dumps: dict[str, str], kg_path: str, seed_testset: str, pool: str,
                annotations: str, out_systems: str, out_pairs: str, out_tau: str, out_figure: str,
                out_figure_pdf: str, k: int = 10, rbp_p: float = 0.8,
                metrics: tuple[str, ...] = ("P", "Success", "RR", "DCG", "RBP"),
                milp_metrics: tuple[str, ...] = ("P",), milp_time_limit: float = 10.0, max_depth: int = 10,
                use_prefilter: bool = False, testset: str = "") -> None:
    kg = KnowledgeGraph.load(kg_path)
    systems = sorted(dumps)
    loaded = {s: load_dump(dumps[s]) for s in systems}
    first = loaded[systems[0]]
    for s in systems[1:]:
        if list(loaded[s].questions.qid) != list(first.questions.qid):
            raise InputError(dumps[s], None, f"its questions differ from {dumps[systems[0]]}'s; every system must "
                             "rank the same questions of the test set")
    entity = np.stack([top_k(loaded[s], k) for s in systems])
    E = first.questions.num_entities
    seed = TestSet.load(seed_testset, kg)
    p = Pool.load(pool, kg)
    removed = prefilter(p, kg)[0] if use_prefilter else None
    reb = rebuilt_judgments(seed, p, labels_of(annotations, kg), kg, removed)

    def states():  # depth 0 first: it is each flavour's reference ranking; published = the dumps' judged rows
        for d in range(max_depth + 1):
            yield ("published", d, *state(entity, qrels_at_depth(first, d), E))
        for d in range(max_depth + 1):
            yield ("rebuilt", d, *state(entity, qrels_for_dump(first, reb, d), E))

    ms = [metric(b, k, rbp_p) for b in metrics]
    sys_t, pair_t, tau_t = states_tables(systems, entity, states(), ms, set(milp_metrics), milp_time_limit)
    write_csv(sys_t, out_systems)
    write_csv(pair_t, out_pairs)
    write_csv(tau_t, out_tau)
    tau_band_figure(tau_t, out_figure, out_figure_pdf,
                    f"{testset or 'pooled test set'}: τ(depth 0, depth d), today (line) and under every labelling of "
                    "the unjudged triples (band)")
    deepest = pair_t[pair_t["Depth"] == max_depth]
    for (flavour, name), g in deepest.groupby(["Flavour", "Metric"], sort=False):
        log.info("%s depth %d %s: %d of %d pairs decided", flavour, max_depth, name, int(g["decided"].sum()), len(g))
