"""Published-format judgments: append new judgments to an existing file, refusing conflicting labels."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from ...data.labels import parse_label
from ...errors import InputError
from ...io import atomic_open
from .formats import Triple

log = logging.getLogger(__name__)


def _read_qrels_rows(path: str | Path) -> list[tuple[Triple, str, int]]:
    """``head relation tail Y|N`` rows as ``(triple, label, line)``, checking labels (no knowledge graph)."""
    from ...data.tsv import iter_rows

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
