"""How ``kgeval synth`` (the study's small generator) scales with its relations (issue 60, item 9:
``--relations 10000`` ran past 300 s): wall and CPU seconds per size in one run (CPU seconds for the ratios: on a
shared machine the wall clock measures the neighbours), the cost per relation against the smallest size's (a
linear generator stays near 1), and with ``--old REV`` the same sizes on the generator of a git
revision (its ``src`` exported to a temporary folder, run in a child process), with the ratio old / new and
whether the two wrote the same bytes.

    python benchmarks/synth_relations.py [--sizes 1000 3000 10000] [--old 31cac72]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import hashlib, json, sys, tempfile, time
from pathlib import Path
from kgeval.data.synth import SynthSpec, synthesize
with tempfile.TemporaryDirectory() as d:
    t, c = time.perf_counter(), time.process_time()
    synthesize(d, 0, SynthSpec(num_relations=int(sys.argv[1])))
    s, c = time.perf_counter() - t, time.process_time() - c
    h = hashlib.sha256()
    for f in sorted(Path(d).rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(d)).encode() + f.read_bytes())
print(json.dumps({"seconds": s, "cpu": c, "sha256": h.hexdigest()[:16]}))
"""


def run(src: Path, relations: int) -> dict:
    """One size in a fresh process (no memory or cache carried between sizes), with ``src`` on the path."""
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", CHILD, str(relations)], env=env, check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    ap.add_argument("--old", help="a git revision whose generator to time beside this one")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old_src = None
        if a.old:
            tar = subprocess.run(["git", "-C", str(ROOT), "archive", a.old, "src"], check=True, capture_output=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=tar.stdout, check=True)
            old_src = Path(tmp) / "src"
        base = None
        for n in a.sizes:
            new = run(ROOT / "src", n)
            row = {"relations": n, "seconds": round(new["seconds"], 2), "cpu_seconds": round(new["cpu"], 2),
                   "cpu_per_1000": round(1000 * new["cpu"] / n, 3)}
            base = base or row["cpu_per_1000"]
            row["per_relation_vs_smallest"] = round(row["cpu_per_1000"] / base, 2)
            if old_src is not None:
                old = run(old_src, n)
                row |= {"old_seconds": round(old["seconds"], 2), "old_cpu_seconds": round(old["cpu"], 2),
                        "old_over_new_cpu": round(old["cpu"] / new["cpu"], 2),
                        "same_bytes": old["sha256"] == new["sha256"]}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    from _common import heartbeat_main

    heartbeat_main(main, __file__)
