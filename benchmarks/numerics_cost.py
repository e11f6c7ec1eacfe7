"""What the numerical mode (kgeval.numerics) costs per model: the same short training under two modes.

Each of the default configuration's models on FB15k-237 (its own model and train settings) trains one epoch of
``--batches`` batches and one validation pass, in a fresh process per run (the mode's variables are read when MKL,
oneDNN and ATen first dispatch), under ``KGEVAL_NUMERICS=reproducible`` and ``native`` in turn (``--modes``:
any two of reproducible, portable and native, the first over the second). The two modes
alternate, and the first mode alternates with the repeat, so a load that drifts during the run falls on both alike;
the table gives each model's median seconds per mode and their ratio, and whether the two trained models' parameters
are bit-identical (they should not be on a kind whose native kernels differ from the pinned ones).

    python benchmarks/numerics_cost.py --kg resources/datasets/FB15k-237/kg.npz --csv numerics_cost.csv
    python benchmarks/numerics_cost.py --modes portable,reproducible --csv numerics_cost_portable.csv

Needs the FB15k-237 graph the workflow builds (``snakemake ... resources/datasets/FB15k-237/kg.npz``).
"""

from __future__ import annotations

import argparse
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
import kgeval  # applies the mode named by KGEVAL_NUMERICS before torch computes anything
from kgeval.config import load_config_file, model_settings, validate_config
from kgeval.training.steps import train_seed
kg, model, batches, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
root = Path(kgeval.__file__).resolve().parents[2]
cfg = validate_config(load_config_file(root / "config" / "config.yaml"), root / "config" / "schema.yaml",
                      models=False)
s = model_settings(cfg, "FB15k-237", model)
train = {**s["train"], "max_epochs": 1, "max_batches_per_epoch": batches, "eval_every": 1, "patience": None,
         "snapshots": False}
t0 = time.perf_counter()
train_seed(kg, model, s["model"], train, 0, out / "model.pt", out / "work")
seconds = time.perf_counter() - t0
from kgeval.reproduce.manifest import model_entry
print(json.dumps({"seconds": seconds, "digest": model_entry(out / "model.pt")["sha256"][:16]}))
"""


def run_one(kg: str, model: str, mode: str, batches: int) -> dict:
    from kgeval import numerics

    # this process imported kgeval, which pinned the variables in its own environment: a native child must not
    # inherit them (else both modes run the pinned kernels)
    env = {k: v for k, v in os.environ.items() if k not in numerics.SETTINGS}
    env.update(KGEVAL_NUMERICS=mode, PYTHONPATH=str(ROOT / "src"))
    with tempfile.TemporaryDirectory(prefix="kgeval-cost-") as tmp:
        done = subprocess.run([sys.executable, "-c", CHILD, kg, model, str(batches), tmp], env=env,
                              capture_output=True, text=True)
    if done.returncode:  # recorded, not fatal: native ATen kernels crash RotatE's training on one kind
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"numerics_cost: {model} ({mode}) failed, exit status {done.returncode}: {last}", flush=True)
        return {"seconds": float("nan"), "digest": f"failed: {last}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kg", default=str(ROOT / "resources/datasets/FB15k-237/kg.npz"))
    p.add_argument("--models", default="TransE,RotatE,HAKE,AttE,DistMult,RESCAL,ComplEx,TuckER,BiQUE,ConvE,CompGCN,"
                                       "InteractE,HittER")
    p.add_argument("--batches", type=int, default=20, help="training batches per run (default 20)")
    p.add_argument("--repeats", type=int, default=3, help="runs per model and mode (default 3)")
    p.add_argument("--modes", default="reproducible,native",
                   help="the two KGEVAL_NUMERICS modes compared, the first over the second (default reproducible,native)")
    p.add_argument("--csv", help="write the table here")
    a = p.parse_args(argv)
    modes = tuple(a.modes.split(","))
    if len(modes) != 2 or len(set(modes)) != 2 or not set(modes) <= {"reproducible", "portable", "native"}:
        raise SystemExit(f"numerics_cost: --modes {a.modes}: expected two of reproducible, portable, native")
    if not Path(a.kg).is_file():
        raise SystemExit(f"numerics_cost: --kg {a.kg}: no such file (build it with the workflow's data stage)")
    from kgeval.reproduce.environment import cpu_info

    kind = cpu_info()["kind"]
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    rows = []
    for model in a.models.split(","):
        times: dict[str, list[float]] = {m: [] for m in modes}
        digests: dict[str, set[str]] = {m: set() for m in modes}
        for rep in range(a.repeats):
            for mode in (modes if rep % 2 == 0 else modes[::-1]):
                got = run_one(a.kg, model, mode, a.batches)
                times[mode].append(got["seconds"])
                digests[mode].add(got["digest"])
        med = {m: statistics.median(times[m]) for m in modes}  # NaN where a run failed
        failed = sorted({d for m in modes for d in digests[m] if d.startswith("failed")})
        first, second = modes
        row = {"model": model, "kind": kind, "commit": commit, "batches": a.batches, "repeats": a.repeats,
               f"{first}_s": round(med[first], 2), f"{second}_s": round(med[second], 2),
               "ratio": round(med[first] / med[second], 3), "same_bits": digests[first] == digests[second],
               "deterministic": len(digests[first]) == 1 and len(digests[second]) == 1,
               "failed": "; ".join(failed)}
        rows.append(row)
        print(f"{model:10s} {first} {row[f'{first}_s']:7.2f} s  {second} {row[f'{second}_s']:7.2f} s  "
              f"ratio {row['ratio']:.3f}  same bits {row['same_bits']}  deterministic {row['deterministic']}",
              flush=True)
    if a.csv:
        import pandas as pd

        pd.DataFrame(rows).to_csv(a.csv, index=False)
    return 0


if __name__ == "__main__":
    heartbeat_main(main, __file__)
