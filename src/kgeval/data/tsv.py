"""Reading tab-separated text files: line-ending and whitespace normalisation, field counts, duplicates.

Every problem is reported with the file and the 1-based line number.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_open
from ..limits import read_text

log = logging.getLogger(__name__)


def iter_rows(path: str | Path, ncols: int | tuple[int, ...],
              required: int | None = None) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line number, fields)`` for each non-blank line.

    A leading byte-order mark and CRLF and CR line endings are accepted; each field is stripped of surrounding whitespace. A line with a
    different number of fields, or an empty field among the first ``required`` (default: all), is an error.
    """
    path = Path(path)
    allowed = (ncols,) if isinstance(ncols, int) else ncols
    required = min(allowed) if required is None else required
    # utf-8-sig: a byte-order mark (spreadsheets write one) is dropped, not read into the first field
    text = read_text(path, "utf-8-sig")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        fields = [f.strip() for f in raw.split("\t")]
        if len(fields) not in allowed:
            want = " or ".join(str(n) for n in allowed)
            raise InputError(path, lineno, f"expected {want} tab-separated fields, found {len(fields)}")
        for i, f in enumerate(fields):
            if not f and i < required:
                raise InputError(path, lineno, f"field {i + 1} is empty")
        yield lineno, fields


def read_triples(path: str | Path, duplicates: str = "warn") -> list[tuple[str, str, str]]:
    """Read ``head <TAB> relation <TAB> tail`` lines.

    ``duplicates``: "warn" drops exact repeats with a warning naming their lines, "error" refuses them,
    "keep" keeps them.
    """
    if duplicates not in ("warn", "error", "keep"):
        raise ValueError(f"unknown duplicates policy {duplicates!r}")
    seen: dict[tuple[str, str, str], int] = {}
    out: list[tuple[str, str, str]] = []
    dropped = 0
    for lineno, (h, r, t) in iter_rows(path, 3):
        triple = (h, r, t)
        first = seen.get(triple)
        if first is not None and duplicates != "keep":
            if duplicates == "error":
                raise InputError(path, lineno, f"duplicate of line {first}: {h} {r} {t}")
            dropped += 1
            log.warning("%s:%d: duplicate of line %d dropped: %s %s %s", path, lineno, first, h, r, t)
            continue
        seen.setdefault(triple, lineno)
        out.append(triple)
    if dropped:
        log.warning("%s: %d duplicate triples dropped", path, dropped)
    return out


def write_rows(path: str | Path, rows, header: list[str] | None = None) -> None:
    """Write tab-separated rows with LF line endings, atomically."""
    with atomic_open(path) as fh:
        if header:
            fh.write("\t".join(header) + "\n")
        for row in rows:
            fh.write("\t".join(str(x) for x in row) + "\n")


def write_columns(path: str | Path, columns: list) -> None:
    """:func:`write_rows` for rows given as equal-length columns (arrays of strings or integers, or lists of strings,
    without tabs or newlines):
    the same bytes, but the text is built by numpy's vectorised string operations, not a Python loop per row
    (a synthetic graph with thousands of relations writes millions of rows)."""
    cols = [c if isinstance(c, list) else np.asarray(c).astype(str).tolist() for c in columns]
    with atomic_open(path) as fh:
        if cols and len(cols[0]):  # joined by str.join: numpy's fixed-width string additions were 5x slower
            fh.write("\n".join(map("\t".join, zip(*cols))) + "\n")


def normalise_triples(src: str | Path, dest: str | Path, duplicates: str = "warn") -> int:
    """Rewrite a triples file with LF endings, stripped fields and no duplicates; return the triple count."""
    triples = read_triples(src, duplicates=duplicates)
    write_rows(dest, triples)
    return len(triples)
