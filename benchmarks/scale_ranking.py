"""Exact filtered ranking at scale (issue 53): kgeval's block engine against the bare block scoring product, and
PyKEEN's RankBasedEvaluator side by side on the same DistMult weights, questions and filter.

A random graph of ``--entities`` entities and ``--relations`` relations (``--train-per-entity`` training triples
per entity: the filter) and a test split of ``--questions`` / 2 triples; random DistMult weights of dimension
``--dim`` (seeded). Each tool runs in its own process, so each peak memory printed is that tool's.

* kgeval: the block engine (filtered n_gt / n_eq with the study's tie policy and the top-``--k`` lists in
  trec_eval's order; its tile step compiled where numba imports, numpy's with KGEVAL_NO_NUMBA=1, ``tile_path``
  in the JSON), ``--repeats`` times, interleaved with two bare products (the matrix products alone, the
  same batches): in the memory budget's entity blocks on torch's threads, and in the fused CPU pass's tiles on
  its worker threads. Prints the median seconds, the ratio engine / the faster bare product (target ≤ 1.5×),
  the same ratio in the process's CPU seconds (steadier on a loaded machine), the load average, the fused
  pass's CPU thread-seconds per step and the peak RSS above the embeddings (≤ 2 GB).
* PyKEEN (``--pykeen``): RankBasedEvaluator(filtered=True) on the same weights, test triples and filter
  (train), realistic ranks compared per side with kgeval's micro-filtered ranks (PyKEEN filters the other test
  triples too), its seconds and peak memory; the speed-up PyKEEN / kgeval (target ≥ 20×).

    python benchmarks/scale_ranking.py --entities 1000000 --questions 2000
    python benchmarks/scale_ranking.py --entities 100000 --questions 2000 --pykeen
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, heartbeat_main, peak_rss_since_mb, reset_peak_rss, run_worker  # noqa: E402
from _scale import bare_product, bare_tiles, long_tailed, triples, weights  # noqa: E402


def make_graph(a) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(a.seed)
    draw = long_tailed(rng, a.entities)
    train = triples(rng, draw, a.relations, a.train_per_entity * a.entities)
    test = triples(rng, draw, a.relations, a.questions // 2)
    return np.unique(train, axis=0), np.unique(test, axis=0)


def kgeval_worker(a) -> dict:
    from kgeval.data.questions import AnswerIndex
    from kgeval.metrics.ranks import micro_ranks
    from kgeval.scale.engine import block_size_for, rank_blocks, split_questions
    from kgeval.scale.scorers import BilinearBlocks
    from kgeval.scale.tiles import tile_path

    train, test = make_graph(a)
    ent, rel = weights(a.entities, a.relations, a.dim, a.seed)
    scorer = BilinearBlocks(ent, rel)
    questions, judged = split_questions(test, a.entities, a.relations)
    known = AnswerIndex(train, a.entities, a.relations)
    blk = block_size_for(a.batch, a.memory_budget_mb)

    def timed(f):
        """Seconds and CPU seconds of the process (on a loaded machine the second is the steadier)."""
        w0, c0 = time.perf_counter(), time.process_time()
        out = f()
        return time.perf_counter() - w0, time.process_time() - c0, out

    def bare():
        return bare_product(scorer, questions, a.entities, a.batch, blk)

    def engine():
        return rank_blocks(scorer, questions, judged, known, k=a.k, batch=a.batch,
                           memory_budget_mb=a.memory_budget_mb, show_progress=False)

    bare()  # warm-up: the first pass over the embeddings pays page faults and thread start-up
    # the ranking's own peak: the graph, its filter index and the embeddings stay resident, the set-up's
    # temporaries (np.unique of the triples, the index's sort) do not count
    reset = reset_peak_rss()
    # interleaved, so that a change in the machine's load reaches all three alike: the bare product in the
    # memory budget's blocks on torch's threads (what the engine did before the fused pass), the bare products
    # of the fused pass's tiles on its workers, and the engine
    runs = {"bare": [], "tiles": [], "engine": []}
    for _ in range(a.repeats):
        runs["bare"].append(timed(bare)[:2])
        *t, r = timed(engine)
        runs["engine"].append(t)
        runs["tiles"].append(timed(lambda w=r.meta["workers"]: bare_tiles(scorer, questions, a.entities, a.batch,
                                                                          w))[:2])
    med = {name: np.median(np.array(v), axis=0) for name, v in runs.items()}
    seconds = float(med["engine"][0])
    ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
    sides = questions.side[judged.q[ranks.rows]]
    out = {"tool": "kgeval", "entities": a.entities, "questions": len(questions), "answers": len(ranks),
           "dim": a.dim, "k": a.k, "batch": a.batch, "block": blk, "seconds": seconds,
           "engine_seconds": [x[0] for x in runs["engine"]], "bare_seconds": [x[0] for x in runs["bare"]],
           "bare_tiles_seconds": [x[0] for x in runs["tiles"]],
           "cpu_seconds": {name: [x[1] for x in v] for name, v in runs.items()},
           "tile": r.meta["block"], "workers": r.meta["workers"], "tile_path": tile_path(),
           "ratio": seconds / min(med["bare"][0], med["tiles"][0]),
           "ratio_blocks": seconds / float(med["bare"][0]), "ratio_tiles": seconds / float(med["tiles"][0]),
           "ratio_cpu": float(med["engine"][1] / min(med["bare"][1], med["tiles"][1])),
           "timings": r.meta["timings"], "load": os.getloadavg(), "embeddings_mb": (ent.numel() + rel.numel()) * 4 / 2**20,
           "torch_threads": torch.get_num_threads(),
           "ranking_peak_rss_mb": peak_rss_since_mb() if reset else None,
           "mrr": float(np.mean(1.0 / ranks.realistic))}
    if a.ranks_out:
        np.savez(a.ranks_out, side=sides, realistic=ranks.realistic)
    return out


def pykeen_worker(a) -> dict:
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.models import DistMult
    from pykeen.triples import TriplesFactory

    train, test = make_graph(a)
    ent, rel = weights(a.entities, a.relations, a.dim, a.seed)
    tf = TriplesFactory(torch.as_tensor(train), entity_to_id={f"e{i}": i for i in range(a.entities)},
                        relation_to_id={f"r{i}": i for i in range(a.relations)})
    model = DistMult(triples_factory=tf, embedding_dim=a.dim, random_seed=0)
    with torch.no_grad():
        model.entity_representations[0]._embeddings.weight.copy_(ent)
        model.relation_representations[0]._embeddings.weight.copy_(rel)
    model.eval()
    ev = RankBasedEvaluator(filtered=True, clear_on_finalize=False)
    t0 = time.perf_counter()
    # PyKEEN's DistMult scores a batch through a (batch x |E| x d) product: 1,024 questions at 100k entities
    # would allocate 51 GB, so its batch is its own (--pykeen-batch)
    ev.evaluate(model, torch.as_tensor(test), batch_size=a.pykeen_batch, use_tqdm=False,
                additional_filter_triples=[torch.as_tensor(train)])
    seconds = time.perf_counter() - t0
    out = {"tool": "pykeen", "seconds": seconds}
    ranks = {s: np.concatenate(ev.ranks[s, "realistic"]).astype(float) for s in ("head", "tail")}
    out["mrr"] = float(np.mean(1.0 / np.concatenate([ranks["head"], ranks["tail"]])))
    if a.ranks_out:
        np.savez(a.ranks_out, head=ranks["head"], tail=ranks["tail"])
    return out


def fmt(xs) -> str:
    return " / ".join(f"{x:.2f}" for x in xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--relations", type=int, default=500)
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--train-per-entity", type=int, default=2)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--memory-budget-mb", type=float, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of the engine and each bare product")
    ap.add_argument("--pykeen", action="store_true", help="PyKEEN's RankBasedEvaluator side by side")
    ap.add_argument("--pykeen-timeout", type=float, default=1800)
    ap.add_argument("--pykeen-batch", type=int, default=16, help="PyKEEN's evaluation batch")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--ranks-out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        emit((kgeval_worker if a.worker == "kgeval" else pykeen_worker)(a))
        return
    args = [f"--{k.replace('_', '-')}={v}" for k, v in vars(a).items()
            if k not in ("pykeen", "json", "worker", "ranks_out", "pykeen_timeout")]
    tmp = Path(tempfile.mkdtemp())
    ours = run_worker(__file__, ["kgeval", *args, f"--ranks-out={tmp / 'k.npz'}"])
    t = ours["timings"]
    print(f"kgeval block engine: {ours['questions']} questions x {ours['entities']:,} entities, d={ours['dim']}, "
          f"top-{ours['k']}, {ours['workers']} workers, tiles of {ours['tile']} entities ({ours['tile_path']} "
          f"path), load "
          f"{ours['load'][0]:.1f}: {ours['seconds']:.2f} s (median of {fmt(ours['engine_seconds'])}); bare products "
          f"in blocks of {ours['block']} {fmt(ours['bare_seconds'])} s, in the engine's tiles "
          f"{fmt(ours['bare_tiles_seconds'])} s; ratio {ours['ratio']:.2f}x the faster (blocks "
          f"{ours['ratio_blocks']:.2f}x, tiles {ours['ratio_tiles']:.2f}x; target <= 1.5x); in CPU seconds "
          f"{ours['ratio_cpu']:.2f}x (engine {fmt(ours['cpu_seconds']['engine'])}, blocks "
          f"{fmt(ours['cpu_seconds']['bare'])}, tiles {fmt(ours['cpu_seconds']['tiles'])}); the fused pass's "
          f"CPU thread-seconds: scores {t['score']:.2f}, counting {t['count']:.2f}, top-k {t['topk']:.2f}; peak RSS "
          f"{ours['peak_rss_mb']:.0f} MB, embeddings {ours['embeddings_mb']:.0f} MB, above them "
          f"{ours['peak_rss_mb'] - ours['embeddings_mb']:.0f} MB; while ranking (graph, filter index and "
          f"embeddings resident) {ours['ranking_peak_rss_mb'] or float('nan'):.0f} MB, above the embeddings "
          f"{(ours['ranking_peak_rss_mb'] or float('nan')) - ours['embeddings_mb']:.0f} MB (target <= 2048 MB)")
    result = {"kgeval": ours}
    if a.pykeen:
        try:
            theirs = run_worker(__file__, ["pykeen", *args, f"--ranks-out={tmp / 'p.npz'}"], allocator=False,
                                timeout=a.pykeen_timeout)
        except subprocess.TimeoutExpired:  # the command line alone would fill the message
            theirs = {"tool": "pykeen", "failed": f"timed out after {a.pykeen_timeout:g} s",
                      "timeout_s": a.pykeen_timeout, "speedup_above": a.pykeen_timeout / ours["seconds"]}
            print(f"PyKEEN: did not finish within {a.pykeen_timeout:g} s: more than "
                  f"{theirs['speedup_above']:.0f}x kgeval's time")
        except Exception as exc:  # PyKEEN running out of memory is a result too
            theirs = {"tool": "pykeen", "failed": str(exc).strip().splitlines()[-1][:300]}
            print(f"PyKEEN: did not finish ({theirs['failed']})")
        else:
            k, p = np.load(tmp / "k.npz"), np.load(tmp / "p.npz")
            # sorted per side: PyKEEN sums the elementwise product, kgeval multiplies matrices, so a score can
            # differ in its last bit and an answer whose score lies within one ulp of another's moves by <= 1
            diff = np.concatenate([np.sort(k["realistic"][k["side"] == s]) - np.sort(p[name])
                                   for s, name in ((0, "head"), (1, "tail"))])
            equal = not diff.any()
            theirs.update({"equal_ranks": bool(equal), "ranks_differing": int(np.count_nonzero(diff)),
                           "max_rank_difference": float(np.abs(diff).max(initial=0))})
            theirs["speedup"] = theirs["seconds"] / ours["seconds"]
            print(f"PyKEEN RankBasedEvaluator: {theirs['seconds']:.2f} s, peak RSS {theirs['peak_rss_mb']:.0f} MB; "
                  f"ranks equal (per side): {equal} ({theirs['ranks_differing']} of {len(diff)} differ, by at most "
                  f"{theirs['max_rank_difference']}); MRR {theirs['mrr']:.8f} vs kgeval {ours['mrr']:.8f}; "
                  f"speed-up {theirs['speedup']:.1f}x (target >= 20x)")
        result["pykeen"] = theirs
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
