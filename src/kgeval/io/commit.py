"""Moving a set of new files into place as one: every new file in place, or every previous file as it was.

:func:`replace_together` first keeps each file it will replace or remove (a hard link beside it, so that the
destination never goes missing, or, where a link is refused, the file itself renamed aside), then renames the new
files into place. When any step fails it puts every previous file back and removes every new one before the
error goes up. With a ``keep`` folder (an output folder's hidden ``.kgeval-trash-*``) it first writes a journal
there, so that what a SIGKILL in the middle leaves can be put back by the next command on that folder
(:func:`restore_abandoned`). Renames within one filesystem are atomic on Linux; the set is not, which is what the
backups are for.

Why not build a whole new folder and swap it with one rename: an output folder may hold the user's own files,
which would have to move into the new folder (a rename of each, with the same failure modes) and would change
the folder's identity under a shell or program that has it open; ``renameat2(RENAME_EXCHANGE)`` swaps two
folders atomically but not their contents with the user's files in them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from ..errors import KgevalError
from .pause import pause_point
from .signals import deferred_stop_signals
from .temps import old_name

JOURNAL = "journal.json"
DONE = "done"


class CommitIncomplete(KgevalError):
    """A failed commit whose previous files could not all be put back: names where the rest are kept."""


class _Plan:
    """What a commit changes: each destination with the path of its backup (None: it did not exist), and the
    folders it makes, parents first."""

    def __init__(self, puts: list[tuple[Path, Path]], removes: list[Path], keep: Path | None):
        self.puts, self.removes, self.keep = puts, removes, keep
        self.backups: list[tuple[Path, Path | None]] = []
        for i, dest in enumerate([d for _, d in puts] + removes):
            there = dest.exists() or dest.is_symlink()
            self.backups.append((dest, self._backup_name(dest, i) if there else None))
        made: list[Path] = []
        for _, dest in puts:
            missing, p = [], dest.parent
            while not p.is_dir() and p not in made and p not in missing:
                missing.append(p)
                p = p.parent
            made += reversed(missing)
        self.made = made

    def _backup_name(self, dest: Path, i: int) -> Path:
        if self.keep is not None:
            return self.keep / str(i)
        return old_name(dest)  # kgeval's name: the next write into this folder sweeps it if a kill leaves it

    def journal(self) -> dict:
        return {"backups": [[str(d.absolute()), None if b is None else b.name] for d, b in self.backups],
                "made": [str(p.absolute()) for p in self.made]}


def replace_together(puts: list[tuple[Path, Path]], removes: list[Path] = (), keep: Path | None = None) -> None:
    """Rename each ``(new, dest)`` of ``puts`` onto ``dest`` and remove each path of ``removes`` (files): all of
    it, or, when any step fails, none of it. ``keep`` is an empty folder on the destinations' filesystem for the
    backups and the journal (removed at the end unless something could not be put back); without it each backup
    lies beside its file as ``.kgeval-old-<host>-<pid>-<random>-<name>`` until the end."""
    plan = _Plan(list(puts), list(removes), keep)
    step = None
    with deferred_stop_signals():  # a stop signal waits until the set is in place or rolled back
        try:
            if keep is not None:  # before the first change: what a kill leaves can be put back
                step = keep.parent
                _write(keep / JOURNAL, json.dumps(plan.journal()))
            n_puts = len(plan.puts)
            for i, (dest, backup) in enumerate(plan.backups):
                step = dest
                if backup is None:
                    continue
                if i >= n_puts:  # removed: moved aside
                    os.replace(dest, backup)
                    continue
                try:
                    os.link(dest, backup, follow_symlinks=False)
                except OSError:  # a filesystem or file that refuses links: move it aside instead
                    os.replace(dest, backup)
            for folder in plan.made:
                step = folder
                folder.mkdir()
            for i, (new, dest) in enumerate(plan.puts):
                step = dest
                os.replace(new, dest)
                if i == 0:
                    pause_point("commit_midway")  # one output in place, the rest not: the kill tests' point
            if keep is not None:
                _write(keep / DONE, "")
        except BaseException as exc:
            _roll_back(plan, exc)
            if isinstance(exc, OSError) and step is not None:
                # name the user's path, never a backup or temporary one
                raise OSError(exc.errno, exc.strerror, str(step)) from None
            raise
    _drop_backups(plan)


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _undo(backups: list[tuple[Path, Path | None]], made: list[Path]) -> list[tuple[Path, Path]]:
    """Put each backup back over its destination and remove each new file that had none; returns the
    ``(destination, backup)`` pairs that could not be put back."""
    failed = []
    for dest, backup in reversed(backups):
        try:
            if backup is None:
                if dest.is_symlink() or dest.is_file():
                    dest.unlink()  # a file this commit added
            elif backup.exists() or backup.is_symlink():
                os.replace(backup, dest)
                if backup.exists() or backup.is_symlink():  # two links of one file: rename() left both
                    backup.unlink()
        except OSError:
            failed.append((dest, backup))
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()
    return failed


def _roll_back(plan: _Plan, exc: BaseException) -> None:
    failed = _undo(plan.backups, plan.made)
    if failed:
        where = plan.keep if plan.keep is not None else ", ".join(str(b) for _, b in failed)
        raise CommitIncomplete(f"{failed[0][0]}: the outputs could not be moved into place ({exc}) nor the "
                               f"previous files all put back: {len(failed)} of them are kept in {where}") from exc
    if plan.keep is not None:
        shutil.rmtree(plan.keep, ignore_errors=True)


def _drop_backups(plan: _Plan) -> None:
    if plan.keep is not None:
        shutil.rmtree(plan.keep, ignore_errors=True)
        return
    for _, backup in plan.backups:
        if backup is not None:
            with contextlib.suppress(OSError):
                backup.unlink()


def restore_abandoned(keep: Path) -> bool:
    """Finish what a killed commit left in ``keep``: before its last rename, put every previous file back and
    remove the new ones (as its own rollback would have); after it, only drop the backups. Returns whether
    ``keep`` is gone (False: something could not be put back, and it stays for inspection)."""
    if (keep / DONE).exists() or not (keep / JOURNAL).exists():
        # done, or killed before its first change (the journal comes first)
        shutil.rmtree(keep, ignore_errors=True)
        return True
    try:
        journal = json.loads((keep / JOURNAL).read_text(encoding="utf-8"))
        backups = [(Path(d), None if b is None else keep / b) for d, b in journal["backups"]]
        made = [Path(p) for p in journal["made"]]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if _undo(backups, made):
        return False
    shutil.rmtree(keep, ignore_errors=True)
    return True
