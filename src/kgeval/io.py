"""File helpers: atomic writes, checksums and table output.

Every output is written to a temporary file next to its destination and renamed into place only once it is
complete, so an interrupted or failing step never leaves a half-written file that a later step could read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)


def current_umask() -> int:
    """The process umask, read without changing it where the platform allows (``/proc``): swapping it with
    ``os.umask`` would briefly affect files that other threads create."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds, else delete it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates the file 0600; give it the mode an ordinary open() would, so that on a shared
        # cluster the group can read results when the umask allows it
        if tmp_path.is_file():
            os.chmod(tmp_path, 0o666 & ~current_umask())
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


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


PAUSE_ENV = "KGEVAL_PAUSE_AT"


def pause_point(name: str) -> None:
    """Sleep here when ``$KGEVAL_PAUSE_AT`` names this point (``name=seconds[,name=seconds...]``).

    Only the fault-tolerance test (tests/fault_tolerance_e2e.py) sets the variable: it holds a step where a kill
    leaves partial output (a dump folder without meta.json, a training run with only its work checkpoint), so the
    test's SIGKILL lands there every time instead of racing a window of a few milliseconds.
    """
    spec = os.environ.get(PAUSE_ENV, "").strip()
    if not spec:
        return
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not sep or not key.strip() or not seconds >= 0:
            raise ValueError(f"${PAUSE_ENV}={spec!r}: {item!r} is not name=seconds (seconds >= 0)")
        if key.strip() == name:
            time.sleep(seconds)


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


def _fmt(value: Any, digits: int) -> str:
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        return f"{value:.{digits}f}"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    return str(value)


def to_markdown(df: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (no extra dependency)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, digits) for v in row) + " |")
    return "\n".join(lines) + "\n"


_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, caption: str = "", label: str = "", digits: int = 4) -> str:
    """A ``booktabs`` LaTeX table."""
    align = "".join("r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in df.columns)
    out = ["\\begin{table}[t]", "\\centering"]
    if caption:
        out.append(f"\\caption{{{latex_escape(caption)}}}")
    if label:
        out.append(f"\\label{{{label}}}")
    out += [f"\\begin{{tabular}}{{{align}}}", "\\toprule",
            " & ".join(latex_escape(str(c)) for c in df.columns) + " \\\\", "\\midrule"]
    for row in df.itertuples(index=False):
        out.append(" & ".join(latex_escape(_fmt(v, digits)) for v in row) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def write_table(df: pd.DataFrame, csv: str | Path, md: str | Path | None = None, tex: str | Path | None = None,
                caption: str = "", label: str = "", digits: int = 4) -> None:
    """Write one table as CSV and, where asked, Markdown and LaTeX (booktabs)."""
    write_csv(df, csv)
    if md is not None:
        with atomic_open(md) as fh:
            if caption:
                fh.write(f"{caption}\n\n")
            fh.write(to_markdown(df, digits))
    if tex is not None:
        with atomic_open(tex) as fh:
            fh.write(to_latex(df, caption, label, digits))
