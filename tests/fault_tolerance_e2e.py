"""End-to-end fault tolerance of the workflow (issue 9), run by tests/check.sh (not by pytest: minutes).

1. A reference run of the tiny configuration up to the metric tables with ``--cores 1``.
2. A second copy run with ``--cores 2`` that is killed (SIGKILL of the whole process group) while a model is
   training — once its work checkpoint exists — and killed again while a score dump is being written; each
   time the workflow is rerun (``--unlock``, then ``--rerun-incomplete``). Training must resume from its
   checkpoint (the log says so) and only incomplete outputs may be recomputed.
3. Every table of the two runs must be byte-identical: interrupted equals uninterrupted, and ``--cores 2``
   equals ``--cores 1`` (every torch rule runs one thread, every random step is seeded).

    python tests/fault_tolerance_e2e.py [--python .venv/bin/python] [--reference DIR] [--keep]

With ``--reference DIR`` (a checkout where the tiny workflow already ran to completion with ``--cores 2``, as
tests/check.sh does) the reference run is skipped and the interrupted run uses ``--cores 1`` instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ["results/metrics/Synth-Test-O/evaluation.csv", "results/metrics/Synth2/evaluation.csv",
           "results/metrics/Synth-Test-S-C/pooling_depth.csv"]
PAUSE_ENV = "KGEVAL_PAUSE_AT"  # read by kgeval.io.pause_point in the workflow's jobs
HOLD = 120  # seconds a paused step waits; the poll below kills it within a fraction of a second
SKIP_DIRS = {".git", ".venv", "results", "resources", "logs", ".snakemake", "__pycache__", ".pytest_cache",
             ".ruff_cache", "benchmarks/out"}


def copy_repo(dest: Path) -> None:
    def ignore(folder, names):
        rel = Path(folder).relative_to(ROOT)
        return [n for n in names if str(rel / n).lstrip("./") in SKIP_DIRS or n in SKIP_DIRS]

    shutil.copytree(ROOT, dest, ignore=ignore)


def snakemake(python: str, cwd: Path, cores: int, *extra: str, pause: str = "", stdout=subprocess.PIPE
              ) -> subprocess.Popen:
    cmd = [python, "-m", "snakemake", "--cores", str(cores), "--configfile", "config/tiny.yaml",
           "--replace-workflow-config", "--quiet", "rules", *extra, "--", *TARGETS]
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    if pause:
        env[PAUSE_ENV] = pause
    return subprocess.Popen(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env=env)


def run(python: str, cwd: Path, cores: int, *extra: str, timeout: float = 1800) -> str:
    p = snakemake(python, cwd, cores, *extra)
    out, _ = p.communicate(timeout=timeout)
    if p.returncode != 0:
        raise SystemExit(f"snakemake failed in {cwd}:\n{out[-4000:]}")
    return out


def kill_when(python: str, cwd: Path, condition, what: str, cores: int, pause: str,
              timeout: float = 1200) -> None:
    """Run the workflow with ``pause`` (see ``kgeval.io.pause_point``) and SIGKILL it once ``condition`` holds.

    The pause holds the step at the point where its output is partial; without it the dump's window between its
    first file and meta.json lasts milliseconds on the tiny graph and a poll misses it on a fast machine.
    """
    # the output goes to a file, not a pipe: nobody reads a pipe while this polls, and once its 64 KiB buffer is
    # full every job that logs to the terminal blocks in write() (seen: a training stuck for 20 minutes)
    with open(cwd.parent / f"{cwd.name}-{pause.split('=')[0]}.out", "w") as sink:
        _kill_when(snakemake(python, cwd, cores, pause=pause, stdout=sink), cwd, condition, what, timeout)


def _kill_when(p: subprocess.Popen, cwd: Path, condition, what: str, timeout: float) -> None:
    start = time.time()
    while p.poll() is None and time.time() - start < timeout:
        if condition(cwd):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            print(f"  killed the workflow {what} after {time.time() - start:.0f} s")
            return
        time.sleep(0.2)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        raise SystemExit(f"the workflow was not yet {what} after {timeout:.0f} s: killed without the condition")
    raise SystemExit(f"the workflow ended before it could be killed {what}: the condition never held")


def training_checkpoint(cwd: Path) -> bool:
    return any((cwd / "resources/checkpoints").rglob("*.partial.pt")) if (cwd / "resources/checkpoints").exists() \
        else False


def partial_dump(cwd: Path) -> bool:
    scores = cwd / "results/scores"
    if not scores.exists():
        return False
    return any(d.is_dir() and any(d.iterdir()) and not (d / "meta.json").exists() for d in scores.glob("*/*"))


def tables(cwd: Path) -> dict[str, bytes]:
    out = {}
    for pattern in ("results/metrics/**/*.csv", "results/pools/**/*.tsv", "results/pools/**/*.csv"):
        for p in sorted(cwd.glob(pattern)):
            out[str(p.relative_to(cwd))] = p.read_bytes()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--keep", action="store_true", help="keep the working copies")
    ap.add_argument("--reference", default=None, help="a completed --cores 2 run to compare with")
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="kgeval-fault-"))
    victim = base / "interrupted"
    copy_repo(victim)
    if a.reference:
        ref, cores, ref_cores = Path(a.reference).resolve(), 1, 2
    else:
        ref, cores, ref_cores = base / "reference", 2, 1
        copy_repo(ref)
        t0 = time.time()
        print("reference run (--cores 1) ...")
        run(a.python, ref, 1)
        print(f"  done in {time.time() - t0:.0f} s")

    print(f"interrupted run (--cores {cores}): kill during training ...")
    kill_when(a.python, victim, training_checkpoint, "while a model was training", cores,
              f"train_after_checkpoint={HOLD}")
    run(a.python, victim, 1, "--unlock")
    print("  kill during a score dump ...")
    kill_when(a.python, victim, partial_dump, "while a score dump was being written", cores,
              f"dump_before_meta={HOLD}")
    run(a.python, victim, 1, "--unlock")
    print("  rerun to completion ...")
    out = run(a.python, victim, cores, "--rerun-incomplete")
    resumed = [log for log in (victim / "logs/train_model").rglob("*.log") if "resumed" in log.read_text()]
    if not resumed:
        raise SystemExit("no training log says it resumed from its work checkpoint")
    print(f"  {len(resumed)} training job(s) resumed from their checkpoint, e.g. {resumed[0].relative_to(victim)}")
    if "Nothing to be done" in out:
        raise SystemExit("the rerun did nothing: the interrupted jobs were not recomputed")

    a_tables, b_tables = tables(ref), tables(victim)
    # a reference checkout ran the whole workflow, so it may hold more tables; a reference run of our own
    # targets must hold exactly the same ones
    missing = sorted(set(b_tables) - set(a_tables)) if a.reference else sorted(set(a_tables) ^ set(b_tables))
    if missing:
        raise SystemExit(f"tables not in both runs: {missing[:5]}")
    differ = [k for k in b_tables if a_tables[k] != b_tables[k]]
    if differ:
        raise SystemExit(f"{len(differ)} tables differ between the runs, e.g. {differ[:5]}")
    if len(b_tables) < 5:
        raise SystemExit(f"only {len(b_tables)} tables compared")
    print(f"OK: {len(b_tables)} tables byte-identical (interrupted --cores {cores} vs uninterrupted --cores "
          f"{ref_cores})")
    if not a.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
