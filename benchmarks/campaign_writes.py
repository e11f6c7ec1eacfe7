"""The campaign's single SQLite writer: judgments per second, and the time to the next item, on a synthetic
campaign as large as FB-Test-S-C's unknowns (123,000 items by default).

Annotators (N of them) take turns: each asks for its next item and judges it, through the protocol functions the
server calls (no HTTP: the writer's own limit). Every judgment is one ``BEGIN IMMEDIATE`` transaction with
``synchronous = FULL`` (acknowledged means on disk). Prints one JSON line: judgments per second, next-item and
judge latencies (median, p95, max) and the machine's disk.

    python benchmarks/campaign_writes.py [--items 123000] [--annotators 20] [--judgments 5000] [--dir DIR]
        [--order plan|mtc] [--comparisons 91] [--bears 6]

``--order mtc`` serves by MTC's priority (:mod:`kgeval.campaign.exact`) over ``--comparisons`` synthetic
comparisons (91: every pair of 14 systems), each item bearing on ``--bears`` of them with random d_e and p_e;
each comparison's lower bound starts just below 0 at its own distance, so that comparisons get decided during
the run and the ranking is recomputed (the count is printed as ``rerankings``).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import heartbeat_main

from kgeval.campaign.exact import MtcOrder
from kgeval.campaign.protocol import judge, next_item
from kgeval.campaign.store import add_person, connect, create, write


def add_synthetic_comparisons(conn, n_items: int, n_comps: int, bears: int, seed: int = 0) -> None:
    """``n_comps`` comparisons, each item bearing on ``bears`` of them, for the MTC order."""
    rng = np.random.default_rng(seed)
    comp = np.stack([rng.choice(n_comps, bears, replace=False) for _ in range(n_items)])
    d = rng.normal(0, 1e-5, comp.shape)
    p = rng.uniform(0.05, 0.6, (n_items, 1))
    neg = np.zeros(n_comps)
    np.add.at(neg, comp, np.minimum(d, 0))
    pos = np.zeros(n_comps)
    np.add.at(pos, comp, np.maximum(d, 0))
    low = -np.linspace(1e-5, 2e-3, n_comps)  # decided once Y labels have raised it by this much
    with write(conn):
        conn.executemany("INSERT INTO comparisons (id, a, b, metric, base, lo, hi, bound_low, bound_high) VALUES "
                         "(?, ?, ?, 'P@10', 0, -1, 1, ?, ?)",
                         [(j + 1, f"S{j}", "T", low[j], low[j] - neg[j] + pos[j]) for j in range(n_comps)])
        item = np.repeat(np.arange(1, n_items + 1), bears)
        dd = d.ravel()
        conn.executemany("INSERT INTO coefficients VALUES (?, ?, 0, 0, ?, ?, ?, ?)",
                         zip((comp.ravel() + 1).tolist(), item.tolist(), np.maximum(dd, 0).tolist(),
                             np.minimum(dd, 0).tolist(), (dd * dd * np.repeat(p * (1 - p), bears)).tolist(),
                             (dd * dd).tolist()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=123_000)
    ap.add_argument("--annotators", type=int, default=20)
    ap.add_argument("--judgments", type=int, default=5000)
    ap.add_argument("--dir", default=None, help="folder for the campaign file (default: a temporary one)")
    ap.add_argument("--order", choices=("plan", "mtc"), default="plan")
    ap.add_argument("--comparisons", type=int, default=91)
    ap.add_argument("--bears", type=int, default=6)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        db = Path(tmp) / "bench.db"
        t0 = time.perf_counter()
        create(db, [{"batch": "bench", "sheet_item": str(i), "head_id": f"/m/h{i}", "relation": "/r/x",
                     "tail_id": f"/m/t{i}", "head_name": f"H{i}", "tail_name": f"T{i}", "question": f"Q{i}?",
                     "audit": int(i % 20 == 0)} for i in range(1, a.items + 1)], {"title": "bench", "order": a.order})
        conn = connect(db)
        order, rerank = None, [0]
        if a.order == "mtc":
            add_synthetic_comparisons(conn, a.items, a.comparisons, a.bears)
            order = MtcOrder(conn)
            ranking = order.exact.ranking

            def counted(und):
                rerank[0] += 1
                return ranking(und)

            order.exact.ranking = counted
        created = time.perf_counter() - t0
        for i in range(a.annotators):
            add_person(conn, f"a{i}", "annotator")
        people = conn.execute("SELECT id, name, role FROM people").fetchall()
        rng = np.random.default_rng(0)
        t_next, t_judge = [], []
        start = time.perf_counter()
        for _ in range(a.judgments):
            person = people[int(rng.integers(len(people)))]
            t = time.perf_counter()
            item = next_item(conn, person, order)
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

    extra = {}
    if order is not None:
        extra = {"comparisons": a.comparisons, "bears": a.bears, "rerankings": rerank[0],
                 "undecided_at_end": int(order.serving.und.sum())}
    print(json.dumps({"items": a.items, "order": a.order, **extra, "annotators": a.annotators, "judgments": int(n),
                      "create_s": round(created, 2), "judgments_per_s": round(n / wall, 1),
                      "next": stats(t_next), "judge": stats(t_judge), "machine": platform.platform(),
                      "cpu": platform.processor() or platform.machine()}))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
