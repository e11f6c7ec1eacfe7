"""Where a test set's data are and how they are built: the workflow folder's ``resources/`` (built by Snakemake),
or, for an installed wheel, the user cache (built by the data stage's functions, :mod:`kgeval.data.cache`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..errors import KgevalError


class DataUnavailableError(KgevalError):
    """The data a test set needs is missing and the workflow could not build it (no network, no mirror)."""


def _repo_root() -> Path | None:
    """The checkout this package was installed from (an editable install), when it holds the workflow; None for
    an installed wheel, which builds data without the workflow (:mod:`kgeval.data.cache`)."""
    from ..home import checkout_root

    return checkout_root()


def _config_path(workdir: Path, config: str | os.PathLike | None) -> Path:
    from ..home import default_file

    if config is not None:
        path = Path(config)
        return path if path.is_absolute() or path.is_file() else workdir / path
    own = workdir / "config" / "config.yaml"
    return own if own.is_file() else default_file("config/config.yaml")  # the packaged default configuration


def _load_config(workdir: Path, config: str | os.PathLike | None) -> tuple[dict[str, Any], Path]:
    from ..config import load_config_file, validate_config
    from ..home import default_file, locate_defaults

    path = _config_path(workdir, config)
    schema = path.parent / "schema.yaml"
    if not schema.is_file():
        root = _repo_root()
        schema = root / "config" / "schema.yaml" if root else default_file("config/schema.yaml")
    cfg = locate_defaults(load_config_file(path))
    return validate_config(cfg, schema, models=False), path


def _data_root(workdir: Path) -> Path:
    """Where a test set's data are: ``workdir`` when it is a workflow folder (a ``Snakefile`` or a ``resources/``:
    :func:`kgeval.home.workflow_folder`), else the user cache (:func:`kgeval.home.cache_home`), whichever way
    kgeval is installed."""
    from ..home import cache_home, workflow_folder

    return workdir if workflow_folder(workdir) else cache_home()


def data_files(workdir: str | os.PathLike, dataset: str, testset: str) -> dict[str, Path]:
    """The data stage's files of one test set, as the rules declare them (``prepare_kg``: ``kg``;
    ``build_testset``: ``tsv``, ``questions``; ``workflow/rules/data.smk``), from the same functions
    ``kgeval evaluate`` uses (:func:`kgeval.external.command.testset_files`); ``tests/test_api.py`` checks them
    against the rules."""
    # the data stage's path functions themselves, not external.command's wrapper: that module imports the
    # placement stack (torch, scipy), which loading a test set does not need (issue 52: 12 s for a first call)
    from ..data.cache import kg_file, testset_file_paths

    resources = Path(workdir) / "resources"
    files = testset_file_paths(resources, testset)
    return {"kg": kg_file(resources, dataset), "tsv": files["tsv"], "questions": files["questions"]}


def _in_cache(workdir: Path) -> bool:
    from ..home import cache_home

    return workdir.resolve() == cache_home().resolve()


def build_log(workdir: Path) -> Path | None:
    """The log of this process's workflow build in ``workdir`` (None where the data are built without the
    workflow): one per process, so that a concurrent build never overwrites the log an error names."""
    if _in_cache(workdir) or not ((workdir / "Snakefile").is_file() or _repo_root() is not None):
        return None
    return workdir / "logs" / f"kgeval-api-build.{os.getpid()}.log"


def build_data(workdir: Path, config_path: Path, targets: list[Path]) -> None:
    """Build only ``targets`` into ``workdir``, once: in a workflow folder with the workflow (``snakemake --cores
    1``), in the user cache and without a workflow (an installed wheel) with the data stage's functions
    (:mod:`kgeval.data.cache`). Either way under the lock of ``workdir/resources``: a second process waits, then
    uses what the first built."""
    from ..data.cache import LOCK
    from ..io.lock import waiting_lock

    log = build_log(workdir)
    if log is None:
        _build_without_workflow(workdir, config_path, targets)
        return
    with waiting_lock(workdir / "resources" / LOCK, f"building {workdir / 'resources'}"):
        if all(t.is_file() for t in targets):  # built by the process this one waited for
            return
        _build_with_workflow(workdir, config_path, targets, log)


def _build_with_workflow(workdir: Path, config_path: Path, targets: list[Path], log: Path) -> None:
    extra: list[str] = []
    if not (workdir / "Snakefile").is_file():
        root = _repo_root()
        assert root is not None  # build_log answered None otherwise
        extra = ["--snakefile", str(root / "Snakefile"), "--directory", str(workdir)]
    rel = [str(t.relative_to(workdir)) if t.is_relative_to(workdir) else str(t) for t in targets]
    exe = shutil.which("snakemake") or str(Path(sys.executable).with_name("snakemake"))
    args = ["--cores", "1", "--configfile", str(config_path), "--replace-workflow-config", *extra]
    cmd = [exe, *args, "--", *rel]
    shown = " ".join(["cd", str(workdir), "&&", "snakemake", *args, *rel])
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        returncode = _follow(cmd, workdir, fh, log)
    if returncode != 0 or not all(t.is_file() for t in targets):
        raise DataUnavailableError(
            f"could not build the test set's data (log: {log}); without network access set KGEVAL_MIRROR to a "
            f"data mirror folder (or `mirror:` in the config) and run: {shown}")
    log.unlink()  # built: snakemake keeps its own log of the run in .snakemake/log/


_STEPS = re.compile(r"^(\d+) of (\d+) steps")  # snakemake's "3 of 7 steps (43%) done"


def _follow(cmd: list[str], workdir: Path, fh, log: Path) -> int:
    """Run the data build, its output into ``log``, and report its progress from snakemake's "N of M steps"
    lines: a build from the mirror takes minutes on a loaded 2-core machine, which printed nothing before
    (issue 52)."""
    import logging

    from ..progress import Progress

    logging.getLogger(__name__).info("building the test set's data in %s with snakemake, once (log: %s)",
                                     workdir, log)
    with Progress(None, "building the test set's data", unit="steps") as progress:
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                bufsize=1)
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            m = _STEPS.match(line)
            if m:
                progress.total = int(m[2])
                progress.update(int(m[1]) - progress.done)
        return proc.wait()


def _build_without_workflow(workdir: Path, config_path: Path, targets: list[Path]) -> None:
    """The targets (files of ``data_files``) built by the data stage's step functions into
    ``workdir/resources``."""
    from ..data.cache import DataBuilder
    from ..home import default_file

    cfg, _ = _load_config(workdir, config_path)
    res = workdir / "resources"
    builder = DataBuilder(cfg, default_file(cfg["manifest"]), res)
    from ..progress import Progress

    wanted = {t.resolve() for t in targets}
    testsets = [t for t, spec in cfg["test_sets"].items()
                if {data_files(workdir, spec["dataset"], t)[k].resolve() for k in ("tsv", "questions")} & wanted]
    try:
        # a download and a build from the mirror take minutes on a loaded 2-core machine: say how far it is
        with Progress(len(testsets), f"building test set data into {res}", unit="test sets") as progress:
            for testset in testsets:
                builder.build_testset(testset)
                progress.update(1, last=testset)
        for dataset in cfg["datasets"]:
            if data_files(workdir, dataset, "-")["kg"].resolve() in wanted:
                builder.build_kg(dataset)
    except (KgevalError, OSError) as exc:
        raise DataUnavailableError(f"could not build the test set's data into {res}: {exc}; without network "
                                   "access set KGEVAL_MIRROR to a data mirror folder (or `mirror:` in the "
                                   "config)") from exc
    missing = [t for t in targets if not t.is_file()]
    if missing:
        raise DataUnavailableError(f"{missing[0]}: not a file the data stage builds")

