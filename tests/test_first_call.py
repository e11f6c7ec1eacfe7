"""``import kgeval; load_testset(...)`` imports what loading a test set needs and no more (issue 52 §3): no torch,
no scipy, no bounds or placement stack, so that a fresh process's first call is quick. Its time is measured by
benchmarks/first_call.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

HEAVY = ("torch", "scipy", "matplotlib", "kgeval.bounds", "kgeval.external.command", "kgeval.scores.ranking")


def test_load_testset_in_a_fresh_process_imports_no_torch(workdir):
    code = ("import sys, json, kgeval\n"
            "sc = kgeval.load_testset('Synth-Test-S-C', config='config/tiny.yaml')\n"
            f"print(json.dumps([len(sc.qrels)] + [m for m in {HEAVY!r} if m in sys.modules]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    n_qrels, *imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert n_qrels > 0
    assert imported == []
