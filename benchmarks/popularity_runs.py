"""Time of ``kgeval baseline popularity`` (:func:`kgeval.baseline`): the popularity baseline written as TREC run
files, with the data built first where they are missing. The baseline itself is packaged
(:mod:`kgeval.external.baselines`); this script only measures it.

    python benchmarks/popularity_runs.py --out runs --testsets FB-Test-O,FB-Test-S,FB-Test-S-C --depth 100

prints one line per test set (lines written) and the wall time, split into the data build and the writing.
"""

from __future__ import annotations

import argparse
import time

from _common import heartbeat_main

from kgeval.errors import KgevalError, one_line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default=".", help="folder to work in (default: here)")
    ap.add_argument("--config", default=None)
    ap.add_argument("--dataset", default="FB15k-237")
    ap.add_argument("--testsets", default="FB-Test-O,FB-Test-S,FB-Test-S-C")
    ap.add_argument("--out", required=True, help="folder for <test set>.run.gz")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--kind", default="popularity", choices=("popularity", "frequency"))
    a = ap.parse_args()
    from kgeval import baseline, load_testset
    from kgeval.workflow import setup_logging

    setup_logging()  # the build's and the writing's progress lines on stderr
    names = a.testsets.split(",")
    try:
        t0 = time.perf_counter()
        for name in names:  # the data build, timed apart from the writing
            load_testset(name, workdir=a.workdir, config=a.config)
        t1 = time.perf_counter()
        written = baseline(a.kind, a.out, names, a.dataset, a.depth, workdir=a.workdir, config=a.config)
        t2 = time.perf_counter()
    except KgevalError as exc:
        raise SystemExit(f"popularity_runs: error: {one_line(exc)}") from None
    for name, path in written.items():
        print(f"{path}: {name}")
    print(f"data (build or load) {t1 - t0:.1f} s, {a.kind} runs {t2 - t1:.1f} s, total {t2 - t0:.1f} s")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
