"""The Knowledge Persistence stage's configuration as the rules read it (workflow/rules/helpers/kp.smk, at parse
time: this module imports no model or topology library): the validated ``kp`` block and what follows from it.
"""

from __future__ import annotations

from typing import Any

from ..config import full_testsets, model_settings
from ..errors import ConfigError


# ---- workflow configuration (read by workflow/rules/kp.smk at parse time: keep this module light) -------------
def kp_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The ``kp`` block of a validated configuration: the schema (config/schema.yaml) fills every default, and is
    the only place a default lives."""
    kp = config.get("kp")
    if not kp or "projections" not in kp or "power_w" not in kp.get("projection", {}):
        raise ConfigError("config key kp: read before validation filled its defaults (kgeval.config.validate_config, "
                          "or section_defaults for the block alone)")
    return kp


def kp_params(config: dict[str, Any]) -> dict[str, Any]:
    """Parameters of every KP computation (the same sample size, projections and seed everywhere)."""
    kp = kp_settings(config)
    return {k: kp[k] for k in ("sample_multiple", "projections", "seed", "p", "batch_size")}


def graph_kernel_params(config: dict[str, Any]) -> dict[str, Any] | None:
    """The graph-kernel baseline's parameters (kp.graph_kernel without ``enabled``), or None when it is off."""
    gk = dict(kp_settings(config)["graph_kernel"])
    return None if not gk.pop("enabled") else gk


def kp_testset(config: dict[str, Any], dataset: str) -> str:
    """The full test set of a dataset, whose evaluation.csv KP is correlated with."""
    full = full_testsets(config, dataset)
    if not full:
        raise ValueError(f"config kp.datasets: dataset {dataset!r} has no test set of kind full")
    return full[0]


def kp_datasets(config: dict[str, Any]) -> list[str]:
    """Datasets of the KP study: ``kp.datasets``, or every dataset with a full test set."""
    listed = kp_settings(config)["datasets"]
    if listed is None:
        return [d for d in config["datasets"] if full_testsets(config, d)]
    unknown = [d for d in listed if d not in config["datasets"]]
    if unknown:
        raise ValueError(f"config kp.datasets: unknown dataset(s) {unknown}")
    for d in listed:
        kp_testset(config, d)
    return list(listed)


def kp_early_stopping_models(config: dict[str, Any], dataset: str) -> list[str]:
    """Models of the early-stopping study on a dataset: ``kp.early_stopping_models``, or every model trained
    here with ``train.snapshots: true``; a listed model without snapshots is an error naming it."""
    with_snapshots = [m for m, spec in config["models"].items() if spec.get("source", "train") == "train"
                      and model_settings(config, dataset, m)["train"].get("snapshots", False)]
    listed = kp_settings(config)["early_stopping_models"]
    if listed is None:
        return with_snapshots
    bad = [m for m in listed if m not in with_snapshots]
    if bad:
        raise ValueError(f"config kp.early_stopping_models: {', '.join(bad)} on dataset {dataset} must be trained "
                         "here (source: train) with train.snapshots: true")
    return list(listed)


def kp_timing_models(config: dict[str, Any]) -> list[str]:
    """Models of the timing and carbon study: ``kp.timing_models`` in the run's model order, or every model; a
    listed model that the run does not have is an error naming it."""
    models = list(config["models"])
    listed = kp_settings(config)["timing_models"]
    if listed is None:
        return models
    bad = [m for m in listed if m not in models]
    if bad:
        raise ValueError(f"config kp.timing_models: {', '.join(bad)} not among the models ({', '.join(models)})")
    return [m for m in models if m in listed]


def variants_settings(config: dict[str, Any]) -> dict[str, Any] | None:
    """kp.variants without ``enabled``, or None when the study is off (the default run)."""
    v = dict(kp_settings(config)["variants"])
    return None if not v.pop("enabled") else v
