"""A fresh process's first call (issue 52 §3): ``import kgeval; load_testset("FB-Test-S-C")`` on cached data,
target ≤ 2 s on the 2-core machine. The peer, measured in the same run, is a process that only imports numpy
and pandas (what reading the test set's files needs at least): the ratio says how much kgeval adds on top.

    python benchmarks/first_call.py (--workdir FOLDER | --cold) [--reps 5] [--testset FB-Test-S-C]

FOLDER is where load_testset finds the data (a workflow folder with resources/, or any folder with
KGEVAL_HOME set); they are built there first, untimed, when missing. ``--cold`` instead uses a new empty folder
and an empty KGEVAL_HOME in a temporary folder (the data from KGEVAL_MIRROR or the pinned URLs) and times that
first call: ``build_s``, a new user's first ``load_testset``, building the data included (the folder is removed
at the end). Prints the median wall time of ``--reps`` fresh processes each, the ten slowest imports of one call
(``python -X importtime``) and, last, one JSON line of the numbers (docs/dev/measured/first-day/ keeps the one the
docs quote).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from _common import head_commit, heartbeat_main

CALL = "import kgeval; kgeval.load_testset({testset!r})"
PEER = "import numpy, pandas"


def wall(code: str, cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - t0


def slowest_imports(code: str, cwd: str, n: int = 10) -> list[tuple[float, str]]:
    """The ``n`` imports with the largest cumulative time (seconds), from ``-X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=cwd, check=True,
                          capture_output=True, text=True)
    rows = [re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", line) for line in done.stderr.splitlines()]
    top = [(int(m[1]) / 1e6, m[3]) for m in rows if m and len(m[2]) <= 2]  # top-level and one below
    return sorted(top, reverse=True)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--workdir", default=".")
    where.add_argument("--cold", action="store_true", help="a new folder and an empty KGEVAL_HOME; times the build")
    ap.add_argument("--testset", default="FB-Test-S-C")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    call = CALL.format(testset=a.testset)
    if not a.cold:
        print(f"warming: {call} (builds the data once when missing)", file=sys.stderr, flush=True)
        measure(call, a.workdir, a.testset, a.reps, cold=False)
        return
    with tempfile.TemporaryDirectory(prefix="kgeval-first-") as workdir:  # the data built in it go with it
        os.environ["KGEVAL_HOME"] = os.path.join(workdir, "home")  # the children inherit it
        print(f"cold: {call} in {workdir}, building the data (a minute or two)", file=sys.stderr, flush=True)
        measure(call, workdir, a.testset, a.reps, cold=True)


def measure(call: str, workdir: str, testset: str, reps: int, cold: bool) -> None:
    """The first call (the build when ``cold``), then ``reps`` fresh processes of the call and the peer."""
    first = wall(call, workdir)
    calls, peers = [], []
    for i in range(reps):  # interleaved, so that a change of the machine's load hits both alike
        calls.append(wall(call, workdir))
        peers.append(wall(PEER, workdir))
        print(f"rep {i + 1}/{reps}: first call {calls[-1]:.2f} s, peer {peers[-1]:.2f} s", file=sys.stderr,
              flush=True)
    call_s, peer_s = statistics.median(calls), statistics.median(peers)
    print(f"first call (median of {reps}): {call_s:.2f} s (target <= 2 s); peer `{PEER}`: {peer_s:.2f} s; "
          f"ratio {call_s / peer_s:.2f}")
    slow = slowest_imports(call, workdir)
    for seconds, name in slow:
        print(f"  import {name}: {seconds:.2f} s")
    print(json.dumps({"commit": head_commit(), "testset": testset, "reps": reps, "build_s": first if cold else None,
                      "call_s": call_s, "peer_s": peer_s, "ratio": call_s / peer_s, "calls": calls,
                      "peers": peers, "slowest_imports": {name: seconds for seconds, name in slow}}))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
