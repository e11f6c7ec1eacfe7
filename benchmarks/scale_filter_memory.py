"""Peak memory (max RSS, /usr/bin/time -v) of building the scale stage's train ∪ valid filter index (issue 60):
the whole-split AnswerIndex against the bounded pieces of kgeval.scale.filterindex, each in its own process, on
``--triples`` random triples of ``--entities`` entities (int32, as a graph file holds them). The baseline
process's RSS (the triples and the imports alone) is measured too, so that each build's own share shows. Writes
one row per build to ``--csv`` (benchmarks/scale_filter_memory.csv).

    python benchmarks/scale_filter_memory.py --triples 4000000 --entities 1000000 --csv benchmarks/scale_filter_memory.csv
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pandas as pd
from _common import heartbeat_main

CHILD = """
import sys, numpy as np
n, E, R, how = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
from kgeval.data.questions import AnswerIndex
from kgeval.scale.filterindex import BoundedAnswerIndex

rng = np.random.default_rng(0)
t = np.stack([rng.integers(0, E, n), rng.integers(0, R, n), rng.integers(0, E, n)], 1).astype(np.int32)
if how == "whole":
    x = AnswerIndex(t.astype(np.int64), E, R)
elif how == "bounded":
    x = BoundedAnswerIndex([t], E, R)
if how != "none":
    print(x.keys.nbytes + x.offsets.nbytes + x.answers.nbytes)
"""


def max_rss_mb(args: list[str]) -> tuple[float, str]:
    p = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", CHILD, *args], capture_output=True,
                       text=True, check=True)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return rss / 1024, p.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triples", type=int, default=4_000_000)
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--relations", type=int, default=500)
    ap.add_argument("--csv")
    a = ap.parse_args()
    rows = []
    base, _ = max_rss_mb([str(a.triples), str(a.entities), str(a.relations), "none"])
    for how in ("whole", "bounded"):
        rss, index = max_rss_mb([str(a.triples), str(a.entities), str(a.relations), how])
        rows.append({"build": how, "triples": a.triples, "entities": a.entities, "relations": a.relations,
                     "max_rss_mb": round(rss), "baseline_rss_mb": round(base), "build_mb": round(rss - base),
                     "index_mb": round(int(index) / 2**20)})
        print(rows[-1], flush=True)
    if a.csv:
        pd.DataFrame(rows).to_csv(a.csv, index=False)


if __name__ == "__main__":
    heartbeat_main(main, __file__)
