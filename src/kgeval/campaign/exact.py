"""Exact bounds of each comparison's Δ given the final labels so far, and the serving order by MTC's priority
recomputed as labels arrive (``kgeval campaign create --order mtc``).

Bounds. A comparison stores the bounds module's exact bounds with every unknown unjudged (``bound_low``,
``bound_high``: :meth:`kgeval.bounds.linear.LinearPairs.bounds`) and per item Σ max(0, d_e) and Σ min(0, d_e)
over its units (``dpos``, ``dneg``). An unjudged unit counts min(0, d_e) in the lower bound and max(0, d_e) in the
upper one; its label x counts d_e·x in both. So a final Y moves the lower bound by dpos and the upper one by dneg,
a final N moves them by −dneg and −dpos: the same numbers as :meth:`~kgeval.bounds.linear.LinearPairs.reveal`,
as sums over the final items (sparse items × comparisons matrices, one product per update).

Order. Served in MTC's order, the final labels are no longer a random draw: the confidence sequence of
:mod:`kgeval.campaign.live`, which treats them as draws with probability ∝ π, loses its guarantee (the first items
are those that move Δ most), so a campaign in this order decides a comparison by its exact bounds only
(:func:`decision_rule`). MTC (:mod:`kgeval.bounds.linear`) ranks an unjudged item by Σ over the undecided pairs of d_e² p_e(1 − p_e),
ties by Σ d_e², then (here) by the plan's position: per item and comparison ``mtc`` and ``mtc_tie`` hold the
two terms, so a ranking is two sparse products and one sort, redone only when the set of undecided comparisons
changes (the priorities are per item, as in :func:`kgeval.bounds.greedy.greedy`); between changes the next item
is the next fresh one of the same ranking. Items that bear on no undecided comparison follow in the plan's
order. The plan's audit items keep their slots: when the plan puts an audit item at the m-th position, the m-th
item started is the first fresh audit item in the plan's order.
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
from scipy import sparse

from ..bounds.greedy import order_items
from ..judgments.candidates import TOL


def decision_rule(conn: sqlite3.Connection) -> str:
    """``exact`` (the exact bounds decide) for a campaign served in MTC's order, else ``sequence`` (the
    confidence sequence decides; the items arrive in the plan's random order)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'order'").fetchone()
    return "exact" if row is not None and row[0] == "mtc" else "sequence"


def _matrix(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape) -> sparse.csr_matrix:
    return sparse.csr_matrix((vals, (rows, cols)), shape=shape)


class Exact:
    """The comparisons' exact bounds and MTC terms over the campaign's items (0-based in serving order)."""

    def __init__(self, conn: sqlite3.Connection):
        comps = conn.execute("SELECT id, bound_low, bound_high FROM comparisons ORDER BY id").fetchall()
        self.ids = np.array([r[0] for r in conn.execute("SELECT id FROM items ORDER BY pos")], np.int64)
        self.audit = np.array([r[0] for r in conn.execute("SELECT audit FROM items ORDER BY pos")], bool)
        n, m = self.ids.size, len(comps)
        self.known = np.array([c["bound_low"] is not None and c["bound_high"] is not None for c in comps], bool)
        self.low0 = np.array([c["bound_low"] if k else np.nan for c, k in zip(comps, self.known)], float)
        self.high0 = np.array([c["bound_high"] if k else np.nan for c, k in zip(comps, self.known)], float)
        row = {c["id"]: j for j, c in enumerate(comps)}
        coef = np.array(conn.execute("SELECT comparison, item, dpos, dneg, mtc, mtc_tie FROM coefficients"
                                     ).fetchall(), float).reshape(-1, 6)
        j = np.array([row[int(c)] for c in coef[:, 0]], np.int64)
        i = np.searchsorted(self.ids, coef[:, 1].astype(np.int64))
        self.dpos, self.dneg, self.mtc, self.tie = (_matrix(i, j, coef[:, c], (n, m)) for c in (2, 3, 4, 5))

    def bounds(self, items: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per comparison the exact bounds of Δ when ``items`` (0-based) are final with ``labels`` (1 Y, 0 N)
        and every other unknown is unjudged (NaN: a comparison stored without its bounds)."""
        x, y = np.zeros(self.ids.size), np.zeros(self.ids.size)
        x[items] = np.asarray(labels) == 1
        y[items] = np.asarray(labels) == 0
        low = self.low0 + self.dpos.T @ x - self.dneg.T @ y
        high = self.high0 + self.dneg.T @ x - self.dpos.T @ y
        return low, high

    def paths(self, items: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per comparison (rows) the exact bounds after each of ``items`` (0-based, in the order they became
        final, columns) became final with its label."""
        x = (np.asarray(labels) == 1)[:, None]
        dpos, dneg = self.dpos[items].toarray(), self.dneg[items].toarray()
        low = self.low0[:, None] + np.cumsum(np.where(x, dpos, -dneg), 0).T
        high = self.high0[:, None] + np.cumsum(np.where(x, dneg, -dpos), 0).T
        return low, high

    def undecided(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The bounds module's hard stop: neither decided (Δ_lo > 0 or Δ_hi < 0) nor fixed (Δ_lo = Δ_hi)."""
        return self.known & ~((low > TOL) | (high < -TOL) | (high - low <= TOL))

    def ranking(self, undecided: np.ndarray) -> np.ndarray:
        """The non-audit items (0-based) best first: MTC's priority on the undecided comparisons, then the rest in
        the plan's order."""
        u = undecided.astype(float)
        sq = np.maximum(self.tie @ u, 0.0)
        sq[sq <= TOL * TOL] = 0.0
        pri = np.where(sq > 0, self.mtc @ u, 0.0)
        items = np.flatnonzero(~self.audit)
        pos = order_items(items, pri[items], sq[items], np.arange(self.ids.size, dtype=float))
        first = items[pos]
        rest = np.setdiff1d(items, first, assume_unique=True)
        return np.concatenate([first, rest])


class Serving:
    """The state of the MTC order (no database): the bounds after the final labels given to :meth:`final`, the
    ranking of the current undecided comparisons and the items not yet started (``fresh``)."""

    def __init__(self, exact: Exact, fresh: np.ndarray | None = None):
        self.exact = exact
        self.low, self.high = exact.low0.copy(), exact.high0.copy()
        self.fresh = np.ones(exact.ids.size, bool) if fresh is None else fresh
        self.audit_items = np.flatnonzero(exact.audit)
        self.und, self.rank, self.next, self.audit_next = None, np.zeros(0, np.int64), 0, 0

    def final(self, items: np.ndarray, labels: np.ndarray) -> None:
        """Items (0-based) became final with these labels (1 Y, 0 N)."""
        x = (np.asarray(labels) == 1).astype(float)
        dpos, dneg = self.exact.dpos[items], self.exact.dneg[items]
        self.low += dpos.T @ x - dneg.T @ (1 - x)
        self.high += dneg.T @ x - dpos.T @ (1 - x)

    def restart(self) -> None:
        """Some items may be fresh again (``fresh`` reloaded): look from the start of the rankings."""
        self.next, self.audit_next = 0, 0

    def _first(self, items: np.ndarray, start: int) -> int:
        """The position in ``items`` of the first fresh item from ``start`` on (``items.size``: none)."""
        while start < items.size:
            hit = np.flatnonzero(self.fresh[items[start:start + 4096]])
            if hit.size:
                return start + int(hit[0])
            start += 4096
        return items.size

    def choose(self) -> int | None:
        """The next item (0-based) to start, marked started; None when every item is."""
        und = self.exact.undecided(self.low, self.high)
        if self.und is None or not np.array_equal(und, self.und):
            self.und, self.rank, self.next = und, self.exact.ranking(und), 0
        started = int(self.fresh.size - self.fresh.sum())
        self.next = self._first(self.rank, self.next)
        self.audit_next = self._first(self.audit_items, self.audit_next)
        audit_slot = started < self.fresh.size and self.exact.audit[started]
        has_plain, has_audit = self.next < self.rank.size, self.audit_next < self.audit_items.size
        if not (has_plain or has_audit):
            return None
        i = int(self.audit_items[self.audit_next] if has_audit and (audit_slot or not has_plain)
                else self.rank[self.next])
        self.fresh[i] = False
        return i


def served_order(exact: Exact, truth: np.ndarray) -> np.ndarray:
    """The items (0-based) in the order the MTC order starts them when each is final, with its ``truth`` label,
    before the next one starts (the oracle of :mod:`kgeval.campaign.simulate`, offline)."""
    serving, out = Serving(exact), []
    while (i := serving.choose()) is not None:
        out.append(i)
        serving.final(np.array([i]), truth[[i]])
    return np.array(out, np.int64)


def _waves(conn: sqlite3.Connection) -> str:
    """The campaign's wave count, which `kgeval campaign extend` raises in the transaction adding the items."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'waves'").fetchone()
    return "1" if row is None else str(row[0])


class MtcOrder:
    """The server's serving order by MTC, kept in step with the campaign file: :meth:`pick` is called inside
    the write transaction that reserves the item, so its view of the final labels and fresh items is current."""

    def __init__(self, conn: sqlite3.Connection):
        self.lock = threading.Lock()
        self._load(conn)

    def _load(self, conn: sqlite3.Connection) -> None:
        """The campaign's items and comparisons as the file holds them now, served from scratch."""
        self.exact = Exact(conn)
        self.pos = {int(i): p for p, i in enumerate(self.exact.ids)}
        self.waves = _waves(conn)
        self.serving, self.seq, self.count, self.idsum = None, 0, 0, 0

    def _fresh(self, conn: sqlite3.Connection) -> np.ndarray:
        fresh = np.zeros(self.exact.ids.size, bool)
        rows = conn.execute("SELECT id FROM items WHERE state = 'open' AND n_assigned = 0").fetchall()
        fresh[[self.pos[r[0]] for r in rows]] = True
        return fresh

    def _sync(self, conn: sqlite3.Connection) -> None:
        """Apply the labels that became final since the last call; start again after an undo; read the items
        and comparisons again after `kgeval campaign extend` added a wave (the server keeps running)."""
        if _waves(conn) != self.waves:
            self._load(conn)
        # the set of (item, label) pairs final, summed: an undo, or an undo and a new label, changes it
        count, idsum = conn.execute("SELECT COUNT(*), COALESCE(SUM(id * (final_label + 2)), 0) FROM items WHERE "
                                    "state = 'final'").fetchone()
        new = conn.execute("SELECT id, final_label, final_seq FROM items WHERE state = 'final' AND final_seq > ? "
                           "ORDER BY final_seq", (self.seq,)).fetchall()
        if self.serving is None or count != self.count + len(new) or \
                idsum != self.idsum + sum(r[0] * (r[1] + 2) for r in new):
            # first call, or a final label was withdrawn (undo): rebuild from the file
            self.serving = Serving(self.exact, self._fresh(conn))
            new = conn.execute("SELECT id, final_label, final_seq FROM items WHERE state = 'final' ORDER BY "
                               "final_seq").fetchall()
            self.seq = 0
        if new:
            self.serving.final(np.array([self.pos[r[0]] for r in new], np.int64), np.array([r[1] for r in new]))
            self.seq = int(new[-1][2])
        self.count, self.idsum = count, idsum

    def expired(self) -> None:
        """Reservations returned to the queue: their items may be fresh again."""
        self.serving = None

    def pick(self, conn: sqlite3.Connection) -> int | None:
        """The id of the next fresh item to start (marked started here; the caller reserves it), or None."""
        with self.lock:
            self._sync(conn)
            while (i := self.serving.choose()) is not None:
                item = int(self.exact.ids[i])
                row = conn.execute("SELECT state, n_assigned FROM items WHERE id = ?", (item,)).fetchone()
                if row["state"] == "open" and row["n_assigned"] == 0:  # not changed by another process
                    return item
            return None
