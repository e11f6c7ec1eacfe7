"""Comparison tables in ``ranx.compare``'s shape: one row per system, a letter per row, and beside every value the
letters of the systems it is significantly better than, with the tests ``kgeval evaluate``'s placement uses
(:mod:`kgeval.external.placement`): the paired t-test with Holm's correction over each system's comparisons
(``student``), or the randomised Tukey HSD over all pairs (``tukey``).

A system's Holm family is its comparisons with every other system of the table, as in placement (where it is the
evaluated system against each study system): with one evaluated system, its marks are exactly placement's
``significant_t`` (and ``significant_hsd``) where it is better.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd

from ..analysis.significance import holm, paired_t_pvalues, tukey_hsd_pvalues
from ..metrics.registry import higher_is_better, label
from .placement import _CELLS_PER_CHUNK, ALPHA
from .report import letters

TESTS = {"student": "paired Student's t-test with Holm's correction over each system's comparisons",
         "tukey": "randomised Tukey HSD test"}


def _joiner(n: int) -> str:
    """How a cell's letters are joined: as ranx does (``ab``) while every letter is one character; with commas
    once the table has more than 26 systems (``aa,b``), where ``aab`` could be a, a, b or aa, b."""
    return "," if n > len(string.ascii_lowercase) else ""


def pvalue_matrix(items: np.ndarray, test: str, trials: int = 1000, seed: int = 0) -> np.ndarray:
    """S × S p-values of an item matrix (n items × S systems): ``student``, row i holds system i's
    Holm-adjusted p-values against every other system (its family); ``tukey``, the symmetric Tukey HSD p-values.
    The diagonal is NaN."""
    X = np.asarray(items, dtype=np.float64)
    n, S = X.shape
    P = np.full((S, S), np.nan)
    if n < 2 or S < 2:
        return P
    if test == "student":
        i, j, p = paired_t_pvalues(X)
        raw = np.full((S, S), np.nan)
        raw[i, j] = raw[j, i] = p
        for k in range(S):
            others = np.arange(S) != k
            P[k, others] = holm(raw[k, others])
    elif test == "tukey":
        chunk = max(1, _CELLS_PER_CHUNK // (n * S))
        i, j, p = tukey_hsd_pvalues(X, trials, seed, chunk)
        P[i, j] = P[j, i] = p
    else:
        raise ValueError(f"unknown test {test!r}: {' or '.join(TESTS)}")
    return P


def better_marks(values: np.ndarray, pvalues: np.ndarray, higher: bool, max_p: float = ALPHA) -> list[list[int]]:
    """For each system, the systems (column indices) it is significantly better than: p < ``max_p`` and a better
    value (higher or lower, as the metric's direction)."""
    v = np.asarray(values, dtype=np.float64)
    better = (v[:, None] > v[None, :]) if higher else (v[:, None] < v[None, :])
    sig = np.nan_to_num(pvalues, nan=1.0) < max_p
    return [list(np.flatnonzero(row)) for row in better & sig]


def _fmt(value: float, digits: int) -> str:
    return "–" if not np.isfinite(value) else f"{value:.{digits}f}"


def to_markdown(table: pd.DataFrame, columns: list[str], marks: dict[str, list[list[int]]], digits: int = 4,
                caption: str = "") -> str:
    """ranx's table as Markdown: ``#`` (the row's letter), ``Model``, one column per metric with the value and, as
    superscripts, the letters of the rows it is significantly better than; the best value of a column in bold."""
    keys = letters(len(table))
    head = ["#", "Model"] + [label(c) for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    best = {c: _best(table[c].to_numpy(dtype=np.float64), c) for c in columns}
    for r, system in enumerate(table["System"].astype(str)):
        cells = [keys[r], system.replace("|", "\\|")]
        for c in columns:
            value = _fmt(float(table[c].iloc[r]), digits)
            value = f"**{value}**" if r in best[c] else value
            sup = _joiner(len(table)).join(keys[j] for j in marks.get(c, [[]] * len(table))[r])
            cells.append(value + (f"<sup>{sup}</sup>" if sup else ""))
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    return (caption + "\n\n" + text) if caption else text


def to_latex(table: pd.DataFrame, columns: list[str], marks: dict[str, list[list[int]]], digits: int = 4,
             caption: str = "", label_: str = "tab:results") -> str:
    """ranx's LaTeX table (booktabs): the same cells as :func:`to_markdown`, superscripts as ``$^{ab}$`` and the
    letters a row is not better than as ``\\hphantom`` so that the columns align."""
    keys = letters(len(table))
    spec = "c|l" + "|c" * len(columns)
    lines = ["\\begin{table*}[ht]", "\\centering", f"\\caption{{{_tex(caption)}}}", f"\\begin{{tabular}}{{{spec}}}",
             "\\toprule", "\\textbf{\\#} & \\textbf{Model} & "
             + " & ".join(f"\\textbf{{{_tex(label(c))}}}" for c in columns) + " \\\\", "\\midrule"]
    best = {c: _best(table[c].to_numpy(dtype=np.float64), c) for c in columns}
    n = len(table)
    for r, system in enumerate(table["System"].astype(str)):
        cells = [keys[r], _tex(system)]
        for c in columns:
            value = _fmt(float(table[c].iloc[r]), digits)
            value = f"\\textbf{{{value}}}" if r in best[c] else value
            on = marks.get(c, [[]] * n)[r]
            sup = _joiner(n).join(keys[j] for j in on)
            off = _joiner(n).join(keys[j] for j in range(n) if j != r and j not in on)
            cells.append(value + (f"$^{{{sup}}}$" if sup else "") + (f"\\hphantom{{$^{{{off}}}$}}" if off else ""))
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", f"\\label{{{label_}}}", "\\end{table*}"]
    return "\n".join(lines) + "\n"


def _best(values: np.ndarray, column: str) -> set[int]:
    if not np.isfinite(values).any():
        return set()
    target = np.nanmax(values) if higher_is_better(column) else np.nanmin(values)
    return set(np.flatnonzero(values == target).tolist())


def _tex(text: str) -> str:
    for a, b in (("\\", "\\textbackslash{}"), ("_", "\\_"), ("&", "\\&"), ("%", "\\%"), ("#", "\\#")):
        text = text.replace(a, b)
    return text


class Comparison(pd.DataFrame):
    """:func:`kgeval.api.compare`'s table, a DataFrame with :meth:`markdown` and :meth:`latex` in ``ranx.compare``'s shape.

    Columns: ``rank``, ``#`` (the row's letter), ``System``, each compared column, ``evaluated``, and for each
    compared column ``<column>_better_than``: the letters of the rows this system is significantly better than.
    ``attrs``: ``test``, ``max_p``, ``columns``, ``reference`` (the study compared with)."""

    @property
    def _constructor(self):
        return Comparison

    def _marks(self) -> dict[str, list[list[int]]]:
        index = {k: r for r, k in enumerate(self["#"])}
        return {c: [[index[k] for k in _split_letters(v)] for v in self[f"{c}_better_than"]]
                for c in self.attrs["columns"]}

    def _caption(self) -> str:
        return (f"Superscripts: the systems (by letter) a system is significantly better than, "
                f"{TESTS[self.attrs['test']]}, p < {self.attrs['max_p']}; the best value of each column in bold.")

    def markdown(self, digits: int = 4) -> str:
        """The table as Markdown (``#``, ``Model``, one column per measure, significance as superscripts)."""
        return to_markdown(self, self.attrs["columns"], self._marks(), digits, self._caption())

    def latex(self, digits: int = 4) -> str:
        """The table as LaTeX (booktabs), as ``ranx``'s ``Report.to_latex``."""
        return to_latex(self, self.attrs["columns"], self._marks(), digits, self._caption())


def _split_letters(text: str) -> list[str]:
    return text.split(",") if text else []
