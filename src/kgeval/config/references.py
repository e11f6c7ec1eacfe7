"""Checks the schema cannot express: references between keys, manifest paths, outside systems' files, and each
model's hyperparameters against its class; and the per-model and per-test-set settings read from a config."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from ..data.manifest import read_manifest
from ..errors import ConfigError
from ..published import PINNED_RELEASE, RELEASE


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


def full_testsets(config: dict[str, Any], dataset: str) -> list[str]:
    """The test sets of kind ``full`` on ``dataset``, in config order."""
    return [t for t, spec in config["test_sets"].items() if spec["dataset"] == dataset and spec["kind"] == "full"]


#: the synthetic shapes of the scale stage (kgeval.scale.synth.SHAPES, whose module imports torch)
SCALE_SHAPES = ("wikidata5m", "wikikg2")


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
    if config.get("analysis", {}).get("reanalyze") == PINNED_RELEASE:
        need_manifest("analysis/reanalyze", RELEASE, folder=True)
    for name in config.get("evaluation", {}).get("trec_export", {}).get("test_sets", []):
        if name not in tests:
            raise ConfigError(f"config key evaluation/trec_export/test_sets: unknown test set {name!r}")
    for name in config.get("evaluation", {}).get("full_scores", []):
        if name not in tests:
            raise ConfigError(f"config key evaluation/full_scores: unknown test set {name!r}")
    from ..metrics.trec import parse_measure

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
    check_hoyt(config)
    check_scale(config.get("scale", {}))
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


def check_scale(scale: dict[str, Any]) -> None:
    """The scale stage's real graphs: a name that is no synthetic shape's (they share resources/scale/<name>/),
    models for each, and only for them."""
    graphs, models = scale.get("graphs", {}), scale.get("models", {})
    for name, graph in graphs.items():
        if name in SCALE_SHAPES:
            raise ConfigError(f"config key scale/graphs/{name}: the name of a synthetic shape (scale/shapes); "
                              "give your graph another name")
        if "prefix" in graph and graph["from"] != "wikidata5m":
            raise ConfigError(f"config key scale/graphs/{name}/prefix: only for from: wikidata5m")
        if name not in models:
            raise ConfigError(f"config key scale/models/{name}: no models for graph {name!r} (a real graph has no "
                              "planted systems: name your model files, e.g. {{TransE: transe.npz}})")
    for name in models:
        if name not in graphs:
            raise ConfigError(f"config key scale/models/{name}: not a graph of scale/graphs")


def check_hoyt(config: dict[str, Any]) -> None:
    """The case study's datasets, test sets and models exist (key ``hoyt``): its models train on its datasets,
    and its test sets' evaluation tables must hold the whole test split of a dataset."""
    hoyt = config.get("hoyt", {})
    tests = config["test_sets"]
    for name in hoyt.get("datasets", []):
        if name not in config["datasets"]:
            raise ConfigError(f"config key hoyt/datasets: unknown dataset {name!r}")
    for name in hoyt.get("test_sets", []):
        if name not in tests:
            raise ConfigError(f"config key hoyt/test_sets: unknown test set {name!r}")
        if tests[name]["kind"] != "full":
            raise ConfigError(f"config key hoyt/test_sets: {name!r} is a {tests[name]['kind']} test set; the case "
                              "study compares whole test splits (kind full)")
    for name in hoyt.get("models", []) if hoyt.get("datasets") else []:
        if name not in config["models"] or config["models"][name].get("source", "train") != "train":
            raise ConfigError(f"config key hoyt/models: {name!r} is not a model trained by this run")


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

    from ..models import model_class
    from ..models.base import KGEModel

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
    from ..models import MODELS, model_class
    from ..models.hparams import check_hparams
    from ..training.config import TrainConfig

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

