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
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .errors import InputError

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
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds, else delete it
    (an :class:`OutputStage` of one file)."""
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


@contextlib.contextmanager
def deferred_stop_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then act on the first one that came (with the handler that
    was in place): a set of renames inside runs to its end under a stop signal, so that a checkpoint and its
    sidecar are replaced together or not at all. Python runs signal handlers in the main thread only, so
    elsewhere this is a no-op; SIGKILL cannot be held (the load-time checks catch a pair it splits)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


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


MANIFEST = ".kgeval-outputs.json"
STAGING = ".kgeval-staging-"


def same_path(p: str | Path, q: str | Path) -> bool:
    """Whether two paths name the same file or folder (links and ``..`` resolved; a missing path by its name)."""
    try:
        return os.path.samefile(p, q)
    except OSError:
        return Path(p).resolve() == Path(q).resolve()


def is_within(path: str | Path, folder: str | Path) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (after resolving links and ``..``)."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def require_inputs(paths) -> None:
    """Every path exists: else an error naming the first missing one, before any work starts."""
    for p in paths:
        if p is not None and not Path(p).exists():
            raise InputError(p, None, "no such file or folder")


class OutputStage:
    """The outputs of one command, written to temporary paths and moved into place together at the end.

    Every command of the command line writes through one stage (``with OutputStage(...) as stage``):

    * ``stage.path(dest)`` gives a temporary file beside ``dest`` (created at once, so that a folder that cannot
      be written is reported before any work); ``dest`` may not be an input, an existing folder or, when the
      stage has a ``folder``, lie outside that folder;
    * ``stage.root`` (stages with a ``folder``) is a fresh staging folder inside ``folder`` that the command fills
      as if it were ``folder``.

    Leaving the block without an error moves every staged file and top-level entry of ``stage.root`` into place
    (``os.replace``), after removing what the same command wrote into ``folder`` on an earlier run and does not
    write again: the entries listed in ``folder/.kgeval-outputs.json``, which the stage writes. Nothing else in
    ``folder`` is touched, and no input is ever replaced, moved or removed: an input at or inside a destination
    stops the stage before anything moves. An error discards every temporary path and leaves ``folder`` as it was.
    """

    def __init__(self, command: str, inputs=(), folder: str | Path | None = None, input_folders=()):
        self.command = command
        self.inputs = [Path(p) for p in inputs if p is not None]
        self.input_folders = [Path(p) for p in input_folders if p is not None and Path(p).is_dir()]
        self.folder = Path(folder) if folder is not None else None
        self._files: list[tuple[Path, Path]] = []  # (temporary, destination)
        self._root: Path | None = None
        self._staged: Path | None = None  # the staging folder's name, kept after the stage completed
        self._made: list[Path] = []  # folders this stage created, deepest first
        require_inputs(self.inputs)
        if self.folder is not None:
            if self.folder.exists() and not self.folder.is_dir():
                raise InputError(self.folder, None, "exists and is not a folder (the output is a folder)")
            for p in [*self.inputs, *self.input_folders]:
                if p.is_dir() and is_within(self.folder, p) or same_path(p, self.folder):
                    raise InputError(self.folder, None, f"the output folder lies inside the input {p}: choose "
                                                        "another folder, inputs are never written over")
            self._makedirs(self.folder)

    def _makedirs(self, folder: Path) -> None:
        """Create ``folder`` with its parents, remembering the folders made (a failed stage removes them)."""
        missing = [p for p in (folder, *folder.parents) if not p.exists()]
        folder.mkdir(parents=True, exist_ok=True)
        self._made += missing

    def _check(self, dest: Path) -> None:
        if self.folder is not None and not is_within(dest, self.folder):
            raise InputError(dest, None, f"outside the output folder {self.folder}")
        if dest.is_dir():
            raise InputError(dest, None, "is a folder; expected a file to write")
        for p in self.inputs:
            if same_path(p, dest) or (p.exists() and is_within(p, dest)):
                raise InputError(dest, None, f"the output would overwrite the input {p}: choose another path")
        if any(same_path(d, dest) for _, d in self._files):
            raise InputError(dest, None, "named as two outputs")

    def path(self, dest: str | Path) -> Path:
        """A temporary file beside ``dest`` that replaces it when the stage completes."""
        dest = Path(dest)
        self._check(dest)
        if not dest.parent.is_dir():
            self._makedirs(dest.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
        os.close(fd)
        self._files.append((Path(tmp), dest))
        return Path(tmp)

    @property
    def root(self) -> Path:
        """The staging folder (inside the output folder) to fill as if it were the output folder."""
        if self.folder is None:
            raise ValueError("a stage without a folder has no staging folder")
        if self._root is None:
            self._remove_abandoned()
            prefix = f"{STAGING}{socket.gethostname()}-{os.getpid()}-"
            self._root = self._staged = Path(tempfile.mkdtemp(prefix=prefix, dir=self.folder))
        return self._root

    def _remove_abandoned(self) -> None:
        """Remove the staging folders that a killed command of this machine left in the output folder (the
        process named in the folder's name is gone); another machine's or a running command's stay."""
        host = socket.gethostname()
        for path in self.folder.glob(f"{STAGING}{host}-*"):
            pid = path.name[len(STAGING) + len(host) + 1:].split("-")[0]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(path, ignore_errors=True)
            except OSError:  # alive, under another user
                pass

    def final(self, path: str | Path) -> Path:
        """Where a path inside :attr:`root` ends up (also after the stage completed)."""
        if self._staged is None or not Path(path).is_relative_to(self._staged):
            return Path(path)
        return self.folder / Path(path).relative_to(self._staged)

    def _owned(self) -> list[str]:
        try:
            listed = read_json(self.folder / MANIFEST)
        except (OSError, ValueError):
            return []
        if not isinstance(listed, dict) or listed.get("command") != self.command:
            return []
        return [n for n in listed.get("entries", []) if isinstance(n, str) and n and "/" not in n and n[0] != "."]

    def commit(self) -> None:
        moves = list(self._files)
        stale: list[Path] = []
        if self._root is not None:
            names = sorted(p.name for p in self._root.iterdir())
            moves += [(self._root / n, self.folder / n) for n in names]
            stale = [self.folder / n for n in self._owned() if n not in names]
            for _, dest in moves[len(self._files):]:
                self._check_entry(dest)
            for dest in stale:
                self._check_entry(dest)
        # mkstemp creates the file 0600; give it the mode an ordinary open() would, so that on a shared cluster the
        # group can read results when the umask allows it
        umask = current_umask()
        for tmp, _ in self._files:
            if tmp.is_file():
                os.chmod(tmp, 0o666 & ~umask)
        trash = Path(tempfile.mkdtemp(prefix=".kgeval-trash-", dir=self.folder)) if self._root is not None else None
        try:
            # a folder (or a file that a folder replaces) cannot be replaced in one rename: set it aside first
            aside = stale + [d for t, d in moves if d.exists() and (t.is_dir() or d.is_dir())]
            for i, dest in enumerate(aside):
                if dest.exists() or dest.is_symlink():
                    os.replace(dest, trash / str(i))
            with deferred_stop_signals():  # all the outputs or none, also under Ctrl-C
                for tmp, dest in moves:
                    os.replace(tmp, dest)
            if self._root is not None:
                write_json(self.folder / MANIFEST, {"command": self.command, "entries": names})
                self._root.rmdir()
                self._root = None
        finally:
            if trash is not None:
                shutil.rmtree(trash, ignore_errors=True)
        self._files = []

    def _check_entry(self, dest: Path) -> None:
        for p in [*self.inputs, *self.input_folders]:
            if p.exists() and is_within(p, dest):
                raise InputError(dest, None, f"replacing it would remove the input {p}: choose another output "
                                             "folder")

    def discard(self) -> None:
        for tmp, _ in self._files:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._files = []
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
        for folder in sorted(set(self._made), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty: a folder the stage made and nothing else filled

    def __enter__(self) -> OutputStage:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                self.discard()
                raise
            return
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            # a write that fails (a full disk) names no file: name the output folder, or the first output
            where = self.folder if self.folder is not None else next((d for _, d in self._files), None)
            exc.filename = None if where is None else str(where)
        self.discard()
