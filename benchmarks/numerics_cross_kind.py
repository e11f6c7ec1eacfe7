"""A rerun against a pack made on the other CPU kind, kept as files the docs quote: ``kgeval reproduce``'s
comparison (kgeval.api.reproduce) written as OUT/cross_kind_values.csv (per test set, system and headline metric:
ours, theirs, their difference, the same bits or not), OUT/cross_kind_artifacts.csv (per artifact: the same bits
or what differs) and OUT/cross_kind.json (the one-line verdict, the two sides' CPU kinds, numerical modes and MKL
branches, the largest micro MRR change, the verdicts that changed) and OUT/reproduce.txt (the printed report).

    python benchmarks/numerics_cross_kind.py results reference/smoke OUT --testsets FB-Test-O,FB-Test-S,FB-Test-S-C,WN18RR

Run it after the smoke configuration (tests/check.sh's smoke part does the same comparison and prints it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from _common import heartbeat_main

from kgeval.api.reproduce import reproduce, reproduce_report
from kgeval.reproduce.report import headline, largest_change


def _side(manifest: dict | None) -> dict:
    env = (manifest or {}).get("environment") or {}
    num = env.get("numerics") or {}
    return {"kind": (env.get("cpu") or {}).get("kind"), "model": (env.get("cpu") or {}).get("model"),
            "mode": (num.get("variables") or {}).get("KGEVAL_NUMERICS") or "reproducible",
            "MKL_CBWR": (num.get("variables") or {}).get("MKL_CBWR"),
            "mkl_branch": num.get("mkl_branch") or "not recorded"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("pack", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--testsets", default=None)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    cmp = reproduce(a.results, a.pack, testsets=a.testsets.split(",") if a.testsets else None)
    (a.out / "reproduce.txt").write_text(reproduce_report(cmp), encoding="utf-8")
    if cmp.values is not None:
        cmp.values.to_csv(a.out / "cross_kind_values.csv", index=False, float_format="%.12g")
    pd.DataFrame([{"artifact": x.name, "identical": x.identical, "note": "" if x.identical else x.note}
                  for x in cmp.artifacts]).to_csv(a.out / "cross_kind_artifacts.csv", index=False)
    v = cmp.values if cmp.values is not None else pd.DataFrame(columns=["metric", "identical"])
    mrr, hits = v[v["metric"] == "micro_mrr"], v[v["metric"].str.contains("hits@10")]
    largest = largest_change(cmp.values)
    summary = {"headline": headline(cmp), "artifacts": len(cmp.artifacts), "differing": len(cmp.differing),
               "largest_micro_mrr_change": largest,
               "largest_micro_mrr_change_shown": f"{largest:.3g}",  # a page quotes it verbatim
               "micro_mrr_identical": int(mrr["identical"].sum()), "micro_mrr_rows": len(mrr),
               "hits10_identical": int(hits["identical"].sum()), "hits10_rows": len(hits),
               "verdicts_changed": len(cmp.verdicts_changed), "ours": _side(cmp.ours.manifest),
               "theirs": _side(cmp.theirs.manifest)}
    (a.out / "cross_kind.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(summary["headline"])
    return 0


if __name__ == "__main__":
    heartbeat_main(main, __file__)
