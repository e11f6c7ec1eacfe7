"""Configuration checks: the JSON schema, references between keys, and model hyperparameters.

The schema (``config/schema.yaml``) checks types, bounds and unknown keys; this module reports its first error in
one line (key, what was expected, the closest valid key), checks that names used as references exist (a test
set's dataset, a pooled set's seed set, manifest paths, study roles), and checks each model's hyperparameters
against the types and bounds its class declares (``kgeval.models.hparams``), naming the offending key.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import yaml

from .data.manifest import read_manifest
from .errors import ConfigError, KgevalError
from .limits import scan


def validate_config(config: dict[str, Any], schema: str | Path, models: bool = True) -> dict[str, Any]:
    """Validate against the JSON schema (filling defaults), then check references and, with ``models``, every
    model's hyperparameters against its class (which imports torch). Returns the config."""
    check_schema(config, schema)
    check_references(config, models=models)
    return config


def check_schema(config: dict[str, Any], schema: str | Path) -> dict[str, Any]:
    """Validate against the JSON schema, filling defaults; the first error is raised as a one-line
    :class:`ConfigError` naming the key, what was expected and, for an unknown key, the closest valid one."""
    schema_obj = _read_schema(schema)
    if not isinstance(config, dict):
        raise ConfigError(f"the config is a {type(config).__name__}, expected a mapping of keys to values")
    _fill_and_check(config, schema_obj, schema_obj)
    return config


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (plain YAML keeps the last silently, so a
    repeated block would replace the first). Every config and schema kgeval reads goes through it."""

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.setdefault(key, line)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if first != line:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {first}, again on line {line})",
                    key_node.start_mark)
        return super().construct_mapping(node, deep)


def load_yaml(text_or_stream) -> Any:
    """Parse YAML with :class:`UniqueKeyLoader`."""
    return yaml.load(text_or_stream, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _read_schema(schema: str | Path) -> dict[str, Any]:
    try:
        with open(schema, encoding="utf-8") as fh:
            return load_yaml(fh)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{schema}: cannot read the config schema: {' '.join(str(exc).split())}") from None


def schema_key(schema: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The schema of one config key, e.g. ``("synth", "num_entities")`` (a top-level key or a ``$defs`` entry,
    then properties), for options that take the same values as a config key."""
    root = _read_schema(schema)
    node = root["$defs"][keys[0]] if keys[0] in root.get("$defs", {}) else root["properties"][keys[0]]
    for key in keys[1:]:
        node = node["properties"][key]
    return node


def _fill_and_check(instance: dict[str, Any], sub_schema: dict[str, Any], root: dict[str, Any]) -> None:
    """Validate ``instance`` against ``sub_schema`` (of the schema ``root``), filling defaults in place; the first
    error as a one-line :class:`ConfigError`."""
    import jsonschema

    validator = _with_defaults(jsonschema.validators.validator_for(root))(sub_schema)
    # an unknown key first: a misspelt key also shows up as a missing required one
    errors = sorted(validator.iter_errors(instance),
                    key=lambda e: (e.validator != "additionalProperties", [str(p) for p in e.absolute_path]))
    if errors:
        raise ConfigError(schema_error_message(errors[0]))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def schema_error_message(error: Any) -> str:
    """One line for a jsonschema error: never the schema or a whole config block (snakemake's ``validate``
    printed both, some 2,000 lines for a typo)."""
    key = "/".join(str(p) for p in error.absolute_path)
    where = f"config key {key}" if key else "config"
    instance, expected = error.instance, error.validator_value
    if error.validator == "additionalProperties" and isinstance(instance, dict) and expected is False:
        allowed = list(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        unknown = [k for k in instance if k not in allowed and not any(re.search(p, str(k)) for p in patterns)]
        name = str(unknown[0]) if unknown else "?"
        close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return (f"config key {key + '/' if key else ''}{name}: unknown key (expected one of: "
                f"{', '.join(allowed)}){hint}")
    if error.validator == "uniqueItems":
        dup = next((v for i, v in enumerate(instance) if v in instance[:i]), None)
        return f"{where}: {_short(dup)} is listed twice (the values must be distinct)"
    if len(error.message) > 200:  # jsonschema's message quotes the whole instance: name the problem only
        if error.validator == "type":
            types = expected if isinstance(expected, list) else [expected]
            return f"{where}: {_short(instance)} is not of type {' or '.join(map(repr, types))}"
        if error.validator == "enum":
            return f"{where}: {_short(instance)} is not one of {', '.join(map(repr, expected))}"
        return f"{where}: {_short(instance)} fails {error.validator} {_short(expected)}"
    return f"{where}: {error.message}"


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file; a missing or unreadable file, malformed YAML (with line and column) or a
    file that is not a mapping is a one-line :class:`ConfigError`."""
    try:
        with open(path, encoding="utf-8") as fh:
            scan(path)  # the size, line length and NUL bytes, before YAML reads it
            text = fh.read()
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        config = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: malformed YAML: {problem}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, found {type(config).__name__}")
    return config


def check_external_files(config: dict[str, Any], built: tuple[str, ...] = ()) -> None:
    """Every file or folder an ``external_systems`` entry names exists (else Snakemake would stop later with a
    MissingInputException naming no key), but for paths under the folders in ``built``, which the workflow's
    rules write (a checkpoint of its own training read as an outside system)."""
    for name, ext in config.get("external_systems", {}).items():
        paths = [(f"runs/{t}", p) for t, p in ext.get("runs", {}).items()]
        if "system" in ext:
            paths.append(("system", ext["system"]))
        for key, path in paths:
            if not Path(path).exists() and not any(str(Path(path)).startswith(b) for b in built):
                raise ConfigError(f"config key external_systems/{name}/{key}: {path}: no such file or folder")


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


def section_defaults(schema: str | Path, key: str, value: dict[str, Any] | None = None) -> dict[str, Any]:
    """The top-level block ``key`` (``value``, or empty) with the schema's defaults filled in, as validating a
    whole config does: for code and tests that read one block without a whole config."""
    import copy

    root = _read_schema(schema)
    block = copy.deepcopy(value) if value is not None else {}
    _fill_and_check(block, {"$defs": root.get("$defs", {}), **root["properties"][key]}, root)
    return block


def _with_defaults(validator_cls):
    validate_properties = validator_cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(prop, sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema_extend(validator_cls, {"properties": set_defaults})


def jsonschema_extend(validator_cls, validators):
    import jsonschema

    return jsonschema.validators.extend(validator_cls, validators)


def full_testsets(config: dict[str, Any], dataset: str) -> list[str]:
    """The test sets of kind ``full`` on ``dataset``, in config order."""
    return [t for t, spec in config["test_sets"].items() if spec["dataset"] == dataset and spec["kind"] == "full"]


def check_references(config: dict[str, Any], models: bool = True) -> None:
    datasets = config["datasets"]
    tests = config["test_sets"]
    manifest = read_manifest(config.get("manifest", "config/resources.tsv"))

    def need_manifest(key: str, path: str, folder: bool = False) -> None:
        ok = any(p.startswith(path.rstrip("/") + "/") for p in manifest) if folder else path in manifest
        if not ok:
            raise ConfigError(f"config key {key}: {path!r} is not in the manifest {config.get('manifest')}")

    for name, ds in datasets.items():
        if ds["source"] == "manifest":
            if "archive" not in ds:
                raise ConfigError(f"config key datasets/{name}/archive: required when source is manifest")
            need_manifest(f"datasets/{name}/archive", ds["archive"])
            for role, path in ds.get("files", {}).items():
                need_manifest(f"datasets/{name}/files/{role}", path, folder=(role == "categories"))
        elif ds.get("files"):
            raise ConfigError(f"config key datasets/{name}/files: only for source manifest")
    for name, ts in tests.items():
        if ts["dataset"] not in datasets:
            raise ConfigError(f"config key test_sets/{name}/dataset: unknown dataset {ts['dataset']!r}")
        ds = datasets[ts["dataset"]]
        synth_annotated = ds["source"] == "synth" and ds.get("synth", {}).get("annotations", True)
        if ts["kind"] == "sample":
            if ds["source"] == "manifest" and "sample_idxs" not in ds.get("files", {}):
                raise ConfigError(f"config key test_sets/{name}/kind: dataset {ts['dataset']} has no sample_idxs")
            if ds["source"] == "synth" and not synth_annotated:
                raise ConfigError(f"config key test_sets/{name}/kind: synthetic dataset {ts['dataset']} "
                                  "was generated without annotations")
        if ts["kind"] == "pooled":
            seed = ts.get("seed_set")
            if seed not in tests or tests[seed]["kind"] != "sample" or tests[seed]["dataset"] != ts["dataset"]:
                raise ConfigError(f"config key test_sets/{name}/seed_set: must name a sample test set of "
                                  f"dataset {ts['dataset']}, got {seed!r}")
            if ds["source"] == "manifest" and not {"annotations", "pooling_depth"} <= set(ds.get("files", {})):
                raise ConfigError(f"config key test_sets/{name}/kind: dataset {ts['dataset']} lacks "
                                  "annotations or pooling_depth files")
        if "queries" in ts:
            need_manifest(f"test_sets/{name}/queries", ts["queries"])
    for role, value in config["study"].items():
        if value is not None and value not in tests:
            raise ConfigError(f"config key study/{role}: unknown test set {value!r}")
    study = config["study"]
    if tests[study["sample"]]["kind"] != "sample" or tests[study["complete"]]["kind"] != "pooled":
        raise ConfigError("config key study: 'sample' must be a sample test set and 'complete' a pooled one")
    for name, ext in config.get("external_systems", {}).items():
        key = f"config key external_systems/{name}"
        if name in config["models"]:
            raise ConfigError(f"{key}: {name!r} is already a model of the study; give the outside system another name")
        if ext["dataset"] not in datasets:
            raise ConfigError(f"{key}/dataset: unknown dataset {ext['dataset']!r}")
        own = [t for t, ts in tests.items() if ts["dataset"] == ext["dataset"]]
        if "runs" in ext:
            stray = sorted(set(ext["runs"]) - set(own))
            if stray:
                raise ConfigError(f"{key}/runs: {stray} are not test sets of dataset {ext['dataset']}")
            lacking = [t for t in own if t not in ext["runs"]]
            if lacking:
                raise ConfigError(f"{key}/runs: no run for test set(s) {lacking} of dataset {ext['dataset']} "
                                  "(the study compares every system on every test set)")
    for name in config.get("evaluation", {}).get("trec_export", {}).get("test_sets", []):
        if name not in tests:
            raise ConfigError(f"config key evaluation/trec_export/test_sets: unknown test set {name!r}")
    for name in config.get("evaluation", {}).get("full_scores", []):
        if name not in tests:
            raise ConfigError(f"config key evaluation/full_scores: unknown test set {name!r}")
    from .metrics.trec import parse_measure

    for name in config.get("evaluation", {}).get("trec_measures", []):
        try:
            parse_measure(name)
        except ValueError as exc:
            raise ConfigError(f"config key evaluation/trec_measures: {exc}") from exc
    for name in config.get("pooling", {}).get("systems", []):
        if name not in config["models"]:
            raise ConfigError(f"config key pooling/systems: {name!r} is not a configured model")
    for name in config.get("evaluation", {}).get("run_depth_by_testset", {}):
        if name not in tests:
            raise ConfigError(f"config key evaluation/run_depth_by_testset: unknown test set {name!r}")
    depth = config.get("pooling", {}).get("depth", 10)
    if depth > run_depth(config, study["sample"]):
        raise ConfigError(f"config key pooling/depth: deeper than the run depth of {study['sample']} "
                          "(evaluation/run_depth, run_depth_by_testset)")
    export = config.get("evaluation", {}).get("trec_export", {})
    for name in export.get("test_sets", []):
        if export.get("depth", 0) > run_depth(config, name):
            raise ConfigError(f"config key evaluation/trec_export/depth: deeper than the run depth of {name}")
    if models:
        check_models(config)


def run_depth(config: dict[str, Any], testset: str) -> int:
    """K of the top-K run stored in a test set's score dumps: ``evaluation/run_depth_by_testset`` where it names
    the test set, else ``evaluation/run_depth``."""
    evaluation = config.get("evaluation", {})
    return int(evaluation["run_depth_by_testset"].get(testset, evaluation["run_depth"]))


def model_settings(config: dict[str, Any], dataset: str, model: str) -> dict[str, Any]:
    """A model's settings on one dataset: its ``model`` and ``train`` blocks with the dataset's overrides
    merged in key by key, its seeds and its source."""
    spec = config["models"][model]
    override = spec.get("datasets", {}).get(dataset, {})
    return {
        "source": spec.get("source", "train"),
        "model": {**spec.get("model", {}), **override.get("model", {})},
        "train": {**spec.get("train", {}), **override.get("train", {})},
        "seeds": list(spec.get("seeds", config.get("seeds", [0]))),
    }


def model_parameters(name: str) -> set[str]:
    """Names a model's constructor accepts (over its class hierarchy)."""
    import inspect

    from .models import model_class
    from .models.base import KGEModel

    names: set[str] = set()
    for cls in model_class(name).__mro__:
        if cls is object or not issubclass(cls, KGEModel):
            continue
        for p in inspect.signature(cls.__init__).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                names.add(p.name)
    return names - {"self", "num_entities", "num_relations", "graph"}


LIBKGE_MODELS = ("RESCAL", "TransE", "DistMult", "ComplEx", "ConvE", "RotatE")


def check_models(config: dict[str, Any]) -> None:
    """Every model is known and every model hyperparameter is a constructor argument of that model."""
    from .models import MODELS, model_class
    from .models.hparams import check_hparams
    from .training.config import TrainConfig

    datasets = config["datasets"]
    used = sorted({ts["dataset"] for ts in config["test_sets"].values()})
    for name, spec in config.get("models", {}).items():
        if name not in MODELS:
            raise ConfigError(f"config key models/{name}: unknown model; known: {', '.join(MODELS)}")
        if spec.get("source", "train") == "libkge":
            if name not in LIBKGE_MODELS:
                raise ConfigError(f"config key models/{name}/source: LibKGE published no {name} checkpoint "
                                  f"(only {', '.join(LIBKGE_MODELS)})")
            for ds in used:
                if ds not in spec.get("libkge", {}):
                    raise ConfigError(f"config key models/{name}/libkge/{ds}: missing (url and sha256 of the "
                                      "checkpoint for this dataset)")
            continue
        for ds in spec.get("datasets", {}):
            if ds not in datasets:
                raise ConfigError(f"config key models/{name}/datasets/{ds}: unknown dataset")
        try:
            accepted = model_parameters(name)
        except (ImportError, AttributeError):  # a model module not written yet: checked when it exists
            continue
        for ds in [None, *spec.get("datasets", {})]:
            settings = model_settings(config, ds, name) if ds else model_settings(config, "", name)
            key = f"models/{name}" + (f"/datasets/{ds}" if ds else "")
            unknown = sorted(set(settings["model"]) - accepted)
            if unknown:
                close = difflib.get_close_matches(unknown[0], sorted(accepted), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigError(f"config key {key}/model/{unknown[0]}: not a parameter of {name} "
                                  f"(accepted: {', '.join(sorted(accepted))}){hint}")
            bad = check_hparams(model_class(name), settings["model"])
            if bad:
                raise ConfigError(f"config key {key}/model/{bad[0]}: {bad[1]}")
            try:
                TrainConfig.from_dict(settings["train"])
            except ValueError as exc:
                raise ConfigError(f"config key {key}/train: {exc}") from exc
