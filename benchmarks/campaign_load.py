"""Load and faults of a judging campaign (issue 43), on loopback only, bounded in count and time.

    python benchmarks/campaign_load.py OUT [--quick]

A campaign on the real FB-Test-S-C (the data stage's files built from the mirror into OUT/resources, the plan from
the reference pack's lists, ``reference/default``: over every unknown of the study systems' top 10, or a
budget-400 plan with ``--quick``), ``kgeval campaign serve`` as its own process, then:

1. **race**: three annotators post the same item at once, two of them holding it: the item gets those two labels
   and the third is refused, never a third label (repeated on consecutive items);
2. **paced load**: N simulated annotators (async httpx, one connection each) × M judgments (20 × 500, each
   annotator's judgments 0.5 s apart, far faster than a person reads a question; ``--quick`` 4 × 40, 0.1 s
   apart): no error, ``next`` within 100 ms at p95;
   **saturated load**: the same without a pause, the single SQLite writer's rate: no error; after both, every
   acknowledged judgment in the database once, no other;
3. **kill**: the same load again, the server killed with SIGKILL while it runs, then restarted: every judgment
   acknowledged to a client before the kill is in the database, none twice, and the annotators go on.

It prints one table (the measured values beside the targets) and writes it to OUT/campaign_load.json; the exit
status is 1 when a target is missed. The checks read the campaign's SQLite file (``judgments``: id, item, person,
kind) read-only, after the server wrote it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from _common import head_commit, heartbeat_main, print_checks  # noqa: E402
from campaign_fixtures import Server, add_person, create, fb_plan, free_port  # noqa: E402

NEXT_P95_MS = 100.0
REQUEST_S = 10.0  # one request's bound


@dataclass
class Mode:
    annotators: int
    judgments: int
    budget: int | None
    phase_s: float  # one phase's bound
    pace: float  # seconds between one annotator's judgments in the paced phase
    kill_after_s: float
    races: int


FULL = Mode(annotators=20, judgments=500, budget=10**7, phase_s=900, pace=0.5, kill_after_s=5.0, races=20)
QUICK = Mode(annotators=4, judgments=40, budget=400, phase_s=30, pace=0.1, kill_after_s=0.5, races=5)


@dataclass
class Tally:
    next_ms: list[float] = field(default_factory=list)
    judge_ms: list[float] = field(default_factory=list)
    acks: list[tuple[str, int, int]] = field(default_factory=list)  # (person, item, judgment id)
    errors: list[str] = field(default_factory=list)
    cut: int = 0  # requests cut by the kill (transport errors after it)
    seconds: float = 0.0


def label_of(item: int, who: int) -> str:
    """Mostly the item's own answer, one annotator in ten the other way, some can't-tell."""
    base = "y" if item % 3 == 0 else "n"
    if (item * 7 + who) % 10 == 0:
        return "n" if base == "y" else "y"
    return "u" if (item + who) % 29 == 0 else base


async def annotator(base: str, who: int, name: str, token: str, n: int, tally: Tally, killed: asyncio.Event,
                    pace: float = 0.0, stagger: float = 0.0):
    """Up to ``n`` judgments, ``pace`` seconds apart (0: as fast as the server answers), starting after
    ``stagger`` seconds."""
    await asyncio.sleep(stagger)
    async with httpx.AsyncClient(base_url=f"{base}/api/{token}", timeout=REQUEST_S,
                                 limits=httpx.Limits(max_connections=1)) as c:
        try:
            csrf = (await c.get("/session")).json()["csrf"]
            for _ in range(n):
                t0 = time.perf_counter()
                r = await c.get("/next")
                tally.next_ms.append(1e3 * (time.perf_counter() - t0))
                if r.status_code != 200:
                    tally.errors.append(f"{name} next: {r.status_code} {r.text[:200]}")
                    return
                item = r.json()["item"]
                if item is None:
                    return
                label = label_of(item, who)
                source = f"https://www.wikidata.org/wiki/Special:Search?q={item}" if label == "y" else ""
                t0 = time.perf_counter()
                r = await c.post("/judge", json={"item": item, "label": label, "source": source, "note": "",
                                                 "seconds": 2.0}, headers={"X-CSRF-Token": csrf})
                tally.judge_ms.append(1e3 * (time.perf_counter() - t0))
                if r.status_code != 200 or not r.json().get("ok"):
                    tally.errors.append(f"{name} judge {item}: {r.status_code} {r.text[:200]}")
                    return
                tally.acks.append((name, item, int(r.json()["judgment"])))
                if pace:
                    await asyncio.sleep(pace)
        except httpx.TransportError as exc:
            if killed.is_set():
                tally.cut += 1
            else:
                tally.errors.append(f"{name}: {type(exc).__name__} {exc}")


async def load(base: str, people: dict[str, str], n: int, bound_s: float, server: Server | None = None,
               kill_after_s: float = 0.0, pace: float = 0.0) -> Tally:
    """Every annotator judging up to ``n`` items at once, ``pace`` seconds apart (their starts spread over one
    pace); with ``server``, SIGKILL it after ``kill_after_s`` and once a judgment has been acknowledged (on a loaded
    machine the first can take longer than ``kill_after_s``, and a kill before it tests nothing)."""
    tally, killed = Tally(), asyncio.Event()

    async def killer():
        await asyncio.sleep(kill_after_s)
        while not tally.acks and time.perf_counter() - t0 < bound_s / 2:
            await asyncio.sleep(0.05)
        killed.set()
        await asyncio.to_thread(server.kill)

    t0 = time.perf_counter()
    tasks = [annotator(base, i, name, tok, n, tally, killed, pace, i * pace / len(people))
             for i, (name, tok) in enumerate(people.items())]
    if server is not None:
        tasks.append(killer())
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), bound_s)
    except TimeoutError:
        tally.errors.append(f"the phase ran past its bound of {bound_s:.0f} s")
    tally.seconds = time.perf_counter() - t0
    return tally


async def race(base: str, people: dict[str, str], rounds: int) -> list[str]:
    """Three annotators post one item at once, the first two holding it (the third never asked for it, so
    that it holds no place); the problems found."""
    problems = []
    (na, ta), (nb, tb), (_, tc) = list(people.items())[:3]
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_S) as c:
        csrf = {t: (await c.get(f"/api/{t}/session")).json()["csrf"] for t in (ta, tb, tc)}
        for _ in range(rounds):
            item = (await c.get(f"/api/{ta}/next")).json()["item"]
            other = (await c.get(f"/api/{tb}/next")).json()["item"]
            if item is None or other != item:
                problems.append(f"race: {na} holds {item}, {nb} holds {other}: expected the same item")
                return problems
            rs = await asyncio.gather(*(c.post(f"/api/{t}/judge", json={"item": item, "label": lab, "source": "",
                                                                        "note": "", "seconds": 1.0},
                                               headers={"X-CSRF-Token": csrf[t]})
                                        for t, lab in ((ta, "n"), (tb, "n"), (tc, "n"))))
            codes = [r.status_code for r in rs]
            if codes[:2] != [200, 200] or codes[2] == 200:
                problems.append(f"race on item {item}: statuses {codes} (holders 200, 200; third refused)")
    return problems


def stored(db: Path) -> dict[int, tuple[int, int, str]]:
    """judgment id -> (item, person, kind), read-only."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT id, item, person, kind FROM judgments")}


def ledger(db: Path, acks: list[tuple[str, int, int]]) -> dict[str, int]:
    """Acknowledged judgments against the database: missing, wrong item, duplicated (item, person), items with
    more than two annotations."""
    rows = stored(db)
    missing = sum(j not in rows for _, _, j in acks)
    wrong = sum(j in rows and rows[j][0] != item for _, item, j in acks)
    pairs = np.array([(i, p) for i, p, k in rows.values() if k == "annotation"], np.int64).reshape(-1, 2)
    _, per_pair = np.unique(pairs, axis=0, return_counts=True)
    _, per_item = np.unique(pairs[:, 0], return_counts=True)
    dup_acks = len(acks) - len({j for _, _, j in acks})
    return {"stored": len(rows), "missing": missing, "wrong_item": wrong, "duplicated": int((per_pair > 1).sum())
            + dup_acks, "over_two": int((per_item > 2).sum())}


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--quick", action="store_true", help="the reduced run CI makes (4 × 40 judgments)")
    ap.add_argument("--annotators", type=int)
    ap.add_argument("--judgments", type=int)
    args = ap.parse_args()
    mode = QUICK if args.quick else FULL
    n_ann, n_judge = args.annotators or mode.annotators, args.judgments or mode.judgments
    args.out.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    timing = {}
    t0 = time.perf_counter()
    plan = fb_plan(args.out / "resources", args.out / "plan", mode.budget)
    timing["plan_s"] = time.perf_counter() - t0
    db = args.out / "campaign.sqlite"
    db.unlink(missing_ok=True)
    t0 = time.perf_counter()
    create(db, plan)
    timing["create_s"] = time.perf_counter() - t0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        n_items = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        n_comp = conn.execute("SELECT COUNT(*) FROM comparisons").fetchone()[0]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    racers = {f"race{i}": add_person(db, f"race{i}", "annotator", base) for i in range(3)}
    people = {f"ann{i:02d}": add_person(db, f"ann{i:02d}", "annotator", base) for i in range(n_ann)}
    timing["people_s"] = time.perf_counter() - t0
    server = Server(db, port, args.out / "serve.log", racers["race0"])
    checks: list[tuple[str, str, str, bool]] = []  # (check, measured, target, met)
    try:
        timing["start_s"] = server.start()
        problems = asyncio.run(race(base, racers, mode.races))
        checks.append(("same item posted by 3 at once (2 hold it)", f"{mode.races} rounds, "
                       f"{len(problems)} problems", "2 labels, 3rd refused", not problems))
        for p in problems[:5]:
            print("  ", p)

        paced = asyncio.run(load(base, people, n_judge, mode.phase_s, pace=mode.pace))
        one = asyncio.run(load(base, people, n_judge, mode.phase_s))
        led = ledger(db, paced.acks + one.acks)
        rate = len(one.acks) / one.seconds if one.seconds else 0.0
        offered = len(paced.acks) / paced.seconds if paced.seconds else 0.0
        checks += [
            ("paced: annotators × judgments", f"{n_ann} × {n_judge}, {mode.pace} s apart: {len(paced.acks):,} in "
             f"{paced.seconds:.1f} s ({offered:.0f}/s)", f"{n_ann * n_judge:,}", len(paced.acks) == n_ann * n_judge),
            ("paced: errors", str(len(paced.errors)), "0", not paced.errors),
            ("paced: next latency p50 / p95 / p99 (ms)", f"{pct(paced.next_ms, 50):.1f} / "
             f"{pct(paced.next_ms, 95):.1f} / {pct(paced.next_ms, 99):.1f}", f"p95 < {NEXT_P95_MS:.0f}",
             pct(paced.next_ms, 95) < NEXT_P95_MS),
            ("paced: judge latency p50 / p95 (ms)", f"{pct(paced.judge_ms, 50):.1f} / {pct(paced.judge_ms, 95):.1f}",
             "-", True),
            ("saturated: annotators × judgments (no pause)", f"{n_ann} × {n_judge}: {len(one.acks):,} in "
             f"{one.seconds:.1f} s", f"{n_ann * n_judge:,}", len(one.acks) == n_ann * n_judge),
            ("saturated: errors", str(len(one.errors)), "0", not one.errors),
            ("saturated: judgments per second (one SQLite writer)", f"{rate:.0f}", "-", True),
            ("saturated: next / judge latency p95 (ms)", f"{pct(one.next_ms, 95):.1f} / {pct(one.judge_ms, 95):.1f}",
             "-", True),
            ("both: acknowledged missing / duplicated / >2 per item", f"{led['missing'] + led['wrong_item']} / "
             f"{led['duplicated']} / {led['over_two']}", "0 / 0 / 0",
             led["missing"] + led["wrong_item"] + led["duplicated"] + led["over_two"] == 0),
        ]
        for e in (paced.errors + one.errors)[:5]:
            print("  ", e)

        before = len(stored(db))
        two = asyncio.run(load(base, people, n_judge, mode.phase_s, server, mode.kill_after_s))
        killed_rc = server.proc.returncode if server.proc else None
        timing["restart_s"] = server.start()
        led = ledger(db, paced.acks + one.acks + two.acks)
        after = asyncio.run(load(base, people, 5, mode.phase_s))
        led_after = ledger(db, paced.acks + one.acks + two.acks + after.acks)
        checks += [
            ("kill -9 during load: acknowledged before the kill", f"{len(two.acks):,} (+{before:,} earlier), "
             f"{two.cut} requests cut, exit {killed_rc}", "> 0, killed", len(two.acks) > 0 and killed_rc == -9),
            ("kill -9: acknowledged missing / duplicated / >2 per item", f"{led['missing'] + led['wrong_item']} / "
             f"{led['duplicated']} / {led['over_two']}", "0 / 0 / 0",
             led["missing"] + led["wrong_item"] + led["duplicated"] + led["over_two"] == 0),
            ("kill -9: errors other than the cut requests", str(len(two.errors)), "0", not two.errors),
            ("after the restart: judgments, errors, missing", f"{len(after.acks)}, {len(after.errors)}, "
             f"{led_after['missing'] + led_after['wrong_item'] + led_after['duplicated']}",
             f"{5 * n_ann}, 0, 0", len(after.acks) == 5 * n_ann and not after.errors
             and led_after["missing"] + led_after["wrong_item"] + led_after["duplicated"] == 0),
        ]
        for e in (two.errors + after.errors)[:5]:
            print("  ", e)
    finally:
        server.stop()
    commit = head_commit()
    print(f"campaign: {n_items:,} items, {n_comp} comparisons; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, commit {commit}; setup {', '.join(f'{k} {v:.1f}' for k, v in timing.items())}")
    print_checks(checks)
    total = time.perf_counter() - t_all
    print(f"total {total:.1f} s")
    (args.out / "campaign_load.json").write_text(json.dumps(
        {"mode": "quick" if args.quick else "full", "items": n_items, "comparisons": n_comp, "commit": commit,
         "cpus": os.cpu_count(), "timing": timing, "total_s": total,
         "checks": [dict(zip(("check", "measured", "target", "met"), c)) for c in checks]}, indent=1))
    return 0 if all(c[3] for c in checks) else 1


if __name__ == "__main__":
    sys.exit(heartbeat_main(main, __file__))
