"""Judgments made against the plan's expectation, and a running projection of the total, for the curator.

A plan's budget is what its prior expects (``sampling_budgets.csv``'s ``plan_budget``: items to judge); the sheet
the draw produced holds a random number of items around it, and every item costs two annotations plus an
adjudication when the annotators differ or one cannot tell. A campaign whose adjudications run high, or a
question plan (RR@k) whose draw came out long, overruns the expectation: the projection says so while there is
still time to plan for it. Expected judgments = 2 × plan_budget (two annotators per item, no adjudication);
projected = the judgments the final items took + the judgments per item judged to the end so far × the items
not final yet (2 per item before any item is final).
"""

from __future__ import annotations

import sqlite3


def projection(conn: sqlite3.Connection) -> dict:
    """``made``, ``expected`` (None without the plan's budget), ``projected``, ``items``, ``final``, ``per_item``
    (judgments per final item so far, None before the first) and ``overrun`` (projected / expected − 1)."""
    row = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('plan_budget', 'plan_metric', 'k')"
                            ).fetchall())
    metric = row.get("plan_metric")
    if metric and "@" not in metric and row.get("k", "").isdigit():  # P@10, the name the live page gives
        metric = f"{metric}@{row['k']}"
    items, final, judged = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(state = 'final'), 0), COALESCE(SUM(state = 'final' AND final_by != "
        "'import'), 0) FROM items").fetchone()
    made = conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    # the rate counts the items judged to the end here (an imported label cost nothing here, an open item's
    # first answer is half its cost); the open items' answers so far are part of what the rate projects for them
    on_final = conn.execute("SELECT COUNT(*) FROM judgments j JOIN items i ON i.id = j.item "
                            "WHERE i.state = 'final'").fetchone()[0]
    per_item = on_final / judged if judged else None
    projected = on_final + (per_item if per_item is not None else 2.0) * (items - final)
    expected = 2 * float(row["plan_budget"]) if "plan_budget" in row else None
    return {"made": int(made), "expected": expected, "projected": float(projected), "items": int(items),
            "final": int(final), "per_item": per_item, "metric": metric,
            "overrun": projected / expected - 1 if expected else None}


def projection_line(pr: dict) -> str:
    """The status line: judgments made against the expectation and the projection."""
    rate = "no item judged to the end here yet: 2 per item assumed" if pr["per_item"] is None else \
        f"{pr['per_item']:.2f} judgments per final item so far"
    if pr["expected"] is None:
        return (f"judgments: {pr['made']} made; projected total {pr['projected']:.0f} for the {pr['items']} items "
                f"({rate}); no plan budget to compare with")
    return (f"judgments: {pr['made']} made of {pr['expected']:.0f} the plan expects (2 × its budget of "
            f"{pr['expected'] / 2:.1f} items, the prior's expectation); projected total {pr['projected']:.0f} for "
            f"the {pr['items']} items drawn ({rate}): {pr['overrun']:+.0%} against the expectation")
