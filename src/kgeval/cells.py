"""Cells of the sheets kgeval writes for people, made safe to open in a spreadsheet (OWASP's rule against CSV
injection), and read back unchanged.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula (``=HYPERLINK(…)``,
``+1+cmd|…``), and a leading tab or carriage return hides such a start. The annotation and adjudication sheets
copy text that others wrote (annotators' notes and links, templates, entity names), so every text cell that
begins with one of these characters is written with a single quote in front, which spreadsheets show as text.
A cell that already begins with a quote followed by one of them (or by another quote) gets one more quote, so
that :func:`restore` undoes :func:`neutralise` exactly for every string.

Only text columns are touched: a numeric column of a table (an MRR, a negative Δ) is written as the number it
is; a number inside a text column (an item number, a label) that begins with ``-`` gets the quote like any text.
"""

from __future__ import annotations

from typing import Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def _quoted(cell: str) -> bool:
    """``cell`` begins with the quote that :func:`neutralise` adds (followed by a trigger or another quote)."""
    return len(cell) > 1 and cell[0] == QUOTE and (cell[1] in TRIGGERS or cell[1] == QUOTE)


def neutralise(cell: str) -> str:
    """``cell`` as a spreadsheet shows it as text: a quote in front of a formula start (or of a quoted cell)."""
    if cell[:1] in TRIGGERS or _quoted(cell):
        return QUOTE + cell
    return cell


def restore(cell: str) -> str:
    """The cell that :func:`neutralise` was given."""
    return cell[1:] if _quoted(cell) else cell


def neutralise_text_columns(df: Any) -> Any:
    """A copy of a DataFrame with :func:`neutralise` applied to its text (object or string) columns only."""
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: neutralise(v) if isinstance(v, str) else v)
    return out


def restore_text_columns(df: Any) -> Any:
    """A DataFrame read from a sheet :func:`neutralise_text_columns` wrote, with its text cells restored."""
    import pandas as pd

    for col in df.columns:
        if pd.api.types.is_object_dtype(df[col]) or pd.api.types.is_string_dtype(df[col]):
            df[col] = df[col].map(lambda v: restore(v) if isinstance(v, str) else v)
    return df


def write_sheet_csv(df: Any, path: Any) -> None:
    """:func:`kgeval.io.write_csv` of a table people open in a spreadsheet, its text columns neutralised."""
    from .io import write_csv

    write_csv(neutralise_text_columns(df), path)
