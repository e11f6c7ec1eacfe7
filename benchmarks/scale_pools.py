"""Pools and bounds on a scale graph for a 10,000-question sample of its test questions (issue 53; target on the
ogbl-wikikg2 shape: ≤ 16 GB and ≤ 30 min on the 2-core machine): seconds of each step and the peak memory of the
whole run, from the graph to pools.csv and pool_bounds.csv, through the workflow's own steps (the top-k lists of
every system by the block engine, the pools of those lists judged by the planted truth, the bounds, and a
sampling plan of ``--plan-budget`` judgments for the adjacent systems' P@10 differences).

    python benchmarks/scale_pools.py --shape wikikg2 --factor 0.1 [--graph resources/scale/wikikg2/graph.npz]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import heartbeat_main, peak_rss_mb  # noqa: E402
from _scale import shape_args, shape_graph  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shape_args(ap)
    ap.add_argument("--questions", type=int, default=10000)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--depths", default="1,3,10")
    ap.add_argument("--plan-budget", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--memory-budget-mb", type=float, default=512)
    a = ap.parse_args()
    from kgeval.scale.engine import split_questions
    from kgeval.scale.steps import gather_step, pools_step, rank_shard_step
    from kgeval.scale.store import save_arrays
    from kgeval.scale.synth import load_graph

    depths = [int(d) for d in a.depths.split(",")]
    out: dict = {"shape": a.shape, "factor": a.factor, "questions": a.questions, "systems": a.systems}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        graph = shape_graph(a, tmp, out)
        g = load_graph(graph)
        E = len(g["z"])
        questions, _ = split_questions(g["test"].astype(np.int64), E, len(g["w"]))
        n = min(a.questions, len(questions))
        plan = np.sort(np.random.default_rng(a.seed).choice(len(questions), size=n, replace=False))
        out |= {"entities": E, "test_questions": len(questions), "sampled": n}
        del g, questions
        sample = tmp / "sample.npz"
        save_arrays(sample, {"idx": np.arange(2), "plan": plan, "exact": np.array(False)})
        t0 = time.perf_counter()
        rank_shard_step(graph, sample, a.systems, 0, 1, max(depths), a.batch, a.memory_budget_mb, a.seed,
                        tmp / "shard.npz")
        rankings = [tmp / f"system{s}.npz" for s in range(a.systems)]
        gather_step([tmp / "shard.npz"], rankings)
        out["top_lists_seconds"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        pools_step(graph, sample, rankings, a.questions, depths, a.seed, tmp / "pools.csv", tmp / "bounds.csv",
                   a.plan_budget, tmp / "plan.csv")
        out["pools_bounds_plan_seconds"] = time.perf_counter() - t0
        import pandas as pd

        out["pools"] = pd.read_csv(tmp / "pools.csv").to_dict("records")
        b = pd.read_csv(tmp / "bounds.csv")
        out["plan"] = pd.read_csv(tmp / "plan.csv").to_dict("records")
        out["bounds_depth1"] = b[b["depth"] == depths[0]][["system", "lower", "upper", "exact"]].to_dict("records")
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
