"""The reproduce stage's step: the run's content manifest, written by the ``manifest`` rule at the end of a run."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..io import write_json
from .environment import environment_record
from .manifest import build_manifest

log = logging.getLogger(__name__)


def write_manifest_step(models: list[str], dumps: list[str], tables: list[str], findings: str | None, out: str,
                        config: dict[str, Any] | None = None, lock: str | None = None) -> dict[str, Any]:
    """Hash the run's trained models, score dumps and metrics tables (paths relative to ``out``'s folder, the
    results root), record its verdicts and environment, and write ``out`` (manifest.json)."""
    from ..training.config import config_hash

    manifest = build_manifest(Path(out).parent, models, dumps, tables, findings, environment_record(lock),
                              config_hash(config) if config is not None else None)
    write_json(out, manifest)  # sorted keys: the same content gives the same bytes
    log.info("manifest %s: %d artifacts", out, len(manifest["artifacts"]))
    return manifest
