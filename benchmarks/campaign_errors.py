"""Annotator errors on the real FB-Test-S-C labels: coverage and wrong-sign rate of the final estimates with
annotators who err at 5, 10 and 20 % (and one who always answers N), single against double annotation with
adjudication (:mod:`kgeval.campaign.errors`).

The universe is the reference pack's top 10 of the study's 13 systems on FB-Test-S-C with every pooled label
hidden (the 15,596 labels of the sampling simulation); the prior is fitted out of fold (as the simulation's
``fitted`` prior), the plan the optimal design for the 78 pairs under P@10. Per scheme and budget, every
repetition draws the sample, the answers and the final labels, and estimates all pairs at once. Writes one CSV
and prints it; needs the data mirror (KGEVAL_MIRROR) or network for the data stage's files.

    python benchmarks/campaign_errors.py OUT.csv [--budgets 200,500,1000] [--reps 200] [--seed 0]
        [--resources resources]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time
from pathlib import Path

from _common import heartbeat_main

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--budgets", default="200,500,1000")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resources", default=str(ROOT / "resources"))
    a = ap.parse_args()

    from kgeval import home
    from kgeval.campaign.errors import default_schemes, error_table
    from kgeval.config import load_config_file, validate_config
    from kgeval.data.cache import DataBuilder
    from kgeval.data.kg import KnowledgeGraph
    from kgeval.data.testsets import TestSet
    from kgeval.judgments.items import METRIC_NAMES
    from kgeval.sampling.problem import Problem
    from kgeval.sampling.reference import reference_universe

    t0 = time.perf_counter()
    cfg = validate_config(home.locate_defaults(load_config_file(ROOT / "config/config.yaml")),
                          ROOT / "config/schema.yaml", models=False)
    files = DataBuilder(cfg, ROOT / cfg["manifest"], Path(a.resources)).build_testset("FB-Test-S-C")
    kg = KnowledgeGraph.load(files["kg"])
    u = reference_universe(kg, TestSet.load(files["tsv"], kg), files["questions"],
                           ROOT / "reference/default/runs/FB-Test-S-C/top10.parquet")
    p = u.out_of_fold_prior("logistic", 5, a.seed)
    pb = Problem(u.hidden_state(), u.truth, METRIC_NAMES["P"], 0.8, 0, a.seed)
    built = time.perf_counter() - t0
    table = error_table(pb, p, default_schemes(), tuple(int(b) for b in a.budgets.split(",")), a.reps,
                        seed=a.seed)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    table = table.assign(hidden_labels=int(u.hidden.sum()), commit=commit, machine=platform.processor() or
                         platform.machine(), seconds_universe=round(built, 1),
                         seconds_total=round(time.perf_counter() - t0, 1))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(a.out, index=False, float_format="%.4f")
    print(table.drop(columns=["commit", "machine"]).to_string(index=False))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
