"""Judgment labels (``head relation tail Y|N``) and pooling depths, read as untrusted input.

Labels are stripped of whitespace and must be ``Y`` or ``N``; anything else is an error naming file and line.
Exact duplicates are dropped with a warning; the same triple labelled both Y and N is an error naming both
lines. A triple mentioning an entity or relation unknown to the knowledge graph is an error.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import InputError
from .kg import KnowledgeGraph
from .tsv import iter_rows

log = logging.getLogger(__name__)

Triple = tuple[int, int, int]


def parse_label(path: str | Path, lineno: int, value: str) -> int:
    value = value.strip()
    if value == "Y":
        return 1
    if value == "N":
        return 0
    raise InputError(path, lineno, f"label {value!r} is not Y or N")


def read_labels(path: str | Path, kg: KnowledgeGraph, allow_empty: bool = False) -> dict[Triple, tuple[int, int]]:
    """Return ``{triple ids: (label, line)}``; label 1 = Y (relevant), 0 = N.

    A file without a single label (empty or blank) is an error, since it usually means a failed export; with
    ``allow_empty`` (an empty pool needs no judgments) it is a warning."""
    out: dict[Triple, tuple[int, int]] = {}
    dups = 0
    for lineno, fields in iter_rows(path, 4, required=3):
        h, r, t, lab = fields
        label = parse_label(path, lineno, lab)
        triple = kg.encode_row(path, lineno, h, r, t)
        if triple in out:
            prev_label, prev_line = out[triple]
            if prev_label != label:
                raise InputError(path, lineno, f"triple {h} {r} {t} is labelled {'YN'[1 - label]} here "
                                               f"but {'YN'[1 - prev_label]} on line {prev_line}")
            dups += 1
            log.warning("%s:%d: duplicate of line %d dropped", path, lineno, prev_line)
            continue
        out[triple] = (label, lineno)
    if dups:
        log.warning("%s: %d duplicate judgments dropped", path, dups)
    if not out:
        if not allow_empty:
            raise InputError(path, None, "no labels: the file is empty or blank (expected head, relation, tail, "
                                         "Y|N lines)")
        log.warning("%s: no labels (the file is empty or blank)", path)
    return out


def read_depths(path: str | Path, kg: KnowledgeGraph, max_depth: int = 1000) -> dict[Triple, tuple[int, int]]:
    """Return ``{triple ids: (pooling depth, line)}`` from ``head relation tail depth`` lines."""
    out: dict[Triple, tuple[int, int]] = {}
    for lineno, (h, r, t, d) in iter_rows(path, 4):
        if not d.isdigit() or not 1 <= int(d) <= max_depth:
            raise InputError(path, lineno, f"pooling depth {d!r} is not an integer in 1..{max_depth}")
        triple = kg.encode_row(path, lineno, h, r, t)
        if triple in out and out[triple][0] != int(d):
            raise InputError(path, lineno, f"triple {h} {r} {t} has depth {d} here but {out[triple][0]} on "
                                           f"line {out[triple][1]}")
        out.setdefault(triple, (int(d), lineno))
    return out
