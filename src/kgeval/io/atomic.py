"""Writing one file atomically (a temporary file beside it, renamed into place once complete), reading and
checksumming files, and setting a derived file that failed its check aside.

An interrupted or failing step never leaves a half-written file that a later step could read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .stage import OutputStage
from .temps import is_temporary

log = logging.getLogger(__name__)


_WORKFLOW_JOB = False


@contextlib.contextmanager
def workflow_job() -> Iterator[None]:
    """Mark the block as a workflow job (:func:`kgeval.workflow.run_step`): its inputs are the workflow's own
    derived files, which a failed check may set aside for the next run to rebuild. Outside it (the command line,
    the API) an input is the user's and is never renamed."""
    global _WORKFLOW_JOB
    before, _WORKFLOW_JOB = _WORKFLOW_JOB, True
    try:
        yield
    finally:
        _WORKFLOW_JOB = before


def in_workflow_job() -> bool:
    """Whether the caller runs inside :func:`workflow_job`."""
    return _WORKFLOW_JOB


def set_aside(path: str | Path, reason: str) -> Path:
    """Rename a derived file (or folder) that failed its check to ``<name>.corrupt`` (replacing an older one),
    log a warning naming both, and return the new path. The workflow rebuilds the original on its next run; the
    ``.corrupt`` copy is kept only for inspection and is safe to delete."""
    path = Path(path)
    aside = path.with_name(path.name + ".corrupt")
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside)
    os.replace(path, aside)
    log.warning("%s: %s; set aside as %s (kept for inspection, safe to delete); it will be rebuilt", path, reason,
                aside)
    return aside


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds, else delete it
    (an :class:`OutputStage` of one file). A ``path`` that is itself a stage's temporary file (a command's
    output, written through a step that writes atomically) is written directly: its stage renames it, and a
    second temporary would double the disk a large file takes."""
    if is_temporary(path):
        yield Path(path)
        return
    with OutputStage("") as stage:
        yield stage.path(path)


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO]:
    """Open a temporary file for writing that replaces ``path`` only when the block completes."""
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
        kwargs.setdefault("newline", "\n")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def write_json(path: str | Path, obj: Any) -> None:
    """Write JSON atomically with sorted keys, so equal content gives equal bytes."""
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, default=_json_default)
        fh.write("\n")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def read_json(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_csv(df: pd.DataFrame, path: str | Path, float_format: str = "%.10g") -> None:
    """Write a CSV atomically with a fixed float format, so reruns give byte-identical files."""
    with atomic_open(path) as fh:
        df.to_csv(fh, index=False, float_format=float_format, lineterminator="\n")
