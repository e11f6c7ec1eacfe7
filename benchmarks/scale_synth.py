"""Generating the graphs at scale (issue 53): seconds and peak memory of ``kgeval.scale.synth`` for a shape
(targets: ≤ 15 min and ≤ 10 GB per published shape on the 2-core machine), and of the study's small generator
``kgeval synth`` with many relations (issue 49: ``--relations 10000``).

    python benchmarks/scale_synth.py --shape wikikg2 [--factor 1.0] [--out graph.npz]
    python benchmarks/scale_synth.py --study-relations 10000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import heartbeat_main, peak_rss_mb  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=["wikidata5m", "wikikg2"])
    ap.add_argument("--factor", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--study-relations", type=int, help="time kgeval synth (the study's generator) instead")
    ap.add_argument("--out", help="keep the generated graph here (for scale_pools.py / scale_mrr_time.py --graph)")
    a = ap.parse_args()
    out, seconds = {}, None
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        if a.study_relations:
            from kgeval.data.synth import SynthSpec, synthesize

            synthesize(tmp, a.seed, SynthSpec(num_relations=a.study_relations))
            out = {"generator": "kgeval synth", "relations": a.study_relations}
        else:
            from kgeval.scale.synth import SHAPES, scaled, write_graph

            spec = SHAPES[a.shape] if a.factor == 1 else scaled(SHAPES[a.shape], a.factor)
            write_graph(Path(tmp) / "graph.npz", spec, a.seed)
            out = {"generator": "kgeval.scale.synth", "shape": a.shape, "factor": a.factor,
                   "entities": spec.num_entities, "train": spec.train,
                   "file_mb": (Path(tmp) / "graph.npz").stat().st_size / 2**20}
            if a.out:  # copied after the timing: the copy is not generation
                seconds = time.perf_counter() - t0
                shutil.copyfile(Path(tmp) / "graph.npz", a.out)
    out["seconds"] = seconds if seconds is not None else time.perf_counter() - t0
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
