"""Evaluate one score dump under one set of judgments: per-answer, per-question and summary values.

Column names follow the published result tables: ``micro_hits@1`` … ``micro_hits@10``, ``micro_mr``,
``micro_mrr``, ``macro_hits@1`` … ``macro_hits@10``, ``macro_mr``, ``macro_mrr``, then trec_eval measures under
trec_eval's names (``map_cut_20``, ``ndcg_cut_20``, ``recip_rank``, ``P_10`` …).

* micro metrics average over answers (every relevant (question, entity) pair), Eq. 1 of the paper; with
  ``relation_weights`` the mean of each relation's answers is weighted by the given share instead of the
  relation's frequency (Table 4);
* macro metrics average over questions with at least one relevant entity (Eq. 2): Hits@k = the best answer
  is in the top k, MR/MRR from the best answer's rank;
* trec measures are computed from the top-K run and the judgments exactly as trec_eval computes them,
  averaged over the same questions.

A dump of a TREC run cut at depth K (``Dump.complete`` false) knows no rank beyond K: an answer it did not
retrieve has rank ∞ (reciprocal rank 0, no hit, as trec_eval counts it). Only the metrics whose value that
convention fixes are reported (``depth_safe``: MRR, HMR, Hits@k for k ≤ K, AMRR, ZMRR, AH@k, ZH@k and the
unified Hits-like steps); the others (MR, IMR, GMR, IGMR, AMR, AMRI, ZMR, the unified α transforms, Hits@k for
k > K) are NaN in the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.kg import SIDE_NAMES
from ..scores.dumps import Dump
from . import trec
from .adjusted import family_metrics
from .rank_based import RankBasedMetric, study_metrics
from .ranks import Ranks, macro_ranks, micro_ranks
from .umf import UnifiedMetric

# The unified-metric settings written into every evaluation table (more in the UMF grid analysis): MRR-like
# (α = −1) and a flatter transform (α = −0.5), each weighting answer entities uniformly or by frequency, and a
# Hits@10-like step with uniform entity weights.
DEFAULT_UMF = ({"alpha": -1.0, "p": 1.0, "weighting": "uniform"}, {"alpha": -1.0, "p": 1.0, "weighting": "frequency"},
               {"alpha": -0.5, "p": 1.0, "weighting": "uniform"}, {"alpha": -0.5, "p": 1.0, "weighting": "frequency"},
               {"hits_k": 10, "p": 1.0, "weighting": "uniform"})


def umf_metrics(settings, num_entities: int) -> list[UnifiedMetric]:
    return [UnifiedMetric(num_entities=num_entities, **s) for s in settings]


def depth_safe(metric, depth: int | None) -> bool:
    """Whether ``metric`` is known for a run cut at ``depth`` (None: a complete ranking, every metric is): its
    value must not depend on where beyond the cut an unretrieved answer lies, given that it counts as rank ∞."""
    if depth is None:
        return True
    if isinstance(metric, UnifiedMetric):
        return metric.is_step and (metric.hits_k or 1) <= depth
    k = getattr(metric, "k", None)
    if k is not None:  # Hits@k, AH@k, ZH@k
        return k <= depth
    return metric.key in ("mrr", "hmr", "amrr", "zmrr")  # transforms of 1/r, which is 0 at rank ∞


def family_columns(prefix: str, ranks: np.ndarray, num_candidates: np.ndarray, entity: np.ndarray,
                   umf: list[UnifiedMetric], weights: np.ndarray | None = None,
                   depth: int | None = None) -> tuple[dict, dict]:
    """Summary values of the metric families (adjusted, z-scored, unified) and, for the unified metrics with
    p = 1, per-item values n·ω_i·f(r_i) whose mean is the metric (ω_i from the full set's class counts).
    ``depth``: the cut of a TREC run; metrics not ``depth_safe`` are NaN."""
    summary, items = {}, {}
    for m in family_metrics():
        summary[f"{prefix}_{m.key}"] = float(m(ranks, num_candidates, weights)) if depth_safe(m, depth) else np.nan
    for m in umf:
        if not depth_safe(m, depth):
            summary[f"{prefix}_{m.key}"] = np.nan
            continue
        summary[f"{prefix}_{m.key}"] = m(ranks, num_candidates, weights, classes=entity)
        if m.p == 1.0 and len(ranks):
            omega = m.item_weights(len(ranks), weights, classes=entity)
            items[f"{prefix}_{m.key}"] = len(ranks) * omega * m.transform(ranks, num_candidates)
    return summary, items


@dataclass
class Qrels:
    """Judgments over a dump's questions: rows (question index, entity, rel) with rel 1 (relevant),
    0 (judged non-relevant) or −1 (pooled but not judged)."""

    q: np.ndarray
    entity: np.ndarray
    rel: np.ndarray
    label: str = ""

    def __len__(self) -> int:
        return len(self.q)


def qrels_at_depth(dump: Dump, depth: int | None = None) -> Qrels:
    """The published judgments of a dump's test set at a pooling depth (all of them when ``depth`` is None):
    triples judged at a depth beyond ``depth`` are unjudged."""
    j = dump.judged
    keep = np.ones(len(j), bool) if depth is None else j.depth <= depth
    return Qrels(j.q[keep], j.entity[keep], j.label[keep].astype(np.int8),
                 f"depth {depth}" if depth is not None else "all")


def relevant_rows(dump: Dump, qrels: Qrels) -> np.ndarray:
    """Boolean mask over the dump's judged rows: relevant under ``qrels``."""
    E = dump.questions.num_entities
    jk = dump.judged.q * E + dump.judged.entity
    rk = qrels.q[qrels.rel >= 1].astype(np.int64) * E + qrels.entity[qrels.rel >= 1]
    missing = np.setdiff1d(rk, jk)
    if len(missing):
        raise ValueError(f"{len(missing)} relevant (question, entity) pairs are not judged entities of the dump")
    return np.isin(jk, rk)


@dataclass
class Evaluation:
    per_answer: pd.DataFrame
    per_question: pd.DataFrame
    summary: dict[str, float]
    micro: Ranks = field(repr=False)
    macro: Ranks = field(repr=False)


def _metric_columns(prefix: str, metrics: list[RankBasedMetric], ranks: np.ndarray,
                    num_candidates: np.ndarray) -> dict[str, np.ndarray]:
    return {f"{prefix}_{m.key}": m.item_values(ranks, num_candidates) for m in metrics}


def answer_weights(relation: np.ndarray, relation_weights: dict[int, float] | None) -> np.ndarray | None:
    """Per-answer weights so that relation p's answers together weigh ``relation_weights[p]`` (Eq. 1 with the
    relation share replaced); relations without a weight get 0."""
    if relation_weights is None:
        return None
    rel_ids, inverse, counts = np.unique(relation, return_inverse=True, return_counts=True)
    w = np.array([relation_weights.get(int(r), 0.0) for r in rel_ids])
    return (w / counts)[inverse]


def evaluate(dump: Dump, qrels: Qrels, relation_category: list[str] | None = None,
             measures: list[str] | None = None, relation_weights: dict[int, float] | None = None,
             rank_type: str = "realistic", metrics: list[RankBasedMetric] | None = None,
             families: bool = False, umf_settings=DEFAULT_UMF) -> Evaluation:
    """Micro, macro and trec measures of one dump under ``qrels``; with ``families`` also the adjusted,
    z-scored and unified metrics (``micro_amri``, ``macro_zmrr``, ``micro_umf_a-1_p1_uniform`` …)."""
    metrics = metrics or study_metrics()
    measures = trec.DEFAULT_MEASURES if measures is None else measures
    qs = dump.questions
    rel = relevant_rows(dump, qrels)
    j = dump.judged
    mic = micro_ranks(j.q, dump.score, dump.n_gt, dump.n_eq, dump.n_candidates, rel, dump.retrieved)
    mac = macro_ranks(j.q, dump.n_gt, dump.n_eq, dump.n_candidates, rel, dump.retrieved)
    depth = None if dump.complete else int(dump.meta.get("run_depth", dump.k))
    cat = np.array(relation_category) if relation_category is not None else None

    def describe(qidx: np.ndarray) -> dict[str, np.ndarray]:
        out = {"qid": np.array(qs.qid, dtype=object)[qidx], "side": np.array(SIDE_NAMES)[qs.side[qidx]],
               "relation": qs.relation[qidx]}
        if cat is not None:
            out["category"] = cat[qs.relation[qidx]]
        return out

    r_mic = mic.get(rank_type)
    per_answer = pd.DataFrame({
        **describe(mic.q), "entity": j.entity[mic.rows], "depth": j.depth[mic.rows],
        "rank_optimistic": mic.optimistic, "rank_pessimistic": mic.pessimistic, "rank": r_mic,
        "num_candidates": mic.num_candidates,
        **_metric_columns("micro", metrics, r_mic, mic.num_candidates)})
    r_mac = mac.get(rank_type)
    per_question = pd.DataFrame({
        **describe(mac.q), "q": mac.q, "rank_optimistic": mac.optimistic, "rank_pessimistic": mac.pessimistic,
        "rank": r_mac, "num_candidates": mac.num_candidates,
        **_metric_columns("macro", metrics, r_mac, mac.num_candidates)})
    if measures:
        run = trec.relevance_codes(dump.run_entity[mac.q], mac.q, qrels.q, qrels.entity, qrels.rel,
                                   qs.num_entities)
        for name, values in trec.evaluate_run(run, measures).items():
            per_question[name] = values

    weights = answer_weights(per_answer["relation"].to_numpy(), relation_weights)
    summary: dict[str, float] = {}
    for m in metrics:
        summary[f"micro_{m.key}"] = m.aggregate(per_answer[f"micro_{m.key}"].to_numpy(), weights) \
            if depth_safe(m, depth) else np.nan
    for m in metrics:
        summary[f"macro_{m.key}"] = m.aggregate(per_question[f"macro_{m.key}"].to_numpy()) \
            if depth_safe(m, depth) else np.nan
    for name in measures:
        summary[name] = float(per_question[name].mean()) if len(per_question) else float("nan")
    if families:
        umf = umf_metrics(umf_settings, qs.num_entities)
        fam, items = family_columns("micro", r_mic, mic.num_candidates.astype(float), j.entity[mic.rows], umf,
                                    weights, depth)
        summary.update(fam)
        for k, v in items.items():
            per_answer[k] = v
        if relation_weights is None:  # the macro forms ignore relation weights
            fam, items = family_columns("macro", r_mac, mac.num_candidates.astype(float), j.entity[mac.rows], umf,
                                        depth=depth)
            summary.update(fam)
            for k, v in items.items():
                per_question[k] = v
    return Evaluation(per_answer, per_question, summary, mic, mac)


def per_category(evaluation: Evaluation, metrics: list[RankBasedMetric] | None = None) -> pd.DataFrame:
    """Micro metrics per question side × relation category (the published ``lp_per_rel_type.csv`` rows)."""
    metrics = metrics or study_metrics()
    rows = []
    pa = evaluation.per_answer
    for (side, category), grp in pa.groupby(["side", "category"], sort=True):
        row = {"QuestionType": side, "RelationType": category}
        for m in metrics:
            row[f"micro_{m.key}"] = m.aggregate(grp[f"micro_{m.key}"].to_numpy())
        rows.append(row)
    return pd.DataFrame(rows)
