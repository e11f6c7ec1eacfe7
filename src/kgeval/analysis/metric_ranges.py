"""The range a rank metric's value lies in, by its column name in a results table (the authors' or ours):
MRR and Hits@k in [0, 1], MR at least 1. A value outside it is a broken table (7.5 read as an MRR would rank its
system first without a word), so readers refuse it in one line. Other columns (adjusted or z-scored metrics,
which may be negative, counts, p-values) are not checked here."""

from __future__ import annotations

import re

import numpy as np

_UNIT = re.compile(r"(?:^|_)(?:mrr|hits@\d+|h@\d+)$", re.IGNORECASE)
_MR = re.compile(r"(?:^|_)mr$", re.IGNORECASE)


def metric_range(column: str) -> tuple[float, float] | None:
    """``(low, high)`` for a rank metric's column, else None."""
    if _UNIT.search(column):
        return 0.0, 1.0
    if _MR.search(column):
        return 1.0, np.inf
    return None


def first_out_of_range(column: str, values: np.ndarray, columns=()) -> tuple[int, str] | None:
    """The position of the first value outside ``column``'s range (NaN, a missing value, passes) and the problem
    in words, or None. A table of system pairs (``columns`` holding SystemA) keeps p-values under the metric's
    name: its own reader checks them as p-values."""
    bounds = metric_range(column)
    if bounds is None or "SystemA" in columns:
        return None
    low, high = bounds
    out = (values < low) | (values > high)
    if not out.any():
        return None
    where = f"in [{low:g}, {high:g}]" if np.isfinite(high) else f"at least {low:g}"
    return int(np.flatnonzero(out)[0]), f"this metric's values lie {where}"
