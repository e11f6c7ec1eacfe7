"""A campaign's items from a sheet: ``sampling_plan.tsv`` (with its sidecar ``sampling_plan.csv``), a
``next_judgments.tsv`` or any annotation sheet in ``kgeval annotate-export``'s format.

Serving order: the sheet's item numbers, which are already the order to judge in for the sampling plan (its
random order, the audit share interleaved by the draw) and for the bounds' next judgments (priority order); a
sheet whose items are not all numbers is served in its row order.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from ..pools.annotation.formats import EXPORT_HEADER, _read_sheet

_SURROGATE = re.compile("[\ud800-\udfff]")


def read_items(sheet: str | Path, plan_items: str | Path | None = None) -> list[dict]:
    """The sheet's items in serving order, as dicts of :data:`kgeval.campaign.store.ITEM_COLUMNS`."""
    header, rows = _read_sheet(sheet)
    need = EXPORT_HEADER[:8]
    missing = [c for c in need if c not in header]
    if missing:
        raise InputError(sheet, 1, f"no column {', '.join(missing)} (expected an annotation sheet: "
                                   f"{', '.join(EXPORT_HEADER)})")
    col = {c: header.index(c) for c in need}
    items, seen = [], {}
    for line, fields in rows:
        fields = fields + [""] * (len(header) - len(fields))
        row = {c: fields[col[c]] for c in need}
        for c, text in row.items():  # an .xlsx cell's &#xD800; gives one: a campaign file (UTF-8) cannot hold it
            if _SURROGATE.search(text):
                raise InputError(sheet, line, f"{c} {text!r} holds a lone surrogate, which a campaign file (UTF-8) "
                                              "cannot store")
        for c in ("item", "head_id", "relation", "tail_id", "question"):
            if not row[c]:
                raise InputError(sheet, line, f"empty {c}")
        if row["item"] in seen:
            raise InputError(sheet, line, f"item {row['item']} appears twice (first on line {seen[row['item']]})")
        seen[row["item"]] = line
        items.append({"batch": row["batch"], "sheet_item": row["item"], "head_id": row["head_id"],
                      "relation": row["relation"], "tail_id": row["tail_id"],
                      "head_name": row["head_name"] or row["head_id"], "tail_name": row["tail_name"] or row["tail_id"],
                      "question": row["question"], "audit": 0})
    if not items:
        raise InputError(sheet, None, "the sheet has no item")
    if all(it["sheet_item"].isdigit() for it in items):
        items.sort(key=lambda it: int(it["sheet_item"]))
    if plan_items is not None:
        _mark_audit(items, sheet, plan_items)
    return items


def _mark_audit(items: list[dict], sheet, plan_items) -> None:
    """The audit flag from the plan's sidecar (an item is an audit item when any of its units is one)."""
    from ..sampling.estimates import read_plan_items

    plan = read_plan_items(str(plan_items))
    by_item = {it["sheet_item"]: it for it in items}
    for row in plan.itertuples(index=False):
        it = by_item.get(str(int(row.item)))
        if it is None or (it["head_id"], it["relation"], it["tail_id"]) != (row.head_id, row.relation, row.tail_id):
            raise InputError(plan_items, int(row.line), f"item {int(row.item)} ({row.head_id} {row.relation} "
                                                        f"{row.tail_id}) is not that item of the sheet {sheet}")
        it["audit"] = int(it["audit"] or bool(row.audit))
