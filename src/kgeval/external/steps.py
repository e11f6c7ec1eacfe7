"""Workflow step of the outside systems (workflow/rules/external.smk): one configured outside system
(``external_systems:``) on one test set becomes a score dump beside the study's models, so that every table and
analysis downstream treats it as one more system."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..data.kg import KnowledgeGraph
from ..errors import ConfigError
from .pykeen import is_pykeen_dir
from .systems import System, dump_system, load_scorer, parse_system, runs_in_folder

log = logging.getLogger(__name__)


def configured_system(name: str, spec: dict[str, Any], testset: str) -> System:
    """The system an ``external_systems/<name>`` entry names, for one test set of its dataset."""
    if "runs" in spec:
        if testset not in spec["runs"]:
            raise ConfigError(f"config key external_systems/{name}/runs: no run for test set {testset}")
        path = Path(spec["runs"][testset])
        return System(name, "run", path, {testset: path})
    path = Path(spec["system"])
    if path.is_dir() and not is_pykeen_dir(path):  # a folder of run files, one per test set
        run = runs_in_folder(path, [testset]).get(testset)
        if run is None:
            raise ConfigError(f"config key external_systems/{name}/system: {path} holds no run file named after "
                              f"test set {testset} ({testset}.run, {testset}.run.gz, …) and is not a PyKEEN folder")
        return System(name, "run", run, {testset: run})
    return parse_system(spec["system"], [testset], name=name, trust_pickle=spec.get("trust_pickle", False))


def import_system(name: str, spec: dict[str, Any], kg_path: str, testset_path: str, questions_path: str, out: str,
                  testset_name: str, k: int = 1000, memory_budget_mb: float = 1024) -> dict[str, Any]:
    """The dump of outside system ``name`` (config entry ``spec``) on one test set; returns its meta."""
    system = configured_system(name, spec, testset_name)
    kg = KnowledgeGraph.load(kg_path)
    scorer = None if system.kind == "run" else load_scorer(system, kg)
    meta = dump_system(system, kg, testset_name, {"tsv": testset_path, "questions": questions_path}, Path(out), k=k,
                       allow_missing=spec.get("allow_missing", False), scorer=scorer,
                       memory_budget_mb=memory_budget_mb)
    log.info("outside system %s (%s, %s) on %s: dump %s", name, system.kind, system.path, testset_name, out)
    return meta
