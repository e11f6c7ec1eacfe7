"""Verdicts decided on intervals: a claim's rule is a function of threshold checks on its statistics, and each
check is decided on the 95 % interval of its statistic rather than on the point value.

A check passes, fails, or is open: it passes when the whole interval satisfies the comparison with the
threshold, fails when none of it does, and is open when the interval holds the threshold. The claim's verdict
is decided when every way the open checks could come out gives the same verdict (an open check that cannot
change the verdict does not make it undecided); otherwise it is ``undecided``, and the open checks are named
with their intervals and thresholds. A check without an interval (a statistic of the data alone, or one no
resampling covers) is decided on its point value, and says so.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

_OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, ">": operator.gt, "<=": operator.le,
                                                    "<": operator.lt}
_SHOWN = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}
UNDECIDED = "undecided"


@dataclass(frozen=True)
class Check:
    """``statistic op threshold`` (op one of ``>= > <= <``), with the statistic's point value and its interval
    ``[lo, hi]`` (NaN: none; the check is then decided on the point value)."""

    label: str
    point: float
    lo: float
    hi: float
    op: str
    threshold: float

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"check {self.label!r}: unknown comparison {self.op!r} (one of {', '.join(_OPS)})")

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    def at_point(self) -> bool:
        return _OPS[self.op](self.point, self.threshold)

    def state(self) -> bool | None:
        """True when every value of the interval passes, False when none does, None when it holds the
        threshold (the point decides a check without an interval)."""
        if not self.has_interval:
            return self.at_point()
        passes = _OPS[self.op]
        low, high = passes(self.lo, self.threshold), passes(self.hi, self.threshold)
        # the comparison is monotone in the statistic, so both ends agreeing decides the whole interval
        return low if low == high else None

    def text(self) -> str:
        if not self.has_interval:
            return f"{self.label} {self.point:.4f} (no interval) {_SHOWN[self.op]} {self.threshold:g}"
        return f"{self.label} [{self.lo:.4f}, {self.hi:.4f}] {_SHOWN[self.op]} {self.threshold:g}"


def difference(label: str, a: Check | tuple[float, float, float], b: tuple[float, float, float], op: str,
               threshold: float = 0.0) -> Check:
    """The check ``a − b op threshold`` from two statistics given as (point, lo, hi): the difference's
    interval is [lo_a − hi_b, hi_a − lo_b]. It holds the difference whenever both intervals hold their
    statistics (at least 90 % for two 95 % intervals, by Bonferroni), and it is as wide as the two together,
    where the difference of two positively correlated τ (the same systems, the same resamples) varies less than
    either: in practice it decides less often than the difference's own bootstrap would."""
    pa, la, ha = a if isinstance(a, tuple) else (a.point, a.lo, a.hi)
    pb, lb, hb = b
    return Check(label, pa - pb, la - hb, ha - lb, op, threshold)


def interval_verdict(checks: list[Check], rule: Callable[[list[bool]], str]) -> tuple[str, list[Check]]:
    """The verdict ``rule`` gives on every outcome the open checks allow: that verdict when they all agree,
    ``undecided`` otherwise; and the open checks that made it undecided (empty when decided)."""
    states = [c.state() for c in checks]
    open_at = [i for i, s in enumerate(states) if s is None]
    verdicts = set()
    for outcome in itertools.product((False, True), repeat=len(open_at)):
        filled = list(states)
        for i, value in zip(open_at, outcome):
            filled[i] = value
        verdicts.add(rule(filled))
    if len(verdicts) == 1:
        return verdicts.pop(), []
    return UNDECIDED, [checks[i] for i in open_at]


def interval_text(checks: list[Check]) -> str:
    """Every check's interval against its threshold, for the findings table's ``interval`` column."""
    return "; ".join(c.text() for c in checks)


def threshold_text(checks: list[Check]) -> str:
    """Each check's statistic and threshold, for the findings table's ``threshold`` column."""
    return "; ".join(f"{c.label} {_SHOWN[c.op]} {c.threshold:g}" for c in checks)


def undecided_text(open_checks: list[Check]) -> str:
    """``undecided (interval [a, b], threshold t)`` for each open check, named by its statistic."""
    return "; ".join(f"undecided ({c.label}: interval [{c.lo:.4f}, {c.hi:.4f}], threshold {c.threshold:g})"
                     for c in open_checks)
