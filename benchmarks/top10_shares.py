"""Top-10 shares (positives, original, added by pooling) of the default run's 13 systems, from the reference pack.

The default run's FB-Test-S-C top-10 lists ship in ``reference/default/runs/FB-Test-S-C/top10.parquet``; this
judges them by the completed test set exactly as rule ``top10_shares`` judges a run's score dumps, so the default
run's shares can be had without its dumps. Needs the data stage's files (``snakemake --cores 1
resources/testsets/FB-Test-S-C.tsv``) and the authors' release (for the paper's letters):

    python benchmarks/top10_shares.py [--pack reference/default] [--release DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _common import heartbeat_main

from kgeval.analysis.pool_statistics import paper_codes, shares_beside_paper, top10_shares
from kgeval.analysis.reanalyze import RELEASE, read_table
from kgeval.data.download import resolve_mirror
from kgeval.data.kg import HEAD, TAIL, KnowledgeGraph
from kgeval.data.testsets import TestSet

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pack", default=str(ROOT / "reference/default"))
    p.add_argument("--release", default=None, help="the release's result/ folder (default: the mirror's)")
    a = p.parse_args()
    kg = KnowledgeGraph.load(ROOT / "resources/datasets/FB15k-237/kg.npz")
    ts = TestSet.load(ROOT / "resources/testsets/FB-Test-S-C.tsv", kg, "FB-Test-S-C")
    qs = pd.read_csv(ROOT / "resources/testsets/FB-Test-S-C.questions.tsv", sep="\t", dtype=str,
                     keep_default_na=False)
    eidx = {e: i for i, e in enumerate(kg.entities)}
    ridx = {r: i for i, r in enumerate(kg.relations)}
    top = pd.read_parquet(Path(a.pack) / "runs/FB-Test-S-C/top10.parquet")
    release = Path(a.release) if a.release else Path(resolve_mirror(None) or ROOT.parent / "shared/data") / RELEASE
    codes = paper_codes(read_table(release / "FB-Test-O/evaluation.csv"))
    rows = []
    for system, group in top.groupby("System", observed=True, sort=False):
        wide = group.pivot(index="qid", columns="rank", values="entity").reindex(qs["qid"])
        keep = wide.notna().all(axis=1).to_numpy()
        q = qs[keep]
        side = np.where(q["side"] == "head", HEAD, TAIL)
        rows.append({"System": str(system), **top10_shares(
            wide[keep].to_numpy(dtype=np.int64)[:, :10], side, q["entity"].map(eidx).to_numpy(),
            q["relation"].map(ridx).to_numpy(), ts, kg.num_entities, kg.num_relations)})
    print(shares_beside_paper(pd.DataFrame(rows), codes).to_markdown(index=False, floatfmt=".4f"))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
