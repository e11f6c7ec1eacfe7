"""Evaluation time of a d = 200 DistMult on FB15k-237: the full filtered ranking evaluation (validation + test,
kgeval's ranking engine with k = 0) against Knowledge Persistence, in the same process on the same device.

The weights are random (the cost of either protocol does not depend on them). The graph is the pipeline's
``resources/datasets/FB15k-237/kg.npz`` if it exists, else it is built from the mirror (``KGEVAL_MIRROR`` or
``../shared/data``). Prints both times, the ratio (the paper's Table 5 speed-up) and KP's per-step times, for
KP(test) alone and for KP on validation + test (the like-for-like comparison).

    python benchmarks/kp_vs_ranking.py [--device cpu|cuda] [--threads 1] [--sample-multiple 1.0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fb15k237, heartbeat_main, peak_rss_mb  # noqa: E402

DIM = 200


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sample-multiple", type=float, default=1.0)
    ap.add_argument("--projections", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3, help="KP runs per split (median reported)")
    ap.add_argument("--memory-budget-mb", type=float, default=1024)
    args = ap.parse_args()

    from kgeval.data.kg import TAIL
    from kgeval.kp.persistence import STEPS, knowledge_persistence
    from kgeval.models import build_model
    from kgeval.models.checkpoint import resolve_device
    from kgeval.training.trainer import evaluate_mrr

    torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    kg = fb15k237()
    torch.manual_seed(0)
    model = build_model("DistMult", kg.num_entities, kg.num_relations, dim=DIM, reciprocal=False).to(dev).eval()

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    # warm-up: first kernels, imports
    with torch.no_grad():
        model.score_questions(torch.as_tensor(kg.splits["test"][:8, :2], device=dev), TAIL)
    knowledge_persistence(model, kg, "valid", sample_multiple=0.01)

    ranking = {}
    for split in ("valid", "test"):
        t0 = time.perf_counter()
        mrr = evaluate_mrr(model, kg, split, None, memory_budget_mb=args.memory_budget_mb)
        sync()
        ranking[split] = time.perf_counter() - t0
        print(f"ranking {split:5s}: {ranking[split]:8.2f} s  (filtered MRR {mrr:.5f}, "
              f"{len(kg.splits[split])} triples x 2 sides x {kg.num_entities} entities)", flush=True)

    kp = {}
    for split in ("valid", "test"):
        runs = []
        for _ in range(args.repeats):
            r = knowledge_persistence(model, kg, split, sample_multiple=args.sample_multiple,
                                      projections=args.projections, seed=0)
            sync()
            runs.append(r)
        med = sorted(runs, key=lambda r: r.seconds["total"])[(len(runs) - 1) // 2]
        kp[split] = med.seconds
        steps = ", ".join(f"{k} {med.seconds[k]:.3f}" for k in STEPS)
        print(f"KP({split:5s}):   {med.seconds['total']:8.3f} s  (KP = {med.value:.6f}, {med.n_positive} "
              f"positives; median of {len(runs)}: {steps}; spread "
              f"{statistics.pstdev(r.seconds['total'] for r in runs):.3f} s)", flush=True)

    rank_total = ranking["valid"] + ranking["test"]
    kp_both = kp["valid"]["total"] + kp["test"]["total"]
    result = {"device": str(dev), "threads": torch.get_num_threads(), "entities": kg.num_entities,
              "ranking_valid_test_s": round(rank_total, 3), "kp_test_s": round(kp["test"]["total"], 4),
              "kp_valid_test_s": round(kp_both, 4), "ratio_ranking_vs_kp_test": round(rank_total / kp["test"]["total"], 1),
              "ratio_ranking_vs_kp_valid_test": round(rank_total / kp_both, 1), "peak_rss_mb": round(peak_rss_mb(), 1)}
    print(f"ranking (valid + test) {rank_total:.2f} s vs KP(test) {kp['test']['total']:.3f} s: "
          f"{result['ratio_ranking_vs_kp_test']}x; vs KP(valid) + KP(test) {kp_both:.3f} s: "
          f"{result['ratio_ranking_vs_kp_valid_test']}x")
    print(json.dumps(result))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
