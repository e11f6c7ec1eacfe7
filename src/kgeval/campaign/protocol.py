"""The judging protocol as data (annotations/PROTOCOL.md): two different annotators per item, each blind to the
other; a disagreement or a "can't tell" goes to the adjudicator with both answers; an item is final on agreement
or adjudication.

Assignment: ``next`` gives an annotator their unfinished item, else reserves the first item in serving order
that has a free place (at most two annotators per item) and that they have not judged (in MTC's order, an item
another annotator started, else the order's next: :mod:`kgeval.campaign.exact`); a reservation left
unjudged longer than the lease returns its place. A judgment needs the person's reservation, and the count check
and the insert run in one write transaction, so the same item submitted by its two annotators at once gets
exactly its two labels.
"""

from __future__ import annotations

import re
import sqlite3
import time
from urllib.parse import urlsplit

from ..errors import KgevalError
from ..pools.annotation.formats import VERIFIED_SOURCES
from .store import write

LABELS = ("y", "n", "u")
LEASE_S = 1800.0  # an annotator's reservation of an item returns to the queue after half an hour unjudged


class ProtocolError(KgevalError):
    """A request the protocol refuses: ``status`` is its HTTP status (400 bad input, 403 role, 409 conflict)."""

    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


# The one rule for a source link, the server's and the judging page's (served to it as ``data-pattern`` and
# compiled there with the ``i`` flag): http(s), then a host (an optional user part before it), an optional port,
# then the path. No whitespace or backslash before the path: a browser reads a backslash there as ``/`` and would
# open another host than the one this rule reads (group 1), the host the verified list is checked on. Written in
# the syntax Python and JavaScript regular expressions share.
SOURCE_PATTERN = (r"^https?://(?:[^\s/?#\\@]*@)?([^\s/?#\\@:\[\]]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]*)?"
                  r"(?:[/?#].*)?$")
_SOURCE = re.compile(SOURCE_PATTERN, re.IGNORECASE)


def source_problem(source: str) -> str | None:
    """Why ``source`` (stripped) is no link the protocol accepts, or None; the page says the same words."""
    if len(source) > 2000 or any(ord(ch) < 32 for ch in source):
        return "a link of at most 2000 characters on one line"
    if _SOURCE.fullmatch(source) is None:
        scheme = urlsplit(source).scheme.lower() if "://" in source else ""
        if scheme not in ("http", "https"):
            start = scheme + "://" if scheme else source[:12]
            return f"only http:// or https:// links are accepted, not one starting {start!r} (cut off?)"
        return ("only http:// or https:// links naming a site are accepted (https://en.wikipedia.org/wiki/…), no "
                "space or backslash before the path")
    return None


def check_source(source: str, label: str) -> str:
    """The source link, stripped: http(s) only (``javascript:``, ``data:``, ``file:`` never), required for Y."""
    source = (source or "").strip()
    if source:
        problem = source_problem(source)
        if problem is not None:
            raise ProtocolError(400, f"source: {problem}")
    elif label == "y":
        raise ProtocolError(400, "source: a Y answer needs the http(s) link of the page that confirms it")
    return source


def verified(source: str) -> bool:
    """The link's site (the rule's host, as the page reads it) is on the protocol's verified list (a domain or
    one of its subdomains)."""
    m = _SOURCE.fullmatch(source)
    host = m.group(1).lower() if m else ""
    return any(host == d or host.endswith("." + d) for d in VERIFIED_SOURCES)


def _expire(conn: sqlite3.Connection, now: float) -> int:
    stale = conn.execute("SELECT item, person FROM assignments WHERE judged = 0 AND at < ?",
                         (now - LEASE_S,)).fetchall()
    for row in stale:
        conn.execute("DELETE FROM assignments WHERE item = ? AND person = ?", (row["item"], row["person"]))
        conn.execute("UPDATE items SET n_assigned = n_assigned - 1 WHERE id = ?", (row["item"],))
    return len(stale)


def _unfinished(conn: sqlite3.Connection, person: sqlite3.Row) -> int | None:
    row = conn.execute("SELECT a.item FROM assignments a JOIN items i ON i.id = a.item WHERE a.person = ? AND "
                       "a.judged = 0 ORDER BY i.pos LIMIT 1", (person["id"],)).fetchone()
    return None if row is None else int(row["item"])


def _by_order(conn: sqlite3.Connection, person: sqlite3.Row, order) -> sqlite3.Row | None:
    """An item one other annotator has started (it becomes final soonest), else the order's next fresh one."""
    row = conn.execute("SELECT id FROM items WHERE state = 'open' AND n_assigned = 1 AND NOT EXISTS (SELECT 1 "
                       "FROM assignments a WHERE a.item = items.id AND a.person = ?) ORDER BY pos LIMIT 1",
                       (person["id"],)).fetchone()
    if row is not None:
        return row
    item = order.pick(conn)
    return None if item is None else {"id": item}


def next_item(conn: sqlite3.Connection, person: sqlite3.Row, order=None) -> int | None:
    """The item this person judges next (reserved for an annotator), or None when none is left for them.
    ``order``: a :class:`kgeval.campaign.exact.MtcOrder` (``--order mtc``); None serves in the plan's order."""
    if person["role"] == "adjudicator":
        row = conn.execute("SELECT id FROM items WHERE state = 'conflict' ORDER BY pos LIMIT 1").fetchone()
        return None if row is None else int(row["id"])
    if person["role"] != "annotator":
        raise ProtocolError(403, "only annotators and adjudicators judge")
    mine = _unfinished(conn, person)
    if mine is not None:
        return mine
    now = time.time()
    with write(conn):
        mine = _unfinished(conn, person)  # a second request of the same person got here first
        if mine is not None:
            return mine
        if _expire(conn, now) and order is not None:
            order.expired()
        if order is not None:
            row = _by_order(conn, person, order)
        else:
            row = conn.execute("SELECT id FROM items WHERE state = 'open' AND n_assigned < 2 AND NOT EXISTS "
                               "(SELECT 1 FROM assignments a WHERE a.item = items.id AND a.person = ?) ORDER BY "
                               "pos LIMIT 1", (person["id"],)).fetchone()
        if row is None:
            return None
        conn.execute("INSERT INTO assignments (item, person, at) VALUES (?, ?, ?)", (row["id"], person["id"], now))
        conn.execute("UPDATE items SET n_assigned = n_assigned + 1 WHERE id = ?", (row["id"],))
    return int(row["id"])


def number(conn: sqlite3.Connection, item: int) -> str:
    """The item as its page numbers it (the sheet's item number), for every message about it."""
    row = conn.execute("SELECT sheet_item FROM items WHERE id = ?", (item,)).fetchone()
    return str(item) if row is None else row[0]


def _finalise(conn: sqlite3.Connection, item: int, label: int, by: str) -> None:
    seq = conn.execute("SELECT COALESCE(MAX(final_seq), 0) + 1 FROM items").fetchone()[0]
    conn.execute("UPDATE items SET state = 'final', final_label = ?, final_by = ?, final_seq = ? WHERE id = ?",
                 (label, by, seq, item))


def check_judgment(label: str, note: str, seconds: float | None) -> None:
    """A judgment's label, note and seconds as the protocol accepts them (the server and an import check the
    same; the source has :func:`check_source`)."""
    if label not in LABELS:
        raise ProtocolError(400, f"label {label!r}: expected y, n or u")
    if len((note or "").strip()) > 5000:
        raise ProtocolError(400, "note: at most 5000 characters")
    if seconds is not None and not (0 <= seconds < 1e7):
        raise ProtocolError(400, f"seconds {seconds!r}: expected a duration in seconds")


def judge(conn: sqlite3.Connection, person: sqlite3.Row, item: int, label: str, source: str = "", note: str = "",
          seconds: float | None = None) -> int:
    """Record one judgment and move the item on (final on agreement, conflict otherwise, final on
    adjudication); returns the judgment's id."""
    source = check_source(source, label)
    note = (note or "").strip()
    check_judgment(label, note, seconds)
    role = person["role"]
    if role not in ("annotator", "adjudicator"):
        raise ProtocolError(403, "only annotators and adjudicators judge")
    if role == "adjudicator" and label == "u":
        raise ProtocolError(400, "label u: the adjudicator decides Y or N")
    now = time.time()
    with write(conn):
        row = conn.execute("SELECT state, n_judged FROM items WHERE id = ?", (item,)).fetchone()
        if row is None:
            raise ProtocolError(409, f"item {item}: no such item")
        if conn.execute("SELECT 1 FROM judgments WHERE item = ? AND person = ?", (item, person["id"])).fetchone():
            raise ProtocolError(409, f"item {number(conn, item)}: already judged by you (undo it to change the "
                                     f"answer)")
        if role == "annotator":
            mine = conn.execute("SELECT judged FROM assignments WHERE item = ? AND person = ?",
                                (item, person["id"])).fetchone()
            if mine is None or row["state"] != "open" or row["n_judged"] >= 2:
                raise ProtocolError(409, f"item {number(conn, item)}: not an item given to you")
            cur = conn.execute("INSERT INTO judgments (item, person, kind, label, source, note, seconds, at) VALUES "
                               "(?, ?, 'annotation', ?, ?, ?, ?, ?)", (item, person["id"], label, source, note,
                                                                        seconds, now))
            conn.execute("UPDATE assignments SET judged = 1 WHERE item = ? AND person = ?", (item, person["id"]))
            conn.execute("UPDATE items SET n_judged = n_judged + 1 WHERE id = ?", (item,))
            if row["n_judged"] == 1:
                labels = [r[0] for r in conn.execute("SELECT label FROM judgments WHERE item = ? AND "
                                                     "kind = 'annotation'", (item,))]
                if labels[0] == labels[1] and labels[0] != "u":
                    _finalise(conn, item, int(labels[0] == "y"), "agreement")
                else:
                    conn.execute("UPDATE items SET state = 'conflict' WHERE id = ?", (item,))
        else:
            if row["state"] != "conflict":
                raise ProtocolError(409, f"item {number(conn, item)}: not waiting for adjudication")
            cur = conn.execute("INSERT INTO judgments (item, person, kind, label, source, note, seconds, at) VALUES "
                               "(?, ?, 'adjudication', ?, ?, ?, ?, ?)", (item, person["id"], label, source, note,
                                                                          seconds, now))
            _finalise(conn, item, int(label == "y"), "adjudication")
    return int(cur.lastrowid)


def undo(conn: sqlite3.Connection, person: sqlite3.Row) -> int:
    """Withdraw this person's last judgment (not once its item is adjudicated, unless by this adjudicator);
    returns the item, whose reservation the annotator keeps, so that it comes back as their next item."""
    with write(conn):
        last = conn.execute("SELECT id, item, kind FROM judgments WHERE person = ? ORDER BY id DESC LIMIT 1",
                            (person["id"],)).fetchone()
        if last is None:
            raise ProtocolError(409, "nothing to undo")
        item = conn.execute("SELECT state, final_by FROM items WHERE id = ?", (last["item"],)).fetchone()
        if last["kind"] == "annotation":
            if item["final_by"] == "adjudication":
                raise ProtocolError(409, f"item {number(conn, last['item'])}: already adjudicated, the answer is "
                                         f"final")
            conn.execute("DELETE FROM judgments WHERE id = ?", (last["id"],))
            conn.execute("UPDATE assignments SET judged = 0, at = ? WHERE item = ? AND person = ?",
                         (time.time(), last["item"], person["id"]))
            conn.execute("UPDATE items SET n_judged = n_judged - 1, state = 'open', final_label = NULL, "
                         "final_by = NULL, final_seq = NULL WHERE id = ?", (last["item"],))
        else:
            conn.execute("DELETE FROM judgments WHERE id = ?", (last["id"],))
            conn.execute("UPDATE items SET state = 'conflict', final_label = NULL, final_by = NULL, "
                         "final_seq = NULL WHERE id = ?", (last["item"],))
    return int(last["item"])


def item_view(conn: sqlite3.Connection, person: sqlite3.Row, item: int | None) -> dict:
    """What the judging page shows: the item (``number``: the sheet's, as the page and its messages name it),
    its evidence from the graph (:mod:`kgeval.campaign.evidence`; never a score, rank or prior) and, for the
    adjudicator only, the annotators' answers."""
    total = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
    if person["role"] == "adjudicator":
        done = conn.execute("SELECT COUNT(*) FROM judgments WHERE person = ?", (person["id"],)).fetchone()[0]
        total = done + conn.execute("SELECT COUNT(*) FROM items WHERE state = 'conflict'").fetchone()[0]
    else:
        done = conn.execute("SELECT COUNT(*) FROM judgments WHERE person = ?", (person["id"],)).fetchone()[0]
    out = {"item": item, "done": int(done), "total": int(total)}
    if item is None:
        return out | {k: None for k in ("number", "head_id", "relation", "tail_id", "head", "tail", "question",
                                        "wikidata", "websearch", "evidence")}
    row = conn.execute("SELECT * FROM items WHERE id = ?", (item,)).fetchone()
    from .evidence import read

    out |= {"number": row["sheet_item"], "evidence": read(conn, item), "head_id": row["head_id"], "relation": row["relation"], "tail_id": row["tail_id"],
            "head": row["head_name"], "tail": row["tail_name"], "question": row["question"],
            "wikidata": wikidata_link(row["head_id"]), "websearch": websearch_link(row["question"])}
    if person["role"] == "adjudicator":
        out["wikidata_tail"] = wikidata_link(row["tail_id"])
        out["answers"] = [{"label": r["label"], "source": r["source"], "note": r["note"]} for r in conn.execute(
            "SELECT label, source, note FROM judgments WHERE item = ? AND kind = 'annotation' ORDER BY id", (item,))]
    return out


def wikidata_link(freebase_id: str) -> str:
    from urllib.parse import quote

    return "https://www.wikidata.org/w/index.php?search=" + quote(f"haswbstatement:P646={freebase_id}", safe="")


def websearch_link(question: str) -> str:
    from urllib.parse import quote_plus

    return "https://duckduckgo.com/?q=" + quote_plus(question)
