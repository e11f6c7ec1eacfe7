"""The docs' walkthrough measured against a reference pack, into the pack's ``facts.json`` (issue 52 §5): a
popularity run on FB-Test-S-C (``kgeval baseline``) placed among the pack's systems (``kgeval evaluate``), once
against all and once ``--decide-against ComplEx``; :func:`kgeval.tables.facts.walkthrough_facts` reads the
numbers the pages quote (expected judgments, plan size, the run's MRR) from the two output folders.

    python benchmarks/docs_facts.py reference/default [--workdir FOLDER]

Run it after a new pack is committed (``pack_reference`` rewrites facts.json without the walkthrough), then
``pytest tests/test_docs_facts.py`` names every page whose number changed. Minutes on the 2-core machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import heartbeat_main

from kgeval.cli import main as cli
from kgeval.tables.facts import walkthrough_facts, write_facts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pack", type=Path, help="the reference pack folder (reference/default)")
    ap.add_argument("--opponent", default="ComplEx")
    a = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        runs, out, decided = (str(Path(tmp) / n) for n in ("runs", "eval", "decided"))
        common = ["--name", "Popularity", "--dataset", "FB15k-237", "--testsets", "FB-Test-S-C", "--reference",
                  str(a.pack), "--results", str(Path(tmp) / "none")]
        for argv in (["baseline", "popularity", "--out", runs, "--testsets", "FB-Test-S-C"],
                     ["evaluate", runs, *common, "--out", out],
                     ["evaluate", runs, *common, "--out", decided, "--decide-against", a.opponent]):
            print("kgeval", " ".join(argv), flush=True)
            if cli(argv) != 0:
                raise SystemExit(f"docs_facts: kgeval {argv[0]} failed")
        facts = write_facts(a.pack, walkthrough_facts(out, decided))
    print(f"{a.pack / 'facts.json'}: walkthrough {facts['walkthrough']} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    heartbeat_main(main, __file__)
