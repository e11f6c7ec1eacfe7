"""Checks on the outputs of the real-data smoke run (config/smoke.yaml), run by tests/check.sh after it.

The smoke models are barely trained, so nothing here asserts what the study finds; it asserts that the real data
went through every stage: the published sizes (Table 1, question counts, the published qrels), one evaluation row
per model and test set with finite metrics, the 29 FB15k-237 test entities never seen in training ranked like any
other, and every analysis, pool and Knowledge Persistence output present.

    python tests/smoke_checks.py [--root .] [--config config/smoke.yaml]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.config import load_config_file
from kgeval.pools.annotation.sheets import read_export

TABLE1 = {"FB-Test-O": (20466, 20466, 0), "FB-Test-S": (1023, 1023, 0), "FB-Test-S-C": (22492, 2738, 19754)}
QUESTIONS = {"FB-Test-O": 22850, "FB-Test-S": 1745, "FB-Test-S-C": 2883, "WN18RR": 5716}
QRELS_LINES = {"FB-Test-S": 2046, "FB-Test-S-C": 27568}  # judged (question, entity) pairs: both sides of each judged triple, aggregated
UNSEEN_TEST_ENTITIES = 29


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=".")
    ap.add_argument("--config", default="config/smoke.yaml")
    a = ap.parse_args()
    root = Path(a.root)
    config = load_config_file(root / a.config)
    models = list(config["models"])
    problems: list[str] = []

    def check(ok: bool, what: str) -> None:
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            problems.append(what)

    t1 = pd.read_csv(root / "results/tables/table1.csv").set_index("Test Set")
    for name, row in TABLE1.items():
        got = tuple(int(v) for v in t1.loc[name, ["#Triples", "#Positives", "#Negatives"]])
        check(got == row, f"Table 1 {name}: {got} (paper {row})")
    for name, n in QUESTIONS.items():
        got = json.loads((root / f"resources/testsets/{name}.json").read_text())["questions"]
        check(got == n, f"{name}: {got} aggregated questions (published trec_queries: {n})")

    from kgeval.data.kg import KnowledgeGraph

    kg = KnowledgeGraph.load(root / "resources/datasets/FB15k-237/kg.npz")
    train_entities = np.unique(kg.splits["train"][:, [0, 2]])
    test_entities = np.unique(kg.splits["test"][:, [0, 2]])
    unseen = np.setdiff1d(test_entities, train_entities)
    check(len(unseen) == UNSEEN_TEST_ENTITIES,
          f"FB15k-237: {len(unseen)} test entities never seen in training (expected {UNSEEN_TEST_ENTITIES})")

    for testset in QUESTIONS:
        ev = pd.read_csv(root / f"results/metrics/{testset}/evaluation.csv")
        dataset = config["test_sets"][testset]["dataset"]
        outside = [n for n, e in config.get("external_systems", {}).items() if e["dataset"] == dataset]
        check(sorted(ev["System"]) == sorted(models + outside),
              f"{testset}: one evaluation row per model and outside system {outside} ({len(ev)} rows)")
        # an outside system that is the very checkpoint selection kept must score exactly as that model
        for name in outside:
            spec = config["external_systems"][name]
            for m in models:
                sel = root / f"results/models/{dataset}/{m}/selection.json"
                if not sel.is_file():
                    continue
                kept = json.loads(sel.read_text())["selected_seed"]
                if spec.get("system") == f"resources/models/{dataset}/{m}/seed{kept}.pt":
                    rows = ev.set_index("System").loc[[m, name]].drop(columns=["TestSet"], errors="ignore")
                    kept_row, outside_row = rows.to_numpy()
                    check(bool(np.allclose(kept_row, outside_row, equal_nan=True, rtol=0, atol=0)),
                          f"{testset}: outside system {name} (selected seed {kept} of {m}) scores exactly as {m}")
        for col in ("micro_mrr", "macro_mrr"):
            vals = ev[col].to_numpy(dtype=float)
            check(bool(np.all(np.isfinite(vals)) and np.all((vals > 0) & (vals <= 1))),
                  f"{testset}: {col} finite and in (0, 1] for every system ({np.round(vals, 4).tolist()})")

    for testset, n in QRELS_LINES.items():
        lines = (root / f"results/trec/{testset}/qrels.txt").read_text().splitlines()
        check(len(lines) == n, f"{testset}: {len(lines)} qrels lines (expected {n})")
        for model in models:
            check((root / f"results/trec/{testset}/{model}.run").stat().st_size > 0, f"{testset}: TREC run of {model}")

    expected = ["results/analysis/figure3.png", "results/analysis/figure7.png", "results/analysis/figure8.png",
                "results/analysis/umf_grid.csv", "results/tables/table3.csv", "results/tables/table4.csv",
                "results/pools/FB-Test-S-C/coverage.csv", "results/metrics/FB-Test-S-C/pooling_depth.csv",
                "results/reanalysis/own/notes.txt"]
    expected += [f"results/kp/{d}/{m}.json" for d in ("FB15k-237", "WN18RR") for m in models]
    for path in expected:
        p = root / path
        check(p.is_file() and p.stat().st_size > 0, f"{path} written")

    # Hoyt et al.'s case study (Nations ranked here beside FB-Test-O and WN18RR) and the UMF properties
    case = pd.read_csv(root / "results/tables/hoyt_case_study.csv")
    check(set(case["dataset"]) == {"Nations", "FB15k-237", "WN18RR"},
          f"hoyt case study: datasets {sorted(set(case['dataset']))}")
    size = pd.read_csv(root / "results/analysis/umf_size_invariance.csv")
    check(bool(np.allclose(size.loc[size["alpha"] == 1.0, "expectation"], 0.5)), "size invariance: E[f_1] = 1/2")

    # the bounds stage on the real published judgments: every bound holds today's value, and the simulation
    # decides what all published labels decide under every strategy
    b = root / "results/bounds/FB-Test-S-C"
    systems, pairs = pd.read_csv(b / "systems.csv"), pd.read_csv(b / "pairs.csv")
    check(bool((systems["lower"] <= systems["upper"] + 1e-12).all()), "bounds: lower <= upper for every system")
    inside = (pairs["delta_lo"] <= pairs["delta_today"] + 1e-12) & (pairs["delta_today"] <= pairs["delta_hi"] + 1e-12)
    check(bool(inside.all()), "bounds: delta_lo <= today's difference <= delta_hi for every pair")
    summary = pd.read_csv(b / "simulation_summary.csv")
    check(len(summary) >= 9 and bool((summary["judgments_needed"] <= summary["hidden"]).all()),
          f"bounds: {len(summary)} simulated strategies, each within the hidden labels")
    check((b / "next_judgments.tsv").stat().st_size > 0, "bounds: next_judgments.tsv written")
    # the sampling stage on the hidden published labels: over the pairs, the 95 % interval covers within
    # 0.92-0.98 at every budget >= 200 (the smoke config's 200 repetitions: standard error about 0.002 over the
    # pairs, the rest the normal approximation's), and the plan is a sheet annotate-merge reads
    sm = root / "results/sampling/FB-Test-S-C"
    sim = pd.read_csv(sm / "sampling_simulation.csv")
    # a budget at least the labels a metric's plan can draw judges them all (a census): its interval is Δ itself.
    # Per metric: an RR plan draws only the unknowns that can move a question's RR, fewer than P's
    labels = sim.groupby("Metric")["mean_judgments"].transform("max")
    overall = sim[(sim["A"] == "all") & (sim["budget"] >= 200) & (sim["budget"] < labels)]
    census = sim[(sim["A"] == "all") & (sim["budget"] >= labels)]
    check(len(overall) > 0 and bool(overall["coverage"].between(0.92, 0.98).all()),
          f"sampling: coverage {overall['coverage'].min():.3f}-{overall['coverage'].max():.3f} at budgets >= 200")
    check(bool((census["coverage"] == 1.0).all()), f"sampling: a census ({len(census)} rows) covers every pair")
    check(len(read_export(sm / "sampling_plan.tsv")) > 0, "sampling: sampling_plan.tsv reads as an exported sheet")
    vs = pd.read_csv(sm / "sampling_vs_mtc.csv")
    counted = vs.dropna(subset=["mtc_hard"])
    check(bool((counted["mtc_hard"] <= counted["hidden"]).all() and (counted["mtc_soft"] <= counted["mtc_hard"]).all()),
          f"sampling: MTC's counts of {len(counted)} pairs within their hidden labels, soft stop <= hard stop")
    f5 = pd.read_csv(root / "results/analysis/figure5.csv")
    band, prior = f5[f5["Kind"] == "every labelling"], f5[f5["Kind"] == "expected under prior"]
    check(len(band) > 0 and bool(((band["tau_low"] <= band["tau"] + 1e-12) & (band["tau"] <= band["tau_high"] + 1e-12)).all()),
          f"figure 5: {len(band)} every-labelling bands, each holding today's τ-a")
    # (the smoke config's prior covers P@10 alone, which Figure 5 does not draw: its points come with RR or Success)
    check(bool(((prior["tau_low"] <= prior["tau"] + 1e-12) & (prior["tau"] <= prior["tau_high"] + 1e-12)).all()),
          f"figure 5: {len(prior)} expected-τ points under the prior, each inside its 95 % interval")

    print(f"smoke checks: {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
