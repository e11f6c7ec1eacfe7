"""The campaign's single SQLite writer: judgments per second, and the time to the next item, on a synthetic
campaign as large as FB-Test-S-C's unknowns (123,000 items by default).

Annotators (N of them) take turns: each asks for its next item and judges it, through the protocol functions the
server calls (no HTTP: the writer's own limit). Every judgment is one ``BEGIN IMMEDIATE`` transaction with
``synchronous = FULL`` (acknowledged means on disk). Prints one JSON line: judgments per second, next-item and
judge latencies (median, p95, max) and the machine's disk.

    python benchmarks/campaign_writes.py [--items 123000] [--annotators 20] [--judgments 5000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from kgeval.campaign.protocol import judge, next_item
from kgeval.campaign.store import add_person, connect, create


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=123_000)
    ap.add_argument("--annotators", type=int, default=20)
    ap.add_argument("--judgments", type=int, default=5000)
    ap.add_argument("--dir", default=None, help="folder for the campaign file (default: a temporary one)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        db = Path(tmp) / "bench.db"
        t0 = time.perf_counter()
        create(db, [{"batch": "bench", "sheet_item": str(i), "head_id": f"/m/h{i}", "relation": "/r/x",
                     "tail_id": f"/m/t{i}", "head_name": f"H{i}", "tail_name": f"T{i}", "question": f"Q{i}?",
                     "audit": 0} for i in range(1, a.items + 1)], {"title": "bench"})
        created = time.perf_counter() - t0
        conn = connect(db)
        for i in range(a.annotators):
            add_person(conn, f"a{i}", "annotator")
        people = conn.execute("SELECT id, name, role FROM people").fetchall()
        rng = np.random.default_rng(0)
        t_next, t_judge = [], []
        start = time.perf_counter()
        for _ in range(a.judgments):
            person = people[int(rng.integers(len(people)))]
            t = time.perf_counter()
            item = next_item(conn, person)
            t_next.append(time.perf_counter() - t)
            t = time.perf_counter()
            judge(conn, person, item, "yn"[int(rng.integers(2))], "https://en.wikipedia.org/wiki/X", "", 5.0)
            t_judge.append(time.perf_counter() - t)
        wall = time.perf_counter() - start
        n = conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        conn.close()

    def stats(x):
        x = 1000 * np.array(x)
        return {"median_ms": round(float(np.median(x)), 3), "p95_ms": round(float(np.percentile(x, 95)), 3),
                "max_ms": round(float(x.max()), 3)}

    print(json.dumps({"items": a.items, "annotators": a.annotators, "judgments": int(n),
                      "create_s": round(created, 2), "judgments_per_s": round(n / wall, 1),
                      "next": stats(t_next), "judge": stats(t_judge), "machine": platform.platform(),
                      "cpu": platform.processor() or platform.machine()}))


if __name__ == "__main__":
    main()
