"""The walk of one call (issue 50): the kgeval source files a call of :func:`kgeval.plan` passes through, how often
it climbs back up the layers and how often it returns to a file it had left, traced with ``sys.setprofile``.

    KGEVAL_MIRROR=... python benchmarks/call_walk.py [--results reference/default] [--against ComplEx] [--all]

The call is the one of docs/guide/sampling.md: a popularity run evaluated on FB-Test-S-C (P@10), planned against
ComplEx on the shipped reference pack. The walk follows the call's work, not its plumbing: by default calls into
the lowest layer (``errors``, ``arguments``, ``io``, …: argument checks and error classes every stage uses) and
into ``data`` (loading the graph and questions) are not steps of the walk (``--all`` counts them too). Counted:

* files: the distinct kgeval files the walk enters;
* climbs: moves (a call or a return) from a file of a lower layer to a file of a higher one (the layers of
  tests/test_layers.py, lowest first), the walk turning back up the house plan; ``upcalls`` counts the calls
  among them (a lower layer calling up, through a method or a callback);
* returns: arrivals (by a call or a return) in a file the walk had already left.

Target (issue 50): at most 10 files and 3 climbs back up. Prints one JSON line and the walk's files in order.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import kgeval

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from _common import heartbeat_main  # noqa: E402  (after the sys.path line above)
from test_integrations_ir import _popularity_run  # noqa: E402  the docs' popularity run, one definition
from test_layers import RANK  # noqa: E402  the house plan's layers, one definition

PKG = Path(kgeval.__file__).resolve().parent
PLUMBING = {"errors", "arguments", "io", "limits", "cells", "progress", "published", "workflow", "workflow_dag",
            "workflow_env", "docs_figures", "home", "data"}


def module_of(filename: str) -> str | None:
    """``kgeval.sampling.plan`` for a file of the imported kgeval package, else None."""
    try:
        rel = Path(filename).resolve().relative_to(PKG)
    except ValueError:
        return None
    parts = ["kgeval", *rel.with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def walk(call, count_all: bool = False) -> dict:
    """Runs ``call()`` under a profiler; the walk is the sequence of kgeval files its Python frames run in."""
    seq: list[tuple[str, str]] = []  # (event, module) each time the walk changes file
    modules: dict[object, str | None] = {}

    def step(module: str, event: str) -> None:
        if not seq or seq[-1][1] != module:
            seq.append((event, module))

    stack: list[str] = []

    def profile(frame, event, _arg):
        if event not in ("call", "return"):
            return
        code = frame.f_code
        if code not in modules:
            m = module_of(code.co_filename)
            modules[code] = m if m and (count_all or stage(m) not in PLUMBING) else None
        m = modules[code]
        if m is None:
            return
        if event == "call":
            stack.append(m)
            step(m, "call")
        else:
            stack.pop()
            if stack:
                step(stack[-1], "return")

    sys.setprofile(profile)
    try:
        out = call()
    finally:
        sys.setprofile(None)
    left: set[str] = set()
    climbs = upcalls = returns = 0
    for i, (event, m) in enumerate(seq):
        if i:
            prev = seq[i - 1][1]
            left.add(prev)
            if m in left:
                returns += 1
            if RANK.get(stage(m), -1) > RANK.get(stage(prev), -1):
                climbs += 1
                upcalls += event == "call"
    files = list(dict.fromkeys(m for _, m in seq))
    return {"files": len(files), "climbs": climbs, "upcalls": upcalls, "returns": returns, "walk": files,
            "result": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(ROOT / "reference" / "default"))
    ap.add_argument("--against", nargs="+", default=["ComplEx"])
    ap.add_argument("--all", action="store_true", help="count the lowest layer's and data's files too")
    args = ap.parse_args()
    from kgeval import evaluate, load_testset, plan

    sc = load_testset("FB-Test-S-C")
    res = evaluate(_popularity_run(sc), sc, measures=["P@10"], name="Popularity", bootstrap=20)
    plan(res, against=args.against, results=args.results)  # warm: imports and caches are not the walk
    found = walk(lambda: plan(res, against=args.against, results=args.results), args.all)
    budgets = found.pop("result").budgets
    print(json.dumps({"kgeval": str(PKG), "files": found["files"], "climbs": found["climbs"],
                      "upcalls": found["upcalls"], "returns": found["returns"], "budget": int(budgets["budget"].iloc[0]),
                      "counted": "all" if args.all else "without the lowest layer and data"}))
    print(" -> ".join(m.removeprefix("kgeval.") for m in found["walk"]))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
