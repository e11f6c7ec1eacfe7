"""Helpers shared by the benchmark scripts: the FB15k-237 graph, worker processes, peak memory."""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

# ALLOCATOR: the workflow jobs' allocator settings (the benchmark scripts import it from here)
from kgeval.workflow_env import ALLOCATOR

ROOT = Path(__file__).resolve().parents[1]


def fb15k237():
    """The FB15k-237 knowledge graph: the pipeline's own file if it exists, else built from the mirror."""
    from kgeval.data.kg import KnowledgeGraph, build_kg

    built = ROOT / "resources/datasets/FB15k-237/kg.npz"
    if built.is_file():
        return KnowledgeGraph.load(built)
    from kgeval.data.archive import safe_extract
    from kgeval.data.download import resolve_mirror

    mirror = resolve_mirror(None) or ROOT.parent / "shared" / "data"
    archive = Path(mirror) / "TimDettmers/ConvE/FB15k-237.tar.gz"
    if not archive.is_file():
        sys.exit("FB15k-237 not found: run `snakemake --cores all resources/datasets/FB15k-237/kg.npz` or set "
                 "KGEVAL_MIRROR")
    tmp = Path(tempfile.mkdtemp())
    safe_extract(archive, tmp)
    return build_kg("FB15k-237", tmp / "train.txt", tmp / "valid.txt", tmp / "test.txt")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def reset_peak_rss() -> bool:
    """Hand freed heap back (glibc's malloc_trim: ALLOCATOR's thresholds otherwise keep it resident) and reset
    the process's high-water mark (Linux: ``5`` into /proc/self/clear_refs), so that :func:`peak_rss_since_mb`
    measures one step's peak, not the set-up's before it. False where either is unavailable."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_since_mb() -> float:
    """VmHWM (KB in /proc/self/status) in MB: the peak resident set since :func:`reset_peak_rss`."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def run_worker(script: str, args: list[str], timeout: float = 3600, allocator: bool = True) -> dict:
    """Run ``script --worker ...`` in a fresh process and return the JSON it prints last. ``allocator``: with the
    glibc settings of ALLOCATOR (the pipeline's), else with glibc's defaults."""
    env = {**os.environ, **ALLOCATOR} if allocator else {k: v for k, v in os.environ.items() if k not in ALLOCATOR}
    proc = subprocess.run([sys.executable, script, "--worker", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def emit(result: dict) -> None:
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    print(json.dumps(result))


def head_commit() -> str:
    """The checkout's short commit, for the numbers a benchmark prints."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def print_checks(checks: list[tuple[str, str, str, bool]]) -> None:
    """One Markdown table of (check, measured, target, met) rows."""
    width = max(len(c[0]) for c in checks)
    print(f"| {'check':<{width}} | measured | target | met |")
    for name, measured, target, met in checks:
        print(f"| {name:<{width}} | {measured} | {target} | {'yes' if met else 'NO'} |")


#: an annotation sheet's columns (kgeval.pools.annotation's export), for the probes' small hand-made sheets
SHEET_HEADER = ["batch", "item", "head_id", "relation", "tail_id", "head_name", "tail_name", "question", "label",
                "source_link", "note"]


def write_sheet(path, n: int = 4):
    """A sheet of ``n`` made-up film-genre items (the probes' campaigns), written as the export writes it."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(SHEET_HEADER)
        for i in range(1, n + 1):
            w.writerow(["b1", str(i), f"/m/0h{i}", "/film/film/genre", f"/m/0t{i}", f"Head {i}", f"Tail {i}",
                        f"Is Tail {i} a genre of Head {i}?", "", "", ""])
    return path


def heartbeat_main(main, script: str):
    """``main()`` with kgeval's log lines on stderr and a line every 30 s of silence (kgeval.progress.Heartbeat):
    a benchmark of minutes printed nothing until its result (issue 52: sampling.py, 7 minutes). A kgeval error
    (missing data, a bad argument) ends the script with its one line, as the CLI does, not a traceback."""
    from kgeval.errors import KgevalError
    from kgeval.progress import Heartbeat
    from kgeval.workflow import setup_logging

    if not logging.getLogger().handlers:
        setup_logging()
    try:
        with Heartbeat(f"benchmarks/{Path(script).name}"):
            return main()
    except KgevalError as e:
        raise SystemExit(f"benchmarks/{Path(script).name}: {e}") from None
