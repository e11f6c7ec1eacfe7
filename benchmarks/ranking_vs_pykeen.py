"""Filtered evaluation of FB15k-237's full test split: kgeval's ranking engine against PyKEEN's
RankBasedEvaluator, on the same random weights (d = 200) of DistMult and TransE (L1, PyKEEN's default).

Each tool runs in its own process, so the peak memory printed is that tool's; kgeval under the pipeline's glibc
settings (ALLOCATOR), PyKEEN under glibc's defaults (with ALLOCATOR its evaluator grows past 20 GB here).
Also timed, in kgeval's process: the bare matrix product of all 40,932 test questions against all entities
(the floor for a d = 200 bilinear model). Prints both times, the ratio, both MRRs (filtered, realistic, both
sides) and each process's peak memory. Targets (issue 3): identical MRR; kgeval ≥ 50× faster for DistMult and
faster for TransE; DistMult within 1.5× of the bare product; peak memory < 3 GB. Issue 33: within 1.5× of the bare
product with the top-1000 TREC run too (printed with the seconds of the run's top-k part).

    python benchmarks/ranking_vs_pykeen.py [--models DistMult TransE] [--skip-pykeen]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, fb15k237, heartbeat_main, run_worker  # noqa: E402

DIM = 200


def make_weights(kg, path: Path, seed: int = 0) -> None:
    g = torch.Generator().manual_seed(seed)
    torch.save({"entity": torch.randn(kg.num_entities, DIM, generator=g) * 0.1,
                "relation": torch.randn(kg.num_relations, DIM, generator=g) * 0.1}, path)


def kgeval_worker(model_name: str, weights: Path) -> dict:
    from kgeval.data.questions import AnswerIndex
    from kgeval.data.testsets import full_test
    from kgeval.metrics.ranks import micro_ranks
    from kgeval.models import build_model
    from kgeval.scores.ranking import docno_ranks, judged_entities, rank_questions

    kg = fb15k237()
    w = torch.load(weights)
    hp = {"dim": DIM, "reciprocal": False} | ({"norm": 1} if model_name == "TransE" else {})
    model = build_model(model_name, kg.num_entities, kg.num_relations, **hp)
    with torch.no_grad():
        model.entity.weight.copy_(w["entity"])
        model.relation.weight.copy_(w["relation"])
    model.eval()
    test = full_test(kg, "FB-Test-O")
    t0 = time.perf_counter()
    questions = test.questions(kg)
    judged = judged_entities(test, questions)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    r = rank_questions(model.score_questions, questions, judged, known, docno_ranks(kg.entities), k=0)
    ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
    seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    r_run = rank_questions(model.score_questions, questions, judged, known, docno_ranks(kg.entities), k=1000)
    seconds_with_run = time.perf_counter() - t0
    assert np.array_equal(r_run.n_gt, r.n_gt)
    out = {"tool": "kgeval", "model": model_name, "seconds": seconds, "seconds_with_top1000_run": seconds_with_run,
           "top1000_seconds": r_run.meta["timings"]["topk"],
           "mrr": float(np.mean(1.0 / ranks.realistic)), "answers": len(ranks), "questions": len(questions)}
    if model_name == "DistMult":
        # the floor: every (unaggregated) test question against every entity, one matrix product per batch
        t = torch.as_tensor(kg.splits["test"])
        q = torch.cat([w["entity"][t[:, 0]] * w["relation"][t[:, 1]], w["entity"][t[:, 2]] * w["relation"][t[:, 1]]])
        ents = w["entity"]
        t0 = time.perf_counter()
        for b in range(0, len(q), 2048):
            (q[b:b + 2048] @ ents.T).max()
        out["bare_product_seconds"] = time.perf_counter() - t0
        out["bare_product_questions"] = len(q)
    return out


def pykeen_worker(model_name: str, weights: Path) -> dict:
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.models import DistMult, TransE
    from pykeen.triples import TriplesFactory

    kg = fb15k237()
    ent = {e: i for i, e in enumerate(kg.entities)}
    rel = {r: i for i, r in enumerate(kg.relations)}
    tf = TriplesFactory(torch.as_tensor(kg.splits["train"]), entity_to_id=ent, relation_to_id=rel)
    cls = {"DistMult": DistMult, "TransE": TransE}[model_name]
    kw = {"scoring_fct_norm": 1} if model_name == "TransE" else {}
    model = cls(triples_factory=tf, embedding_dim=DIM, random_seed=0, **kw)
    w = torch.load(weights)
    with torch.no_grad():
        model.entity_representations[0]._embeddings.weight.copy_(w["entity"])
        model.relation_representations[0]._embeddings.weight.copy_(w["relation"])
    model.eval()
    ev = RankBasedEvaluator(filtered=True, clear_on_finalize=False)
    t0 = time.perf_counter()
    # an explicit batch: PyKEEN's automatic choice on CPU is 32 (and warns about it)
    ev.evaluate(model, torch.as_tensor(kg.splits["test"]), batch_size=256, use_tqdm=False,
                additional_filter_triples=[torch.as_tensor(kg.splits["train"]), torch.as_tensor(kg.splits["valid"])])
    seconds = time.perf_counter() - t0
    ranks = np.concatenate([np.concatenate(ev.ranks[s, "realistic"]) for s in ("head", "tail")]).astype(float)
    return {"tool": "pykeen", "model": model_name, "seconds": seconds, "mrr": float(np.mean(1.0 / ranks)),
            "answers": len(ranks)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["DistMult", "TransE"])
    ap.add_argument("--skip-pykeen", action="store_true")
    ap.add_argument("--worker", nargs=3, metavar=("TOOL", "MODEL", "WEIGHTS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        tool, model, weights = a.worker
        emit((kgeval_worker if tool == "kgeval" else pykeen_worker)(model, Path(weights)))
        return
    kg = fb15k237()
    print(f"FB15k-237 test: {len(kg.splits['test'])} triples, {2 * len(kg.splits['test'])} questions, "
          f"{kg.num_entities} entities; torch threads {torch.get_num_threads()}")
    for model in a.models:
        weights = Path(tempfile.mkdtemp()) / "w.pt"
        make_weights(kg, weights)
        ours = run_worker(__file__, ["kgeval", model, str(weights)])
        print(f"{model}: kgeval {ours['seconds']:.2f} s (with the top-1000 run {ours['seconds_with_top1000_run']:.2f} s)"
              f", MRR {ours['mrr']:.10f}, peak {ours['peak_rss_mb']:.0f} MB")
        if "bare_product_seconds" in ours:
            print(f"  bare product of {ours['bare_product_questions']} questions x all entities: "
                  f"{ours['bare_product_seconds']:.2f} s; kgeval / bare = "
                  f"{ours['seconds'] / ours['bare_product_seconds']:.2f}x (ranks only), "
                  f"{ours['seconds_with_top1000_run'] / ours['bare_product_seconds']:.2f}x (with the run; goal <= "
                  f"1.5x), of which the top-1000 run {ours['top1000_seconds']:.2f} s")
        if a.skip_pykeen:
            continue
        # glibc's defaults for PyKEEN: under the pipeline's allocator settings (no mmap, no trim) its evaluator
        # grows past 20 GB on this test set and is killed; with the defaults it peaks near 3 GB
        theirs = run_worker(__file__, ["pykeen", model, str(weights)], allocator=False)
        print(f"  PyKEEN {theirs['seconds']:.2f} s, MRR {theirs['mrr']:.10f}, peak {theirs['peak_rss_mb']:.0f} MB")
        print(f"  speed-up PyKEEN / kgeval = {theirs['seconds'] / ours['seconds']:.1f}x; "
              f"|MRR difference| = {abs(theirs['mrr'] - ours['mrr']):.2e}")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
