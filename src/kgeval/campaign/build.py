"""``kgeval campaign create``: the campaign file from a sheet and, optionally, the comparisons it decides.

The comparisons file (CSV) has one row per comparison and item bearing on it: ``a, b, metric, base, lo, hi,
item, c1, c0`` (``item`` the sheet's item; ``base``, ``lo``, ``hi`` repeated on each row of a comparison), the
terms of :mod:`kgeval.campaign.live`; :func:`kgeval.campaign.comparisons.plan_comparisons` computes the same
terms from a sampling plan and the study's runs.
"""

from __future__ import annotations

import errno
import json
import logging
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from .live import add_comparisons
from .sheet import read_items
from .store import create

log = logging.getLogger(__name__)

COMPARISON_COLUMNS = ("a", "b", "metric", "base", "lo", "hi", "item", "c1", "c0")


def read_comparisons(path: str | Path, items: list[dict]) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The comparisons and their (comparisons × items in serving order) coefficients."""
    try:
        df = pd.read_csv(path, dtype={"a": str, "b": str, "metric": str, "item": str}, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"cannot read the comparisons: {exc}") from None
    missing = [c for c in COMPARISON_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(path, 1, f"no column {', '.join(missing)} (expected {', '.join(COMPARISON_COLUMNS)})")
    for col in ("base", "lo", "hi", "c1", "c0"):
        val = pd.to_numeric(df[col], errors="coerce")
        if (~np.isfinite(val)).any():
            raise InputError(path, int(np.flatnonzero(~np.isfinite(val))[0]) + 2, f"{col}: not a finite number")
        df[col] = val
    pos = {it["sheet_item"]: i for i, it in enumerate(items)}
    where = df["item"].map(pos)
    if where.isna().any():
        line = int(np.flatnonzero(where.isna())[0])
        raise InputError(path, line + 2, f"item {df['item'].iloc[line]!r} is not an item of the sheet")
    keys = list(dict.fromkeys(zip(df["a"], df["b"], df["metric"])))
    row = {k: j for j, k in enumerate(keys)}
    r = np.array([row[k] for k in zip(df["a"], df["b"], df["metric"])])
    first = df.groupby(["a", "b", "metric"], sort=False)[["base", "lo", "hi"]].agg(["min", "max"])
    if ((first.xs("min", axis=1, level=1) != first.xs("max", axis=1, level=1)).any(axis=None)):
        raise InputError(path, None, "base, lo and hi must be the same on every row of a comparison")
    c1, c0 = np.zeros((len(keys), len(items))), np.zeros((len(keys), len(items)))
    c1[r, where.to_numpy(int)], c0[r, where.to_numpy(int)] = df["c1"], df["c0"]
    comps = []
    for (a, b, metric), (base, lo, hi) in zip(keys, first.xs("min", axis=1, level=1).loc[keys].to_numpy()):
        comps.append({"a": a, "b": b, "metric": metric, "base": float(base), "lo": float(lo), "hi": float(hi)})
    return comps, c1, c0


def plan_expectation(plan_items: str | Path | None) -> dict[str, str]:
    """The items the plan's prior expects to be judged (``sampling_budgets.csv``'s ``plan_budget`` beside the
    sidecar), kept for the curator's projection (:mod:`kgeval.campaign.projection`); none without that table."""
    pairs = Path(plan_items).with_name("sampling_budgets.csv") if plan_items is not None else None
    if pairs is None or not pairs.is_file():
        return {}
    try:
        table = pd.read_csv(pairs, usecols=["Metric", "plan_budget"])
        budget = float(table["plan_budget"].iloc[0])
    except (OSError, ValueError, IndexError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return {}
    return {"plan_budget": repr(budget), "plan_metric": str(table["Metric"].iloc[0])} if np.isfinite(budget) else {}


def create_campaign(db: str | Path, sheet: str | Path, plan_items: str | Path | None = None,
                    comparisons: str | Path | None = None, title: str | None = None,
                    study: dict | None = None, order: str = "plan", kg: str | Path | None = None,
                    templates: str | Path | None = None, k: int | None = None) -> tuple[int, int]:
    """Create the campaign file; returns the numbers of items and comparisons. The comparisons come from a
    ``comparisons`` file, or from the plan (``plan_items`` and ``study``: the keyword arguments of
    :func:`kgeval.campaign.comparisons.plan_comparisons`, or of :func:`~kgeval.campaign.comparisons.
    outside_comparisons` for an outside system's plan, but the plan's sidecar and the items). ``order``:
    ``plan`` serves the items in the sheet's order, ``mtc`` by MTC's priority recomputed as labels arrive
    (:mod:`kgeval.campaign.exact`; it needs the comparisons of a plan and the study's runs). ``kg`` (else the
    study's): the dataset's ``kg.npz``, whose training and validation facts become each item's evidence
    (:mod:`kgeval.campaign.evidence`, phrased with ``templates``, default ``annotations/templates.tsv``). ``k``
    (else the study's): the plan's cut-off, for the metrics' full names and ranges on the live page."""
    db = Path(db)
    if order not in ("plan", "mtc"):
        raise InputError(None, None, f"order {order!r}: expected plan or mtc")
    for name in (sheet, plan_items, comparisons):
        if name is not None and not Path(name).is_file():
            raise InputError(name, None, "no such file")
        if name is not None and db.resolve() == Path(name).resolve():
            raise InputError(db, None, "the campaign file must not overwrite an input")
    items = read_items(sheet, plan_items)
    comps, c1, c0 = read_comparisons(comparisons, items) if comparisons is not None else ([], None, None)
    if study is not None:
        if plan_items is None or comparisons is not None:
            raise InputError(sheet, None, "the study's runs give the comparisons of a sampling plan: give its "
                                          "sidecar (--plan-items) and no --comparisons file")
        from .comparisons import outside_comparisons, plan_comparisons, source_comparisons

        make = (outside_comparisons if "dump" in study else source_comparisons if "source" in study
                else plan_comparisons)
        comps, c1, c0 = make(plan_items=str(plan_items), items=items, **study)
    if order == "mtc" and not any(c.get("bound_low") is not None for c in comps):
        raise InputError(sheet, None, "--order mtc ranks the items by the exact bounds and MTC's priority of the "
                                      "plan's comparisons: give the plan's sidecar and the study's runs")
    kg = kg if kg is not None else (study or {}).get("kg_path")
    k = k if k is not None else (study or {}).get("k")
    evidence = None if kg is None else _evidence(kg, templates, items)
    if not db.parent.is_dir():
        raise InputError(db, None, f"the folder {db.parent} does not exist or is not a folder")
    try:
        info = {"title": title or items[0]["batch"] or Path(sheet).stem, "sheet": str(sheet), "order": order}
        info.update(({"k": str(k)} if k is not None else {}) | plan_expectation(plan_items))

        def fill(conn):  # inside the create: the file appears with its comparisons and evidence, or not at all
            if comps:
                add_comparisons(conn, comps, c1, c0)
            if evidence is not None:
                from .evidence import store

                store(conn, evidence)

        create(db, items, info, fill)
    except sqlite3.Error as exc:
        if "full" in str(exc):
            raise OSError(errno.ENOSPC, "No space left on device", str(db)) from None
        raise InputError(db, None, f"cannot write the campaign file: {exc}") from None
    return len(items), len(comps)


def _evidence(kg: str | Path, templates: str | Path | None, items: list[dict]) -> list[dict | None]:
    """Each item's evidence from ``kg``. Refused in one line: a graph none of whose entities, relations and
    facts match a single item (another dataset's graph: the campaign would serve no evidence, and nothing said
    why), and a name that UTF-8 cannot store (a lone surrogate), which would fail the create half way. A graph
    that knows only some items is used, with one warning line saying how many have none."""
    from ..data.kg import KnowledgeGraph
    from ..home import default_file
    from ..pools.annotation.templates import load_templates
    from .evidence import build

    if not Path(kg).is_file():
        raise InputError(kg, None, "no such file (the dataset's kg.npz, for the items' evidence)")
    graph = KnowledgeGraph.load(kg)
    out = build(graph, items, load_templates(templates or default_file("annotations/templates.tsv")))
    missing = sum(e is None for e in out)
    if missing == len(out):
        raise InputError(kg, None, f"knows none of the sheet's {len(out)} items (their entities or relations are "
                                   "not in this graph): give the kg.npz of the dataset the sheet was drawn from, "
                                   "or no --kg")
    if missing:
        log.warning("%s: %d of the sheet's %d items have entities or relations this graph does not know: they are "
                    "served without evidence", kg, missing, len(out))
    bad = _unstorable(graph, out)
    if bad is not None:
        raise InputError(kg, None, f"{bad}: a name with a lone surrogate, which a campaign file (UTF-8) cannot "
                                   "store: fix the name and save the graph again")
    return out


def _unstorable(graph, evidence: list[dict | None]) -> str | None:
    """The first entity or relation whose name UTF-8 cannot encode, when some item's evidence holds one."""
    for e in evidence:
        if e is None:
            continue
        try:
            json.dumps(e, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            break
    else:
        return None
    names = [("entity", i, n) for i, n in enumerate(graph.entity_names or graph.entities)]
    names += [("relation", i, n) for i, n in enumerate(graph.relations)]
    for kind, i, name in names:  # only on this error path: the scan stops at the first
        if not _encodes(name):
            return f"{kind} {i} {name!r} holds {bad_char(name)}"
    return "a name"


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def bad_char(text: str) -> str:
    """``U+D800``: the first code point of ``text`` that UTF-8 cannot encode."""
    for ch in text:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return f"U+{ord(ch):04X}"
    return "a surrogate"


def extend_campaign(db: str | Path, plan_dir: str | Path, kg: str | Path | None = None,
                    templates: str | Path | None = None) -> tuple[int, int, int]:
    """Add the next wave of the campaign's plan (``kgeval sample-plan --extend``'s folder ``plan_dir``) to the
    campaign file ``db``: its new items after the ones served so far, and the comparisons recomputed for every
    item with the union π (:mod:`kgeval.sampling.waves`). One write transaction: a failure leaves the file as it
    was. Every item already in the campaign must be the same item of the extended sheet (same number, same
    triple); no judgment, assignment or state is read or written. Returns (new items, items in all,
    comparisons)."""
    from ..sampling.reference import read_source
    from .comparisons import source_comparisons
    from .evidence import TABLE
    from .store import ITEM_COLUMNS, connect, write

    plan_dir = Path(plan_dir)
    sheet, side, pairs = (plan_dir / n for n in ("sampling_plan.tsv", "sampling_plan.csv", "sampling_budgets.csv"))
    for name in (sheet, side, pairs):
        if not name.is_file():
            raise InputError(name, None, "no such file (extend with the folder `kgeval sample-plan --extend` wrote)")
    if not (plan_dir / "sampling_waves.csv").is_file():
        raise InputError(plan_dir, None, "no sampling_waves.csv: not an extended plan (`kgeval sample-plan "
                                         "--extend PLAN --labels L --out DIR` writes one)")
    source = read_source(plan_dir)
    if source is None:
        raise InputError(plan_dir, None, "no sampling_source.json: extend with a plan `kgeval sample-plan` drew")
    items = read_items(sheet, side)
    conn = connect(db)
    try:
        have = [dict(r) for r in conn.execute("SELECT id, pos, sheet_item, head_id, relation, tail_id FROM items "
                                              "ORDER BY pos")]
        by_number = {it["sheet_item"]: it for it in items}
        for row in have:
            it = by_number.get(row["sheet_item"])
            if it is None or (it["head_id"], it["relation"], it["tail_id"]) != (row["head_id"], row["relation"],
                                                                                row["tail_id"]):
                raise InputError(side, None, f"item {row['sheet_item']} of the campaign {db} ({row['head_id']} "
                                             f"{row['relation']} {row['tail_id']}) is not that item of this plan: "
                                             "extend a campaign with the next wave of the plan it was made from")
        old = {row["sheet_item"] for row in have}
        new = [it for it in items if it["sheet_item"] not in old]
        order = [by_number[row["sheet_item"]] for row in have] + new  # serving order: the campaign's, then the wave
        comps, c1, c0 = source_comparisons(source, str(side), str(pairs), order)
        evidence = None
        graph = kg if kg is not None else source["kg"]
        has_evidence = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'evidence'").fetchone() is not None
        if has_evidence and new:
            evidence = _evidence(graph, templates, new)
        from ..sampling.extend import read_waves
        from ..sampling.sheet import read_plan_pairs

        waves = str(len(read_waves(plan_dir / "sampling_waves.csv", read_plan_pairs(pairs), 0)))
        top = max((row["pos"] for row in have), default=0)
        try:
            with write(conn):
                if conn.execute("SELECT COUNT(*) FROM items").fetchone()[0] != len(have):
                    raise InputError(db, None, "its items changed while the wave was prepared (another extend?): "
                                               "run campaign extend again")
                conn.executemany(f"INSERT INTO items (pos, {', '.join(ITEM_COLUMNS)}) VALUES "
                                 f"(?{', ?' * len(ITEM_COLUMNS)})",
                                 [(top + i, *(row[c] for c in ITEM_COLUMNS)) for i, row in enumerate(new, start=1)])
                for it in items:  # an old item a new unit drew by the floor is an audit item from now on
                    if it["audit"] and it["sheet_item"] in old:
                        conn.execute("UPDATE items SET audit = 1 WHERE sheet_item = ?", (it["sheet_item"],))
                conn.execute("DELETE FROM coefficients")
                if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'budget_units'"
                                ).fetchone() is not None:  # the comparisons are recomputed: so are their units
                    conn.execute("DELETE FROM budget_units")
                conn.execute("DELETE FROM comparisons")
                if comps:
                    add_comparisons(conn, comps, c1, c0)
                if evidence is not None:
                    conn.execute(TABLE)
                    ids = [r[0] for r in conn.execute("SELECT id FROM items WHERE pos > ? ORDER BY pos", (top,))]
                    from .evidence import capped

                    conn.executemany("INSERT INTO evidence VALUES (?, ?)",
                                     [(i, json.dumps(capped(e), ensure_ascii=False)) for i, e in zip(ids, evidence)
                                      if e is not None])
                conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                 [("waves", waves), ("sheet", str(sheet))] + sorted(plan_expectation(side).items()))
        except sqlite3.Error as exc:
            if "full" in str(exc):
                raise OSError(errno.ENOSPC, "No space left on device", str(db)) from None
            raise InputError(db, None, f"cannot write the campaign file: {exc}") from None
    finally:
        conn.close()
    return len(new), len(items), len(comps)
