"""Range checks of the release's tables that :mod:`.reanalyze` reads beyond their types: pooling depths and
p-values with their pairs. Each refusal names the file and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError


def check_depth(path: Path, depth: pd.DataFrame) -> None:
    """A pooling depth is a whole number of judged ranks, 0 (the sample) or more: τ against depth −3 or 1.5
    would be drawn as if such a pool existed."""
    d = depth["Depth"].to_numpy(float)
    bad = np.isnan(d) | (d < 0) | (d != np.round(d))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(path, int(depth.index[i]) + 2, f"Depth {d[i]:g}: a pooling depth is a "
                                                         "whole number, 0 (the sample) or more")


def check_pvalues(path: Path, df: pd.DataFrame, metrics: list[str]) -> None:
    """p-values in [0, 1] and each pair of two different systems: a p of 1.5 or −0.5 would count as a test's
    outcome (−0.5 < α: "significant"), and a system paired with itself has no difference to test. ``metrics``: the p-value columns of the wide layout."""
    if {"SystemA", "SystemB"} <= set(df.columns):
        same = (df["SystemA"].astype(str) == df["SystemB"].astype(str)).to_numpy()
        if same.any():
            i = int(np.argmax(same))
            raise InputError(path, int(df.index[i]) + 2, f"SystemA and SystemB are both {df['SystemA'].iloc[i]!r}: "
                                                         "a pair compares two different systems")
    columns = ["p"] if {"Metric", "p"} <= set(df.columns) else metrics
    for c in columns:
        v = pd.to_numeric(df[c], errors="coerce").to_numpy(float)
        bad = (v < 0) | (v > 1)  # NaN: a missing value, left out of the summary
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(path, int(df.index[i]) + 2, f"column {c!r} holds {v[i]:g}: a p-value is in [0, 1]")
