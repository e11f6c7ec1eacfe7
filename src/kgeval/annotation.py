"""The annotation round trip for newly pooled triples (paper, Sec. 3.1; protocol in ``annotations/PROTOCOL.md``).

1. ``export_batch`` turns pooled triples into a spreadsheet-friendly sheet (UTF-8 TSV with a header row), one
   row per triple with a yes/no question made from a relation template (``annotations/templates.tsv``) and
   the entities' display names; the columns ``label``, ``source_link`` and ``note`` are left empty.
2. Two annotators fill in copies of the sheet independently. ``read_annotations`` validates a completed sheet
   strictly: every problem is an ``InputError`` naming the file and the 1-based line.
3. ``export_disagreements`` writes the adjudication sheet: the items on which the two annotators disagree,
   with both answers alongside. A third annotator labels exactly those items.
4. ``merge`` validates all files before writing anything, resolves each item (agreement: that label;
   disagreement: the adjudicator's), and writes the judgments as published ``head relation tail Y|N`` lines
   (readable by ``kgeval.data.labels.read_labels``) plus a report with Cohen's kappa and every resolution.
5. ``merge_into_qrels`` appends the new judgments to an existing published-format judgments file, refusing a
   triple that is labelled differently in the two files.

Sheets may be edited in any spreadsheet: rows may be re-ordered (items are matched by their ``item`` number),
the display columns (names, question) are not checked, a UTF-8 byte-order mark and CRLF line endings are
accepted, fields are stripped of surrounding whitespace, and fields quoted by the spreadsheet (a note with a
tab or a double quote) are read back as written.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from .data.kg import KnowledgeGraph
from .data.labels import parse_label
from .errors import InputError
from .io import atomic_open, atomic_path, sha256_file

log = logging.getLogger(__name__)

EXPORT_HEADER = ["batch", "item", "head_id", "relation", "tail_id", "head_name", "tail_name", "question",
                 "label", "source_link", "note"]
# The adjudication sheet adds both annotators' answers, for the adjudicator to read (not validated).
CONTEXT_COLUMNS = ["label_a", "source_link_a", "note_a", "label_b", "source_link_b", "note_b"]
ADJUDICATION_HEADER = EXPORT_HEADER + CONTEXT_COLUMNS
TEMPLATE_HEADER = ["relation", "template", "source"]
TEMPLATE_SOURCES = ("hand", "derived")

# Sources the paper calls verified (Wikipedia, IMDb, AllMusic, ...): links elsewhere are accepted but listed in
# the merge report for the adjudicator or curator to check. A link matches a domain or any of its subdomains.
VERIFIED_SOURCES = (
    "wikipedia.org", "wikidata.org", "imdb.com", "allmusic.com", "discogs.com", "musicbrainz.org",
    "britannica.com", "rottentomatoes.com", "boxofficemojo.com", "the-numbers.com", "oscars.org",
    "grammy.com", "emmys.com", "goldenglobes.com", "bafta.org", "olympics.com", "olympedia.org",
    "sports-reference.com", "baseball-reference.com", "basketball-reference.com", "pro-football-reference.com",
    "hockey-reference.com", "fbref.com", "transfermarkt.com", "census.gov", "congress.gov", "bioguide.congress.gov",
    "rockhall.com", "nndb.com", "findagrave.com", "usda.gov", "who.int", "cdc.gov", "nih.gov", "un.org",
    "worldbank.org", "cia.gov",
)

_BATCH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SUFFIX_RE = re.compile(r"_(s|\d+)$")

Triple = tuple[str, str, str]


# ---- templates -------------------------------------------------------------------------------------------
def _words(segment: str) -> str:
    """A Freebase path segment as words: Freebase's disambiguating suffixes (``_s``, ``_2``) dropped,
    underscores as spaces (``release_date_s`` -> ``release date``, ``rent50_2`` -> ``rent50``)."""
    return _SUFFIX_RE.sub("", segment).replace("_", " ").strip()


def _article(noun: str) -> str:
    first = noun[:1].lower()
    if first in "aeio" or (first == "u" and not noun.lower().startswith(("uni", "us", "use", "util"))):
        return "an"
    return "a"


def derive_template(relation: str) -> str:
    """A yes/no question template derived from a Freebase relation path (the rule for relations without a
    hand-written template).

    The path ``/domain/subject_type/property`` gives the subject type (second-to-last segment) and the
    property (last segment); a CVT path ``/domain/subject_type/property./domain2/mediator_type/mediator_property``
    adds the mediator (compound value type) and its property that leads to the tail. Segments become words
    (underscores as spaces, Freebase's disambiguating suffixes ``_s`` and ``_2`` dropped) and property names are
    quoted as the field names they are:

    * ``/location/country/capital`` -> ``For {head} (a country), is {tail} listed under 'capital'?``
    * ``/film/actor/film./film/performance/special_performance_type`` ->
      ``For {head} (an actor), is {tail} the 'special performance type' of one of its 'film' records
      (performance)?``
    """
    parts = relation.split("./", 1)
    first = [s for s in parts[0].split("/") if s]
    if len(first) < 2:
        raise ValueError(f"relation {relation!r} is not a Freebase path /domain/type/property")
    subject, prop = _words(first[-2]), _words(first[-1])
    who = f"For {{head}} ({_article(subject)} {subject}), is {{tail}}"
    if len(parts) == 1:
        return f"{who} listed under '{prop}'?"
    second = [s for s in parts[1].split("/") if s]
    if len(second) < 2:
        raise ValueError(f"relation {relation!r} has a mediator path without type and property")
    mediator, mprop = _words(second[-2]), _words(second[-1])
    return f"{who} the '{mprop}' of one of its '{prop}' records ({mediator})?"


def check_template(template: str) -> str | None:
    """The problem with a template, or None: it needs ``{head}`` and ``{tail}`` once each and ends with '?'."""
    for ph in ("{head}", "{tail}"):
        if template.count(ph) != 1:
            return f"template must contain {ph} exactly once"
    if not template.endswith("?"):
        return "template must end with '?' (a yes/no question)"
    return None


@dataclass(frozen=True)
class TemplateRow:
    relation: str
    template: str
    source: str
    line: int


def read_template_rows(path: str | Path) -> list[TemplateRow]:
    """Read ``relation <TAB> template <TAB> source`` rows (header required), strictly."""
    header, rows = _read_sheet(path)
    if header != TEMPLATE_HEADER:
        raise InputError(path, 1, f"header must be {TEMPLATE_HEADER}, found {header}")
    out: list[TemplateRow] = []
    seen: dict[str, int] = {}
    for lineno, fields in rows:
        if len(fields) != 3:
            raise InputError(path, lineno, f"expected 3 tab-separated fields, found {len(fields)}")
        rel, tpl, src = fields
        if not rel.startswith("/"):
            raise InputError(path, lineno, f"relation {rel!r} is not a Freebase-style path")
        if rel in seen:
            raise InputError(path, lineno, f"relation {rel} already has a template on line {seen[rel]}")
        problem = check_template(tpl)
        if problem:
            raise InputError(path, lineno, problem)
        if src not in TEMPLATE_SOURCES:
            raise InputError(path, lineno, f"source {src!r} is not one of {TEMPLATE_SOURCES}")
        seen[rel] = lineno
        out.append(TemplateRow(rel, tpl, src, lineno))
    return out


def load_templates(path: str | Path) -> dict[str, str]:
    """``{relation: template}`` from a templates file (``annotations/templates.tsv``)."""
    return {row.relation: row.template for row in read_template_rows(path)}


def write_templates(path: str | Path, hand: Mapping[str, str], relations: Iterable[str]) -> None:
    """Write a templates file: the hand-written templates, and a derived one for every other relation."""
    rows = []
    for rel in sorted(set(relations) | set(hand)):
        tpl, src = (hand[rel], "hand") if rel in hand else (derive_template(rel), "derived")
        problem = check_template(tpl)
        if problem:
            raise ValueError(f"{rel}: {problem}")
        rows.append((rel, tpl, src))
    _write_sheet(path, TEMPLATE_HEADER, rows)


def refresh_templates(path: str | Path, relations: Iterable[str] = ()) -> None:
    """Regenerate the derived rows of a templates file (after a change of ``derive_template``), adding rows
    for ``relations`` it lacks; hand-written rows are kept as they are."""
    rows = read_template_rows(path)
    hand = {r.relation: r.template for r in rows if r.source == "hand"}
    write_templates(path, hand, [r.relation for r in rows] + list(relations))


def question(kg: KnowledgeGraph, triple_ids: Sequence[int], templates: Mapping[str, str]) -> str:
    """The yes/no question of a triple (ids), with the entities' display names; a relation without a template
    gets a derived one."""
    h, r, t = (int(x) for x in triple_ids)
    rel = kg.relations[r]
    template = templates.get(rel) or derive_template(rel)
    return template.replace("{head}", kg.display_name(h)).replace("{tail}", kg.display_name(t))


# ---- sheets ----------------------------------------------------------------------------------------------
def _read_sheet(path: str | Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and ``(first line number, stripped fields)`` rows of a TSV written by us or a spreadsheet.

    Fully blank rows are skipped; a BOM and CRLF/CR endings are accepted; quoted fields are unquoted."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, data[: exc.start].count(b"\n") + 1, f"not valid UTF-8: {exc.reason}") from exc
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quotechar='"', strict=True)
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    while True:
        start = reader.line_num + 1
        try:
            raw = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(path, start, f"malformed quoting: {exc}") from exc
        fields = [f.strip() for f in raw]
        if not any(fields):
            continue
        if header is None:
            if start != 1:
                raise InputError(path, start, "the header must be the first line")
            header = fields
        else:
            rows.append((start, fields))
    if header is None:
        raise InputError(path, 1, "empty file: expected a header row")
    return header, rows


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


def _write_sheet(out: str | Path, header: list[str], rows: Iterable[list[str]]) -> None:
    with atomic_open(out) as fh:
        _write_sheet_to(fh, header, rows)


def _write_sheet_to(fh, header: list[str], rows: Iterable[list[str]]) -> None:
    writer = csv.writer(fh, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(row)


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
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url):
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


# ---- agreement -------------------------------------------------------------------------------------------
def _as_binary(label) -> int:
    if label in (1, True, "Y"):
        return 1
    if label in (0, False, "N"):
        return 0
    raise ValueError(f"label {label!r} is not Y/N or 1/0")


def cohen_kappa(labels_a: Sequence, labels_b: Sequence) -> float:
    """Cohen's kappa of two raters' Y/N labels (``"Y"``/``"N"`` or 1/0) over the same items.

    With n items, observed agreement p_o = (1/n) * #{i : a_i = b_i}, and chance agreement from each rater's
    label shares p_e = p_a(Y) * p_b(Y) + p_a(N) * p_b(N),

        kappa = (p_o - p_e) / (1 - p_e).

    kappa is 1 for perfect agreement, 0 for agreement at chance level, negative below it. It is undefined
    (NaN is returned) when p_e = 1, i.e. both raters used one and the same label for every item.
    """
    a = [_as_binary(x) for x in labels_a]
    b = [_as_binary(x) for x in labels_b]
    if len(a) != len(b):
        raise ValueError(f"the raters labelled different numbers of items ({len(a)} and {len(b)})")
    if not a:
        raise ValueError("kappa needs at least one item")
    p_o, p_e = _agreement(a, b)
    if p_e == 1:
        return float("nan")
    return float((p_o - p_e) / (1 - p_e))


def _agreement(a: Sequence[int], b: Sequence[int]) -> tuple[Fraction, Fraction]:
    """Observed and chance agreement as exact fractions (so kappa of a hand-computable case is exact)."""
    n = len(a)
    p_o = Fraction(sum(x == y for x, y in zip(a, b)), n)
    ya, yb = Fraction(sum(a), n), Fraction(sum(b), n)
    return p_o, ya * yb + (1 - ya) * (1 - yb)


def disagreements(a: Mapping, b: Mapping) -> list:
    """The keys (items) whose labels differ between two raters' ``{item: label}`` maps, in ``a``'s order.

    Labels may be Y/N, 1/0 or ``Judgment`` objects. Both maps must cover the same items."""
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b), key=str)
        raise ValueError(f"the raters labelled different items: {only[:20]}")

    def lab(x):
        return x.label if isinstance(x, Judgment) else _as_binary(x)

    return [k for k in a if lab(a[k]) != lab(b[k])]


# ---- adjudication and merge ------------------------------------------------------------------------------
def _same_file(p: str | Path, q: str | Path) -> bool:
    with contextlib.suppress(OSError):
        return Path(p).resolve() == Path(q).resolve()
    return False


def _read_pair(export: str | Path, annotator_a: str | Path, annotator_b: str | Path):
    if _same_file(annotator_a, annotator_b):
        raise InputError(annotator_b, None, "annotators A and B must be two independent files, got the same one")
    rows = read_export(export)
    ja = read_annotations(annotator_a, rows)
    jb = read_annotations(annotator_b, rows)
    return rows, ja, jb


def export_disagreements(export: str | Path, annotator_a: str | Path, annotator_b: str | Path,
                         out: str | Path) -> list[str]:
    """Write the adjudication sheet: the export's rows for the items A and B disagree on, with empty answer
    columns and both annotators' answers in extra columns. Returns the disagreeing items (possibly none, in
    which case the sheet has only its header)."""
    rows, ja, jb = _read_pair(export, annotator_a, annotator_b)
    items = disagreements(ja, jb)
    by_item = {row.item: row for row in rows}
    sheet = []
    for item in items:
        a, b = ja[item], jb[item]
        sheet.append(_export_fields(by_item[item]) + ["YN"[1 - a.label], a.source_link, a.note,
                                                     "YN"[1 - b.label], b.source_link, b.note])
    _write_sheet(out, ADJUDICATION_HEADER, sheet)
    log.info("%s: %d disagreements of %d items", out, len(items), len(rows))
    return items


@dataclass
class MergeResult:
    batch: str
    rows: list[BatchRow]
    final: dict[str, int]
    report: dict
    label_lines: list[str] = field(default_factory=list)


def _domain_ok(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return any(host == d or host.endswith("." + d) for d in VERIFIED_SOURCES)


def plan_merge(export: str | Path, annotator_a: str | Path, annotator_b: str | Path,
               adjudicator: str | Path | None) -> MergeResult:
    """Validate every file and resolve every item, writing nothing (see ``merge``)."""
    rows, ja, jb = _read_pair(export, annotator_a, annotator_b)
    items = disagreements(ja, jb)
    jc: dict[str, Judgment] = {}
    if adjudicator is not None:
        jc = read_annotations(adjudicator, rows, complete=False)
        wanted = set(items)
        extra = [j for item, j in jc.items() if item not in wanted]
        if extra:
            raise InputError(adjudicator, extra[0].line,
                             f"items {', '.join(j.item for j in extra)} are not disagreements between "
                             f"{annotator_a} and {annotator_b} (the adjudicator labels only those)")
    missing = [item for item in items if item not in jc]
    if missing:
        where = adjudicator if adjudicator is not None else annotator_b
        hint = ("the adjudicator's sheet misses them" if adjudicator is not None else
                "no adjudicator's sheet was given (write one with kgeval annotate-disagreements)")
        raise InputError(where, None, f"{len(missing)} disagreements are not adjudicated: items "
                                      f"{', '.join(missing)}; {hint}")
    by_item = {row.item: row for row in rows}
    final = {}
    for row in rows:
        a, b = ja[row.item], jb[row.item]
        final[row.item] = a.label if a.label == b.label else jc[row.item].label
    la = [ja[r.item].label for r in rows]
    lb = [jb[r.item].label for r in rows]
    n = len(rows)
    kappa = cohen_kappa(la, lb)
    p_o, p_e = (float(x) for x in _agreement(la, lb))
    resolutions = []
    for item in items:
        row, a, b, c = by_item[item], ja[item], jb[item], jc[item]
        resolutions.append({
            "item": item, "head": row.head, "relation": row.relation, "tail": row.tail, "question": row.question,
            "a": {"label": "YN"[1 - a.label], "source_link": a.source_link, "note": a.note, "line": a.line},
            "b": {"label": "YN"[1 - b.label], "source_link": b.source_link, "note": b.note, "line": b.line},
            "adjudicator": {"label": "YN"[1 - c.label], "source_link": c.source_link, "note": c.note,
                            "line": c.line},
            "final": "YN"[1 - final[item]],
            "sided_with": "A" if c.label == a.label else "B",
        })
    unverified = []
    for who, judg, path in (("A", ja, annotator_a), ("B", jb, annotator_b), ("adjudicator", jc, adjudicator)):
        for j in judg.values():
            if j.source_link and not _domain_ok(j.source_link):
                unverified.append({"who": who, "file": str(path), "line": j.line, "item": j.item,
                                   "source_link": j.source_link})
    files = {"export": export, "a": annotator_a, "b": annotator_b, "adjudicator": adjudicator}
    report = {
        "batch": rows[0].batch,
        "files": {k: ({"path": str(p), "sha256": sha256_file(p)} if p is not None else None)
                  for k, p in files.items()},
        "items": n,
        "agreements": n - len(items),
        "disagreements": len(items),
        "observed_agreement": p_o,
        "chance_agreement": p_e,
        "kappa": None if math.isnan(kappa) else kappa,
        "kappa_note": ("undefined: both annotators gave one and the same label to every item"
                       if math.isnan(kappa) else "Cohen's kappa of annotators A and B over all items"),
        "labels": {"A": {"Y": sum(la), "N": n - sum(la)}, "B": {"Y": sum(lb), "N": n - sum(lb)},
                   "final": {"Y": sum(final.values()), "N": n - sum(final.values())}},
        "resolutions": resolutions,
        "sources_outside_verified_list": unverified,
    }
    lines = [f"{row.head}\t{row.relation}\t{row.tail}\t{'YN'[1 - final[row.item]]}" for row in rows]
    return MergeResult(rows[0].batch, rows, final, report, lines)


def _md(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _report_markdown(rep: dict) -> str:
    kappa = "undefined" if rep["kappa"] is None else f"{rep['kappa']:.4f}"
    out = [f"# Annotation batch {rep['batch']}", "",
           f"- items: {rep['items']}; agreements: {rep['agreements']}; disagreements: {rep['disagreements']}",
           f"- observed agreement p_o = {rep['observed_agreement']:.4f}; chance agreement p_e = "
           f"{rep['chance_agreement']:.4f}; Cohen's kappa = {kappa}",
           f"- labels: A {rep['labels']['A']['Y']} Y / {rep['labels']['A']['N']} N; B {rep['labels']['B']['Y']} Y"
           f" / {rep['labels']['B']['N']} N; final {rep['labels']['final']['Y']} Y / "
           f"{rep['labels']['final']['N']} N", "", "## Files", "", "| role | path | SHA-256 |", "|---|---|---|"]
    for role, f in rep["files"].items():
        if f is not None:
            out.append(f"| {role} | {_md(f['path'])} | `{f['sha256']}` |")
    out += ["", "## Disagreements and resolutions", ""]
    if rep["resolutions"]:
        out += ["| item | triple | A | B | adjudicator | final | adjudicator's source |", "|---|---|---|---|---|---|---|"]
        for r in rep["resolutions"]:
            out.append(f"| {_md(r['item'])} | {_md(r['head'])} {_md(r['relation'])} {_md(r['tail'])} | "
                       f"{r['a']['label']} | {r['b']['label']} | {r['adjudicator']['label']} | {r['final']} | "
                       f"{_md(r['adjudicator']['source_link'])} |")
    else:
        out.append("None.")
    out += ["", "## Source links outside the verified-source list", ""]
    if rep["sources_outside_verified_list"]:
        out += ["| who | item | line | link |", "|---|---|---|---|"]
        for u in rep["sources_outside_verified_list"]:
            out.append(f"| {u['who']} | {_md(u['item'])} | {u['line']} | {_md(u['source_link'])} |")
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def _write_report(fh, report: dict, path: str | Path) -> None:
    if Path(path).suffix.lower() in (".md", ".markdown"):
        fh.write(_report_markdown(report))
    else:
        json.dump(report, fh, indent=2, sort_keys=True)
        fh.write("\n")


def merge(export: str | Path, annotator_a: str | Path, annotator_b: str | Path, adjudicator: str | Path | None,
          out_labels: str | Path, report: str | Path, into: str | Path | None = None,
          merged: str | Path | None = None) -> dict:
    """Merge two annotators' sheets and the adjudicator's into judgments; return the report.

    Every input is validated first and nothing is written unless all of them validate. An item on which A
    and B agree gets their label; a disagreement gets the adjudicator's, whose sheet must hold exactly the
    disagreements (it may be None when there are none). Writes ``out_labels`` as ``head relation tail Y|N``
    lines (export order) and ``report`` (Markdown if it ends in ``.md``, else JSON) with kappa, counts and
    each disagreement's resolution. With ``into`` and ``merged``, the judgments are also appended to the
    published-format file ``into`` and written to ``merged`` (see ``merge_into_qrels``); a conflict there
    also stops everything before anything is written.
    """
    if (into is None) != (merged is None):
        raise ValueError("give both into and merged, or neither")
    inputs = [p for p in (export, annotator_a, annotator_b, adjudicator, into) if p is not None]
    outputs = [(role, p) for role, p in (("labels", out_labels), ("report", report), ("merged", merged))
               if p is not None]
    for role, out in outputs:
        clash = [i for i in inputs if _same_file(out, i)]
        if role == "merged":  # the merged judgments may replace ``into`` (in place, atomically)
            clash = [i for i in clash if not _same_file(i, into)]
        if clash or sum(_same_file(out, o) for _, o in outputs) > 1:
            raise InputError(out, None, f"the {role} output must not overwrite an input or another output")
    result = plan_merge(export, annotator_a, annotator_b, adjudicator)
    combined = None
    if into is not None:
        new = [(line.split("\t"), i) for i, line in enumerate(result.label_lines, start=1)]
        combined, added, present = _combine_qrels(into, out_labels, [(f[:3], f[3], ln) for f, ln in new])
        result.report["into"] = {"path": str(into), "merged": str(merged), "added": added,
                                 "already_present": present}
    with contextlib.ExitStack() as stack:
        tmp_labels = stack.enter_context(atomic_path(out_labels))
        tmp_report = stack.enter_context(atomic_path(report))
        tmp_merged = stack.enter_context(atomic_path(merged)) if merged is not None else None
        tmp_labels.write_text("".join(line + "\n" for line in result.label_lines), encoding="utf-8")
        with open(tmp_report, "w", encoding="utf-8", newline="\n") as fh:
            _write_report(fh, result.report, report)
        if tmp_merged is not None:
            tmp_merged.write_text("".join(line + "\n" for line in combined), encoding="utf-8")
    log.info("%s: %d judgments (%d disagreements adjudicated), kappa %s", out_labels, len(result.rows),
             result.report["disagreements"], result.report["kappa"])
    return result.report


# ---- published-format judgments ---------------------------------------------------------------------------
def _read_qrels_rows(path: str | Path) -> list[tuple[Triple, str, int]]:
    """``head relation tail Y|N`` rows as ``(triple, label, line)``, checking labels (no knowledge graph)."""
    from .data.tsv import iter_rows

    out = []
    for lineno, (h, r, t, lab) in iter_rows(path, 4):
        parse_label(path, lineno, lab)
        out.append(((h, r, t), lab.strip(), lineno))
    return out


def _combine_qrels(existing: str | Path, new_name: str | Path,
                   new_rows: list[tuple[Sequence[str], str, int]]) -> tuple[list[str], int, int]:
    old = _read_qrels_rows(existing)
    seen: dict[Triple, tuple[str, int]] = {}
    for triple, lab, ln in old:
        prev = seen.get(triple)
        if prev is not None and prev[0] != lab:
            raise InputError(existing, ln, f"triple {' '.join(triple)} is labelled {lab} here but {prev[0]} on "
                                           f"line {prev[1]}")
        seen.setdefault(triple, (lab, ln))
    lines = [f"{h}\t{r}\t{t}\t{lab}" for (h, r, t), lab, _ in old]
    added = present = 0
    new_seen: dict[Triple, tuple[str, int]] = {}
    for fields, lab, ln in new_rows:
        triple = tuple(fields)
        prev_new = new_seen.get(triple)
        if prev_new is not None:
            if prev_new[0] != lab:
                raise InputError(new_name, ln, f"triple {' '.join(triple)} is labelled {lab} here but "
                                               f"{prev_new[0]} on line {prev_new[1]}")
            continue
        new_seen[triple] = (lab, ln)
        prev = seen.get(triple)
        if prev is not None:
            if prev[0] != lab:
                raise InputError(new_name, ln, f"triple {' '.join(triple)} is labelled {lab} here but {prev[0]} "
                                               f"in {existing}:{prev[1]}; resolve the conflict by hand")
            present += 1
            continue
        lines.append(f"{triple[0]}\t{triple[1]}\t{triple[2]}\t{lab}")
        added += 1
    return lines, added, present


def merge_into_qrels(existing_annotations: str | Path, new_labels: str | Path, out: str | Path) -> dict[str, int]:
    """Append the judgments of ``new_labels`` to those of ``existing_annotations`` (both ``head relation tail
    Y|N``) and write them to ``out`` (which may be ``existing_annotations`` itself; written atomically).

    A triple already judged the same way is not repeated; a triple judged differently is an error naming both
    files and lines, and nothing is written. Returns the counts ``added`` and ``already_present``.
    """
    new = [(triple, lab, ln) for triple, lab, ln in _read_qrels_rows(new_labels)]
    lines, added, present = _combine_qrels(existing_annotations, new_labels, new)
    with atomic_open(out) as fh:
        fh.write("".join(line + "\n" for line in lines))
    log.info("%s: %d judgments added to %s (%d already present)", out, added, existing_annotations, present)
    return {"added": added, "already_present": present}


def read_triple_list(path: str | Path, kg: KnowledgeGraph) -> np.ndarray:
    """Triples to annotate: ``head relation tail`` lines, or a file with a header row starting with
    ``head relation tail`` whose further columns are ignored (a pool file of ``kgeval.pooling``)."""
    from .data.tsv import iter_rows

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
