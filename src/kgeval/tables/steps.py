"""Summary tables of a run: model quality against the published MRRs, where the run's time went, and the
findings table (claim by claim, paper against ours)."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io import atomic_open, read_json, to_markdown, write_csv
from ..published import SOURCES, published_mrr

log = logging.getLogger(__name__)

QUALITY_COLUMNS = ["dataset", "model", "epochs", "train_seconds", "valid_mrr", "test_mrr", "published_mrr", "ratio"]
RUN_TIME_COLUMNS = ["stage", "rule", "jobs", "seconds", "vs_wall"]
OWN = " (this run)"  # marks the projection at the core count the measured run used


# ---- benchmark files ----------------------------------------------------------------------------------------
def read_benchmark(path: str | Path) -> float:
    """Wall seconds of one Snakemake benchmark file (column ``s``; summed over repeats)."""
    try:
        df = pd.read_csv(path, sep="\t")
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise InputError(path, None, f"not a Snakemake benchmark file ({exc})") from None
    if "s" not in df.columns or df.empty:
        raise InputError(path, 1, "not a Snakemake benchmark file: no column 's' or no row")
    return float(pd.to_numeric(df["s"], errors="raise").sum())


# ---- model quality ------------------------------------------------------------------------------------------
def model_quality_table(models: dict[str, dict[str, dict[str, Any]]],
                        evaluations: dict[str, str | None]) -> pd.DataFrame:
    """One row per (dataset, model).

    ``models[dataset][model]``: ``info`` (the selected model's JSON sidecar: ``epochs``, ``valid_mrr``) and
    ``benchmarks`` (the train_model benchmark files of all its seeds; their summed wall time is the cost of
    the model, validation included; none for downloaded models). ``evaluations[dataset]``: the evaluation.csv
    of the dataset's full test set, whose ``micro_mrr`` is the test MRR (None: no full test set).
    """
    rows = []
    for dataset, per_model in models.items():
        ev = None
        if evaluations.get(dataset):
            ev = pd.read_csv(evaluations[dataset])
            if "System" not in ev.columns or "micro_mrr" not in ev.columns:
                raise InputError(evaluations[dataset], 1, "needs the columns System and micro_mrr")
            ev = ev.set_index("System")["micro_mrr"]
        for model, files in per_model.items():
            info = read_json(files["info"])
            bench = files.get("benchmarks") or []
            train_s = sum(read_benchmark(b) for b in bench) if bench else math.nan
            if ev is not None and model not in ev.index:
                raise InputError(evaluations[dataset], None, f"no row for system {model!r}")
            test = float(ev[model]) if ev is not None else math.nan
            pub = published_mrr(dataset, model)
            rows.append({"dataset": dataset, "model": model,
                         "epochs": info.get("epochs"), "train_seconds": train_s,
                         "valid_mrr": info.get("valid_mrr", math.nan), "test_mrr": test,
                         "published_mrr": pub if pub is not None else math.nan,
                         "ratio": test / pub if pub else math.nan})
    df = pd.DataFrame(rows, columns=QUALITY_COLUMNS)
    df["epochs"] = df["epochs"].astype("Int64")
    return df


def model_quality_step(models: dict[str, dict[str, dict[str, Any]]], evaluations: dict[str, str | None],
                       out_csv: str, out_md: str) -> pd.DataFrame:
    df = model_quality_table(models, evaluations)
    write_csv(df, out_csv)
    with atomic_open(out_md) as fh:
        fh.write(model_table_markdown(df))
    log.info("model quality:\n%s", df.to_string())
    return df


def model_table_markdown(df: pd.DataFrame) -> str:
    """The README's model table from model_quality.csv: one row per model; the first dataset with epochs,
    validation and test MRR, published MRR, share and training seconds, every further dataset with its
    epochs, test MRR, published MRR, share and training seconds. Sources of the published values follow."""
    datasets = list(dict.fromkeys(df["dataset"]))
    models = list(dict.fromkeys(df["model"]))
    wide = pd.DataFrame({"model": models})
    for i, d in enumerate(datasets):
        sub = df[df["dataset"] == d].set_index("model").reindex(models)
        p = "" if i == 0 else f"{d} "
        wide[f"{p}epochs"] = [str(v) if pd.notna(v) else "–" for v in sub["epochs"]]
        if i == 0:
            wide["valid MRR"] = sub["valid_mrr"].to_numpy(float)
        wide[f"{p}test MRR"] = sub["test_mrr"].to_numpy(float)
        wide[f"{p}published test MRR"] = sub["published_mrr"].to_numpy(float)
        wide[f"{p}share of published"] = [f"{r:.0%}" if pd.notna(r) else "–" for r in sub["ratio"]]
        wide[f"{p}training s"] = [f"{s:.0f}" if pd.notna(s) else "–" for s in sub["train_seconds"]]
    if datasets:
        wide = wide.rename(columns={"epochs": f"{datasets[0]} epochs", "test MRR": f"{datasets[0]} test MRR"})
    notes = [f"Published MRRs, {d}: {SOURCES[d]}." for d in datasets if d in SOURCES]
    return to_markdown(wide, 3) + ("\n" + "\n".join(notes) + "\n" if notes else "")


# ---- run times ----------------------------------------------------------------------------------------------
def benchmark_rule(path: Path, root: Path) -> str:
    """The rule a benchmark file belongs to: the first component of its path under the benchmark folder
    (``logs/benchmarks/<rule>/...`` or ``logs/benchmarks/<rule>.tsv``; a workflow test checks every rule's
    benchmark follows this)."""
    parts = path.relative_to(root).parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def run_times_table(benchmark_dir: str | Path, stages: dict[str, str],
                    graph: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Summed wall time per rule of every benchmark file under ``benchmark_dir``, two ``total`` rows, and, given
    the job ``graph``, the ``projection`` rows.

    ``stages``: rule → the .smk file it lives in. A file of a rule that is not in the workflow (left by a
    renamed rule) is skipped with a warning. Rule ``jobs``: all jobs' summed time. Rule ``wall``: the run's
    wall-clock time, from the first job's start to the last job's end: Snakemake writes a benchmark file when
    its job ends, so a job ends at the file's mtime and starts ``s`` seconds earlier. The span covers every
    invocation that wrote the files (idle gaps between them included) and ignores jobs without a benchmark.

    ``graph`` (see :mod:`kgeval.tables.projection`): only the benchmark files of its jobs count (not those an
    earlier run of another configuration left in the folder); rows ``N cores`` with the wall time a run from empty would
    take on N cores (1, 2, 4, 8, 16, 32 and the run's own count, the most jobs its benchmark files show running
    at once) by list scheduling of the graph with the measured job times, and ``critical path`` (unlimited
    cores); ``jobs`` = the graph's jobs, ``vs_wall`` = projected / measured wall; and a third ``total`` row,
    ``core-seconds``: each job's seconds times its threads in the graph.
    """
    from .projection import PROJECTED_CORES, project_wall_times

    root = Path(benchmark_dir)
    base = os.path.abspath(root)
    # the graph names jobs by their benchmark path relative to the working directory
    named = [{**g, "benchmark": os.path.relpath(os.path.abspath(g["benchmark"]), base),
              "after": [os.path.relpath(os.path.abspath(a), base) for a in g.get("after", [])]} for g in graph or []]
    # with the graph, only this run's jobs count: a folder that ran another configuration before (the smoke run
    # after the tiny one) holds their benchmark files too, which made its run_times count them (issue 52)
    ours = {g["benchmark"] for g in named} if graph else None
    rows, starts, ends, measured, others = [], [], [], {}, 0
    for path in sorted(root.rglob("*.tsv")):
        rule = benchmark_rule(path, root)
        if rule not in stages:
            log.warning("%s: rule %r is not in the workflow; skipped", path, rule)
            continue
        if ours is not None and path.relative_to(root).as_posix() not in ours:
            others += 1
            continue
        seconds = read_benchmark(path)
        end = path.stat().st_mtime
        rows.append({"stage": stages[rule], "rule": rule, "seconds": seconds})
        measured[path.relative_to(root).as_posix()] = seconds
        starts.append(end - seconds)
        ends.append(end)
    if others:
        log.info("%d benchmark file(s) of jobs outside this run's graph left out (an earlier run's)", others)
    if not rows:
        raise InputError(root, None, "no benchmark file found")
    jobs = pd.DataFrame(rows)
    table = (jobs.groupby(["stage", "rule"], sort=True)["seconds"].agg(["count", "sum"]).reset_index()
             .rename(columns={"count": "jobs", "sum": "seconds"}))
    wall = float(np.max(ends) - np.min(starts))
    totals = [{"stage": "total", "rule": "jobs", "jobs": len(jobs), "seconds": jobs["seconds"].sum()},
              {"stage": "total", "rule": "wall", "jobs": len(jobs), "seconds": wall}]
    projection = []
    if graph:
        own = max_concurrent(starts, ends)
        walls, path_s, _ = project_wall_times(named, measured, sorted(set(PROJECTED_CORES) | {own}))
        proj = [{"stage": "projection", "rule": f"{c} core" + ("s" if c > 1 else "") + (OWN if c == own else ""),
                 "jobs": len(graph), "seconds": s} for c, s in walls.items()]
        proj.append({"stage": "projection", "rule": "critical path", "jobs": len(graph), "seconds": path_s})
        # a job of t threads kept t cores busy: the summed time a target in core-minutes compares with
        threads = {g["benchmark"]: int(g.get("threads", 1)) for g in named}
        core_s = sum(s * threads.get(b, 1) for b, s in measured.items())
        totals.append({"stage": "total", "rule": "core-seconds", "jobs": len(jobs), "seconds": core_s})
        proj_df = pd.DataFrame(proj)
        proj_df["vs_wall"] = proj_df["seconds"] / wall if wall > 0 else math.nan
        projection.append(proj_df)
    df = pd.concat([table, pd.DataFrame(totals), *projection], ignore_index=True)
    if "vs_wall" not in df.columns:
        df["vs_wall"] = math.nan
    return df[RUN_TIME_COLUMNS]


def max_concurrent(starts: list[float], ends: list[float]) -> int:
    """The most intervals [start, end) open at once: the cores a run of one-thread jobs kept busy."""
    events = sorted([(e, -1) for e in ends] + [(s, 1) for s in starts])  # an end before a start at one instant
    return int(np.max(np.cumsum([d for _, d in events]))) if events else 0


def run_times_step(benchmark_dir: str, stages: dict[str, str], out_csv: str, out_md: str,
                   graph: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    df = run_times_table(benchmark_dir, stages, graph)
    df["seconds"] = df["seconds"].round(1)
    df["vs_wall"] = df["vs_wall"].round(3)
    write_csv(df, out_csv)
    with atomic_open(out_md) as fh:
        fh.write("Where the run's time went: summed wall time of each rule's jobs (from their benchmark files), "
                 "all jobs together, and the run's wall-clock span; then the wall time the run's job graph would "
                 "take on N cores by list scheduling with these job times (`vs_wall`: projected / measured).\n\n")
        fh.write(to_markdown(df, 2))
        check = projection_check(df)
        if check:
            fh.write("\n" + check + "\n")
    log.info("run times:\n%s", df.to_string())
    return df


def projection_check(df: pd.DataFrame) -> str:
    """One sentence comparing the projection at the run's own core count with the measured wall time."""
    row = df[(df["stage"] == "projection") & df["rule"].str.endswith(OWN)]
    wall = df[(df["stage"] == "total") & (df["rule"] == "wall")]["seconds"]
    if row.empty or wall.empty:
        return ""
    p, measured = float(row["seconds"].iloc[0]), float(wall.iloc[0])
    label = row["rule"].iloc[0].removesuffix(OWN)
    return (f"Projection at the run's {label} (the most jobs that ran at once): {p:.0f} s against a measured wall "
            f"time of {measured:.0f} s, error {p - measured:+.0f} s ({p / measured - 1:+.1%}).")


# ---- findings -----------------------------------------------------------------------------------------------
FINDINGS_TABLES = ("figure2_kl", "figure4", "figure5", "table4", "figure6", "figure7", "figure8", "kp_correlations",
                   "kp_timing", "kp_early_stopping", "kp_values", "kp_model_range", "kp_sample_size", "bounds_tau",
                   "bounds_counts", "hoyt_size_trend", "sampling_budgets", "claim_taus")


def findings_step(names: dict[str, str], evaluations: dict[str, str], tables: dict[str, str | None], out_csv: str,
                  out_md: str) -> pd.DataFrame:
    """The findings table from the analysis outputs. ``names``: study role → test set; ``evaluations``: test
    set → evaluation.csv; ``tables``: the outputs named in FINDINGS_TABLES (None or absent: not in this run)."""
    from ..analysis.findings import Outputs, findings

    unknown = sorted(set(tables) - set(FINDINGS_TABLES))
    if unknown:
        raise ValueError(f"findings_step: unknown table(s) {unknown}")
    outputs = Outputs(names={k: v for k, v in names.items() if v},
                      evaluation={name: pd.read_csv(path) for name, path in evaluations.items()},
                      **{k: pd.read_csv(v) for k, v in tables.items() if v})
    df = findings(outputs)
    write_csv(df, out_csv)
    with atomic_open(out_md) as fh:
        fh.write("The paper's findings against this run: each claim with the paper's value, ours, and whether it "
                 "holds, decided by the rule listed below the table on the 95 % intervals of its statistics: yes "
                 "or no only where every interval lies on one side of its threshold, undecided where one holds a "
                 "threshold and the verdict depends on it (`point`: the verdict of the point values; "
                 "kgeval.analysis.findings, kgeval.analysis.verdicts).\n\n")
        fh.write(to_markdown(df[["claim", "paper", "ours", "holds", "point"]], 4))
        fh.write("\nIntervals (95 %, of the τ between the systems' population means: "
                 "kgeval.analysis.resampling.order_interval) against the rules' thresholds:\n\n")
        for claim, interval, open_text in zip(df["claim"], df["interval"], df["undecided"]):
            fh.write(f"- {claim.split(' ', 1)[0]} {interval or 'not measured'}"
                     + (f"; **{open_text}**" if open_text else "") + "\n")
        fh.write("\nRules:\n\n")
        for claim, rule in zip(df["claim"], df["rule"]):
            fh.write(f"- {claim.split(' ', 1)[0]} {rule}\n")
    log.info("findings:\n%s", df[["claim", "ours", "holds"]].to_string())
    return df


# ---- the reference pack (kgeval.tables.reference) -------------------------------------------------------------
def pack_reference_step(evaluation: dict[str, str], per_answer: dict[str, str], per_question: dict[str, str],
                        out: str, config: dict[str, Any], name: str, cores: int, benchmark_dir: str,
                        runs: dict[str, dict[str, str]] | None = None, k: int = 10,
                        run_times: str | None = None, manifest: str | None = None) -> dict:
    """Pack the run's placement tables into ``out`` (a folder that can be committed) with its provenance, and
    the top ``k`` of every system's dump on each pooled test set (``runs``); the job count is the number of
    benchmark files the run wrote. ``run_times`` (the run's ``run_times.csv``) adds its wall time and summed job
    time, so that the docs quote them from the pack's facts instead of typing them after each run (issue 52);
    ``manifest`` (the run's manifest.json) is copied into the pack, for ``kgeval reproduce`` (issue 61)."""
    from .reference import pack, provenance_record

    jobs = sum(1 for _ in Path(benchmark_dir).rglob("*.tsv")) if Path(benchmark_dir).is_dir() else 0
    prov = provenance_record(config, name, cores, jobs)
    if run_times is not None:
        prov["run_times"] = run_time_totals(run_times)
    record = pack(evaluation, per_answer, per_question, out, prov, runs=runs, k=k, manifest=manifest)
    log.info("reference pack %s: %s test sets, %s bytes", out, len(record["testsets"]), f"{record['bytes']:,}")
    return record


def run_time_totals(run_times_csv: str | Path) -> dict[str, float | int]:
    """The ``total`` rows of a ``run_times.csv``: ``jobs`` (with a benchmark), ``job_seconds`` (their summed
    time) and ``wall_seconds`` (first job's start to last job's end), as :func:`run_times_table` wrote them, and
    ``train_seconds``, the summed time of the ``training`` stage's jobs (the share the README quotes)."""
    df = pd.read_csv(run_times_csv)
    totals = df[df["stage"] == "total"].set_index("rule")
    missing = [r for r in ("jobs", "wall") if r not in totals.index]
    if missing:
        raise InputError(run_times_csv, None, f"has no total row(s) {', '.join(missing)}: not a run_times.csv")
    return {"jobs": int(totals.loc["jobs", "jobs"]), "job_seconds": round(float(totals.loc["jobs", "seconds"]), 1),
            "wall_seconds": round(float(totals.loc["wall", "seconds"]), 1),
            "train_seconds": round(float(df.loc[df["stage"] == "training", "seconds"].sum()), 1)}
