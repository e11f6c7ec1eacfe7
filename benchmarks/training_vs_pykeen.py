"""One training epoch of DistMult (d = 200) on FB15k-237: kgeval's 1vsAll against PyKEEN's LCWA training loop
(1vsAll-like over distinct (head, relation) questions with inverse triples), in the same run and under the same
allocator settings, each in its own process. PyKEEN's epoch is extrapolated from ``--pykeen-batches`` batches
(a full epoch takes about ten minutes here); kgeval is timed on a whole epoch, per triple (the classic 1vsAll)
and grouped by distinct question (the same objective as PyKEEN's LCWA). Target (issue 4): ≥ 5× faster.

    python benchmarks/training_vs_pykeen.py [--pykeen-batches 40] [--threads 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, fb15k237, heartbeat_main  # noqa: E402


def kgeval_worker(grouped: bool, threads: int) -> dict:
    from kgeval.training.config import TrainConfig
    from kgeval.training.trainer import Trainer

    torch.set_num_threads(threads)
    kg = fb15k237()
    cfg = TrainConfig(regime="1vsAll", grouped=grouped, optimizer="adam", lr=1e-3,
                      batch_size=256 if grouped else 1024, max_epochs=1)
    tr = Trainer(kg, "DistMult", {"dim": 200, "reciprocal": True}, cfg, seed=0, device="cpu")
    gen = torch.Generator().manual_seed(0)
    ex = tr._epoch_examples(gen)
    tr.model.train()
    t0 = time.perf_counter()
    for b in range(0, len(ex), cfg.batch_size):
        tr.optimizer.zero_grad()
        tr._batch_loss(ex[b:b + cfg.batch_size], gen).backward()
        tr.optimizer.step()
    return {"tool": "kgeval", "grouped": grouped, "epoch_seconds": time.perf_counter() - t0,
            "batches": (len(ex) + cfg.batch_size - 1) // cfg.batch_size}


def pykeen_worker(batches: int, threads: int) -> dict:
    from pykeen.models import DistMult
    from pykeen.training import LCWATrainingLoop
    from pykeen.triples import TriplesFactory

    torch.set_num_threads(threads)
    kg = fb15k237()
    ent = {e: i for i, e in enumerate(kg.entities)}
    rel = {r: i for i, r in enumerate(kg.relations)}
    tf = TriplesFactory(torch.as_tensor(kg.splits["train"]), entity_to_id=ent, relation_to_id=rel,
                        create_inverse_triples=True)
    model = DistMult(triples_factory=tf, embedding_dim=200, random_seed=0)
    loop = LCWATrainingLoop(model=model, triples_factory=tf, optimizer=torch.optim.Adam(model.parameters(), lr=1e-3))
    # PyKEEN's own data loader of LCWA batches (pykeen 1.11: _create_training_data_loader)
    loader = loop._create_training_data_loader(tf, sampler=None, batch_size=256, shuffle=True, drop_last=False)
    n_batches_epoch = len(loader)
    model.train()
    t0 = time.perf_counter()
    done = 0
    for batch in loader:
        loop.optimizer.zero_grad()
        loss = loop._process_batch(batch, start=0, stop=len(batch["pairs"]), label_smoothing=0.0, slice_size=None)
        loss.backward()
        loop.optimizer.step()
        done += 1
        if done >= batches:
            break
    per = (time.perf_counter() - t0) / done
    return {"tool": "pykeen", "batches_timed": done, "batches_per_epoch": n_batches_epoch,
            "epoch_seconds": per * n_batches_epoch}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pykeen-batches", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        if a.worker[0] == "kgeval":
            emit(kgeval_worker(a.worker[1] == "grouped", a.threads))
        else:
            emit(pykeen_worker(int(a.worker[1]), a.threads))
        return
    t = ["--threads", str(a.threads)]
    ours_pt = _run(["kgeval", "per-triple"], t)
    ours_g = _run(["kgeval", "grouped"], t)
    theirs = _run(["pykeen", str(a.pykeen_batches)], t)
    print(f"FB15k-237, DistMult d=200, one epoch, {a.threads} threads:")
    print(f"  kgeval 1vsAll per triple (batch 1024): {ours_pt['epoch_seconds']:.0f} s, peak {ours_pt['peak_rss_mb']:.0f} MB")
    print(f"  kgeval 1vsAll grouped by question (batch 256 questions): {ours_g['epoch_seconds']:.0f} s, "
          f"peak {ours_g['peak_rss_mb']:.0f} MB")
    print(f"  PyKEEN LCWA (batch 256, {theirs['batches_timed']} of {theirs['batches_per_epoch']} batches timed): "
          f"{theirs['epoch_seconds']:.0f} s extrapolated, peak {theirs['peak_rss_mb']:.0f} MB")
    print(f"  ratio PyKEEN / kgeval: {theirs['epoch_seconds'] / ours_pt['epoch_seconds']:.1f}x (per triple), "
          f"{theirs['epoch_seconds'] / ours_g['epoch_seconds']:.1f}x (grouped, the same objective as LCWA)")


def _run(args: list[str], threads: list[str]) -> dict:
    import json
    import os
    import subprocess

    from _common import ALLOCATOR

    proc = subprocess.run([sys.executable, __file__, *threads, "--worker", *args], capture_output=True, text=True,
                          timeout=7200, env={**os.environ, **ALLOCATOR})
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    heartbeat_main(main, __file__)
