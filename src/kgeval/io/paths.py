"""Path predicates the output stage and the commands share: whether two paths are one, whether a path lies in a
folder, whether the inputs exist, and the process umask; a file's JSON sidecar."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError


def sidecar(path: str | Path) -> Path:
    """The JSON sidecar of a file (a checkpoint's ``<file>.json``): here, not beside torch in
    :mod:`kgeval.models.checkpoint`, so that reading a checkpoint's record needs no torch import."""
    return Path(str(path) + ".json")


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
