"""``kgeval campaign export`` (kgeval format) and ``import`` of merged labels.

The export is what ``kgeval annotate-merge`` writes for a batch, so that ``kgeval evaluate --judgments`` and
the workflow read it as they read a merged batch: ``judgments.txt`` (``head relation tail Y|N`` per final item,
in serving order), ``report.md`` and ``report.json`` (agreement with Cohen's κ, every adjudication, the links
outside the verified sources), and ``judgments_detail.tsv`` with every single judgment (who, what, source, note,
seconds), its text cells made safe for a spreadsheet (:mod:`kgeval.cells`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..errors import InputError
from ..pools.annotation.formats import _write_sheet
from ..pools.annotation.report import _report_markdown
from .live import kappa
from .protocol import verified
from .store import write

DETAIL_HEADER = ["item", "head_id", "relation", "tail_id", "person", "role", "kind", "label", "source_link",
                 "note", "seconds"]


def report(conn: sqlite3.Connection, db: str) -> dict:
    """The merge report of the campaign's final items, in ``annotate-merge``'s structure."""
    items = conn.execute("SELECT * FROM items WHERE state = 'final' ORDER BY pos").fetchall()
    ann = {}
    for r in conn.execute("SELECT j.item, j.label, j.source, j.note, p.name FROM judgments j JOIN people p ON "
                          "p.id = j.person WHERE j.kind = 'annotation' ORDER BY j.id"):
        ann.setdefault(r["item"], []).append(r)
    adj = {r["item"]: r for r in conn.execute("SELECT j.item, j.label, j.source, p.name FROM judgments j JOIN "
                                              "people p ON p.id = j.person WHERE j.kind = 'adjudication'")}
    resolutions, counts = [], {"A": {"Y": 0, "N": 0, "u": 0}, "B": {"Y": 0, "N": 0, "u": 0}}
    for it in items:
        pair = ann.get(it["id"], [])
        for side, j in zip("AB", pair):
            counts[side][j["label"].upper() if j["label"] != "u" else "u"] += 1
        if it["final_by"] == "adjudication":
            a = adj[it["id"]]
            # names beside the ids: a curator reads "Troy (/m/0f2r6)" and "ana", not only ids and sides
            resolutions.append({"item": it["sheet_item"], "head": it["head_id"], "relation": it["relation"],
                                "tail": it["tail_id"], "head_name": it["head_name"], "tail_name": it["tail_name"],
                                "question": it["question"],
                                "a": {"label": pair[0]["label"].upper(), "source_link": pair[0]["source"],
                                      "who": pair[0]["name"]},
                                "b": {"label": pair[1]["label"].upper(), "source_link": pair[1]["source"],
                                      "who": pair[1]["name"]},
                                "adjudicator": {"label": a["label"].upper(), "source_link": a["source"],
                                                "who": a["name"]},
                                "final": "YN"[1 - it["final_label"]]})
    unverified = [{"who": r["name"], "item": r["sheet_item"], "line": "", "source_link": r["source"]}
                  for r in conn.execute("SELECT p.name, i.sheet_item, j.source FROM judgments j JOIN people p ON "
                                        "p.id = j.person JOIN items i ON i.id = j.item WHERE j.source != '' "
                                        "ORDER BY j.id") if not verified(r["source"])]
    people: dict[str, dict[str, int]] = {}
    for it in items:
        for j in ann.get(it["id"], []):
            people.setdefault(j["name"], {"Y": 0, "N": 0, "u": 0})[j["label"].upper() if j["label"] != "u" else
                                                                  "u"] += 1
    both = [p for p in ann.values() if len(p) == 2 and "u" not in (p[0]["label"], p[1]["label"])]
    n = len(both)
    agree = sum(p[0]["label"] == p[1]["label"] for p in both)
    ya, yb = (sum(p[k]["label"] == "y" for p in both) / n if n else 0.0 for k in (0, 1))
    y = sum(it["final_label"] for it in items)
    batch = conn.execute("SELECT value FROM meta WHERE key = 'title'").fetchone()[0]
    k = kappa(conn)
    return {
        "batch": batch, "files": {"campaign": {"path": str(db), "sha256": "(a live database: no checksum)"}},
        "items": len(items), "agreements": sum(it["final_by"] == "agreement" for it in items),
        "disagreements": len(resolutions), "observed_agreement": agree / n if n else 0.0,
        "chance_agreement": ya * yb + (1 - ya) * (1 - yb) if n else 0.0, "kappa": k,
        "kappa_note": f"Cohen's kappa of each item's first and second annotator over the {n} items both answered "
                      "Y or N (can't tell went to the adjudicator)",
        "labels": {"A": counts["A"], "B": counts["B"], "final": {"Y": y, "N": len(items) - y}},
        "annotators": {name: people[name] for name in sorted(people)},
        "sides_note": "A is each item's first annotator, B its second: different people from item to item "
                      "(annotators gives each person's answers by name)",
        "resolutions": resolutions, "sources_outside_verified_list": unverified,
        "unfinished": conn.execute("SELECT COUNT(*) FROM items WHERE state != 'final'").fetchone()[0],
        "imported": sum(it["final_by"] == "import" for it in items),
    }


def export_kgeval(conn: sqlite3.Connection, db: str, out: Path, stage) -> dict:
    """Write the four files into ``out`` through the command's output stage; returns the report."""
    rows = conn.execute("SELECT head_id, relation, tail_id, final_label FROM items WHERE state = 'final' "
                        "ORDER BY pos").fetchall()
    stage.path(out / "judgments.txt").write_text(
        "".join(f"{h}\t{r}\t{t}\t{'YN'[1 - x]}\n" for h, r, t, x in rows), encoding="utf-8")
    rep = report(conn, db)
    stage.path(out / "report.md").write_text(_report_markdown(rep) + f"\nUnfinished items (not exported): "
                                             f"{rep['unfinished']}.\n", encoding="utf-8")
    stage.path(out / "report.json").write_text(json.dumps(rep, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    detail = conn.execute("SELECT i.sheet_item, i.head_id, i.relation, i.tail_id, p.name, p.role, j.kind, j.label, "
                          "j.source, j.note, j.seconds FROM judgments j JOIN items i ON i.id = j.item JOIN people p "
                          "ON p.id = j.person ORDER BY i.pos, j.id").fetchall()
    _write_sheet(stage.path(out / "judgments_detail.tsv"), DETAIL_HEADER,
                 [[str(v) if v is not None else "" for v in r] for r in detail])
    return rep


def import_labels(conn: sqlite3.Connection, path: str | Path) -> tuple[int, int]:
    """Merged labels (``head relation tail Y|N``, as annotate-merge writes them) made final for the campaign's
    items that are not final yet; returns (imported, already final with the same label). A label that
    contradicts a final one, or a triple that is no item of the campaign, is refused before anything is written."""
    from ..pools.annotation.qrels import _read_qrels_rows

    rows = _read_qrels_rows(path)
    by_triple = {(r["head_id"], r["relation"], r["tail_id"]): r for r in
                 conn.execute("SELECT id, head_id, relation, tail_id, state, final_label FROM items")}
    todo, same = [], 0
    for triple, label, line in rows:
        it = by_triple.get(triple)
        if it is None:
            raise InputError(path, line, f"triple {' '.join(triple)} is not an item of the campaign")
        x = int(label == "Y")
        if it["state"] == "final":
            if it["final_label"] != x:
                raise InputError(path, line, f"triple {' '.join(triple)}: {label} here, but the campaign's final "
                                             f"label is {'NY'[it['final_label']]}")
            same += 1
        else:
            todo.append((it["id"], x))
    with write(conn):
        seq = conn.execute("SELECT COALESCE(MAX(final_seq), 0) FROM items").fetchone()[0]
        for k, (item, x) in enumerate(dict(todo).items(), start=1):
            conn.execute("UPDATE items SET state = 'final', final_label = ?, final_by = 'import', final_seq = ? "
                         "WHERE id = ?", (x, seq + k, item))
    return len(dict(todo)), same
