"""The block engine on CUDA at Wikidata5M's full shape (issue 53), checked against the CPU engine on a subsample.

Random DistMult weights (d = 128) for 4,594,485 entities and 822 relations, 5,133 random test triples (10,266
questions, popular heads and tails) and a random training filter; the engine ranks every question with the
filter and keeps the top-k lists, between two runs of the bare block product (the same batches and blocks,
products alone). Then the CPU engine ranks a subsample of the questions and each judged answer's n_gt / n_eq is
compared (a score may differ in its last bit between the GPU's and the CPU's kernels, so a count can differ
only where another score lies within one ulp of the answer's). Writes ``<out>/scale_gpu.json``. ``--small``:
20,000 entities and 200 questions, for a check on CPU.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import heartbeat_main
from _scale import bare_product, long_tailed, triples, weights  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--entities", type=int, default=4_594_485)
    ap.add_argument("--relations", type=int, default=822)
    ap.add_argument("--test", type=int, default=5_133)
    ap.add_argument("--train", type=int, default=4_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--memory-budget-mb", type=float, default=4096)
    ap.add_argument("--cpu-questions", type=int, default=256)
    a = ap.parse_args()
    if a.small:
        a.entities, a.relations, a.test, a.train, a.cpu_questions = 20_000, 50, 100, 40_000, 64
    from kgeval.data.questions import AnswerIndex
    from kgeval.metrics.ranks import micro_ranks
    from kgeval.scale.engine import block_size_for, rank_blocks, split_questions
    from kgeval.scale.scorers import BilinearBlocks

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(0)
    draw = long_tailed(rng, a.entities)
    train = triples(rng, draw, a.relations, a.train)
    test = np.unique(triples(rng, draw, a.relations, a.test), axis=0)
    ent, rel = weights(a.entities, a.relations, a.dim, 0)
    E, R = a.entities, a.relations
    questions, judged = split_questions(test, E, R)
    t0 = time.perf_counter()
    known = AnswerIndex(train, E, R)
    out = {"device": dev, "gpu": torch.cuda.get_device_name() if dev == "cuda" else None, "entities": E,
           "questions": len(questions), "dim": a.dim, "k": a.k, "batch": a.batch, "filter_triples": len(train),
           "index_seconds": time.perf_counter() - t0}
    scorer = BilinearBlocks(ent, rel).to(dev)
    blk = block_size_for(a.batch, a.memory_budget_mb)

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    def bare() -> float:
        return bare_product(scorer, questions, E, a.batch, blk, dev)

    bare()  # warm-up (CUDA kernels, allocator)
    b1 = bare()
    sync()
    t0 = time.perf_counter()
    r = rank_blocks(scorer, questions, judged, known, k=a.k, batch=a.batch, memory_budget_mb=a.memory_budget_mb,
                    show_progress=False)
    sync()
    secs = time.perf_counter() - t0
    b2 = bare()
    ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
    out.update({"seconds": secs, "bare_seconds": [b1, b2], "ratio": secs / ((b1 + b2) / 2), "block": blk,
                "timings": r.meta["timings"], "mrr": float(np.mean(1.0 / ranks.realistic)),
                "embeddings_mb": (ent.numel() + rel.numel()) * 4 / 2**20})
    if dev == "cuda":
        out["gpu_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    # the CPU engine on a subsample of the test triples: n_gt / n_eq of each (question, answer) do not depend on
    # which other test triples are ranked (the macro filter holds only train/valid answers)
    sub = test[np.sort(rng.choice(len(test), size=min(len(test), a.cpu_questions // 2), replace=False))]
    q_s, j_s = split_questions(sub, E, R)
    t0 = time.perf_counter()
    r_cpu = rank_blocks(BilinearBlocks(ent, rel), q_s, j_s, known, k=a.k, batch=256, show_progress=False)
    out["cpu_subsample_seconds"] = time.perf_counter() - t0

    def keyed(qs, jd, rr):
        return {(int(qs.side[q]), int(qs.entity[q]), int(qs.relation[q]), int(e)): (int(g_), int(n_))
                for q, e, g_, n_ in zip(jd.q, jd.entity, rr.n_gt, rr.n_eq)}

    full_k, cpu_k = keyed(questions, judged, r), keyed(q_s, j_s, r_cpu)
    diffs = [abs(full_k[key][0] - v[0]) + abs(full_k[key][1] - v[1]) for key, v in cpu_k.items()]
    out.update({"cpu_compared_answers": len(diffs), "cpu_equal_counts": int(sum(d == 0 for d in diffs)),
                "cpu_max_count_difference": int(max(diffs, default=0)),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "scale_gpu.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
