"""Live estimates of a campaign: per comparison Δ̂ and its anytime-valid interval from the final labels so far,
the exact bounds of Δ (:mod:`kgeval.campaign.exact`), Cohen's κ between the annotators, judgments per hour per
person.

Each comparison is stored as ``base``, the range ``[lo, hi]`` and per item the two values its final label can
give, ``c1`` (Y) and ``c0`` (N): the t-th final label gives the draw Y_t = base + c_x of
:mod:`kgeval.sampling.sequence` (an item drawn with probability q ∝ π, Y_t unbiased for Δ), and the
empirical-Bernstein confidence sequence on Y_1..Y_t is valid at every look, so the live page may declare a
comparison decided the moment its interval leaves 0, however often it is looked at (in the plan's random order;
served in MTC's order, a campaign decides by the exact bounds: :mod:`kgeval.campaign.exact`). The same rule
(:func:`decided_at`) gives the offline simulation's answer, so that a campaign run through the server and its
simulation decide at the same judgment.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from ..judgments.candidates import TOL
from ..pools.annotation.agreement import cohen_kappa
from ..sampling.sequence import eb_sequence
from .projection import projection
from .store import meta

ALPHA = 0.05


def paths(base: np.ndarray, lo: np.ndarray, hi: np.ndarray, c1: np.ndarray, c0: np.ndarray, order: np.ndarray,
          labels: np.ndarray, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per comparison (rows) and final label (columns, in the order they became final): the running estimate
    and the confidence sequence's limits. ``c1``/``c0`` are (comparisons × items), ``order`` item columns."""
    n = order.size
    if n == 0:
        empty = np.zeros((base.size, 0))
        return empty, empty, empty
    y = base[:, None] + np.where(labels.astype(bool)[None, :], c1[:, order], c0[:, order])
    est = np.cumsum(y, 1) / np.arange(1, n + 1)
    low, high = np.empty_like(y), np.empty_like(y)
    for j in range(base.size):  # one sequence per comparison: its own range
        low[j], high[j] = eb_sequence(y[j], float(lo[j]), float(hi[j]), alpha)
    return est, low, high


def decided_at(low: np.ndarray, high: np.ndarray, counts: np.ndarray) -> list[int | None]:
    """Per comparison the judgment count (``counts``: judgments made when each label became final) at which
    the interval first excluded 0, or None."""
    if low.shape[1] == 0:
        return [None] * low.shape[0]
    dec = (low > 0) | (high < 0)
    first = dec.argmax(1)
    return [int(counts[f]) if dec[j, f] else None for j, f in enumerate(first)]


def load_comparisons(conn: sqlite3.Connection) -> tuple[list[sqlite3.Row], np.ndarray, np.ndarray, np.ndarray]:
    """The comparisons and their (comparisons × item ids + 1) coefficient matrices; ``bears``: c1 ≠ c0."""
    comps = conn.execute("SELECT id, a, b, metric, base, lo, hi FROM comparisons ORDER BY id").fetchall()
    n_items = conn.execute("SELECT COALESCE(MAX(id), 0) FROM items").fetchone()[0]
    c1 = np.zeros((len(comps), n_items + 1))
    c0 = np.zeros_like(c1)
    row = {c["id"]: j for j, c in enumerate(comps)}
    if comps:
        coef = np.array(conn.execute("SELECT comparison, item, c1, c0 FROM coefficients").fetchall(), float)
        if coef.size:
            r, i = np.vectorize(row.get)(coef[:, 0].astype(int)), coef[:, 1].astype(int)
            c1[r, i], c0[r, i] = coef[:, 2], coef[:, 3]
    return comps, c1, c0, c1 != c0


def finals(conn: sqlite3.Connection) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Final items in the order they became final, their labels and the judgment count at that moment."""
    rows = np.array(conn.execute(
        "SELECT i.id, i.final_label, (SELECT COALESCE(MAX(j.id), 0) FROM judgments j WHERE j.item = i.id) "
        "FROM items i "
        "WHERE i.state = 'final' ORDER BY i.final_seq").fetchall(), np.int64).reshape(-1, 3)
    ids = np.array([r[0] for r in conn.execute("SELECT id FROM judgments ORDER BY id")], np.int64)
    return rows[:, 0], rows[:, 1], np.searchsorted(ids, rows[:, 2], side="right")


def kappa(conn: sqlite3.Connection) -> float | None:
    """Cohen's κ over the items both annotators answered Y or N (the first and the second answer)."""
    detail = kappa_detail(conn)
    return None if detail is None else detail["value"]


def kappa_detail(conn: sqlite3.Connection) -> dict | None:
    """:func:`kappa` with what a person needs to read it: the pairs of answers, the agreements, the share of Y
    and the agreement chance alone would give (Cohen's p_e), and one line saying what they mean."""
    rows = conn.execute("SELECT item, label FROM judgments WHERE kind = 'annotation' AND item IN (SELECT item FROM "
                        "judgments WHERE kind = 'annotation' GROUP BY item HAVING COUNT(*) = 2 AND "
                        "SUM(label = 'u') = 0) ORDER BY item, id").fetchall()
    if not rows:
        return None
    first = [r["label"].upper() for r in rows[0::2]]
    second = [r["label"].upper() for r in rows[1::2]]
    k = cohen_kappa(first, second)
    a, b = np.array(first) == "Y", np.array(second) == "Y"
    p_yes = (a.mean() + b.mean()) / 2
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return {"value": None if np.isnan(k) else float(k), "pairs": len(first), "agree": int((a == b).sum()),
            "yes": float(p_yes), "chance": chance,
            "reading": kappa_reading(None if np.isnan(k) else float(k), len(first), int((a == b).sum()), p_yes,
                                     chance)}


def kappa_reading(k: float | None, n: int, agree: int, p_yes: float, chance: float) -> str:
    """One line that says what κ means here: chance agreement is high when nearly every answer is one class
    (prevalence), and then κ is low however often the annotators agree."""
    share = f"{agree} of {n} pairs of answers agree ({100 * agree / n:.0f} %)"
    if k is None:
        return f"{share}; every answer is one class, so κ is undefined"
    major, cls = (p_yes, "Y") if p_yes >= 0.5 else (1 - p_yes, "N")
    if chance >= 0.7:
        return (f"{share}, but {100 * major:.0f} % of the answers are {cls}, so chance alone would agree "
                f"{100 * chance:.0f} % of the time: κ counts agreement beyond chance and is low when nearly "
                f"every answer is one class (prevalence), read the agreements too")
    return f"{share}; chance alone would agree {100 * chance:.0f} % of the time"


def rates(conn: sqlite3.Connection) -> dict[str, float | None]:
    """Judgments per hour of judging per person (the time each judgment took, as the page recorded it)."""
    out = {}
    for r in conn.execute("SELECT p.name, COUNT(j.id) AS n, SUM(j.seconds) AS s FROM people p JOIN judgments j ON "
                          "j.person = p.id GROUP BY p.id ORDER BY p.name"):
        out[r["name"]] = round(3600.0 * r["n"] / r["s"], 1) if r["s"] else None
    return out


def _number(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


# what the page says about its decision rule beside the final estimate's (issue 51: the two differ at the end)
RULE_TEXT = {
    "sequence": "Decided here when the 95 % anytime-valid confidence sequence (empirical Bernstein) excludes 0: "
                "valid however often this page is looked at. The final estimate (kgeval sample-estimate, kgeval "
                "evaluate --judgments) computes a fixed-sample 95 % interval once, at the end: it is narrower and "
                "may decide a pair this page still calls not yet; it is valid only when looked at once, so do not "
                "stop the campaign on it.",
    "exact": "Decided here when the exact bounds of Δ exclude 0 (served in MTC's order, not at random: the "
             "sequence's guarantee needs the random order). The final estimate (kgeval evaluate --judgments) uses "
             "the same bounds once every item is judged.",
}


def metric_name(metric: str, k: int | None) -> str:
    """The metric's full name: ``P@k`` with the campaign's cut-off, ``P@10``."""
    return metric.replace("@k", f"@{k}") if k is not None else metric


def metric_range(metric: str, k: int | None) -> float:
    """The largest |Δ| the metric allows: 1 for the rates (P, RR, Success, RBP: means of values in [0, 1]),
    Σ_{i ≤ k} 1 / log2(i + 1) for DCG@k; infinite when not known (the interval is then not cut)."""
    base = metric.split("@")[0]
    if base in ("P", "RR", "Success", "RBP", "nDCG", "AP"):
        return 1.0
    if base == "DCG" and k is not None:
        return float((1 / np.log2(np.arange(2, k + 2))).sum())
    return float("inf")


class Live:
    """The comparisons (fixed when the campaign is created: read once) and the snapshot of the labels so far,
    recomputed only when a judgment changed something."""

    def __init__(self, conn: sqlite3.Connection, alpha: float = ALPHA, more_seconds: float | None = None):
        self.comps, self.c1, self.c0, self.bears = load_comparisons(conn)
        self.base = np.array([c["base"] for c in self.comps], float)
        self.lo = np.array([c["lo"] for c in self.comps], float)
        self.hi = np.array([c["hi"] for c in self.comps], float)
        self.alpha, self._key, self._last = alpha, None, None
        # the judgments still needed: at most this long per snapshot (the server's), the rest at the next look;
        # None (campaign status): every pair at once
        self.more_seconds, self._inputs = more_seconds, None
        from .exact import Exact, decision_rule

        self.exact, self.rule = Exact(conn), decision_rule(conn)
        # (comparisons × items) for the bounds' reach in the snapshot
        self.up = self.exact.dpos.maximum(-self.exact.dneg).T.tocsr()
        self.down = self.exact.dneg.minimum(-self.exact.dpos).T.tocsr()
        k = meta(conn).get("k", "")
        self.k = int(k) if k.isdigit() else None
        self.span = np.array([metric_range(c["metric"], self.k) for c in self.comps], float)
        self.names = [metric_name(c["metric"], self.k) for c in self.comps]
        self.budget = budget_units(conn, [c["id"] for c in self.comps])
        # imported here (scipy.stats: ~1 s), not at the page's first look
        from ..sampling.more import more_needed

        self.more_needed = more_needed
        self._more: dict[int, tuple[tuple, float]] = {}  # per comparison: (its judgments, Δ̂) → more_needed

    def snapshot(self, conn: sqlite3.Connection) -> dict:
        """What ``GET /api/{token}/live`` returns."""
        conn.execute("BEGIN")  # one consistent read of a database others write to
        try:
            # anything a judgment, an undo or an import changes: then the estimates are recomputed
            key = tuple(conn.execute("SELECT COUNT(*), COALESCE(MAX(id), 0), COALESCE(SUM(seconds), 0) FROM "
                                     "judgments").fetchone()) + tuple(conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(final_seq * (final_label + 1)), 0) FROM items WHERE state = "
                "'final'").fetchone())
            if key == self._key:
                if any(r.get("updating") for r in self._last["comparisons"]):
                    # the figures a former look left to compute, in new rows: a snapshot handed out never changes
                    rows = [dict(r) for r in self._last["comparisons"]]
                    self._fill(rows)
                    self._last = {**self._last, "comparisons": rows}
                return self._last
            order, labels, counts = finals(conn)
            total = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
            detail = kappa_detail(conn)
            out = {"kappa": None if detail is None else detail["value"], "kappa_detail": detail,
                   "rates": rates(conn), "final": int(order.size), "total": int(total), "judgments": int(key[0]),
                   "projection": projection(conn)}
        finally:
            conn.execute("COMMIT")
        est, low, high = paths(self.base, self.lo, self.hi, self.c1, self.c0, order, labels, self.alpha)
        done = self.bears[:, order].sum(1)
        served = np.searchsorted(self.exact.ids, order)
        b_low, b_high = self.exact.bounds(served, labels)
        left = np.ones(self.exact.ids.size)
        left[served] = 0.0
        # the exact bounds' reach: the highest lower and the lowest upper bound the items left can give, each
        # item answered the way that moves that end most (Exact.bounds: a Y adds dpos to the lower end and dneg
        # to the upper, an N −dneg and −dpos)
        reach_low, reach_high = b_low + self.up @ left, b_high + self.down @ left
        bears = done > 0  # no final label moves a pair yet: its "estimate" would be the prior's
        span = self.span
        lo = np.where(bears, low[:, -1], np.where(np.isfinite(span), -span, self.lo)) if order.size else \
            np.where(np.isfinite(span), -span, self.lo)
        hi = np.where(bears, high[:, -1], np.where(np.isfinite(span), span, self.hi)) if order.size else \
            np.where(np.isfinite(span), span, self.hi)
        # Δ lies in [−span, span] whatever the labels, and within its exact bounds: the sequence's limits
        # beyond them say nothing; the decision on the bounds widened by TOL (their sums drift by ~1e-16 where
        # Δ_lo is exactly 0)
        lo, hi = np.maximum(lo, -span), np.minimum(hi, span)
        d_low, d_high = within(lo, hi, b_low - TOL, b_high + TOL)
        lo, hi = within(lo, hi, b_low, b_high)
        decided = (d_low > 0) | (d_high < 0)
        if self.rule == "exact":
            decided = (b_low > TOL) | (b_high < -TOL)
        self._inputs = (order, done, np.where(bears, est[:, -1] if order.size else 0.0, np.nan), decided)
        rows = []
        for j, c in enumerate(self.comps):
            row = {"a": c["a"], "b": c["b"], "metric": c["metric"], "metric_name": self.names[j],
                   "delta": float(est[j, -1]) if bears[j] else None, "low": float(lo[j]), "high": float(hi[j]),
                   "decided": bool(decided[j]), "rule": self.rule, "judgments": int(done[j]),
                   "bound_low": _number(b_low[j]), "bound_high": _number(b_high[j]),
                   "reach_low": _number(reach_low[j]), "reach_high": _number(reach_high[j]),
                   "expected": int(self.bears[j].sum() - done[j]),
                   # the judgments that would decide the pair at the estimate in hand (kgeval.sampling.more, as
                   # sample-estimate computes them); None without an estimate or the plan's budget statistics
                   "more_needed": None, "no_budget": False}
            rows.append(row)
        self._fill(rows)
        out["rule_text"] = RULE_TEXT[self.rule]
        out["comparisons"] = rows
        self._key, self._last = key, out
        return out

    def _fill(self, rows: list[dict]) -> None:
        """Each row's ``more_needed``, ``no_budget`` and ``needed`` from :meth:`more`; a figure not computed in
        this look's time keeps the former one, marked ``updating`` (the page's next look computes it)."""
        more, stale = self.more(*self._inputs)
        for row, m, late in zip(rows, more, stale):
            row["more_needed"] = int(m) if m is not None and np.isfinite(m) else None
            # no budget decides it at this estimate (none within 10,000, or every unit is judged)
            row["no_budget"] = bool(m is not None and not np.isfinite(m))
            row["needed"] = still_needed(row, m)
            if late:
                row["updating"] = True
                row["needed"] = (row["needed"] if m is not None else "working out the judgments still needed") + \
                    " (updating)"
            else:
                row.pop("updating", None)

    def more(self, order: np.ndarray, done: np.ndarray, delta: np.ndarray, decided: np.ndarray
             ) -> tuple[list[float | None], list[bool]]:
        """Per comparison :func:`kgeval.sampling.more.more_needed` on the plan's budget statistics, the final
        items' units judged (None: decided, no estimate yet, or no statistics stored), and whether it is late:
        not computed within ``more_seconds`` (then the former figure, or None). A comparison is computed again
        only when a label that bears on it arrived (its judgments or its Δ̂ changed)."""
        import time

        out: list[float | None] = [None] * len(self.comps)
        late = [False] * len(self.comps)
        start, done_now = time.perf_counter(), 0  # at least one figure a look
        for j, stats in enumerate(self.budget):
            # in MTC's order Δ̂ is not a random sample's: the exact bounds say what is left (still_needed)
            if stats is None or decided[j] or not np.isfinite(delta[j]) or self.rule == "exact":
                continue
            key = (int(done[j]), float(delta[j]))
            hit = self._more.get(j)
            if hit is None or hit[0] != key:
                if self.more_seconds is not None and done_now and time.perf_counter() - start > self.more_seconds:
                    out[j], late[j] = (None if hit is None else hit[1]), True
                    continue
                v, at, item = stats
                judged = np.zeros(v.size, bool)
                judged[at[np.isin(item, order)]] = True
                hit = (key, self.more_needed(v, judged, float(delta[j]), False, 1 - self.alpha))
                self._more[j], done_now = hit, done_now + 1
            out[j] = hit[1]
        return out, late


def budget_units(conn: sqlite3.Connection, comps: list[int]
                 ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """Per comparison id the plan's budget statistics the create stored: the prior variance of each unit that
    bears on it (largest first), and the positions of the drawn ones with the item id whose final label judges
    each; None where none were (a comparisons file, a file from an earlier kgeval)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'budget_units'").fetchone() is None:
        return [None] * len(comps)
    got = {}
    for cid, v, drawn in conn.execute("SELECT comparison, v, item FROM budget_units"):
        at, item = np.frombuffer(drawn, "<i8").reshape(2, -1)
        got[cid] = (np.frombuffer(v, "<f8"), at, item)
    return [got.get(c) for c in comps]


def within(low, high, b_low, b_high):
    """The intervals ``[low, high]`` cut to the exact bounds (NaN: not known): Δ lies within them for certain,
    so the cut interval covers whenever the uncut one does, at every look. Where the two are disjoint (the
    interval missed Δ), the bounds alone."""
    cut_low, cut_high = np.fmax(low, b_low), np.fmin(high, b_high)
    miss = cut_low > cut_high
    return np.where(miss, b_low, cut_low), np.where(miss, b_high, cut_high)


def still_needed(row: dict, more: float | None = None) -> str:
    """What the pair still needs, in words: decided; with an estimate and the plan's budget statistics, what
    :func:`kgeval.sampling.more.more_needed` says (``more``: about N more judgments, none within 10,000 at this
    estimate, or none can); else what the exact bounds say: whether the items left here can still decide it."""
    from ..sampling.more import more_words

    if row["decided"]:
        return "decided"
    if more is not None:
        return more_words(more)
    n = row["expected"]
    if row["reach_low"] is None:
        return f"{n} item{'s' if n != 1 else ''} left here bear on it" if n else "more items: none left here bears on it"
    if row["reach_low"] <= TOL and row["reach_high"] >= -TOL:
        return (f"more items: no answer left here decides it (bounds at best [{row['reach_low']:+.2f}, "
                f"{row['reach_high']:+.2f}])")
    return f"{n} item{'s' if n != 1 else ''} left here can decide it"

EXACT = ("dpos", "dneg", "mtc", "mtc_tie")


def add_comparisons(conn: sqlite3.Connection, comps: list[dict], c1: np.ndarray, c0: np.ndarray) -> None:
    """Store comparisons (dicts a, b, metric, base, lo, hi and, when known, bound_low, bound_high and the item
    rows of :data:`EXACT`) with their (comparisons × items in serving order) coefficients; an item that moves
    neither the estimate nor the bounds of a comparison is not stored for it."""
    from .store import write

    ids = np.array([r[0] for r in conn.execute("SELECT id FROM items ORDER BY pos")], np.int64)
    with write(conn):
        for j, c in enumerate(comps):
            cid = conn.execute("INSERT INTO comparisons (a, b, metric, base, lo, hi, bound_low, bound_high) VALUES "
                               "(?, ?, ?, ?, ?, ?, ?, ?)", (c["a"], c["b"], c["metric"], c["base"], c["lo"],
                                                            c["hi"], c.get("bound_low"), c.get("bound_high"))
                               ).lastrowid
            ex = [np.asarray(c[k], float) if k in c else np.zeros(ids.size) for k in EXACT]
            keep = np.flatnonzero((c1[j] != c0[j]) | (ex[0] != 0) | (ex[1] != 0))
            conn.executemany("INSERT INTO coefficients VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             zip([cid] * keep.size, ids[keep].tolist(), c1[j, keep].tolist(), c0[j, keep].tolist(),
                                 *(e[keep].tolist() for e in ex)))
            if "budget_v" in c:  # the plan's budget statistics; the drawn units' positions and item ids
                item = np.asarray(c["budget_item"], np.int64)
                at = np.flatnonzero(item >= 0)
                conn.execute("INSERT INTO budget_units VALUES (?, ?, ?)",
                             (cid, np.asarray(c["budget_v"], "<f8").tobytes(),
                              np.stack([at, ids[item[at]]]).astype("<i8").tobytes()))
