"""Every metric column the evaluation tables write, built from the metrics' own declarations, and the one
resolver of the measure names a user writes.

Figures, τ tables, re-analysis and significance tests read names, labels and directions from
:data:`REGISTRY` instead of re-deriving them from column names. A column is ``<aggregation>_<metric>`` for the
KGC rank metrics (``micro_mrr``: per answer, ``macro_mrr``: per question), or a trec_eval measure name
(``map_cut_20``, ``ndcg_cut_20``, ``P_10``, ``condensed_map_cut_20``, ``unjudged_10``, …), which are per question.

Nothing is declared here: the KGC metrics are the classes of :mod:`kgeval.metrics.rank_based` and
:mod:`kgeval.metrics.adjusted` (found as subclasses of ``RankBasedMetric``, as PyKEEN's class resolver finds its
metrics), the trec measures the ``@declare``-d functions of :mod:`kgeval.metrics.trec`, the unified metrics
:class:`kgeval.metrics.umf.UnifiedMetric`. Parametrised families (Hits@k for any k, trec cutoffs, unified metrics
``umf_a<α>_p<p>_<weighting>``) resolve as patterns: ``REGISTRY["micro_hits@7"]`` and
``REGISTRY["micro_umf_a-0.5_p2_frequency"]`` resolve without being listed; iterating over ``REGISTRY`` yields the
columns the default configuration writes.

:func:`resolve` reads a measure name as the API and the command line take it (``MRR``, ``Hits@10``, ``z-MRR``,
``nDCG@20``, ``RR@10``, ``micro_mrr`` …, see :mod:`kgeval.metrics.names`) and refuses, in one line, a name
or cutoff the evaluation does not compute.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..errors import MeasureError
from . import names, trec
from .adjusted import family_metrics
from .evaluate import DEFAULT_UMF
from .rank_based import RankBasedMetric, study_metrics
from .umf import UnifiedMetric

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


def _declared_classes(base: type[RankBasedMetric]) -> Iterator[type[RankBasedMetric]]:
    """Every public subclass of ``base`` in kgeval, depth first (private bases such as ``_Derived`` are skipped;
    the unified metrics are a pattern family of their own, :func:`_unified`)."""
    for cls in base.__subclasses__():
        if (not cls.__name__.startswith("_") and cls.__module__.startswith("kgeval.")
                and cls.family != UnifiedMetric.family):
            yield cls
        yield from _declared_classes(cls)


# key ("mrr", "hits@{k}") -> class; name part ("MRR", "Hits", "z-MRR", synonyms) -> class
_RANK: dict[str, type[RankBasedMetric]] = {}
KGC: names.Lookup[type[RankBasedMetric]] = names.Lookup("KGC metric")
for _cls in dict.fromkeys(_declared_classes(RankBasedMetric)):
    _RANK[_cls.key] = _cls
    KGC.register(_cls, (_cls.label.split("@")[0], _cls.key.split("@")[0], _cls.name, *_cls.synonyms))

_RANK_RE = re.compile(r"^(?P<agg>micro|macro)_(?P<name>[a-z]+)(?:@(?P<k>\d+))?$")
_UMF_RE = re.compile(r"^(?P<agg>micro|macro)_umf_(?:h(?P<hits>\d+)|a(?P<alpha>-?(?:inf|[0-9.]+))(?P<r>_r)?)"
                     r"_p(?P<p>-?[0-9.]+)_(?P<weighting>uniform|frequency|strat[0-9.]+)(?P<ni>_ni)?$")


def _rank(column: str) -> Metric | None:
    m = _RANK_RE.match(column)
    if not m:
        return None
    cls = _RANK.get(m["name"] + ("@{k}" if m["k"] else ""))
    if cls is None:
        return None
    label = f"{AGGREGATIONS[m['agg']]} {cls.label.format(k=m['k'])}"
    return Metric(column, label, cls.increasing, cls.value_range, cls.family, m["agg"])


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
    return Metric(column, label, higher, rng, UnifiedMetric.family, m["agg"])


def _trec(column: str) -> Metric | None:
    try:
        decl, k, condensed = trec.resolve(column)
    except MeasureError:
        return None
    if trec.column(column) != column:  # a column carries trec_eval's own name, not an ir_measures synonym
        return None
    label = decl.label.format(k=k) + (" (condensed)" if condensed else "")
    return Metric(column, label, decl.higher_is_better, decl.value_range, decl.family)


# the trec_eval measures of the default configuration (config/config.yaml's evaluation.trec_measures, which
# tests/test_metric_registry.py holds equal)
STUDY_TREC_MEASURES = ("map", "map_cut_20", "ndcg", "ndcg_cut_10", "ndcg_cut_20", "P_1", "P_5", "P_10", "P_20",
                       "recip_rank", "Rprec", "recall_10", "recall_100", "success_1", "success_10", "bpref", "infAP",
                       "condensed_map_cut_20", "condensed_ndcg_cut_20", "unjudged_10", "num_ret", "num_rel",
                       "num_rel_ret")


def _default_columns() -> tuple[str, ...]:
    """The columns of the default configuration's evaluation tables, in their order: the study's metrics, the
    trec measures, then the metric families and the unified metrics of every table (``metrics.evaluate``)."""
    study = [m.key for m in study_metrics()]
    families = [m.key for m in family_metrics()] + [UnifiedMetric(num_entities=2, **s).key for s in DEFAULT_UMF]
    return tuple([f"{a}_{k}" for a in AGGREGATIONS for k in study] + list(STUDY_TREC_MEASURES)
                 + [f"{a}_{k}" for a in AGGREGATIONS for k in families])


_DEFAULT_COLUMNS = _default_columns()


class MetricRegistry(Mapping[str, Metric]):
    """Column name → :class:`Metric`; resolves every member of the declared families, iterates over the
    default configuration's columns."""

    def __getitem__(self, column: str) -> Metric:
        for resolve_column in (_rank, _unified, _trec):
            metric = resolve_column(column)
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


# ---- measure names ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Measure:
    """A measure name resolved onto the evaluation's columns.

    ``micro``: the column of the per-answer table (None for per-question measures); ``macro``: the column of the
    per-question table (a macro KGC metric or a trec measure); ``trec``: ``macro`` is a trec measure the
    evaluation computes on request; ``cut``: RR@k, the reciprocal rank counted only within the top k
    (:func:`kgeval.metrics.trec.reciprocal_rank_at`)."""

    name: str
    micro: str | None
    macro: str | None
    trec: bool = False
    cut: int | None = None


def _allowed_cutoffs(cls: type[RankBasedMetric]) -> list[int]:
    stem = cls.key.split("@")[0]
    return sorted(int(c.rsplit("@", 1)[1]) for c in _DEFAULT_COLUMNS if c.startswith(f"micro_{stem}@"))


def _kgc(name: str, base: str, k: int | None, agg: str | None) -> Measure:
    cls = KGC.get(base)
    assert cls is not None
    label_stem = cls.label.split("@")[0]
    if "{k}" in cls.key:
        allowed = _allowed_cutoffs(cls)
        if k is None or k not in allowed:
            problem = "needs a cutoff" if k is None else f"the evaluation computes no {label_stem}@{k}"
            raise MeasureError(name, f"{problem}; {label_stem}@k is computed for k in "
                                     f"{names.cutoffs_text(allowed)}")
        key = cls.key.format(k=k)
    elif k is not None:
        raise MeasureError(name, f"{cls.label} takes no cutoff")
    else:
        key = cls.key
    return Measure(name, f"micro_{key}" if agg != "macro" else None, f"macro_{key}" if agg != "micro" else None)


def _without_aggregation(base: str) -> tuple[str | None, str]:
    """(``micro``/``macro`` or None, the rest) of ``micro_mrr``, ``macro_hits``, ``MRR``."""
    agg = next((a for a in AGGREGATIONS if base.startswith(f"{a}_")), None)
    return agg, base[len(agg) + 1:] if agg else base


def resolve(name: str) -> Measure:
    """One measure name → :class:`Measure`.

    Accepted: the KGC metrics by label, key or synonym without the aggregation (``MRR``, ``MR``, ``Hits@10``,
    ``AMRI``, ``z-MRR``, ``zmrr``, ``mean_reciprocal_rank``: micro and macro) or with it (``micro_mrr``,
    ``macro_hits@3``), the unified metrics' columns of the tables (``micro_umf_a-1_p1_uniform``), trec_eval's and
    ir_measures' names (``ndcg_cut_20``, ``nDCG@20``, ``AP@20``, ``P@10``, ``R@100``, ``Success@10``, ``RR``,
    ``Bpref``, ``infAP``, ``Judged@10``: per question) and ``RR@k``. Case, ``-`` and ``_`` in the name part do
    not matter. A cutoff is a positive integer, and a KGC cutoff one the evaluation computes (Hits@1–10; AH@k and
    z-H@k at 1, 3, 10). Anything else raises a :class:`~kgeval.errors.MeasureError` (a ``ValueError``)."""
    if not isinstance(name, str) or not name:
        raise MeasureError(str(name), "a measure name is a non-empty string such as MRR or nDCG@20")
    if name in REGISTRY and REGISTRY[name].family == UnifiedMetric.family:
        if name not in _DEFAULT_COLUMNS:
            raise MeasureError(name, "the evaluation computes the unified metrics " + ", ".join(
                c for c in _DEFAULT_COLUMNS if c.startswith("micro_umf")) + " (and their macro_ forms)")
        micro = REGISTRY[name].aggregation == "micro"
        return Measure(name, name if micro else None, None if micro else name)
    try:
        base, k = names.split(name)
    except MeasureError as exc:  # a KGC metric names the cutoffs the evaluation computes
        cls = KGC.get(_without_aggregation(name.rpartition("@")[0])[1])
        if cls is None or "{k}" not in cls.key:
            raise
        raise MeasureError(name, f"{exc.problem.split(' (')[0]}; {cls.label.split('@')[0]}@k is computed for k in "
                                 f"{names.cutoffs_text(_allowed_cutoffs(cls))}") from None
    agg, rest = _without_aggregation(base)
    if agg and rest in KGC:
        return _kgc(name, rest, k, agg)
    if base in KGC:
        return _kgc(name, base, k, None)
    if "@" in name and k is not None and trec.lookup(base, cutoff=False) is trec.DECLARED["recip_rank"]:
        return Measure(name, None, "recip_rank", trec=True, cut=k)
    try:
        column = trec.column(name)
    except MeasureError as exc:
        if exc.problem.startswith("known:"):  # neither a KGC metric nor a trec measure
            raise MeasureError(name, "KGC metrics: " + ", ".join(
                n + ("@k" if "{k}" in KGC.get(n).key else "") for n in KGC.names)
                + "; trec measures: " + exc.problem.removeprefix("known: "), what="unknown measure") from None
        raise
    return Measure(name, None, column, trec=True)


def resolve_all(measures: Iterable[str]) -> list[Measure]:
    if isinstance(measures, str):
        raise MeasureError(measures, "measures are a list of names (measures=[...]), not one string")
    return [resolve(m) for m in measures]
