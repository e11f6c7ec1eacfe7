"""The data of one test set without the workflow: the same step functions the data rules call
(``workflow/rules/data.smk``: download, extract_splits, synthesize, prepare_kg, build_testset), called directly, in
dependency order, for exactly the files one test set needs.

An installed kgeval (no Snakefile, no checkout) builds into the user cache (:func:`kgeval.home.data_home`), laid out
as the workflow's ``resources/``: ``downloads/<mirror path>``, ``datasets/<dataset>/``, ``synth/<dataset>/``,
``testsets/<test set>.*``. Each step writes into a staging folder beside its outputs and moves them into place only
when it succeeded, so a file that exists is whole, and an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .kg import CATEGORIES
from .synth import ROLE_FILES

log = logging.getLogger(__name__)

LOCK = ".kgeval-build.lock"

KG_ROLES = ("train", "valid", "test", "names", "categories", "relation_types", "entity_types")


@contextmanager
def _staged(root: Path) -> Iterator[Path]:
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _publish(staged: dict[Path, Path]) -> None:
    """Move each staged file onto its final path (the step succeeded: all of them exist)."""
    for src, dst in staged.items():
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)


def kg_file(resources: str | Path, dataset: str) -> Path:
    """Where the data stage writes a dataset's knowledge graph under ``resources`` (rule ``prepare_kg``)."""
    return Path(resources) / "datasets" / dataset / "kg.npz"


def testset_file_paths(resources: str | Path, testset: str) -> dict[str, Path]:
    """Where the data stage writes a test set under ``resources`` (rule ``build_testset``)."""
    folder = Path(resources) / "testsets"
    return {"tsv": folder / f"{testset}.tsv", "questions": folder / f"{testset}.questions.tsv",
            "summary": folder / f"{testset}.json"}


class DataBuilder:
    """Builds the data stage's files of test sets into ``root`` (a ``resources/`` folder).

    Args:
        config: a validated workflow configuration (its ``datasets``, ``test_sets``, ``mirror``, ``prefer_mirror``,
            ``download_timeout``).
        manifest: the manifest file (mirror path, URL, SHA-256 of every download).
        root: the folder to build into.
    """

    def __init__(self, config: dict[str, Any], manifest: str | os.PathLike, root: str | os.PathLike):
        self.config = config
        self.manifest = Path(manifest)
        self.root = Path(root)
        self._held = 0

    @contextmanager
    def _lock(self) -> Iterator[None]:
        """One builder per ``root`` at a time, across processes: two processes on a fresh cache would each build
        the same dataset and the second rename would find the first's folder in its way. The second waits, then
        finds the files there and uses them."""
        from ..io.lock import waiting_lock

        if self._held:
            self._held += 1
            try:
                yield
            finally:
                self._held -= 1
            return
        with waiting_lock(self.root / LOCK, f"building {self.root}"):
            self._held = 1
            try:
                yield
            finally:
                self._held = 0

    # ---- paths, as the rules name them (workflow/rules/common.smk) -------------------------------------------
    def _dataset(self, dataset: str) -> dict[str, Any]:
        return self.config["datasets"][dataset]

    def _roles(self, dataset: str) -> list[str]:
        spec = self._dataset(dataset)
        if spec["source"] == "synth":
            roles = list(KG_ROLES)
            if spec.get("synth", {}).get("annotations", True):
                roles += ["sample_idxs", "samples", "annotations", "pooling_depth"]
            return roles
        return ["train", "valid", "test", *spec.get("files", {})]

    def _role_path(self, dataset: str, role: str) -> Path:
        spec = self._dataset(dataset)
        if spec["source"] == "synth":
            return self.root / "synth" / dataset / ROLE_FILES[role]
        if role in ("train", "valid", "test"):
            return self.root / "datasets" / dataset / "splits" / f"{role}.txt"
        return self.root / "downloads" / spec["files"][role]

    def kg_path(self, dataset: str) -> Path:
        return kg_file(self.root, dataset)

    def testset_paths(self, testset: str) -> dict[str, Path]:
        return testset_file_paths(self.root, testset)

    # ---- steps -----------------------------------------------------------------------------------------------
    def download(self, mirror_path: str) -> Path:
        from .steps import download_resource

        out = self.root / "downloads" / mirror_path
        if not out.is_file():  # fetch writes through a temporary file: nothing partial appears at ``out``
            out.parent.mkdir(parents=True, exist_ok=True)
            download_resource(self.manifest, mirror_path, out, mirror=self.config.get("mirror"),
                              prefer_mirror=self.config.get("prefer_mirror", True),
                              timeout=self.config.get("download_timeout", 30.0))
        return out

    def _category_files(self, folder: str) -> list[str]:
        return [f"{folder}/{cat}.txt" for cat in CATEGORIES]

    def _ensure_role(self, dataset: str, role: str) -> Path:
        spec = self._dataset(dataset)
        path = self._role_path(dataset, role)
        if spec["source"] == "synth":
            self._synthesize(dataset)
        elif role in ("train", "valid", "test"):
            self._extract(dataset)
        elif role == "categories":
            for rel in self._category_files(spec["files"][role]):
                self.download(rel)
        else:
            self.download(spec["files"][role])
        return path

    def _synthesize(self, dataset: str) -> None:
        from .steps import synthesize_dataset

        folder = self.root / "synth" / dataset
        if folder.is_dir():
            return
        with _staged(self.root) as tmp:
            outputs = {role: str(tmp / name) for role, name in ROLE_FILES.items() if role != "categories"}
            (tmp / ROLE_FILES["categories"]).mkdir(parents=True, exist_ok=True)
            synthesize_dataset(self._dataset(dataset).get("synth", {}), outputs)
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, folder)

    def _extract(self, dataset: str) -> None:
        from .steps import extract_splits

        finals = {s: self._role_path(dataset, s) for s in ("train", "valid", "test")}
        if all(p.is_file() for p in finals.values()):
            return
        archive = self.download(self._dataset(dataset)["archive"])
        with _staged(self.root) as tmp:
            outputs = {s: str(tmp / f"{s}.txt") for s in finals}
            extract_splits(archive, tmp, outputs)
            _publish({Path(outputs[s]): finals[s] for s in finals})

    def build_kg(self, dataset: str) -> Path:
        with self._lock():
            return self._build_kg(dataset)

    def _build_kg(self, dataset: str) -> Path:
        from .steps import prepare_kg

        out = self.kg_path(dataset)
        if out.is_file():
            return out
        files: dict[str, str] = {}
        for role in KG_ROLES:
            if role in self._roles(dataset):
                path = self._ensure_role(dataset, role)
                files[role] = str(path / f"{CATEGORIES[0]}.txt" if role == "categories" else path)
        log.info("building the knowledge graph of %s into %s", dataset, out)
        with _staged(self.root) as tmp:
            prepare_kg(dataset, files, tmp / "kg.npz", tmp / "summary.json")
            _publish({tmp / "summary.json": out.with_name("summary.json"), tmp / "kg.npz": out})
        return out

    def build_testset(self, testset: str) -> dict[str, Path]:
        """The knowledge graph and the judgments and questions of ``testset`` (and, for a pooled test set, of its
        seed set), built when missing; the files by role (``kg``, ``tsv``, ``questions``)."""
        with self._lock():
            return self._build_testset(testset)

    def _build_testset(self, testset: str) -> dict[str, Path]:
        from .steps import build_testset

        spec = self.config["test_sets"][testset]
        dataset = spec["dataset"]
        kg = self._build_kg(dataset)
        paths = self.testset_paths(testset)
        if not (paths["tsv"].is_file() and paths["questions"].is_file()):
            files: dict[str, str] = {}
            seed = None
            if spec["kind"] == "sample":
                files["sample_idxs"] = str(self._ensure_role(dataset, "sample_idxs"))
                if "samples" in self._roles(dataset):
                    files["samples"] = str(self._ensure_role(dataset, "samples"))
            elif spec["kind"] == "pooled":
                files["annotations"] = str(self._ensure_role(dataset, "annotations"))
                files["pooling_depth"] = str(self._ensure_role(dataset, "pooling_depth"))
                seed = self._build_testset(spec["seed_set"])["tsv"]
            queries = self.download(spec["queries"]) if "queries" in spec else None
            log.info("building test set %s into %s", testset, paths["tsv"].parent)
            with _staged(self.root) as tmp:
                staged = {role: tmp / p.name for role, p in paths.items()}
                build_testset(kg, testset, spec["kind"], staged["tsv"], staged["questions"], files,
                              seed_set=seed, queries=queries, summary=staged["summary"])
                # the judgments last: a test set counts as built once its .tsv exists
                _publish({staged[r]: paths[r] for r in ("summary", "questions", "tsv")})
        return {"kg": kg, "tsv": paths["tsv"], "questions": paths["questions"]}
