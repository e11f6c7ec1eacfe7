"""The file formats of the annotation round trip: sheet and template headers, batch names, verified sources."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from pathlib import Path

from ...cells import neutralise, restore
from ...errors import InputError
from ...io import atomic_open
from ...limits import read_text

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


def _read_sheet(path: str | Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and ``(first line number, stripped fields)`` rows of a TSV written by us or a spreadsheet.

    Fully blank rows are skipped; a BOM and CRLF/CR endings are accepted; quoted fields are unquoted, and the
    quote :func:`_write_sheet_to` put before a formula start is removed (``kgeval.cells.restore``)."""
    path = Path(path)
    text = read_text(path, "utf-8-sig")
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
        fields = [restore(f.strip()) for f in raw]
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


def _write_sheet(out: str | Path, header: list[str], rows: Iterable[list[str]]) -> None:
    with atomic_open(out) as fh:
        _write_sheet_to(fh, header, rows)


def _write_sheet_to(fh, header: list[str], rows: Iterable[list[str]]) -> None:
    writer = csv.writer(fh, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    # the minimal quoting leaves a bare CR unquoted (it quotes only the line terminator, LF), and a reader
    # would end the row there: a row with a CR in a cell is written fully quoted
    quoted = csv.writer(fh, delimiter="\t", quotechar='"', quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    for row in rows:  # every column of a sheet is text: a formula start gets a quote (kgeval.cells)
        cells = [neutralise(str(cell)) for cell in row]
        (quoted if any("\r" in c for c in cells) else writer).writerow(cells)
