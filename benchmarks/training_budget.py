"""Calibrate the default config's CPU training budgets: per model, the time of one training epoch on a
dataset (extrapolated from a few timed batches, one torch thread as in the workflow) and, with ``--epochs``,
the validation MRR after each epoch of real training and the test MRR (filtered, realistic, both sides) with
its share of the published MRR (``kgeval.published``).

    python benchmarks/training_budget.py [--dataset FB15k-237] [--models ...] [--batches 8] [--epochs 0]
                                         [--compare-compile]

``--compare-compile`` times the batches with ``train.compile`` off and on, in the same process, and prints the
ratio (the first, compiling batch is timed on its own).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, heartbeat_main  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(ROOT / "config/config.yaml"))
    ap.add_argument("--dataset", default="FB15k-237")
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=0, help="also train this many epochs and report valid MRR")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--compare-compile", action="store_true",
                    help="time the batches with train.compile off and on and print the ratio")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    from kgeval.config import load_config_file, model_settings
    from kgeval.data.kg import KnowledgeGraph
    from kgeval.published import published_mrr
    from kgeval.training.config import TrainConfig
    from kgeval.training.trainer import Trainer, evaluate_mrr

    config = load_config_file(a.config)  # duplicate keys refused, as everywhere a config is read
    kg = KnowledgeGraph.load(ROOT / f"resources/datasets/{a.dataset}/kg.npz")
    print(f"{a.dataset}: {kg.num_entities} entities, {len(kg.splits['train'])} training triples; "
          f"{a.threads} thread(s)")
    for name in a.models or list(config["models"]):
        st = model_settings(config, a.dataset, name)
        variants = [False, True] if a.compare_compile else [st["train"].get("compile", True)]
        per = {}
        for comp in variants:
            cfg = TrainConfig.from_dict({**st["train"], "compile": comp})
            tr = Trainer(kg, name, st["model"], cfg, seed=0, device="cpu")
            gen = torch.Generator().manual_seed(0)
            ex = tr._epoch_examples(gen)
            tr.model.train()
            times = []
            for b in range(a.batches + 1):
                t0 = time.perf_counter()
                tr.optimizer.zero_grad()
                loss = tr._batch_loss(ex[b * cfg.batch_size:(b + 1) * cfg.batch_size], gen)
                loss.backward()
                tr.optimizer.step()
                times.append(time.perf_counter() - t0)
            per_batch = sum(times[1:]) / len(times[1:])
            per[comp] = per_batch
            epoch = per_batch * tr.steps_per_epoch()
            t0 = time.perf_counter()
            evaluate_mrr(tr.model, kg, "valid", cfg.valid_max_triples)
            ev = time.perf_counter() - t0
            print(f"{name:10s} {per_batch:7.3f} s/batch x {tr.steps_per_epoch():5d} = {epoch / 60:6.1f} min/epoch; "
                  f"validation eval {ev:5.1f} s; {sum(p.numel() for p in tr.model.parameters()) / 1e6:.1f} M params; "
                  f"compile {'on' if comp else 'off'} (first batch {times[0]:.1f} s)", flush=True)
        if a.compare_compile:
            print(f"{name:10s} compile on / off: {per[True] / per[False]:.2f}x the time per batch", flush=True)
        if a.epochs:
            tr = Trainer(kg, name, st["model"], TrainConfig.from_dict({**st["train"], "max_epochs": a.epochs,
                                                                       "eval_every": 1}), seed=0, device="cpu")
            t0 = time.perf_counter()
            res = tr.fit()
            mrrs = [round(t.get("valid_mrr", float("nan")), 4) for t in res.trace]
            test = evaluate_mrr(res.model, kg, "test")
            pub = published_mrr(a.dataset, name)
            ratio = f" = {test / pub:.0%} of the published {pub:.3f}" if pub else ""
            print(f"{'':10s} trained {a.epochs} epochs in {(time.perf_counter() - t0) / 60:.1f} min: valid MRR {mrrs}, "
                  f"test MRR {test:.4f}{ratio}", flush=True)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
