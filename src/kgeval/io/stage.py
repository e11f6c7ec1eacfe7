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
from .commit import replace_together, restore_abandoned
from .lock import FolderLock, folders_locked
from .paths import current_umask, is_within, require_inputs, same_path
from .pause import pause_point
from .temps import alive, make_part, owner_prefix, sweep

MANIFEST = ".kgeval-outputs.json"
STAGING = ".kgeval-staging-"
TRASH = ".kgeval-trash-"


class OutputStage:
    """The outputs of one command, written to temporary paths and moved into place together at the end.

    Every command of the command line writes through one stage (``with OutputStage(...) as stage``):

    * ``stage.path(dest)`` gives a temporary file beside ``dest`` (created at once, so that a folder that cannot
      be written is reported before any work); ``dest`` is a named output: it replaces the file of that name. It
      may not be an input, an existing folder or, when the stage has a ``folder``, lie outside that folder;
    * ``stage.root`` (stages with a ``folder``) is a fresh staging folder inside ``folder`` that the command fills
      as if it were ``folder``; the names in it are the command's own choice (a system's, a test set's).

    A stage with a ``folder`` holds that folder's lock (:class:`~kgeval.io.lock.FolderLock`) from start to end: a
    second command on the same folder is refused in one line. Leaving the block without an error moves every
    file into place (:func:`~kgeval.io.commit.replace_together`): all of them, or, when any rename fails, none,
    with every previous file back as it was. A file of ``stage.root`` may replace only a file that the same
    command wrote there before, as listed (file by file) in ``folder/.kgeval-outputs.json``; any other file in its
    way is refused before anything moves. The listed files that the command does not write again are removed,
    and nothing else in ``folder`` is touched. No input is ever replaced, moved or removed: an input at or inside
    a destination stops the stage before anything moves. An error discards every temporary path and leaves
    ``folder`` as it was.
    """

    def __init__(self, command: str, inputs=(), folder: str | Path | None = None, input_folders=(),
                 replaces=()):
        self.command = command
        # the fixed outputs (relative to ``folder``) its help says it replaces even when unlisted: docs-figures'
        # PNGs in the checkout's docs/, which a person commits, never a file of the user's own
        self.replaces = set(replaces)
        self.inputs = [Path(p) for p in inputs if p is not None]
        self.input_folders = [Path(p) for p in input_folders if p is not None and Path(p).is_dir()]
        self.folder = Path(folder) if folder is not None else None
        self._files: list[tuple[Path, Path]] = []  # (temporary, destination)
        self._updates: list[Path] = []  # destinations the user asked to update in place
        self._root: Path | None = None
        self._staged: Path | None = None  # the staging folder's name, kept after the stage completed
        self._made: list[Path] = []  # folders this stage created, deepest first
        self._lock: FolderLock | None = None
        require_inputs(self.inputs)
        if self.folder is not None:
            if self.folder.exists() and not self.folder.is_dir():
                raise InputError(self.folder, None, "exists and is not a folder (the output is a folder)")
            for p in [*self.inputs, *self.input_folders]:
                if p.is_dir() and is_within(self.folder, p) or same_path(p, self.folder):
                    raise InputError(self.folder, None, f"the output folder lies inside the input {p}: choose "
                                                        "another folder, inputs are never written over")
            self._makedirs(self.folder)
            try:
                self._lock = FolderLock(self.folder, command)
                self._recover_abandoned()
            except BaseException:
                self.discard()
                raise

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

    def path(self, dest: str | Path, update: bool = False) -> Path:
        """A temporary file beside ``dest`` that replaces it when the stage completes. ``update``: the user asked
        for ``dest`` to be updated in place (``annotate-merge --merged`` equal to ``--into``), so it is replaced
        whoever wrote it."""
        dest = Path(dest)
        if update:
            self._updates.append(dest)
        self._check(dest)
        if not dest.parent.is_dir():
            self._makedirs(dest.parent)
        tmp = make_part(dest)  # named as kgeval's, so that the next command here sweeps it if this one is killed
        self._files.append((tmp, dest))
        return tmp

    @property
    def root(self) -> Path:
        """The staging folder (inside the output folder) to fill as if it were the output folder."""
        if self.folder is None:
            raise ValueError("a stage without a folder has no staging folder")
        if self._root is None:
            self._root = self._staged = Path(tempfile.mkdtemp(prefix=self._prefix(STAGING), dir=self.folder))
        return self._root

    @staticmethod
    def _prefix(kind: str) -> str:
        return owner_prefix(kind)

    def _recover_abandoned(self) -> None:
        """Under the folder's lock: put back what a commit killed part way had set aside (its journal says what),
        and remove the staging folders and temporary files of killed commands. Only this machine's, of processes
        that are gone; a running command's stay."""
        sweep(self.folder)
        for kind in (TRASH, STAGING):
            for path in sorted(self.folder.glob(f"{kind}{socket.gethostname()}-*")):
                pid = path.name[len(f"{kind}{socket.gethostname()}-"):].split("-")[0]
                if not pid.isdigit() or int(pid) == os.getpid() or alive(int(pid)):
                    continue
                if kind == STAGING:
                    shutil.rmtree(path, ignore_errors=True)
                elif not restore_abandoned(path):
                    raise InputError(path, None, "a killed kgeval command left backups here that could not all "
                                                 "be put back: restore them by hand (journal.json says where each "
                                                 "belongs), then remove the folder")

    def final(self, path: str | Path) -> Path:
        """Where a path inside :attr:`root` ends up (also after the stage completed)."""
        if self._staged is None or not Path(path).is_relative_to(self._staged):
            return Path(path)
        return self.folder / Path(path).relative_to(self._staged)

    # ---- the manifest: what each command wrote into the folder, file by file -------------------------------
    def _listed(self, folder: Path) -> dict[str, dict[str, set[str]]]:
        """command -> {"files", "folders"} (paths relative to the folder) from the manifest; a manifest of the
        earlier form (the top-level names of one command) counts every file under a listed folder."""
        try:
            with open(folder / MANIFEST, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        out: dict[str, dict[str, set[str]]] = {}
        if isinstance(data.get("commands"), dict):
            for command, entry in data["commands"].items():
                if isinstance(entry, dict):
                    out[command] = {key: {n for n in entry.get(key, []) if _relative(n)}
                                    for key in ("files", "folders")}
        elif isinstance(data.get("command"), str):
            files, folders = set(), set()
            for name in data.get("entries", []):
                if not (_relative(name) and "/" not in name):
                    continue
                top = folder / name
                if top.is_dir() and not top.is_symlink():
                    folders.add(name)
                    for path in top.rglob("*"):
                        rel = path.relative_to(folder).as_posix()
                        (folders if path.is_dir() and not path.is_symlink() else files).add(rel)
                else:
                    files.add(name)
            out[data["command"]] = {"files": files, "folders": folders}
        return out

    def _staged_files(self) -> list[str]:
        """Every file of the staging folder, relative to it (a link counts as a file, never followed)."""
        found = []
        for dirpath, dirnames, filenames in os.walk(self._root):
            here = Path(dirpath)
            found += [(here / n).relative_to(self._root).as_posix()
                      for n in filenames + [d for d in dirnames if (here / d).is_symlink()]]
        return sorted(found)

    def _refuse_in_the_way(self, folder: Path, rel: str, mine: set[str], goes: set[str], listed) -> None:
        """A staged file may replace only a file this command listed; a folder on its way must be a folder."""
        def whose(r: str) -> str:
            owners = [c for c, entry in listed.items() if r in entry["files"]]
            return f" (kgeval {owners[0]} wrote it)" if owners else ""

        parts = rel.split("/")
        for depth in range(1, len(parts)):
            anc = "/".join(parts[:depth])
            p = folder / anc
            if (p.is_symlink() or (p.exists() and not p.is_dir())) and anc not in goes:
                raise InputError(p, None, f"is in the way of the output {folder / rel}{whose(anc)}: move it "
                                          "away or choose another output folder")
        dest = folder / rel
        if dest.is_dir() and not dest.is_symlink():
            raise InputError(dest, None, "is a folder where kgeval writes a file: move it away or choose "
                                         "another output folder")
        if (dest.exists() or dest.is_symlink()) and rel not in mine:
            raise InputError(dest, None, f"exists and kgeval {self.command} did not write it here{whose(rel)} "
                                         f"(it is not listed in {folder / MANIFEST}); kgeval never writes "
                                         "over your files: move it away or choose another output folder")

    def _plan_folder(self, folder: Path, named: list[str], listing: bool) -> tuple[list, list, list, dict | None]:
        """What the commit does in one output folder: the staged files it puts (a stage's :attr:`root`), the
        listed files it removes, the folders of the last run to drop when empty, and the folder's new manifest.
        ``named``: the files of :meth:`path` in that folder (relative to it), which replace a file only where
        this command listed it there (``listing``: false for the workflow's own atomic writes)."""
        listed = self._listed(folder) if listing else {}
        mine = listed.get(self.command, {"files": set(), "folders": set()})
        root = self._root if folder == self.folder else None
        new = self._staged_files() if root is not None else []
        stale = sorted(set(mine["files"]) - set(new) - set(named)) if root is not None else []
        removes = [folder / rel for rel in stale if (folder / rel).is_symlink() or (folder / rel).is_file()]
        for dest in removes:
            self._check_entry(dest)
        for rel in new:
            self._check_entry(folder / rel)
        for rel in [*new, *(named if listing else [])]:
            self._refuse_in_the_way(folder, rel, mine["files"], set(stale), listed)
        if not listing:
            return [], removes, [], None
        puts = [(root / rel, folder / rel) for rel in new]
        folders = {"/".join(rel.split("/")[:i]) for rel in new for i in range(1, rel.count("/") + 1)}
        kept = sorted(f for f in folders if f in mine["folders"] or not (folder / f).is_dir() or f in stale)
        gone = sorted(set(mine["folders"]) - folders, key=lambda f: f.count("/"), reverse=True) if root else []
        # a command that names its files keeps the others it listed (campaign export's two formats)
        files = set(new) | set(named) | (set() if root is not None else mine["files"])
        listed[self.command] = {"files": files, "folders": set(kept) | (set() if root else mine["folders"])}
        manifest = {"version": 2, "commands": {
            c: {"files": sorted(f for f in e["files"] if c == self.command or (folder / f).exists()),
                "folders": sorted(e["folders"])} for c, e in sorted(listed.items())}}
        return puts, removes, gone, manifest

    def commit(self) -> None:
        pause_point("commit_start")  # every temporary complete, nothing moved: the kill tests' first point
        # mkstemp creates the file 0600; give it the mode an ordinary open() would, so that on a shared cluster the
        # group can read results when the umask allows it
        umask = current_umask()
        for tmp, _ in self._files:
            if tmp.is_file():
                os.chmod(tmp, 0o666 & ~umask)
        # one rule for every command that writes: in its output folder, or beside a file it names, it replaces
        # only what it listed there before (the workflow's own writes, command "", are Snakemake's to manage)
        by_folder: dict[Path, list[str]] = {}
        if self.folder is not None:
            by_folder[self.folder] = []
        for _, dest in self._files:
            home = self.folder if self.folder is not None and is_within(dest, self.folder) else dest.parent
            rel = Path(os.path.relpath(dest.absolute(), home.absolute())).as_posix()
            if dest not in self._updates and not (home == self.folder and rel in self.replaces):
                by_folder.setdefault(home, []).append(rel)
        puts, removes, gone_folders, manifests = list(self._files), [], [], []
        for folder, named in by_folder.items():
            listing = bool(self.command) and (bool(named) or (folder == self.folder and self._root is not None))
            p, r, g, manifest = self._plan_folder(folder, named, listing)
            puts += p
            removes += r
            if folder == self.folder:
                gone_folders = g
            if manifest is not None:
                manifests.append((folder, manifest))
        keep = None
        if self.folder is not None and (puts or removes or manifests):
            keep = Path(tempfile.mkdtemp(prefix=self._prefix(TRASH), dir=self.folder))
        try:
            for folder, manifest in manifests:
                if keep is not None and folder == self.folder:
                    tmp = keep / "outputs.json"
                else:  # beside a named file: a temporary file in its folder, renamed with the rest
                    tmp = make_part(folder / MANIFEST)
                    self._files.append((tmp, folder / MANIFEST))  # discarded with the rest on an error
                with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                    json.dump(manifest, fh, indent=2, sort_keys=True)
                    fh.write("\n")
                os.chmod(tmp, 0o666 & ~umask)
                puts.append((tmp, folder / MANIFEST))
            # a folder's lock already keeps other commands out; elsewhere lock the folders for the renames only
            several = len(puts) + len(removes) > 1
            with folders_locked({d.parent for _, d in puts} | {d.parent for d in removes}
                                if several and self._lock is None else ()):
                replace_together(puts, removes, keep)
        except OSError as exc:
            if keep is not None and keep.exists() and not (keep / "journal.json").exists():
                shutil.rmtree(keep, ignore_errors=True)  # failed before its first change
            if exc.filename is not None and keep is not None and str(exc.filename).startswith(str(keep)):
                raise OSError(exc.errno, exc.strerror, str(self.folder)) from None
            raise
        self._files = []
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            for rel in gone_folders:  # a folder of the last run that this one does not use: gone when empty
                with contextlib.suppress(OSError):
                    (self.folder / rel).rmdir()

    def _check_entry(self, dest: Path) -> None:
        for p in [*self.inputs, *self.input_folders]:
            if p.exists() and is_within(p, dest):
                raise InputError(dest, None, f"replacing it would remove the input {p}: choose another output "
                                             "folder")

    def release(self) -> None:
        """Let go of the output folder's lock (the end of the stage)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def discard(self) -> None:
        for tmp, _ in self._files:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._files = []
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
        self.release()
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
            finally:
                self.release()
            return
        if isinstance(exc, OSError) and exc.errno is not None:
            # a write that fails (a full disk) names no file, or names its temporary file: name the output the
            # user knows (its destination, the output folder, or the first output)
            named = {str(tmp): str(dest) for tmp, dest in self._files}
            if exc.filename is not None and str(exc.filename) in named:
                exc.filename = named[str(exc.filename)]
            elif exc.filename is not None and self._root is not None and str(exc.filename).startswith(str(self._root)):
                exc.filename = str(self.final(exc.filename))
            elif exc.filename is None:
                where = self.folder if self.folder is not None else next((d for _, d in self._files), None)
                exc.filename = None if where is None else str(where)
        self.discard()


def _relative(name) -> bool:
    """A manifest entry that names a path inside the folder (no absolute path, no ``..``, no hidden file)."""
    if not isinstance(name, str) or not name or name.startswith("/"):
        return False
    return all(part not in ("", ".", "..") and not part.startswith(".") for part in name.split("/"))

