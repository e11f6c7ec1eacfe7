"""Annotation sheets: export a batch of pooled triples, read an exported or completed sheet strictly, read a
list of triples to export."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from ...data.kg import KnowledgeGraph
from ...data.labels import parse_label
from ...errors import InputError
from .formats import (
    _BATCH_RE,
    ADJUDICATION_HEADER,
    CONTEXT_COLUMNS,
    EXPORT_HEADER,
    Triple,
    _read_sheet,
    _write_sheet,
)
from .templates import question

log = logging.getLogger(__name__)




@dataclass(frozen=True)
class BatchRow:
    """One exported item."""

    batch: str
    item: str
    head: str
    relation: str
    tail: str
    head_name: str
    tail_name: str
    question: str
    line: int = 0

    @property
    def triple(self) -> Triple:
        return (self.head, self.relation, self.tail)


@dataclass(frozen=True)
class Judgment:
    """One annotator's answer to an item."""

    item: str
    label: int  # 1 = Y, 0 = N
    source_link: str
    note: str
    line: int
    context: tuple[str, ...] = ()  # the adjudication sheet's copy of both answers


def _check_batch(batch: str) -> None:
    if not _BATCH_RE.match(batch):
        raise ValueError(f"batch name {batch!r}: use letters, digits, '.', '_' and '-' (starting with a letter "
                         "or digit)")


def export_batch(triples, kg: KnowledgeGraph, templates: Mapping[str, str], out: str | Path,
                 batch: str) -> list[BatchRow]:
    """Write the annotation sheet of ``triples`` (an ``(n, 3)`` array or sequence of id triples).

    Duplicates are dropped; rows are ordered by (relation, head, tail) ids, so one relation's questions come
    together and the same pool always gives the same sheet; items are numbered 1, 2, ... (plain integers,
    which spreadsheets keep as they are). Written atomically.
    """
    _check_batch(batch)
    arr = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    for col, n, what in ((0, kg.num_entities, "entity"), (1, kg.num_relations, "relation"),
                         (2, kg.num_entities, "entity")):
        bad = (arr[:, col] < 0) | (arr[:, col] >= n)
        if bad.any():
            raise ValueError(f"{what} id {int(arr[bad, col][0])} is not in knowledge graph {kg.name}")
    if not len(arr):
        raise ValueError(f"batch {batch}: no triples to export")
    unique = {tuple(t) for t in arr.tolist()}
    if len(unique) < len(arr):
        log.warning("%d duplicate triples dropped from batch %s", len(arr) - len(unique), batch)
    known = {tuple(t) for t in kg.known().tolist()}
    n_known = len(unique & known)
    if n_known:
        log.warning("batch %s: %d triples are already facts of %s (train/valid/test)", batch, n_known, kg.name)
    order = sorted(unique, key=lambda t: (kg.relations[t[1]], kg.entities[t[0]], kg.entities[t[2]]))
    rows = [BatchRow(batch, str(i), kg.entities[h], kg.relations[r], kg.entities[t], kg.display_name(h),
                     kg.display_name(t), question(kg, (h, r, t), templates), line=i + 1)
            for i, (h, r, t) in enumerate(order, start=1)]
    _write_sheet(out, EXPORT_HEADER, [_export_fields(row) for row in rows])
    log.info("%s: batch %s, %d items", out, batch, len(rows))
    return rows


def _export_fields(row: BatchRow) -> list[str]:
    return [row.batch, row.item, row.head, row.relation, row.tail, row.head_name, row.tail_name, row.question,
            "", "", ""]






def read_export(path: str | Path) -> list[BatchRow]:
    """Read an exported sheet (the reference a completed sheet is checked against)."""
    header, raw = _read_sheet(path)
    if header != EXPORT_HEADER:
        raise InputError(path, 1, f"header must be {EXPORT_HEADER}, found {header}")
    rows: list[BatchRow] = []
    items: dict[str, int] = {}
    triples: dict[Triple, int] = {}
    for lineno, fields in raw:
        fields = _fit(path, lineno, fields, len(EXPORT_HEADER))
        batch, item, h, r, t, hn, tn, q = fields[:8]
        for name, value in (("batch", batch), ("item", item), ("head_id", h), ("relation", r), ("tail_id", t)):
            if not value:
                raise InputError(path, lineno, f"field {name} is empty")
        if rows and batch != rows[0].batch:
            raise InputError(path, lineno, f"batch {batch!r} differs from batch {rows[0].batch!r} on line "
                                           f"{rows[0].line}")
        if item in items:
            raise InputError(path, lineno, f"item {item} already on line {items[item]}")
        if (h, r, t) in triples:
            raise InputError(path, lineno, f"triple {h} {r} {t} already on line {triples[(h, r, t)]}")
        items[item] = lineno
        triples[(h, r, t)] = lineno
        rows.append(BatchRow(batch, item, h, r, t, hn, tn, q, lineno))
    if not rows:
        raise InputError(path, None, "the export has no items")
    return rows


def _fit(path, lineno: int, fields: list[str], n: int) -> list[str]:
    """Pad a row that lacks trailing (empty) fields, as some editors drop them; more fields is an error."""
    if len(fields) > n:
        if any(fields[n:]):
            raise InputError(path, lineno, f"expected {n} tab-separated fields, found {len(fields)}")
        fields = fields[:n]
    return fields + [""] * (n - len(fields))


def _check_url(path, lineno: int, item: str, url: str) -> None:
    parts = urlsplit(url)
    # a control character (ESC) would reach a terminal or the report as it is: refused like a space
    if (parts.scheme.lower() not in ("http", "https") or not parts.netloc
            or any(c.isspace() or not c.isprintable() for c in url)):
        raise InputError(path, lineno, f"item {item}: source link {url!r} is not an http(s) URL (one link per "
                                       "row; put further links in the note)")


def read_annotations(path: str | Path, batch_rows: Sequence[BatchRow],
                     complete: bool = True) -> dict[str, Judgment]:
    """Validate a completed sheet against the exported ``batch_rows``; return ``{item: Judgment}`` in export
    order.

    Errors (each names the file and the 1-based line): a header other than the export's (or the adjudication
    sheet's); a row of another batch; a triple that is not in the batch, or not under that item number; the
    same item twice; an empty label (not done yet) or one other than Y/N; Y without a source link; a source
    link that is not an http(s) URL; and, when ``complete`` (annotators' sheets), items of the batch left out
    (the error lists them; it names no line, as they are absent).
    """
    header, raw = _read_sheet(path)
    if header not in (EXPORT_HEADER, ADJUDICATION_HEADER):
        raise InputError(path, 1, f"header must be the export's {EXPORT_HEADER} (or the adjudication sheet's, "
                                  f"which adds {CONTEXT_COLUMNS}), found {header}")
    by_item = {row.item: row for row in batch_rows}
    by_triple = {row.triple: row for row in batch_rows}
    batch = batch_rows[0].batch if batch_rows else ""
    found: dict[str, Judgment] = {}
    for lineno, fields in raw:
        fields = _fit(path, lineno, fields, len(header))
        b, item, h, r, t = fields[:5]
        label, link, note = fields[8:11]
        if b != batch:
            raise InputError(path, lineno, f"batch {b!r} is not the exported batch {batch!r}")
        exported = by_triple.get((h, r, t))
        if exported is None:
            raise InputError(path, lineno, f"triple {h} {r} {t} is not in batch {batch}")
        if item != exported.item:
            if item in by_item:
                raise InputError(path, lineno, f"item {item} is {' '.join(by_item[item].triple)} in the export, "
                                               f"but this row has {h} {r} {t} (item {exported.item})")
            raise InputError(path, lineno, f"item {item!r} is not in batch {batch} (this triple is item "
                                           f"{exported.item})")
        if item in found:
            raise InputError(path, lineno, f"item {item} is a duplicate of line {found[item].line}")
        if not label:
            raise InputError(path, lineno, f"item {item} has no label: answer Y or N (the sheet is not finished)")
        value = parse_label(path, lineno, label)
        if link:
            _check_url(path, lineno, item, link)
        elif value == 1:
            raise InputError(path, lineno, f"item {item} is labelled Y without a source link (mandatory for Y)")
        found[item] = Judgment(item, value, link, note, lineno, tuple(fields[11:]))
    if complete:
        missing = [row for row in batch_rows if row.item not in found]
        if missing:
            shown = ", ".join(row.item for row in missing[:20]) + (" ..." if len(missing) > 20 else "")
            raise InputError(path, None, f"{len(missing)} of the {len(batch_rows)} items of batch {batch} are "
                                         f"missing: items {shown}")
    order = {row.item: i for i, row in enumerate(batch_rows)}
    return dict(sorted(found.items(), key=lambda kv: order[kv[0]]))


def read_triple_list(path: str | Path, kg: KnowledgeGraph) -> np.ndarray:
    """Triples to annotate: ``head relation tail`` lines, or a file with a header row starting with
    ``head relation tail`` whose further columns are ignored (a pool file of ``kgeval.pools.pooling``)."""
    from ...data.tsv import iter_rows

    header_cols = None
    out = []
    first = True
    for lineno, fields in iter_rows(path, tuple(range(3, 65)), required=3):
        if first and fields[:3] == ["head", "relation", "tail"]:
            header_cols = len(fields)
            first = False
            continue
        first = False
        if header_cols is None and len(fields) != 3:
            raise InputError(path, lineno, f"expected 3 tab-separated fields (head relation tail), found "
                                           f"{len(fields)}")
        if header_cols is not None and len(fields) != header_cols:
            raise InputError(path, lineno, f"expected {header_cols} fields like the header, found {len(fields)}")
        out.append(kg.encode_row(path, lineno, *fields[:3]))
    if not out:
        raise InputError(path, None, "no triples to annotate")
    return np.array(out, dtype=np.int64).reshape(-1, 3)
