"""Coverage of the question-sampled 95 % intervals of MRR at every sample size `kgeval scale evaluate` accepts
(issue 60): the skewness-corrected interval (kgeval.scale.estimate.bounds) beside the plain t interval.

Graphs of ogbl-wikikg2's shape scaled to ``--entities`` entities (each with ``--test`` test triples), their planted
systems (fixed by the graph's seed, ``--seed``) ranked exactly by the block engine: each system's reciprocal ranks
over every test answer are the population. Then, per sample size of ``--n`` (the sizes below
``estimate.MIN_SAMPLE`` show why the command refuses them) and ``--n-shares`` (shares of the population, up to
all of it), ``--reps`` seeded samples without replacement: the share of intervals holding the exact MRR. Writes
one row per graph, system and sample size to ``--csv`` (benchmarks/scale_coverage.csv, which
docs/guide/scale.md quotes); the target is >= 0.94 at every accepted size.

    python benchmarks/scale_coverage.py --entities 25006 250060 --test 5985 20000 --reps 2000 \\
        --csv benchmarks/scale_coverage.csv
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
import pandas as pd
from _common import heartbeat_main


def population(entities: int, test: int, seed: int, systems: int) -> tuple[np.ndarray, dict]:
    """Each planted system's reciprocal rank of every test answer (exact, micro-filtered, realistic)."""
    from kgeval.data.questions import AnswerIndex
    from kgeval.metrics.ranks import micro_ranks
    from kgeval.scale.engine import rank_blocks, split_questions
    from kgeval.scale.synth import SHAPES, generate, scaled, system

    spec = replace(scaled(SHAPES["wikikg2"], entities / SHAPES["wikikg2"].num_entities), test=test)
    g = generate(spec, seed, show_progress=False)
    E, R = spec.num_entities, spec.num_relations
    questions, judged = split_questions(g["test"].astype(np.int64), E, R)
    known = AnswerIndex(np.concatenate([g["train"], g["valid"]]).astype(np.int64), E, R)
    rr = []
    for s in range(systems):
        r = rank_blocks(system(g, s, seed=seed), questions, judged, known, k=0, show_progress=False)
        ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
        rr.append(1.0 / ranks.realistic.astype(np.float64))
    return np.stack(rr), {"entities": E, "train": len(g["train"]), "test": test}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, nargs="+", default=[25_006, 250_060])
    ap.add_argument("--test", type=int, nargs="+", default=[5985, 20_000], help="test triples, one per graph")
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000])
    ap.add_argument("--n-shares", type=float, nargs="+", default=[0.5, 0.9, 1.0],
                    help="sample sizes as shares of the answers")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--csv")
    a = ap.parse_args()
    if len(a.test) != len(a.entities):
        raise SystemExit("--test: one count per --entities")

    from kgeval.scale import estimate

    rows = []
    for entities, test in zip(a.entities, a.test):
        t0 = time.perf_counter()
        rr, info = population(entities, test, a.seed, a.systems)
        N = rr.shape[1]
        print(f"{entities:,} entities: {N:,} answers ranked in {time.perf_counter() - t0:.0f} s; MRR "
              + ", ".join(f"{m:.4f}" for m in rr.mean(1)), flush=True)
        sizes = sorted({n for n in a.n if n < N} | {max(2, int(round(f * N))) for f in a.n_shares})
        for n in sizes:
            for s in range(a.systems):
                # the same seeded samples for both intervals: their coverages differ by the interval alone
                seed = [a.seed, n, s]
                corrected = estimate.coverage(rr[s], n, a.reps, seed=seed)[0]
                plain = estimate.coverage(rr[s], n, a.reps, seed=seed, plain=True)[0]
                rows.append({**info, "answers": N, "system": s, "noise": round((s + 1) * 0.2, 2),
                             "mrr": round(float(rr[s].mean()), 4), "n": n, "accepted": n >= estimate.MIN_SAMPLE,
                             "reps": a.reps, "coverage": corrected, "coverage_t": plain})
            last = [r for r in rows if r["n"] == n and r["entities"] == info["entities"]]
            print(f"  n = {n:>6,}: corrected {min(r['coverage'] for r in last):.3f}-"
                  f"{max(r['coverage'] for r in last):.3f}, t {min(r['coverage_t'] for r in last):.3f}-"
                  f"{max(r['coverage_t'] for r in last):.3f}", flush=True)
    table = pd.DataFrame(rows)
    ok = table[table["accepted"]]
    print(f"accepted sizes (n >= {estimate.MIN_SAMPLE}): corrected interval covers {ok['coverage'].min():.3f}-"
          f"{ok['coverage'].max():.3f} (target >= 0.94), the t interval {ok['coverage_t'].min():.3f}-"
          f"{ok['coverage_t'].max():.3f}")
    if a.csv:
        table.to_csv(a.csv, index=False, float_format="%.4f")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
