"""The names of kgeval's temporary files, and the sweep that removes those a killed process left behind.

A temporary file lies beside the file it becomes (a rename is atomic only within one filesystem), so a SIGKILL
leaves it in the user's folder. Its name says whose it is: ``.kgeval-part-<host>-<pid>-<8 random>-<name>.part``
(a file being written) or ``.kgeval-old-<host>-<pid>-<8 random>-<name>`` (a previous file kept while a set of
files is replaced, :mod:`kgeval.io.commit`). No user names a file that way, and the host and process id tell a
temporary of a running process (kept) from one of a process that is gone (swept). :func:`sweep` runs wherever
kgeval writes a file, so the next command writing into the same folder removes what a killed one left there.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from pathlib import Path

PART = ".kgeval-part-"
OLD = ".kgeval-old-"


def owner_prefix(kind: str) -> str:
    """``<kind><host>-<pid>-``: the start of every temporary name this process makes."""
    return f"{kind}{socket.gethostname()}-{os.getpid()}-"


def is_temporary(path: str | Path) -> bool:
    """Whether ``path`` names a temporary file of :func:`make_part` (written there, renamed by its owner)."""
    return Path(path).name.startswith(PART)


def make_part(dest: str | Path) -> Path:
    """Create an empty temporary file beside ``dest`` (after sweeping what dead processes left in that folder)
    and return its path."""
    dest = Path(dest)
    sweep(dest.parent)
    fd, tmp = tempfile.mkstemp(prefix=owner_prefix(PART), suffix=f"-{dest.name}.part", dir=dest.parent)
    os.close(fd)
    return Path(tmp)


def old_name(dest: Path) -> Path:
    """A free name beside ``dest`` for its previous file while a set of files is replaced."""
    return dest.with_name(f"{owner_prefix(OLD)}{os.urandom(4).hex()}-{dest.name}")


def dead_owner(name: str, kind: str) -> str | None:
    """The rest of ``name`` after ``<kind><this host>-<pid>-`` when that process is gone, else None (another
    host's, a running process's, or not such a name)."""
    head = f"{kind}{socket.gethostname()}-"
    if not name.startswith(head):
        return None
    pid, sep, rest = name[len(head):].partition("-")
    if not sep or not pid.isdigit() or int(pid) == os.getpid() or alive(int(pid)):
        return None
    return rest


def sweep(folder: str | Path) -> None:
    """Remove from ``folder`` the temporary files of processes of this host that are gone: a ``.part`` file
    never became an output; an ``.old`` file is a previous file that its commit kept, put back where the kill
    left its destination missing and dropped where the destination is in place."""
    folder = Path(folder)
    try:
        names = [e.name for e in os.scandir(folder) if e.name.startswith((PART, OLD))]
    except OSError:
        return  # a folder that cannot be listed fails where it is written, with its own message
    for name in names:
        path = folder / name
        with contextlib.suppress(OSError):
            if dead_owner(name, PART) is not None:
                path.unlink()
            elif (rest := dead_owner(name, OLD)) is not None:
                dest = folder / rest[9:]  # after "<8 random>-"
                if len(rest) > 9 and not (dest.exists() or dest.is_symlink()):
                    os.replace(path, dest)
                else:
                    path.unlink()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, under another user
        return True
    return True
