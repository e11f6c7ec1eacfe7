"""Question-sampled estimates and sampled negatives on a 100k-entity instance whose exact values are computed
(issue 53).

A graph of ogbl-wikikg2's shape scaled to ``--entities`` entities (its test split cut to ``--test`` triples so
that exact ranking of every system stays within minutes on 2 cores), ``--systems`` systems of graded quality
ranked exactly by the block engine. Then, over ``--reps`` seeded repetitions (vectorised), samples of ``--n``
answers: the share of 95 % t intervals (finite population correction) that hold the exact MRR / Hits@10 of each
system and the exact paired difference of each adjacent pair (target ≥ 0.94). And OGB's protocol with
``--negatives`` random negatives: per system the sampled MRR beside the exact one, Kendall's τ between the orders
with its bootstrap interval. Writes everything as JSON (``--json``).

    python benchmarks/scale_estimates.py --entities 100000 --test 5000 --reps 1000 --n 500 2000
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from _common import heartbeat_main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--test", type=int, default=5000)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--n", type=int, nargs="+", default=[500, 2000], help="sample sizes (answers)")
    ap.add_argument("--negatives", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json")
    a = ap.parse_args()

    from kgeval.data.questions import AnswerIndex
    from kgeval.metrics.ranks import micro_ranks
    from kgeval.scale import estimate, negatives
    from kgeval.scale.engine import rank_blocks, split_questions
    from kgeval.scale.synth import SHAPES, generate, scaled, system

    spec = replace(scaled(SHAPES["wikikg2"], a.entities / SHAPES["wikikg2"].num_entities), test=a.test)
    t0 = time.perf_counter()
    g = generate(spec, a.seed, show_progress=False)
    gen_s = time.perf_counter() - t0
    E, R = spec.num_entities, spec.num_relations
    test = g["test"].astype(np.int64)
    questions, judged = split_questions(test, E, R)
    known = AnswerIndex(np.concatenate([g["train"], g["valid"]]).astype(np.int64), E, R)
    full, sampled, secs = [], [], []
    for s in range(a.systems):
        sc = system(g, s, seed=a.seed)
        t0 = time.perf_counter()
        r = rank_blocks(sc, questions, judged, known, k=0, show_progress=False)
        secs.append(time.perf_counter() - t0)
        ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
        full.append(ranks.realistic.astype(float))
        sampled.append(negatives.sampled_ranks(sc, questions, judged, ranks.rows, a.negatives, a.seed))
    full, sampled = np.stack(full), np.stack(sampled)
    N = full.shape[1]
    out = {"entities": E, "relations": R, "train": len(g["train"]), "answers": N, "generate_seconds": gen_s,
           "exact_seconds": secs, "n": a.n, "reps": a.reps, "interval": "t, finite population correction",
           "coverage": {}}
    for n in a.n:
        cells = out["coverage"][n] = {}
        for metric in ("mrr", "hits@10"):
            vals = np.stack([estimate.per_answer(f, (10,))[metric] for f in full])
            for s in range(a.systems):
                cells[f"{metric} system {s}"] = estimate.coverage(vals[s], n, a.reps, seed=a.seed + s)[0]
            for s in range(a.systems - 1):
                d = vals[s] - vals[s + 1]
                cells[f"{metric} difference {s}-{s + 1}"] = estimate.coverage(d, n, a.reps, seed=a.seed + 100 + s)[0]
        out[f"coverage_min_n{n}"] = min(cells.values())
        out[f"coverage_mean_n{n}"] = float(np.mean(list(cells.values())))
    out["negatives"] = negatives.compare(1.0 / full, 1.0 / sampled, reps=1000, seed=a.seed)
    out["negatives"]["k"] = a.negatives
    print(json.dumps(out, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
