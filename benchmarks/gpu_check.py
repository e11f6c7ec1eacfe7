"""Training and score dumps on a CUDA device against the CPU, on the synthetic graph (a device check, not a test).

    python benchmarks/gpu_check.py OUT [--models ComplEx,TransE,...] [--epochs 6]

For each model of the tiny configuration: train one seed on the CPU and on CUDA (same seed and settings), dump the
Synth-Test-O ranking from each checkpoint on the device it was trained on, and also dump the CUDA-trained model on
the CPU. It writes ``OUT/gpu_check.json`` with, per model: the two validation MRRs, the wall seconds of each training,
and how many questions' filtered ranks of the gold answers agree between the CUDA and the CPU dump of the same
checkpoint (they must all agree up to float ties: the ranking engine is the same code on either device).
Without CUDA it runs the CPU half only (to check the script itself).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _common import heartbeat_main  # noqa: E402  (after the sys.path line above)

from kgeval.data.kg import build_kg  # noqa: E402
from kgeval.data.steps import build_testset  # noqa: E402
from kgeval.data.synth import SynthSpec, synthesize  # noqa: E402
from kgeval.scores.dumps import load_dump  # noqa: E402
from kgeval.scores.steps import dump_scores  # noqa: E402
from kgeval.training.steps import train_seed  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--models", default="ComplEx,DistMult,TransE,RotatE,TuckER,ConvE")
    ap.add_argument("--epochs", type=int, default=6)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tiny = yaml.safe_load((ROOT / "config/tiny.yaml").read_text())
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    report: dict = {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
                    "device_name": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                    "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp)
        files = synthesize(w / "synth", seed=1, spec=SynthSpec())
        kg = build_kg("Synth", files["train"], files["valid"], files["test"], names=files["names"],
                      categories_dir=files["categories"], relation_types=files["relation_types"],
                      entity_types=files["entity_types"])
        kg_path = w / "kg.npz"
        kg.save(kg_path)
        ts, qs = w / "Synth-Test-O.tsv", w / "Synth-Test-O.questions.tsv"
        build_testset(kg_path, "Synth-Test-O", "full", ts, qs, {}, seed_set=None)
        for name in args.models.split(","):
            spec = tiny["models"][name]
            # torch.compile is the CPU path's option only (and needs a C++ compiler where the check runs): off on both
            train = dict(spec["train"], max_epochs=args.epochs, eval_every=args.epochs, compile=False)
            row: dict = {}
            for dev in devices:
                t0 = time.perf_counter()
                summary = train_seed(kg_path, name, spec["model"], train, 0, w / f"{name}-{dev}.pt", w / "work",
                                     device=dev)
                row[f"train_seconds_{dev}"] = round(time.perf_counter() - t0, 2)
                row[f"valid_mrr_{dev}"] = summary["valid_mrr"]
                row[f"device_{dev}"] = summary["device"]
                dump_scores(w / f"{name}-{dev}.pt", kg_path, ts, qs, w / f"dump-{name}-{dev}", name, "Synth-Test-O",
                            k=100, device=dev)
            if "cuda" in devices:  # the CUDA-trained checkpoint dumped on the CPU too: same ranks on both devices
                dump_scores(w / f"{name}-cuda.pt", kg_path, ts, qs, w / f"dump-{name}-cuda-on-cpu", name,
                            "Synth-Test-O", k=100, device="cpu")
                a, b = load_dump(w / f"dump-{name}-cuda"), load_dump(w / f"dump-{name}-cuda-on-cpu")
                row["judged"] = int(len(a.n_gt))
                row["n_gt_equal_share"] = float(np.mean(a.n_gt == b.n_gt))
                row["n_gt_max_abs_diff"] = int(np.abs(a.n_gt.astype(np.int64) - b.n_gt).max())
                row["top_k_equal_share"] = float(np.mean(a.run_entity == b.run_entity))
            report["models"][name] = row
            print(name, json.dumps(row), flush=True)
    (out / "gpu_check.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(heartbeat_main(main, __file__))
