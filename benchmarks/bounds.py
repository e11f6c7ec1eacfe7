"""The bounds stage's core on a synthetic instance of the real size — 13 systems, the 2,883 macro questions of
FB-Test-S-C(10), top 10, depths 0–10 for two flavours of judgments (22 states), the five bounded metrics — timed:
per-system bounds, per-pair decisions and outer τ intervals (the exact 0–1 program is timed apart, with
``--milp``). About 70 % of the systems' top 10 is unjudged at depth 10, as on FB-Test-S-C. Target (issue 29):
≤ 60 s on the 2-core machine.

    python benchmarks/bounds.py [--milp SECONDS]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import heartbeat_main

from kgeval.bounds.tables import states_tables
from kgeval.judgments.labels import ABSENT, NONREL, REL, UNKNOWN
from kgeval.judgments.metrics import METRICS, bounded_metric

S, Q, K, CANDIDATES, DEPTHS = 13, 2883, 10, 60, 10


def instance(rng):
    """Top-k lists drawn from a shared noisy score (so that systems overlap as trained models do), true labels,
    and the depth at which each (question, entity) was judged (never for most)."""
    base = rng.normal(size=(Q, CANDIDATES))
    skill = np.linspace(4.0, 0.3, S)
    scores = base[None] + rng.normal(size=(S, Q, CANDIDATES)) / skill[:, None, None]
    entity = np.argsort(-scores, axis=2)[:, :, :K].astype(np.int64)
    relevant = base > np.quantile(base, 0.97)
    relevant[np.arange(Q), base.argmax(1)] = True  # every question has a seed answer (depth 0)
    judged_at = np.where(rng.random((Q, CANDIDATES)) < 0.3, rng.integers(1, DEPTHS + 1, (Q, CANDIDATES)), 99)
    judged_at[np.arange(Q), base.argmax(1)] = 0
    return entity, relevant, judged_at


def states(entity, relevant, judged_at):
    q = np.arange(Q)[None, :, None]
    for flavour, shift in (("published", 0), ("rebuilt", 1)):
        for d in range(DEPTHS + 1):
            known = judged_at[q, entity] <= max(d - shift, 0) if d else judged_at[q, entity] == 0
            code = np.where(known, np.where(relevant[q, entity], REL, NONREL), UNKNOWN).astype(np.int8)
            code[entity < 0] = ABSENT
            qmask = ((judged_at <= d) & relevant).any(1)
            yield flavour, d, code, qmask


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--milp", type=float, default=0.0, help="also time the 0-1 program for P@k (seconds per state)")
    args = ap.parse_args()
    entity, relevant, judged_at = instance(np.random.default_rng(0))
    ms = [bounded_metric(b, K) for b in METRICS]
    start = time.perf_counter()
    sys_t, pair_t, tau_t = states_tables([f"S{i}" for i in range(S)], entity, states(entity, relevant, judged_at),
                                         ms, set(), 0.0)
    seconds = time.perf_counter() - start
    deep = pair_t[(pair_t["Depth"] == DEPTHS) & (pair_t["Flavour"] == "published")]
    unj = sys_t[(sys_t["Depth"] == DEPTHS) & (sys_t["Flavour"] == "published")]["unjudged_in_top_k"].mean()
    print(f"{S} systems x {Q} questions x top {K}, 22 states x {len(ms)} metrics: {len(sys_t)} system rows, "
          f"{len(pair_t)} pair rows, {len(tau_t)} tau rows")
    print(f"unjudged share of the top {K} at depth {DEPTHS}: {unj:.1%}; pairs decided at depth {DEPTHS}: "
          f"{int(deep['decided'].sum())} of {len(deep)}")
    print(f"bounds + pair decisions + outer tau intervals: {seconds:.1f} s (target <= 60 s)")
    if args.milp:
        start = time.perf_counter()
        _, _, tau_m = states_tables([f"S{i}" for i in range(S)], entity, states(entity, relevant, judged_at),
                                    [bounded_metric("P", K)], {"P"}, args.milp)
        print(f"with the 0-1 program for P@{K} ({args.milp:g} s limit per state): {time.perf_counter() - start:.1f} s;"
              f" statuses: {tau_m['milp_status_hi'].value_counts().to_dict()}")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
