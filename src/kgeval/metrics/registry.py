"""Every metric column the evaluation tables write, declared once: label, direction, range and family.

Figures, τ tables, re-analysis and significance tests read names, labels and directions from
:data:`REGISTRY` instead of re-deriving them from column names. A column is ``<aggregation>_<metric>`` for the
KGC rank metrics (``micro_mrr``: per answer, ``macro_mrr``: per question), or a trec_eval measure name
(``map_cut_20``, ``ndcg_cut_20``, ``P_10``, ``condensed_map_cut_20``, ``unjudged_10``, …), which are per question.

Parametrised families (Hits@k for any k, trec cutoffs, unified metrics ``umf_a<α>_p<p>_<weighting>``) are
declared as patterns: ``REGISTRY["micro_hits@7"]`` and ``REGISTRY["micro_umf_a-0.5_p2_frequency"]`` resolve
without being listed; iterating over ``REGISTRY`` yields the columns the default configuration writes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

INF = math.inf
AGGREGATIONS = {"micro": "Micro", "macro": "Macro"}


@dataclass(frozen=True)
class Metric:
    """One metric column. ``family``: ``rank`` (MR, MRR, Hits@k and the other plain rank statistics),
    ``adjusted`` (chance-adjusted indices and z-scores, Hoyt et al. 2022), ``unified`` (the unified metric
    framework), ``trec`` (trec_eval measures), ``diagnostic`` (pool coverage) or ``count``. ``aggregation``:
    ``micro`` (mean over answers), ``macro`` (mean over questions) or None (trec_eval: per question)."""

    column: str
    label: str
    higher_is_better: bool
    value_range: tuple[float, float]
    family: str
    aggregation: str | None = None


@dataclass(frozen=True)
class _RankMetric:
    """A rank metric before its aggregation prefix: ``{k}`` in the label is the cutoff."""

    label: str
    higher_is_better: bool
    value_range: tuple[float, float]
    family: str


# micro_/macro_ suffix -> declaration; a trailing "@k" is matched by the patterns below
_RANK = {
    "mr": _RankMetric("MR", False, (1.0, INF), "rank"),
    "mrr": _RankMetric("MRR", True, (0.0, 1.0), "rank"),
    "hits@k": _RankMetric("Hits@{k}", True, (0.0, 1.0), "rank"),
    "imr": _RankMetric("IMR", True, (0.0, 1.0), "rank"),
    "hmr": _RankMetric("HMR", False, (1.0, INF), "rank"),
    "gmr": _RankMetric("GMR", False, (1.0, INF), "rank"),
    "igmr": _RankMetric("IGMR", True, (0.0, 1.0), "rank"),
    "amr": _RankMetric("AMR", False, (0.0, 2.0), "adjusted"),
    "amri": _RankMetric("AMRI", True, (-1.0, 1.0), "adjusted"),
    "zmr": _RankMetric("z-MR", True, (-INF, INF), "adjusted"),
    "amrr": _RankMetric("AMRR", True, (-INF, 1.0), "adjusted"),
    "zmrr": _RankMetric("z-MRR", True, (-INF, INF), "adjusted"),
    "ah@k": _RankMetric("AH@{k}", True, (-INF, 1.0), "adjusted"),
    "zh@k": _RankMetric("z-H@{k}", True, (-INF, INF), "adjusted"),
}

# trec_eval measure (without cutoff) -> label, direction, range, family
_TREC = {
    "map": ("MAP", True, (0.0, 1.0), "trec"), "map_cut": ("MAP@{k}", True, (0.0, 1.0), "trec"),
    "ndcg": ("nDCG", True, (0.0, 1.0), "trec"), "ndcg_cut": ("nDCG@{k}", True, (0.0, 1.0), "trec"),
    "P": ("P@{k}", True, (0.0, 1.0), "trec"), "recall": ("Recall@{k}", True, (0.0, 1.0), "trec"),
    "success": ("Success@{k}", True, (0.0, 1.0), "trec"), "recip_rank": ("MRR (trec_eval)", True, (0.0, 1.0), "trec"),
    "Rprec": ("R-prec", True, (0.0, 1.0), "trec"), "bpref": ("bpref", True, (0.0, 1.0), "trec"),
    "infAP": ("infAP", True, (0.0, 1.0), "trec"),
    "unjudged": ("Unjudged@{k}", False, (0.0, 1.0), "diagnostic"),
    # counts: no quality direction; "higher" keeps them in the same orientation as num_rel_ret
    "num_ret": ("Retrieved", True, (0.0, INF), "count"), "num_rel": ("Relevant", True, (0.0, INF), "count"),
    "num_rel_ret": ("Relevant retrieved", True, (0.0, INF), "count"),
}

_RANK_RE = re.compile(r"^(?P<agg>micro|macro)_(?P<name>[a-z]+)(?:@(?P<k>\d+))?$")
_UMF_RE = re.compile(r"^(?P<agg>micro|macro)_umf_(?:h(?P<hits>\d+)|a(?P<alpha>-?(?:inf|[0-9.]+))(?P<r>_r)?)"
                     r"_p(?P<p>-?[0-9.]+)_(?P<weighting>uniform|frequency|strat[0-9.]+)(?P<ni>_ni)?$")
_TREC_RE = re.compile(r"^(?P<condensed>condensed_)?(?P<base>[A-Za-z_]+?)(?:_(?P<k>\d+))?$")


def _rank(column: str) -> Metric | None:
    m = _RANK_RE.match(column)
    if not m:
        return None
    key = m["name"] + ("@k" if m["k"] else "")
    decl = _RANK.get(key)
    if decl is None:
        return None
    label = f"{AGGREGATIONS[m['agg']]} {decl.label.format(k=m['k'])}"
    return Metric(column, label, decl.higher_is_better, decl.value_range, decl.family, m["agg"])


def _unified(column: str) -> Metric | None:
    m = _UMF_RE.match(column)
    if not m:
        return None
    if m["hits"]:
        transform, higher = f"𝟙[r ≤ {m['hits']}]", True
    else:
        alpha = float(m["alpha"])
        transform = f"r^{m['alpha']}"
        # the framework rescales α ≤ 0 (and α > 0 when asked, key suffix _r) to [0, 1], higher is better;
        # an unscaled α > 0 is a generalised mean rank, lower is better
        higher = alpha <= 0 or bool(m["r"])
    rng = (0.0, 1.0) if higher else (1.0, INF)
    label = f"{AGGREGATIONS[m['agg']]} UMF({transform}, p={m['p']}, {m['weighting']})"
    return Metric(column, label, higher, rng, "unified", m["agg"])


def _trec(column: str) -> Metric | None:
    m = _TREC_RE.match(column)
    if not m or m["base"] not in _TREC:
        return None
    label, higher, rng, family = _TREC[m["base"]]
    takes_k = "{k}" in label
    if takes_k != bool(m["k"]):
        return None
    label = label.format(k=m["k"])
    if m["condensed"]:
        label += " (condensed)"
    return Metric(column, label, higher, rng, family)


# the columns the default configuration's evaluation tables hold, in their order
_DEFAULT_COLUMNS = (
    [f"{a}_{n}" for a in AGGREGATIONS for n in [f"hits@{k}" for k in range(1, 11)] + ["mr", "mrr"]]
    + ["map", "map_cut_20", "ndcg", "ndcg_cut_10", "ndcg_cut_20", "P_1", "P_5", "P_10", "P_20", "recip_rank",
       "Rprec", "recall_10", "recall_100", "success_1", "success_10", "bpref", "infAP", "condensed_map_cut_20",
       "condensed_ndcg_cut_20", "unjudged_10", "num_ret", "num_rel", "num_rel_ret"]
    + [f"{a}_{n}" for a in AGGREGATIONS
       for n in ["imr", "hmr", "gmr", "igmr", "amr", "amri", "zmr", "amrr", "zmrr", "ah@1", "zh@1", "ah@3", "zh@3",
                 "ah@10", "zh@10", "umf_a-1_p1_uniform", "umf_a-1_p1_frequency", "umf_a-0.5_p1_uniform",
                 "umf_a-0.5_p1_frequency", "umf_h10_p1_uniform"]]
)


class MetricRegistry(Mapping[str, Metric]):
    """Column name → :class:`Metric`; resolves every member of the declared families, iterates over the
    default configuration's columns."""

    def __getitem__(self, column: str) -> Metric:
        for resolve in (_rank, _unified, _trec):
            metric = resolve(column)
            if metric is not None:
                return metric
        raise KeyError(column)

    def __contains__(self, column: object) -> bool:
        return isinstance(column, str) and any(r(column) is not None for r in (_rank, _unified, _trec))

    def __iter__(self) -> Iterator[str]:
        return iter(_DEFAULT_COLUMNS)

    def __len__(self) -> int:
        return len(_DEFAULT_COLUMNS)


REGISTRY = MetricRegistry()


def metric(column: str) -> Metric:
    """The declaration of ``column``; a clear error for a column that is not a metric."""
    try:
        return REGISTRY[column]
    except KeyError:
        raise KeyError(f"{column!r} is not a known metric column (kgeval.metrics.registry)") from None


def higher_is_better(column: str) -> bool:
    return metric(column).higher_is_better


def label(column: str) -> str:
    """The figure label of a metric column; a column that is not a metric keeps its name."""
    return REGISTRY[column].label if column in REGISTRY else column
