"""``kgeval campaign status``: the campaign's progress, agreement and decisions as text."""

from __future__ import annotations

from pathlib import Path

from .live import Live
from .projection import projection, projection_line
from .store import connect


def status_text(db: str | Path) -> str:
    conn = connect(db)
    try:
        counts = dict(conn.execute("SELECT state, COUNT(*) FROM items GROUP BY state").fetchall())
        people = conn.execute("SELECT p.name, p.role, COUNT(j.id) FROM people p LEFT JOIN judgments j ON "
                              "j.person = p.id GROUP BY p.id ORDER BY p.role, p.name").fetchall()
        snap = Live(conn).snapshot(conn)
        pr = projection(conn)
    finally:
        conn.close()
    kappa = "–" if snap["kappa"] is None else f"{snap['kappa']:.3f}"
    lines = [f"{db}: {snap['total']} items: {counts.get('final', 0)} final, {counts.get('conflict', 0)} waiting "
             f"for adjudication, {counts.get('open', 0)} open; {snap['judgments']} judgments; kappa {kappa}"]
    lines.append("  " + projection_line(pr))
    lines += [f"  {role}\t{name}\t{n} judgments" for name, role, n in people]
    for c in snap["comparisons"]:
        a_better = c["bound_low"] > 0 if c["rule"] == "exact" else c["low"] > 0
        verdict = ("decided: " + (f"{c['a']} better" if a_better else f"{c['b']} better")
                   + (" (exact bounds)" if c["rule"] == "exact" else "")) if c["decided"] else "undecided"
        delta = "–" if c["delta"] is None else f"{c['delta']:+.4f}"
        exact = "" if c["bound_low"] is None else f"\texact [{c['bound_low']:+.4f}, {c['bound_high']:+.4f}]"
        # the undecided: the judgments that would decide it (kgeval.sampling.more, sample-estimate's figure),
        # or what the exact bounds say, as on the live page
        lines.append(f"  {c['metric_name']}\t{c['a']} − {c['b']}\t{delta}\t[{c['low']:+.4f}, {c['high']:+.4f}]\t"
                     f"{verdict if c['decided'] else verdict + ' — ' + c['needed']}\t{c['judgments']} judged{exact}")
    return "\n".join(lines)
