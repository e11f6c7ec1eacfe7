"""The walk of one call (issue 50): :func:`kgeval.plan` on the docs' popularity run, traced by
benchmarks/call_walk.py. Its files and climbs back up the layers are the measure of the judgment stages' one home;
these are the values of this round (27 files and 26 climbs before it), so a change that sends the call back
down and up again more often fails here. Counted without the lowest layer and ``data``, as the script does."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import needs_mirror

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import call_walk  # noqa: E402  (after the sys.path line above)

# 25: the default prior is the boosted one since issue 62, its modules (judgments.prior_models, graph_features) walked too
FILES, CLIMBS = 25, 13


@needs_mirror
def test_plan_walk_keeps_its_files_and_climbs():
    from kgeval import evaluate, load_testset, plan

    sc = load_testset("FB-Test-S-C")
    res = evaluate(call_walk._popularity_run(sc), sc, measures=["P@10"], name="Popularity", bootstrap=20)
    ref = call_walk.ROOT / "reference" / "default"
    plan(res, against=["ComplEx"], results=ref)  # warm: imports and caches are not the walk
    found = call_walk.walk(lambda: plan(res, against=["ComplEx"], results=ref))
    assert found["upcalls"] == 0  # no lower layer calls up
    assert found["files"] <= FILES and found["climbs"] <= CLIMBS, found["walk"]
    assert found["walk"][0] == "kgeval.api.sampling" and "kgeval.judgments.universe" in found["walk"]
