"""Reference packs: the study's per-item tables that placement reads (``kgeval evaluate``,
``kgeval.api.place``), in a compact form small enough to commit, with their provenance.

Layout of a pack (that of a results folder, so that placement reads either)::

    metrics/<test set>/evaluation.csv       the run's table, byte for byte (one row per system)
    metrics/<test set>/per_answer.parquet   qid, entity, System, the headline micro metrics
    metrics/<test set>/per_question.parquet qid, System, the headline macro and trec metrics
    runs/<pooled test set>/top<k>.parquet   System, qid, rank, entity: every study system's top k on a pooled
                                            test set, so that ``kgeval evaluate`` can say which comparisons
                                            with the study systems the judgments decide (kgeval.bounds)
    provenance.json                         kgeval version and commit, date, machine and CPU, config hash, cores,
                                            jobs, and per test set its systems, rows and bytes
    manifest.json                           the run's content manifest (kgeval.reproduce.manifest): digests of
                                            its models', dumps' and tables' values, verdicts, environment

The parquet files are zstd-compressed (level 19) with dictionary-encoded ``qid`` and ``System``, ``entity`` as
int32, and a metric as float32 only where that is exact (every value survives the round trip), else float64: a
placement from the pack equals the placement from the results folder it was packed from.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import limits
from ..analysis.selections import MACRO_STUDY, MICRO_STUDY
from ..errors import InputError
from ..judgments.lists import RUNS
from ..metrics.registry import metric
from .facts import write_facts

PROVENANCE = "provenance.json"
MANIFEST = "manifest.json"  # the run's content manifest (kgeval.reproduce.manifest.MANIFEST)
PACKED = MICRO_STUDY + MACRO_STUDY  # the metrics placement ranks and tests on (kgeval.external.placement.HEADLINE)
KEYS = {"per_answer": ["qid", "entity"], "per_question": ["qid"]}


# ---- packing ---------------------------------------------------------------------------------------------------
def _compact(df: pd.DataFrame) -> pa.Table:
    """Minimal exact dtypes: dictionary strings, int32 entities, int16 ranks, float32 where every value survives."""
    cols = {}
    for c in df.columns:
        s = df[c]
        if c in ("qid", "System"):
            cols[c] = pa.array(s.astype(str)).dictionary_encode()
        elif c == "entity":
            cols[c] = pa.array(s.to_numpy(np.int32))
        elif c == "rank":
            cols[c] = pa.array(s.to_numpy(np.int16))
        else:
            v = s.to_numpy(np.float64)
            f32 = v.astype(np.float32)
            exact = np.array_equal(f32.astype(np.float64), v, equal_nan=True)
            cols[c] = pa.array(f32 if exact else v)
    return pa.table(cols)


def _commit(root: Path) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    head = done.stdout.strip() if done.returncode == 0 else "unknown"
    if head != "unknown":
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=False, timeout=10).stdout.strip()
        head += "-dirty" if dirty else ""
    return head


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance_record(config: dict[str, Any], name: str, cores: int, jobs: int, root: str | Path | None = None,
                      now: _dt.datetime | None = None) -> dict[str, Any]:
    """The sidecar of a pack: where, when and from what the packed results come. ``cores``: the workflow's
    cores; ``jobs``: the jobs the run recorded (its benchmark files); the commit is that of the checkout kgeval
    runs from (``root``, default: this package's source tree), ``-dirty`` when it has uncommitted changes."""
    root = Path(__file__).resolve().parents[3] if root is None else root
    from .. import __version__
    from ..training.config import config_hash

    now = now or _dt.datetime.now(_dt.UTC)
    return {"name": name, "kgeval_version": __version__, "kgeval_commit": _commit(Path(root)),
            "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": platform.node(), "cpu": _cpu(),
            "cpu_count": os.cpu_count(), "cores": int(cores), "jobs": int(jobs), "config_hash": config_hash(config)}


def pack(evaluation: dict[str, str | Path], per_answer: dict[str, str | Path], per_question: dict[str, str | Path],
         out: str | Path, provenance: dict[str, Any], metrics: list[str] = PACKED,
         runs: dict[str, dict[str, str | Path]] | None = None, k: int = 10,
         manifest: str | Path | None = None) -> dict[str, Any]:
    """Pack each test set's ``evaluation.csv`` and per-item tables (paths by test set) into ``out``, and with
    ``runs`` (pooled test set → system → score dump folder) each system's top ``k`` there; returns the provenance
    written (``out/provenance.json``), with each test set's systems, rows and bytes. ``manifest``: the run's
    manifest.json, copied byte for byte (its table digests hold for the pack's columns: they hash values)."""
    out = Path(out)
    record = dict(provenance)
    record["testsets"] = {}
    for t, dumps in (runs or {}).items():
        path = out / RUNS / t / f"top{k}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        table = top_k_table(dumps, k)
        pq.write_table(_compact(table), path, compression="zstd", compression_level=19)
        record.setdefault("runs", {})[t] = {"k": k, "systems": len(dumps), "rows": len(table),
                                            "bytes": path.stat().st_size}
    for t in evaluation:
        folder = out / "metrics" / t
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(evaluation[t], folder / "evaluation.csv")
        entry: dict[str, Any] = {"systems": len(pd.read_csv(evaluation[t]))}
        for kind, path in (("per_answer", per_answer[t]), ("per_question", per_question[t])):
            have = pq.read_schema(path).names
            micro = kind == "per_answer"
            cols = KEYS[kind] + ["System"] + [m for m in metrics
                                              if m in have and (metric(m).aggregation == "micro") == micro]
            missing = [c for c in KEYS[kind] + ["System"] if c not in have]
            if missing:
                raise InputError(path, None, f"lacks the column(s) {', '.join(missing)}: not a per-item table")
            df = pd.read_parquet(path, columns=list(dict.fromkeys(cols)))
            pq.write_table(_compact(df), folder / f"{kind}.parquet", compression="zstd", compression_level=19)
            entry[f"{kind}_rows"] = len(df)
        entry["bytes"] = sum(p.stat().st_size for p in folder.iterdir())
        record["testsets"][t] = entry
    if manifest is not None:
        shutil.copyfile(manifest, out / MANIFEST)
    record["bytes"] = sum(e["bytes"] for e in record["testsets"].values()) + sum(
        e["bytes"] for e in record.get("runs", {}).values())
    (out / PROVENANCE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    write_facts(out)  # the numbers the docs quote from this pack (tests/test_docs_facts.py)
    return record


def top_k_table(dumps: dict[str, str | Path], k: int) -> pd.DataFrame:
    """System, qid, rank (1..k), entity of every system's top ``k`` (its dump's stored run; a run shorter than
    ``k`` keeps the −1 padding the dump has)."""
    from ..scores.dumps import load_dump

    frames = []
    for system, folder in dumps.items():
        d = load_dump(folder)
        if d.k < k:
            raise InputError(folder, None, f"its run holds {d.k} entities per question, fewer than bounds.k = {k}")
        ent = d.run_entity[:, :k].astype(np.int64)
        q = len(ent)
        frames.append(pd.DataFrame({"System": system, "qid": np.repeat(np.asarray(d.questions.qid).astype(str), k),
                                    "rank": np.tile(np.arange(1, k + 1), q), "entity": ent.ravel()}))
    return pd.concat(frames, ignore_index=True)


def read_provenance(folder: str | Path) -> dict[str, Any] | None:
    path = Path(folder) / PROVENANCE
    if not path.is_file():
        return None
    try:
        return json.loads(limits.read_text(path, encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"not a provenance record (JSON): {exc}") from None


def describe(prov: dict[str, Any]) -> str:
    """One sentence of provenance, for the output and summary.md."""
    return (f"packed from the '{prov.get('name', '?')}' configuration's run (config hash "
            f"{str(prov.get('config_hash', '?'))[:12]}), kgeval {prov.get('kgeval_version', '?')} at commit "
            f"{str(prov.get('kgeval_commit', '?'))[:12]}, {prov.get('date', '?')}, on {prov.get('machine', '?')} "
            f"({prov.get('cpu', '?')}, {prov.get('cores', '?')} cores, {prov.get('jobs', '?')} jobs)"
            + (SMOKE_WARNING if prov.get("name") == "smoke" else ""))


# the smoke pack ships until a default run's pack does: a placement against it must not pass for the study's
SMOKE_WARNING = ("; WARNING: these are the smoke configuration's barely trained models, not the study's 13: the "
                 "placement checks the mechanism and is not a result to report")
