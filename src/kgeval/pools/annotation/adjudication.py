"""Adjudication and merge: the adjudication sheet, and the merged judgments of two annotators and an adjudicator."""

from __future__ import annotations

import contextlib
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ...errors import InputError
from ...io import OutputStage, same_path, sha256_file
from .agreement import _agreement, cohen_kappa, disagreements
from .formats import ADJUDICATION_HEADER, VERIFIED_SOURCES
from .qrels import _combine_qrels
from .report import _write_report
from .sheets import BatchRow, Judgment, _export_fields, _write_sheet, read_annotations, read_export

log = logging.getLogger(__name__)


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
    # every output goes to a temporary file first; they replace their destinations together, after all of them
    # are written (a failed report leaves the judgments and ``into`` as they were)
    with OutputStage("annotate-merge", inputs=[p for p in inputs if p is not into]) as stage:
        tmp_labels, tmp_report = stage.path(out_labels), stage.path(report)
        tmp_merged = stage.path(merged, update=same_path(merged, into)) if merged is not None else None
        tmp_labels.write_text("".join(line + "\n" for line in result.label_lines), encoding="utf-8")
        with open(tmp_report, "w", encoding="utf-8", newline="\n") as fh:
            _write_report(fh, result.report, report)
        if tmp_merged is not None:
            tmp_merged.write_text("".join(line + "\n" for line in combined), encoding="utf-8")
    log.info("%s: %d judgments (%d disagreements adjudicated), kappa %s", out_labels, len(result.rows),
             result.report["disagreements"], result.report["kappa"])
    return result.report


