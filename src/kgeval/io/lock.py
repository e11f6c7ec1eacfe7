"""Locks that keep two kgeval commands from writing the same outputs at once.

A command with an output folder holds ``OUT/.kgeval-lock`` for its whole run: a second command on the same folder
is refused at once, in one line. The lock is the kernel's ``flock`` on that file, not the file itself: the kernel
drops it when the holder exits in any way (a SIGKILL, a lost shell), so a lock of a killed command never blocks
the next one. The holder removes the file when it is done; a command that locked a file which was removed
meanwhile tries again on the new one, so two commands never hold two different files of one folder.

A set of files written outside such a folder (``annotate-merge``'s judgments, report and merged file; a
checkpoint and its sidecar) is moved into place under a lock of each destination's folder, held only for the
renames: a concurrent command writing into the same folder waits for them, so the last complete set wins whole.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import KgevalError

log = logging.getLogger(__name__)

LOCK = ".kgeval-lock"

# filesystems without flock (some network mounts) answer with these: the commands then run without the lock
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.EBADF, errno.ENOSYS}


class OutputLocked(KgevalError):
    """Another kgeval command is writing into the same output folder."""

    def __init__(self, path: str | Path, holder: str):
        self.path = str(path)
        super().__init__(f"{path}: another kgeval command{holder} is writing into this folder; run this one when "
                         "it has finished (or choose another output folder)")


class FolderLock:
    """The exclusive lock of one output folder, taken when made (or :class:`OutputLocked`)."""

    def __init__(self, folder: Path, command: str):
        self.path = folder / LOCK
        self._fd: int | None = None
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:  # a read-only folder: name the folder, not the lock file
                raise OSError(exc.errno, exc.strerror, str(folder)) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise OutputLocked(folder, holder) from None
            except OSError as exc:
                os.close(fd)
                if exc.errno not in _NO_LOCKS:
                    raise
                log.warning("%s: this filesystem has no file locks: a second kgeval command on this folder is not "
                            "kept out", folder)
                return
            if _still_there(fd, self.path):
                break
            os.close(fd)  # the holder finished and removed the file after we opened it: lock the current one
        self._fd = fd
        with contextlib.suppress(OSError):  # who holds it, for the refusal's message only (a full disk: nobody)
            os.ftruncate(fd, 0)
            os.write(fd, f"{command}\t{os.getpid()}\t{socket.gethostname()}\n".encode())

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still holding it: see the module's docstring
        os.close(self._fd)
        self._fd = None


def _still_there(fd: int, path: Path) -> bool:
    try:
        st, now = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino)


def _read_holder(fd: int) -> str:
    """`` (evaluate, process 123 on host)`` from the lock file, or nothing when it holds no such line yet."""
    try:
        command, pid, host = os.pread(fd, 512, 0).decode("utf-8", "replace").split("\n")[0].split("\t")
    except (OSError, ValueError):
        return ""
    return f" ({'kgeval ' + command + ', ' if command else ''}process {pid} on {host})"


@contextlib.contextmanager
def folders_locked(folders, timeout: float = 60.0) -> Iterator[None]:
    """Hold an exclusive ``flock`` on each folder (in a fixed order, so two holders never wait on each other)
    for the block; waits up to ``timeout`` seconds for another holder, then :class:`OutputLocked`."""
    fds: list[int] = []
    try:
        for folder in sorted({str(Path(f).resolve()) for f in folders}):
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue  # a folder that cannot be opened fails its rename below, with its own message
            fds.append(fd)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise OutputLocked(folder, "") from None
                    time.sleep(0.01)
                except OSError as exc:
                    if exc.errno not in _NO_LOCKS:
                        raise
                    break
        yield
    finally:
        for fd in fds:
            os.close(fd)


@contextlib.contextmanager
def waiting_lock(path: str | Path, what: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the file ``path`` for the block, waiting for another holder as long as it
    takes (a cache another process is building: the waiting one then finds the files built and uses them).
    One log line says whom it waits for; a filesystem without locks runs the block unlocked."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("waiting for another kgeval process%s to finish %s", _read_holder(fd), what)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            if exc.errno not in _NO_LOCKS:
                raise
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"\t{os.getpid()}\t{socket.gethostname()}\n".encode())
        yield
    finally:
        os.close(fd)  # the lock file stays: removing it would let a third process lock a different file
