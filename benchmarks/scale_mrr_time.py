"""Time to MRR ± half-width by question sampling on a scale graph (issue 53; target on ogbl-wikikg2's shape:
MRR to ± 0.005 within 5 minutes per system): the workflow's own steps, timed apart. The sample step ranks a
500-answer pilot of system 0 and sizes the sample for ``--half-width``; then each system's ranking of the sampled
answers' questions (the block engine, one shard) and the tables (the t interval's half-width as achieved).

    python benchmarks/scale_mrr_time.py --shape wikikg2 --factor 0.1 --systems 1
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import heartbeat_main, peak_rss_mb  # noqa: E402
from _scale import shape_args, shape_graph  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shape_args(ap)
    ap.add_argument("--systems", type=int, default=1)
    ap.add_argument("--half-width", type=float, default=0.005)
    ap.add_argument("--k", type=int, default=10)
    a = ap.parse_args()
    from kgeval.scale.steps import (
        TABLES,
        evaluate_step,
        gather_step,
        rank_shard_step,
        sample_step,
    )
    from kgeval.scale.store import load_arrays

    out: dict = {"shape": a.shape, "factor": a.factor, "half_width_asked": a.half_width}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        graph = shape_graph(a, tmp, out)
        sample = tmp / "sample.npz"
        t0 = time.perf_counter()
        # exact_max_answers 0: only the sampled answers' questions are ranked, as at the full shape
        sample_step(graph, None, a.half_width, a.seed, a.k, 1024, 512, 0, sample)
        out["pilot_and_sizing_seconds"] = time.perf_counter() - t0
        s = load_arrays(sample, ("idx", "plan"))
        out |= {"answers_sampled": len(s["idx"]), "questions_ranked": len(s["plan"])}
        # one job ranks systems 0..S-1 (the graph read once); per system: the total / S
        t0 = time.perf_counter()
        rank_shard_step(graph, sample, a.systems, 0, 1, a.k, 1024, 512, a.seed, tmp / "shard.npz")
        out["ranking_seconds_per_system"] = (time.perf_counter() - t0) / a.systems
        rankings = [tmp / f"system{i}.npz" for i in range(a.systems)]
        gather_step([tmp / "shard.npz"], rankings)
        paths = {f"out_{t}": tmp / f"{t}.csv" for t in TABLES} | {"out_tau": tmp / "tau.json"}
        t0 = time.perf_counter()
        evaluate_step(graph, sample, rankings, 500, [1, 3, 10], a.seed, 200, **paths)
        out["tables_seconds"] = time.perf_counter() - t0
        est = pd.read_csv(paths["out_estimates"])
        mrr = est[est["metric"] == "mrr"]
        out["mrr"] = [{"system": int(r.system), "estimate": r.estimate, "half_width": r.half_width}
                      for r in mrr.itertuples()]
        out["half_width_max"] = float(np.max(mrr["half_width"]))
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
