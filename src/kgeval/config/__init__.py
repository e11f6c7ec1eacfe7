"""Configuration checks: the JSON schema, references between keys, and model hyperparameters.

The schema (``config/schema.yaml``) checks types, bounds and unknown keys; this module reports its first error in
one line (key, what was expected, the closest valid key), checks that names used as references exist (a test
set's dataset, a pooled set's seed set, manifest paths, study roles), and checks each model's hyperparameters
against the types and bounds its class declares (``kgeval.models.hparams``), naming the offending key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import KgevalError
from .files import MAX_YAML_NODES, expanded_size, load_config_file, load_yaml
from .references import (
    LIBKGE_MODELS,
    check_external_files,
    check_models,
    check_references,
    full_testsets,
    model_parameters,
    model_settings,
    run_depth,
)
from .schema import check_schema, schema_bound, schema_bounds, schema_file, schema_key, section_defaults


def validate_config(config: dict[str, Any], schema: str | Path, models: bool = True) -> dict[str, Any]:
    """Validate against the JSON schema (filling defaults), then check references and, with ``models``, every
    model's hyperparameters against its class (which imports torch). Returns the config."""
    check_schema(config, schema)
    check_references(config, models=models)
    return config


def validate_workflow_config(config: dict[str, Any], schema: str | Path, models: bool = True,
                             configfiles=()) -> dict[str, Any]:
    """The Snakefile's validation: :func:`validate_config` (after re-reading ``configfiles`` with the
    duplicate-key check, which Snakemake's own loader lacks); on a bad config a one-line message on stderr and exit status 1 before any job starts (an exception would make
    Snakemake print a traceback).

    The Snakefile passes ``models=False`` inside a cluster job (Snakemake's remote mode): the submitting process
    has checked the same config, and importing torch for the check would cost every job step two seconds."""
    import sys

    try:
        for path in configfiles:
            load_config_file(path)
        return validate_config(config, schema, models=models)
    except KgevalError as exc:
        print(f"kgeval: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None



__all__ = ["LIBKGE_MODELS", "MAX_YAML_NODES", "check_external_files", "check_models", "check_references",
           "check_schema", "expanded_size", "full_testsets", "load_config_file", "load_yaml", "model_parameters",
           "model_settings", "run_depth", "schema_bound", "schema_bounds", "schema_file", "schema_key", "section_defaults",
           "validate_config", "validate_workflow_config"]
