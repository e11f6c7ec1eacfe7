"""The reproduce sub-command: is a rerun bit-identical to a reference pack or another run, and if not, what
differs and why (kgeval.reproduce)."""

from __future__ import annotations

import argparse

from .options import command


# ---- reproduce (kgeval.reproduce.compare) ----------------------------------------------------------------------
@command("reproduce", "compare a results folder with a reference pack or another results folder, bit for bit: "
                      "one line first (bit-identical, or how many artifacts differ, the largest micro MRR change "
                      "and the verdicts that changed), then the headline metrics per model and test set side by "
                      "side, each claim's verdict side by side and the environment differences that may explain "
                      "them (from both sides' manifest.json). The exit status is 0 only when everything both sides "
                      "hold is bit-identical, 1 when something differs. Nothing is written.",
         "kgeval reproduce results --against reference/smoke")
def _reproduce(p: argparse.ArgumentParser):
    p.add_argument("results", metavar="RESULTS", help="a results folder (results/, or the workflow folder holding "
                   "it) or a reference pack")
    p.add_argument("--against", required=True, metavar="PACK_OR_RESULTS",
                   help="the reference pack (reference/smoke, reference/default) or results folder to compare with")
    p.add_argument("--testsets", metavar="NAMES", default=None,
                   help="compare only these test sets (comma-separated): both sides must hold each; the other test "
                        "sets of either side are left out, not counted as a difference (default: all of both)")

    def run(a):
        from ..reproduce.compare import reproduce
        from ..reproduce.report import render

        names = None if a.testsets is None else [t.strip() for t in a.testsets.split(",") if t.strip()]
        comparison = reproduce(a.results, a.against, testsets=names)
        print(render(comparison), end="")
        return 0 if comparison.identical else 1

    return run
