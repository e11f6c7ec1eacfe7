"""Tables as Markdown and LaTeX (booktabs), and one table written as CSV, Markdown and LaTeX together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .atomic import atomic_open, write_csv


def _fmt(value: Any, digits: int) -> str:
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        return f"{value:.{digits}f}"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    return str(value)


def md_cell(text: Any) -> str:
    """Text as one cell of a Markdown table: a ``|`` (a system named ``a|b``) would split the row, a line break
    end it."""
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split("\n"))


def to_markdown(df: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (no extra dependency)."""
    cols = [md_cell(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(md_cell(_fmt(v, digits)) for v in row) + " |")
    return "\n".join(lines) + "\n"


_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, caption: str = "", label: str = "", digits: int = 4) -> str:
    """A ``booktabs`` LaTeX table."""
    align = "".join("r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in df.columns)
    out = ["\\begin{table}[t]", "\\centering"]
    if caption:
        out.append(f"\\caption{{{latex_escape(caption)}}}")
    if label:
        out.append(f"\\label{{{label}}}")
    out += [f"\\begin{{tabular}}{{{align}}}", "\\toprule",
            " & ".join(latex_escape(str(c)) for c in df.columns) + " \\\\", "\\midrule"]
    for row in df.itertuples(index=False):
        out.append(" & ".join(latex_escape(_fmt(v, digits)) for v in row) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def write_table(df: pd.DataFrame, csv: str | Path, md: str | Path | None = None, tex: str | Path | None = None,
                caption: str = "", label: str = "", digits: int = 4) -> None:
    """Write one table as CSV and, where asked, Markdown and LaTeX (booktabs)."""
    write_csv(df, csv)
    if md is not None:
        with atomic_open(md) as fh:
            if caption:
                fh.write(f"{caption}\n\n")
            fh.write(to_markdown(df, digits))
    if tex is not None:
        with atomic_open(tex) as fh:
            fh.write(to_latex(df, caption, label, digits))
