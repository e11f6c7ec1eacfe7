"""Where kgeval finds its default files and keeps the data it builds, in a checkout and in an installed wheel.

The default configuration (``config/config.yaml``, ``schema.yaml``, ``resources.tsv``), the question templates
(``annotations/templates.tsv``) and the reference pack ``reference/default`` live once, in the checkout; building
the wheel copies them into the package as ``kgeval/_data/`` with the checkout's layout (``setup.py``), so that a
relative path of the default configuration (``manifest: config/resources.tsv``) means the same file in both.

The data a test set needs are built, outside a workflow folder (:func:`workflow_folder`), into the user cache:
``$KGEVAL_HOME/resources`` (default the platform's user cache folder: ``~/.cache/kgeval`` on Linux,
``~/Library/Caches/kgeval`` on macOS, ``%LOCALAPPDATA%\\kgeval\\Cache`` on Windows), laid out as the workflow's own
``resources/``, for a wheel and an editable install alike: where the package's code lives does not decide where a
user's data go.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HOME_ENV = "KGEVAL_HOME"
PACKAGED = Path(__file__).resolve().parent / "_data"  # the wheel's copy of the checkout's default files


def checkout_root() -> Path | None:
    """The checkout kgeval runs from (an editable install or ``PYTHONPATH=src``), when it holds the workflow."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "Snakefile").is_file() and (root / "config").is_dir() else None


def workflow_folder(folder: str | os.PathLike = ".") -> bool:
    """Whether ``folder`` is a workflow folder, whose own ``resources/`` holds the data: it has a ``Snakefile``
    (a checkout, where Snakemake jobs run) or a ``resources/`` the workflow built."""
    folder = Path(folder)
    return (folder / "Snakefile").is_file() or (folder / "resources").is_dir()


def resource_root() -> Path | None:
    """The folder the default files are read from: the wheel's ``kgeval/_data``, else the checkout."""
    if (PACKAGED / "config").is_dir():
        return PACKAGED
    return checkout_root()


def default_file(relative: str | os.PathLike) -> Path:
    """A default file by its path in the checkout (``config/config.yaml``): the working folder's own copy when it
    has one, else the installed one; the relative path itself when neither exists (its error names it)."""
    rel = Path(relative)
    if rel.is_absolute() or rel.exists():
        return rel
    root = resource_root()
    return root / rel if root is not None and (root / rel).exists() else rel


def cache_home() -> Path:
    """``$KGEVAL_HOME``, else the platform's user cache folder for kgeval."""
    value = os.environ.get(HOME_ENV)
    if value:
        return Path(value).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "kgeval" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "kgeval"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgeval"


def data_home() -> Path:
    """The folder the data stage builds into outside a checkout, laid out as the workflow's ``resources/``."""
    return cache_home() / "resources"


def locate_defaults(config: dict) -> dict:
    """Point the configuration's default files at the installed ones when the working folder lacks them (a config
    names them relative to the checkout: ``manifest: config/resources.tsv``). Before validation."""
    if isinstance(config, dict):
        config["manifest"] = str(default_file(config.get("manifest", "config/resources.tsv")))
    return config


def packaged_defaults(args) -> None:
    """``kgeval evaluate``'s default paths (``--config``, ``--schema``, ``--templates``, ``--resources``) where the
    working folder lacks them: the installed files, and the user cache's data outside a workflow folder."""
    for key in ("config", "schema", "templates"):
        if getattr(args, key, None) is not None:
            setattr(args, key, str(default_file(getattr(args, key))))
    if getattr(args, "resources", None) == "resources" and not workflow_folder("."):
        args.resources = str(data_home())
