"""Issue 39, item 7: kgeval's own input errors inside a workflow job end in the one line the docs promise,
``kgeval: error: <file>:<line>: <problem>``, in the job's log and on Snakemake's stderr, with no traceback;
other failures keep their traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

SNAKEFILE = """\
rule bad:
    input:
        "bad.tsv",
    output:
        "out.txt",
    log:
        "logs/bad.log",
    script:
        "job.py"
"""

JOB = """\
from kgeval.data.tsv import read_triples
from kgeval.workflow import run_step

run_step(snakemake, read_triples, path=snakemake.input[0])
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def test_a_bad_line_in_a_workflow_job_is_one_line_in_the_log(tmp_path):
    """A real Snakemake job whose input has a bad line (d99e1f8: a full traceback and no ``kgeval: error:``)."""
    (tmp_path / "bad.tsv").write_text("a\tb\tc\nd\te\n")
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "job.py").write_text(JOB)
    snakemake = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run([str(snakemake), "--cores", "1", "--quiet"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)
    expected = "kgeval: error: bad.tsv:2: expected 3 tab-separated fields, found 2"
    assert proc.returncode != 0
    log = (tmp_path / "logs/bad.log").read_text()
    assert log.splitlines()[-1] == expected, log
    assert "Traceback" not in log
    assert expected in proc.stderr.splitlines() and "Traceback" not in proc.stderr, proc.stderr
    assert "returned non-zero exit status 2" in proc.stderr
    assert not (tmp_path / "out.txt").exists()


def test_other_failures_keep_their_traceback(tmp_path):
    """run_step with a fake ``snakemake`` object in a fresh interpreter: a bug (not bad input) is logged with its
    traceback and re-raised; bad input exits 2 with the line only."""
    code = """
import sys
from types import SimpleNamespace
from kgeval.errors import InputError
from kgeval.workflow import run_step

def bug():
    raise ZeroDivisionError("a bug")

def bad():
    raise InputError("runs/mine.run", 7, "expected 6 columns (q Q0 e rank score tag), found 5")

job = SimpleNamespace(log=[sys.argv[2]], rule="r", threads=None)
run_step(job, {"bug": bug, "bad": bad}[sys.argv[1]])
"""
    runs = {}
    for which in ("bug", "bad"):
        log = tmp_path / f"{which}.log"
        proc = subprocess.run([sys.executable, "-c", code, which, str(log)], env=_env(), capture_output=True,
                              text=True, timeout=120)
        runs[which] = (proc.returncode, log.read_text(), proc.stderr)
    rc, log, err = runs["bug"]
    assert rc == 1 and "Traceback" in log and "ZeroDivisionError: a bug" in log and "kgeval: error" not in log
    rc, log, err = runs["bad"]
    line = "kgeval: error: runs/mine.run:7: expected 6 columns (q Q0 e rank score tag), found 5"
    assert rc == 2 and log.splitlines()[-1] == line and err.splitlines()[-1] == line
    assert "Traceback" not in log + err


THREADS = """
import os, sys
from types import SimpleNamespace
if sys.argv[1] == "before":
    import torch
from kgeval.workflow import run_step

threads = int(sys.argv[2])
def step():
    return "torch" in sys.modules

imported = run_step(SimpleNamespace(log=[], rule="r", threads=threads), step)
import torch
print(imported, torch.get_num_threads())
"""


def test_a_job_gets_its_threads_without_importing_torch():
    """run_step gives torch the rule's threads whether torch was imported before the step (set directly) or is
    imported later (set right after its import), and does not import it itself (2-3 s of every job's start). The
    thread count asked for is one more than the CPUs, never torch's default."""
    threads = (os.cpu_count() or 1) + 1
    env = {k: v for k, v in _env().items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    seen = {}
    for when in ("before", "after"):
        proc = subprocess.run([sys.executable, "-c", THREADS, when, str(threads)], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        seen[when] = proc.stdout.split()
    assert seen == {"before": ["True", str(threads)], "after": ["False", str(threads)]}


def test_jobs_that_do_not_score_do_not_import_torch():
    """Importing torch is 2-3 s of a job's start on the CI machine: the steps of the tiny workflow's most frequent
    rules that only read dumps or copy a checkpoint (export_trec_run, select_model, the bounds and the pool
    stages) import none of it; the models' checkpoints do."""
    code = ("import sys\n"
            "from kgeval.pools.steps import export_trec_run_step\n"
            "from kgeval.training.steps import select_best\n"
            "from kgeval.bounds.steps import bounds_step\n"
            "from kgeval.workflow import run_step\n"
            "print('torch' in sys.modules)\n"
            "from kgeval.training.steps import fetch_libkge, train_seed\n"
            "import kgeval.models.checkpoint\n"
            "print('torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]


def test_the_workflow_parses_without_the_heavy_libraries():
    """Every Snakemake start (each CI dry run, each SLURM job step, each rerun) imports the kgeval modules that
    the Snakefile and workflow/rules import; reading PUBLISHED_NAMES from kgeval.analysis.reanalyze pulled in
    matplotlib and scipy.stats (1-2 s unloaded, 11-12 s on a loaded machine). None of them, nor torch or
    scikit-learn, may be imported at parse time."""
    import re

    files = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").rglob("*.smk"))]
    found = re.compile(r"^\s*(?:from|import) (kgeval[\w.]*)", re.M)
    modules = sorted({m for f in files for m in found.findall(f.read_text())})
    assert "kgeval.published" in modules and len(modules) >= 10, modules
    code = "".join(f"import {m}\n" for m in modules) + (
        "import sys\nprint(*[m for m in ('torch', 'matplotlib', 'scipy.stats', 'sklearn') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []
