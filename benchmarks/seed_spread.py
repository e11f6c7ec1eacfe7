"""How far another training seed moves a model's test MRR and the order of two models (issue 61, item 6).

Each model trains on FB15k-237 with the default configuration's own settings (config/config.yaml, the full
schedule) once per seed, in a fresh process per training with the reproducible numerical mode on; each trained
model's filtered test MRR and Hits@10 (FB15k-237's test split, realistic ties) are measured. The table gives every
(model, seed) row; the summary, per model, the spread (max − min) and standard deviation of the test MRR over the
seeds, and per pair of models how many of the seed pairings order them one way. A difference between two reruns
or two systems smaller than a model's seed spread is not a finding.

    python benchmarks/seed_spread.py --models DistMult,ComplEx,AttE --seeds 0,1,2 --csv seed_spread.csv

Needs the FB15k-237 graph the workflow builds (``resources/datasets/FB15k-237/kg.npz``); about three minutes per
training on one core of the Intel Xeon kind for the three models above.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import heartbeat_main

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
from pathlib import Path
import kgeval  # the reproducible numerical mode, before torch computes anything
from kgeval.config import load_config_file, model_settings, validate_config
from kgeval.data.kg import KnowledgeGraph
from kgeval.models.checkpoint import load_model
from kgeval.training.steps import train_seed
from kgeval.training.trainer import evaluate_ranking
kg_path, model, seed, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
root = Path(kgeval.__file__).resolve().parents[2]
cfg = validate_config(load_config_file(root / "config" / "config.yaml"), root / "config" / "schema.yaml",
                      models=False)
s = model_settings(cfg, "FB15k-237", model)
t0 = time.perf_counter()
summary = train_seed(kg_path, model, s["model"], {**s["train"], "snapshots": False}, seed, out / "model.pt",
                     out / "work", device="cpu")
seconds = time.perf_counter() - t0
kg = KnowledgeGraph.load(kg_path)
test = evaluate_ranking(load_model(out / "model.pt", kg, device="cpu"), kg, "test")
print(json.dumps({"valid_mrr": summary["valid_mrr"], "test_mrr": test["mrr"], "test_hits@10": test["hits@10"],
                  "epochs": summary["epochs"], "train_seconds": seconds}))
"""


def train_and_test(kg: str, model: str, seed: int) -> dict:
    from kgeval import numerics

    env = {k: v for k, v in os.environ.items() if k not in (*numerics.SETTINGS, numerics.MODE_VAR)}
    env["PYTHONPATH"] = str(ROOT / "src")
    with tempfile.TemporaryDirectory(prefix="kgeval-seed-") as tmp:
        done = subprocess.run([sys.executable, "-c", CHILD, kg, model, str(seed), tmp], env=env,
                              capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"seed_spread: {model} seed {seed} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarise(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """Per model: the test MRR's spread and deviation over seeds; per pair: the seed pairings' order."""
    by_model: dict[str, dict[int, float]] = {}
    for r in rows:
        by_model.setdefault(r["model"], {})[r["seed"]] = r["test_mrr"]
    models = [{"model": m, "seeds": len(v), "test_mrr_mean": statistics.fmean(v.values()),
               "spread": max(v.values()) - min(v.values()),
               "sd": statistics.stdev(v.values()) if len(v) > 1 else 0.0} for m, v in by_model.items()]
    pairs = []
    for a, b in itertools.combinations(sorted(by_model), 2):
        both = [(x, y) for x in by_model[a].values() for y in by_model[b].values()]
        wins = sum(x > y for x, y in both)
        pairs.append({"pair": f"{a} vs {b}", "pairings": len(both), "first_ahead": wins,
                      "mean_difference": statistics.fmean(x - y for x, y in both),
                      "order_flips": 0 < wins < len(both)})
    return models, pairs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kg", default=str(ROOT / "resources/datasets/FB15k-237/kg.npz"))
    p.add_argument("--models", default="DistMult,ComplEx,AttE")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--csv", help="write the per-(model, seed) table here; the summaries go beside it")
    a = p.parse_args(argv)
    if not Path(a.kg).is_file():
        raise SystemExit(f"seed_spread: --kg {a.kg}: no such file (build it with the workflow's data stage)")
    from kgeval.reproduce.environment import cpu_info

    kind = cpu_info()["kind"]
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    rows = []
    for model in a.models.split(","):
        for seed in map(int, a.seeds.split(",")):
            got = train_and_test(a.kg, model, seed)
            rows.append({"model": model, "seed": seed, "kind": kind, "commit": commit, **got})
            print(f"{model:10s} seed {seed}: test MRR {got['test_mrr']:.4f}  valid MRR {got['valid_mrr']:.4f}  "
                  f"({got['epochs']} epochs, {got['train_seconds']:.0f} s)", flush=True)
    models, pairs = summarise(rows)
    for m in models:
        print(f"{m['model']:10s} test MRR over {m['seeds']} seeds: mean {m['test_mrr_mean']:.4f}, spread "
              f"{m['spread']:.4f}, sd {m['sd']:.4f}")
    for q in pairs:
        print(f"{q['pair']}: first ahead in {q['first_ahead']} of {q['pairings']} seed pairings "
              f"(mean difference {q['mean_difference']:+.4f})")
    if a.csv:
        import pandas as pd

        base = Path(a.csv)
        pd.DataFrame(rows).to_csv(base, index=False)
        pd.DataFrame(models).to_csv(base.with_name(base.stem + "_models.csv"), index=False)
        pd.DataFrame(pairs).to_csv(base.with_name(base.stem + "_pairs.csv"), index=False)
    return 0


if __name__ == "__main__":
    heartbeat_main(main, __file__)
