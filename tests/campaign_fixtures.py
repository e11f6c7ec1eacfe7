"""A judging campaign on the real FB-Test-S-C for the browser test and benchmarks/campaign_load.py: the data stage's
files built from the mirror (:class:`kgeval.data.cache.DataBuilder`), a sampling plan from the reference pack's
lists (:func:`kgeval.sampling.reference.reference_plan`), and the ``kgeval campaign`` command line run as a
separate process (its server on a free loopback port)."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TOP10 = ROOT / "reference/default/runs/FB-Test-S-C/top10.parquet"
# the command line under test; KGEVAL_CAMPAIGN names another (an installed kgeval's, say)
CAMPAIGN = shlex.split(os.environ.get("KGEVAL_CAMPAIGN", "")) or [sys.executable, "-m", "kgeval.cli", "campaign"]


def fb_plan(resources: Path, out: Path, budget: int | None, **options) -> dict[str, Path]:
    """The plan's files (``sampling_plan.tsv``, ``sampling_plan.csv``, ``sampling_budgets.csv``) in ``out``."""
    from kgeval import home
    from kgeval.config import load_config_file, validate_config
    from kgeval.data.cache import DataBuilder
    from kgeval.sampling.reference import reference_plan

    cfg = validate_config(home.locate_defaults(load_config_file(ROOT / "config/config.yaml")),
                          ROOT / "config/schema.yaml", models=False)
    files = DataBuilder(cfg, ROOT / cfg["manifest"], resources).build_testset("FB-Test-S-C")
    return reference_plan(files["kg"], files["tsv"], files["questions"], TOP10, ROOT / "annotations/templates.tsv",
                          out, budget=budget, testset="FB-Test-S-C", **options)


def cli(*args, timeout: float = 600) -> str:
    """``kgeval campaign ARGS``' standard output; a failure raises with its standard error."""
    done = subprocess.run([*CAMPAIGN, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"kgeval campaign {' '.join(map(str, args))}: exit {done.returncode}: "
                           f"{done.stderr.strip()[-2000:]}")
    return done.stdout


def plan_comparisons(resources: Path, plan: dict[str, Path], out: Path) -> Path:
    """The plan's live comparisons (``kgeval campaign create --comparisons``: a, b, metric, base, lo, hi, item,
    c1, c0) from the reference pack's lists, the terms ``create --scores`` computes from score dumps."""
    import numpy as np
    import pandas as pd

    from kgeval.campaign.comparisons import universe_comparisons
    from kgeval.campaign.sheet import read_items
    from kgeval.data.kg import KnowledgeGraph
    from kgeval.data.testsets import TestSet
    from kgeval.sampling.estimates import read_plan_items
    from kgeval.sampling.reference import reference_universe

    kg = KnowledgeGraph.load(resources / "datasets/FB15k-237/kg.npz")
    u = reference_universe(kg, TestSet.load(resources / "testsets/FB-Test-S-C.tsv", kg),
                           resources / "testsets/FB-Test-S-C.questions.tsv", TOP10)
    items = read_items(plan["sampling_plan.tsv"], plan["sampling_plan.csv"])
    comps, c1, c0 = universe_comparisons(u, kg, read_plan_items(plan["sampling_plan.csv"]),
                                         str(plan["sampling_plan.csv"]), pd.read_csv(plan["sampling_budgets.csv"]),
                                         str(plan["sampling_budgets.csv"]), items)
    j, i = np.nonzero(c1 != c0)
    frame = pd.DataFrame([comps[x] for x in j]).assign(item=[items[x]["sheet_item"] for x in i], c1=c1[j, i],
                                                        c0=c0[j, i])
    frame[["a", "b", "metric", "base", "lo", "hi", "item", "c1", "c0"]].to_csv(out, index=False)
    return out


def create(db: Path, plan: dict[str, Path], comparisons: Path | None = None, kg: Path | None = None) -> None:
    """``kgeval campaign create``; with ``kg`` (the dataset's kg.npz) the items get their evidence."""
    extra = ["--comparisons", comparisons] if comparisons is not None else []
    extra += ["--kg", kg] if kg is not None else []
    cli("create", db, "--sheet", plan["sampling_plan.tsv"], "--plan-items", plan["sampling_plan.csv"], *extra)


def add_person(db: Path, name: str, role: str, base: str) -> str:
    """The person's token (the last part of the link ``add-person`` prints)."""
    link = cli("add-person", db, name, "--role", role, "--base-url", base).strip().splitlines()[-1]
    prefix = f"{base}/{'live' if role == 'curator' else 'j'}/"
    if not link.startswith(prefix):
        raise RuntimeError(f"add-person printed {link!r}, expected {prefix}TOKEN")
    return link[len(prefix):]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``kgeval campaign serve DB`` on 127.0.0.1:port, its output in ``log``; ``kill()`` is ``kill -9``."""

    def __init__(self, db: Path, port: int, log: Path, probe_token: str, ready_s: float = 60.0):
        self.db, self.port, self.log, self.base = db, port, log, f"http://127.0.0.1:{port}"
        self.probe_token, self.ready_s = probe_token, ready_s
        self.proc: subprocess.Popen | None = None

    def start(self) -> float:
        """Start it and wait until it answers; returns the seconds that took."""
        t0 = time.perf_counter()
        with open(self.log, "ab") as fh:
            self.proc = subprocess.Popen([*CAMPAIGN, "serve", str(self.db), "--host", "127.0.0.1", "--port",
                                          str(self.port)], stdout=fh, stderr=subprocess.STDOUT)
        while time.perf_counter() - t0 < self.ready_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base}/api/{self.probe_token}/session", timeout=2).status_code == 200:
                    return time.perf_counter() - t0
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"serve did not answer within {self.ready_s:.0f} s: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
