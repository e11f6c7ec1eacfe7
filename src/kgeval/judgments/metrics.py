"""Per-question lower and upper bounds of metrics that are monotone in the labels, at cut-off k.

Two shapes of metric cover the five measures (positions i = 1 … k of one system's top k, x_i ∈ {0, 1}):

* **linear** ``M = Σ_i w_i x_i``: P@k (w_i = 1/k), DCG@k (w_i = 1/log2(i + 1), binary gains) and RBP truncated
  at depth k (w_i = (1 − p) p^(i−1); Moffat and Zobel, ACM TOIS 27(1), 2008);
* **max** ``M = max_i g_i x_i`` with g non-increasing: Success@k (g_i = 1, the macro Hits@k) and RR@k
  (g_i = 1/i: reciprocal rank of the first relevant entity within k, 0 beyond).

Both are non-decreasing in every label, so the lower bound sets every unknown to 0 (today's value, as trec_eval
counts an unjudged document) and the upper bound sets every unknown to 1. RBP's residual (Moffat and Zobel) is
the upper bound's gain over the lower plus p^k, the weight of every rank beyond k: the true RBP of the whole
ranking lies in [lower, lower + residual]. Normalised measures (AP, nDCG, R-precision) are not monotone (a
relevant unjudged entity also raises the ideal) and have no bounds here (Lu, Moffat and Culpepper, IRJ 2016).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MeasureError
from ..metrics import names
from .labels import REL, UNKNOWN

LINEAR, MAX = "linear", "max"
METRICS = ("P", "Success", "RR", "DCG", "RBP")  # the config's bounds.metrics enum (tests/test_bounds.py checks)


@dataclass(frozen=True)
class BoundedMetric:
    """A metric monotone in the labels at cut-off k: ``base`` (one of :data:`METRICS`), ``kind`` (LINEAR or MAX),
    its weights w_i (LINEAR) or gains g_i (MAX), its name (``P@10``) and the weight of the ranks beyond k
    (RBP's p^k, part of the residual only)."""

    base: str
    kind: str
    weights: np.ndarray
    name: str
    tail: float = 0.0


# the metric's names for the shared resolver (kgeval.metrics.names): case, '-' and '_' do not matter
_NAMES: names.Lookup[str] = names.Lookup("bounded metric")
for _base, _synonyms in (("P", ("precision",)), ("Success", ()), ("RR", ("recip_rank", "reciprocal_rank")),
                         ("DCG", ()), ("RBP", ("rank_biased_precision",))):
    _NAMES.register(_base, (_base, *_synonyms))


def bounded_metric(base: str, k: int, rbp_p: float = 0.8) -> BoundedMetric:
    """The named metric at cut-off k: ``P``, ``Success``, ``RR``, ``DCG`` or ``RBP`` (or a synonym, any case);
    an unknown name or a cut-off below 1 raises :class:`~kgeval.errors.MeasureError` (a ``ValueError``)."""
    found = _NAMES.get(base)
    if found is None:
        raise MeasureError(base, f"known: {', '.join(METRICS)}", what="unknown bounded metric")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise MeasureError(f"{base}@{k}", "the cut-off k of a bounded metric is a positive integer")
    base = found
    i = np.arange(1, k + 1, dtype=float)
    if base == "P":
        return BoundedMetric(base, LINEAR, np.full(k, 1.0 / k), f"P@{k}")
    if base == "DCG":
        return BoundedMetric(base, LINEAR, 1.0 / np.log2(i + 1), f"DCG@{k}")
    if base == "RBP":
        return BoundedMetric(base, LINEAR, (1 - rbp_p) * rbp_p ** (i - 1), f"RBP@{k}(p={rbp_p:g})", rbp_p ** k)
    if base == "Success":
        return BoundedMetric(base, MAX, np.ones(k), f"Success@{k}")
    return BoundedMetric(base, MAX, 1.0 / i, f"RR@{k}")


def _value(m: BoundedMetric, relevant: np.ndarray) -> np.ndarray:
    if m.kind == LINEAR:
        return relevant @ m.weights
    return (relevant * m.weights).max(-1)


def system_bounds(code: np.ndarray, m: BoundedMetric) -> tuple[np.ndarray, np.ndarray]:
    """Per system and question (arrays of ``code.shape[:-1]``): the metric with every unknown non-relevant
    (lower) and with every unknown relevant (upper)."""
    rel = code == REL
    return _value(m, rel), _value(m, rel | (code == UNKNOWN))
