"""What a SYSTEM argument of ``kgeval evaluate`` is, and how it becomes score dumps.

A SYSTEM is one of

* a **TREC run file** for one test set, written ``TESTSET=PATH``, or just ``PATH`` when the file is named after
  its test set (``FB-Test-S-C.run``, ``FB-Test-O.run.gz``; suffixes ``.run``, ``.txt``, ``.trec``, then ``.gz``);
* a **folder of run files** named that way, one per test set (``myrun/FB-Test-O.run.gz``, ...);
* a **PyKEEN folder** written by ``save_to_directory`` (``trained_model.pkl``; needs ``kgeval[pykeen]``): a full
  pickle, which runs code from the file when loaded, so it is refused unless the user opts in (``trust_pickle``);
* a **kgeval checkpoint** (``model.pt`` with its ``model.pt.json`` sidecar, as the workflow writes it);
* a **LibKGE checkpoint** (any other ``.pt``; read through kgeval's restricted unpickler).

Models are scored on every test set of the dataset through the same dump step as the study's models
(``kgeval.scores.steps.dump_model_scores``), run files on the test sets they are for (``kgeval.external.runfile``).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..data.kg import KnowledgeGraph
from ..errors import InputError
from ..io import sha256_file
from ..limits import read_text
from . import pykeen as pykeen_io
from .runfile import dump_run

log = logging.getLogger(__name__)

RUN_SUFFIX = re.compile(r"(\.(run|txt|trec))?(\.gz)?$")


@dataclass
class System:
    name: str
    kind: str  # "run", "pykeen", "kgeval", "libkge"
    path: Path
    runs: dict[str, Path] = field(default_factory=dict)  # test set -> run file (kind "run")
    trust_pickle: bool = False  # kind "pykeen": the user vouches for the pickle

    def files(self) -> list[Path]:
        """The input files this system is read from (never written, renamed or moved)."""
        if self.kind == "run":
            return list(self.runs.values())
        if self.kind == "kgeval":
            return [self.path, Path(str(self.path) + ".json")]
        return [self.path]

    def testsets(self, available: list[str]) -> list[str]:
        return [t for t in available if t in self.runs] if self.kind == "run" else list(available)


def _run_testset(path: Path, testsets: list[str]) -> str | None:
    stem = RUN_SUFFIX.sub("", path.name)
    return stem if stem in testsets else None


def runs_in_folder(folder: Path, testsets: list[str]) -> dict[str, Path]:
    """Test set -> run file, for the files of ``folder`` named after one of ``testsets``."""
    return {t: p for p in sorted(folder.iterdir()) if p.is_file() and (t := _run_testset(p, testsets))}


def parse_system(spec: str, testsets: list[str], name: str | None = None, trust_pickle: bool = False) -> System:
    """One SYSTEM argument (see the module docstring) against the dataset's test sets. A PyKEEN folder is refused
    here, before any work, unless ``trust_pickle``."""
    prefix, _, rest = spec.partition("=")
    if rest and prefix in testsets:
        path = Path(rest)
        if not path.is_file():
            raise InputError(path, None, "run file not found")
        return System(name or path.name.split(".")[0], "run", path, {prefix: path})
    path = Path(spec)
    if not path.exists():
        raise InputError(path, None, "no such file or folder (a SYSTEM is a run file, a folder of run files, a "
                                     "PyKEEN folder or a checkpoint)")
    if path.is_dir():
        if pykeen_io.is_pykeen_dir(path):
            if not trust_pickle:
                pykeen_io.refuse_pickle(path)
            return System(name or path.name, "pykeen", path, trust_pickle=True)
        runs = runs_in_folder(path, testsets)
        if not runs:
            raise InputError(path, None, f"neither a PyKEEN folder ({pykeen_io.MODEL_FILE}) nor a folder of run "
                                         f"files named after a test set ({', '.join(testsets)})")
        return System(name or path.name, "run", path, runs)
    if path.suffix == ".pt":
        side = Path(str(path) + ".json")
        kind = "kgeval" if side.is_file() else "libkge"
        default = path.parent.name if path.stem == "model" else path.stem  # results/models/<d>/<model>/model.pt
        return System(name or default, kind, path)
    testset = _run_testset(path, testsets)
    if testset is None:
        raise InputError(path, None, f"which test set is this run for? Write TESTSET={path} or name the file after "
                                     f"its test set ({', '.join(testsets)})")
    return System(name or path.name.split(".")[0], "run", path, {testset: path})


def load_scorer(system: System, kg: KnowledgeGraph):
    """The model of a checkpoint or PyKEEN system, with ``score_questions``, in eval mode on the CPU."""
    if system.kind == "pykeen":
        if not system.trust_pickle:
            pykeen_io.refuse_pickle(system.path)
        return pykeen_io.load_pykeen(system.path, kg)
    if system.kind == "kgeval":
        from ..errors import CorruptFileError
        from ..models.checkpoint import load_model

        # a user's checkpoint is input, not a derived file: every problem is an error naming it, and the file
        # and its sidecar are never set aside as corrupt (only the pipeline's own checkpoints are)
        side = Path(str(system.path) + ".json")
        text = read_text(side, "utf-8")
        try:
            info = json.loads(text)
        except ValueError as exc:
            raise InputError(side, None, f"not a kgeval checkpoint sidecar: malformed JSON ({exc})") from None
        if not isinstance(info, dict):
            raise InputError(side, None, f"not a kgeval checkpoint sidecar: a JSON {type(info).__name__}, "
                                         "expected an object with the checkpoint's sha256")
        recorded = info.get("sha256")
        actual = sha256_file(system.path)
        if recorded != actual:
            raise InputError(system.path, None, f"SHA-256 {actual} differs from {recorded} in its .json sidecar")
        try:
            return load_model(system.path, kg, device="cpu", set_aside_corrupt=False)
        except CorruptFileError as exc:
            raise InputError(exc.path, None, exc.problem) from None
    if system.kind == "libkge":
        from ..models.libkge import libkge_model

        # pinned to the file's own hash: the user vouches for a local file; the restricted unpickler still applies
        return libkge_model(system.path, kg, sha256_file(system.path))
    raise ValueError(f"system {system.name} ({system.kind}) has no model")


def dump_system(system: System, kg: KnowledgeGraph, testset: str, files: dict[str, str], out: Path,
                k: int = 1000, allow_missing: bool = False, scorer=None, memory_budget_mb: float = 1024) -> dict:
    """Write the dump of ``system`` on ``testset`` (``files``: its ``tsv`` and ``questions`` paths) to ``out``;
    returns the dump's meta (``run_depth``, ``run_complete`` …)."""
    if system.kind == "run":
        return dump_run(system.runs[testset], None, files["tsv"], files["questions"], out, system.name, testset,
                        allow_missing, kg=kg)
    from ..scores.steps import dump_model_scores

    meta = {"source": system.kind, "system_path": str(system.path)}
    dump_model_scores(scorer, kg, files["tsv"], files["questions"], out, system.name, testset, k=k,
                      memory_budget_mb=memory_budget_mb, meta=meta)
    return {**meta, "run_depth": k, "run_complete": True}
