"""Dumping FB-Test-O's scores for a d = 200 DistMult (random weights): time of the ranking engine with the
top-1000 run and the writing of the dump, against the bare matrix product of the same questions measured in
the same run; also the dump's size on disk.

    python benchmarks/dump_scores.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, fb15k237, heartbeat_main, run_worker  # noqa: E402


def worker() -> dict:
    from kgeval.data.questions import AnswerIndex
    from kgeval.data.testsets import full_test
    from kgeval.models import build_model
    from kgeval.scores.dumps import save_ranking
    from kgeval.scores.ranking import docno_ranks, judged_entities, rank_questions

    torch.manual_seed(0)
    kg = fb15k237()
    model = build_model("DistMult", kg.num_entities, kg.num_relations, dim=200, reciprocal=True)
    model.eval()
    test = full_test(kg, "FB-Test-O")
    questions = test.questions(kg)
    judged = judged_entities(test, questions)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    out = Path(tempfile.mkdtemp()) / "dump"
    t0 = time.perf_counter()
    r = rank_questions(model.score_questions, questions, judged, known, docno_ranks(kg.entities), k=1000)
    t_rank = time.perf_counter() - t0
    t0 = time.perf_counter()
    save_ranking(r, out, {"model": "DistMult", "test_set": "FB-Test-O"})
    t_save = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in out.iterdir())
    # the floor: the same (aggregated) questions against every entity, one product per batch
    e = torch.as_tensor(questions.entity)
    rel = torch.as_tensor(questions.relation) + torch.as_tensor(questions.side == 0).long() * kg.num_relations
    with torch.no_grad():
        q = model.entity.weight[e] * model.relation.weight[rel]
        ents = model.entity.weight
        t0 = time.perf_counter()
        for b in range(0, len(q), 2048):
            (q[b:b + 2048] @ ents.T).max()
        bare = time.perf_counter() - t0
    return {"questions": len(questions), "rank_seconds": t_rank, "save_seconds": t_save, "bare_seconds": bare,
            "dump_bytes": size, "timings": r.meta["timings"]}


def main() -> None:
    if "--worker" in sys.argv:
        emit(worker())
        return
    res = run_worker(__file__, [])
    total = res["rank_seconds"] + res["save_seconds"]
    print(f"FB-Test-O, DistMult d=200: {res['questions']} questions")
    print(f"  ranking engine with the top-1000 run: {res['rank_seconds']:.2f} s "
          f"({ {k: round(v, 2) for k, v in res['timings'].items()} })")
    print(f"  writing the dump: {res['save_seconds']:.2f} s; dump size {res['dump_bytes'] / 2**20:.1f} MiB")
    print(f"  bare matrix product of the same questions: {res['bare_seconds']:.2f} s")
    print(f"  ratio dump / bare product = {total / res['bare_seconds']:.2f}x; peak memory {res['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
