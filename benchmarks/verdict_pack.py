"""The τ intervals the findings decide on (``kgeval.analysis.resampling.order_interval``), computed from a
reference pack's per-item tables: claim 1's τ(FB-Test-O, FB-Test-S) and claim 4's τ(FB-Test-S, FB-Test-S-C) of
micro and macro MRR and Hits@10 at the pack's pooling depth, with the count of system pairs whose order each
side leaves open (issue 61, item 6). The pack lacks what claims 3's depth 2 and 5's relation re-weighting need.

Usage: python benchmarks/verdict_pack.py reference/default OUT.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from _common import heartbeat_main
from scipy.special import ndtri

from kgeval.analysis.resampling import order_interval, pair_signs

ROWS = [("claim 1", "FB-Test-O", "FB-Test-S", "micro_mrr"), ("claim 4", "FB-Test-S", "FB-Test-S-C", "micro_mrr"),
        ("claim 4", "FB-Test-S", "FB-Test-S-C", "macro_mrr"), ("claim 4", "FB-Test-S", "FB-Test-S-C", "micro_hits@10"),
        ("claim 4", "FB-Test-S", "FB-Test-S-C", "macro_hits@10")]


def items(pack: Path, testset: str, metric: str) -> pd.DataFrame:
    micro = metric.startswith("micro_")
    df = pd.read_parquet(pack / "metrics" / testset / ("per_answer.parquet" if micro else "per_question.parquet"))
    return df.pivot_table(index=["qid", "entity"] if micro else ["qid"], columns="System", values=metric,
                          aggfunc="first")


def main() -> None:
    pack, out = Path(sys.argv[1]), Path(sys.argv[2])
    rows = []
    for claim, a_name, b_name, metric in ROWS:
        a = items(pack, a_name, metric)
        b = items(pack, b_name, metric)[a.columns]
        n = a.shape[1]
        z = float(ndtri(1 - 0.05 / (2 * n * (n - 1))))  # order_interval's Bonferroni z
        tau, lo, hi = order_interval(a.to_numpy(), b.to_numpy())
        rows.append({"claim": claim, "a": a_name, "b": b_name, "metric": metric, "items_a": len(a),
                     "items_b": len(b), "tau": round(tau, 4), "tau_low": round(lo, 4), "tau_high": round(hi, 4),
                     "open_a": int((pair_signs(a.to_numpy(), z) == 0).sum()),
                     "open_b": int((pair_signs(b.to_numpy(), z) == 0).sum()), "pairs": n * (n - 1) // 2})
    df = pd.DataFrame(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    print(df.to_string(index=False))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
