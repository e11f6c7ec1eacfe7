"""The output stage: a command's outputs written to temporary paths and moved into place together at the end."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

from ..errors import InputError
from .paths import current_umask, is_within, require_inputs, same_path
from .signals import deferred_stop_signals

MANIFEST = ".kgeval-outputs.json"
STAGING = ".kgeval-staging-"


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
            with open(self.folder / MANIFEST, encoding="utf-8") as fh:
                listed = json.load(fh)
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
                with OutputStage("") as single, open(single.path(self.folder / MANIFEST), "w", encoding="utf-8",
                                                     newline="\n") as fh:
                    json.dump({"command": self.command, "entries": names}, fh, indent=2, sort_keys=True)
                    fh.write("\n")
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
