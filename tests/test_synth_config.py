"""The synthetic generator and configuration validation."""

from __future__ import annotations

from copy import deepcopy
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import ROOT

from kgeval.config import validate_config
from kgeval.data.synth import SynthSpec, synthesize
from kgeval.errors import ConfigError


def test_synth_is_deterministic(tmp_path):
    a = synthesize(tmp_path / "a", seed=5, spec=SynthSpec(num_entities=80, num_relations=8))
    b = synthesize(tmp_path / "b", seed=5, spec=SynthSpec(num_entities=80, num_relations=8))
    for role in ("train", "test", "annotations", "pooling_depth"):
        assert Path(a[role]).read_bytes() == Path(b[role]).read_bytes()
    c = synthesize(tmp_path / "c", seed=6, spec=SynthSpec(num_entities=80, num_relations=8))
    assert Path(a["train"]).read_bytes() != Path(c["train"]).read_bytes()


def test_synth_planted_categories_hold(synth_kg):
    known = synth_kg.known()
    for r, cat in enumerate(synth_kg.relation_category):
        sub = known[known[:, 1] == r]
        if cat in ("one_to_one", "many_to_one"):  # each head has one tail
            assert len(np.unique(sub[:, 0])) == len(sub)
        if cat in ("one_to_one", "one_to_many"):  # each tail has one head
            assert len(np.unique(sub[:, 2])) == len(sub)


def test_synth_pools_hold_hidden_positives(synth_dir):
    labels = [line.split("\t")[3].strip() for line in Path(synth_dir["annotations"]).read_text().splitlines()]
    assert 0 < labels.count("Y") < labels.count("N")


def load(name):
    with open(ROOT / "config" / name, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.mark.parametrize("name", ["config.yaml", "tiny.yaml", "paper.yaml"])
def test_shipped_configs_validate(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    validate_config(load(name), ROOT / "config/schema.yaml")


def test_defaults_are_filled(monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = validate_config(load("tiny.yaml"), ROOT / "config/schema.yaml")
    assert cfg["prefer_mirror"] is True and cfg["download_timeout"] == 30


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(mirorr="/x"), r"config key mirorr: unknown key \(expected one of: mirror, .*\); did you mean 'mirror'\?"),
    (lambda c: c.update(prefer_mirror="yes"), r"config key prefer_mirror: 'yes' is not of type 'boolean'"),
    (lambda c: c["datasets"]["Synth"]["synth"].update(num_entities=3), r"config key datasets/Synth/synth/num_entities"),
    (lambda c: c["test_sets"]["Synth-Test-O"].update(kind="ful"), r"config key test_sets/Synth-Test-O/kind"),
    (lambda c: c["test_sets"]["Synth-Test-O"].update(dataset="Nope"), r"test_sets/Synth-Test-O/dataset: unknown dataset"),
    (lambda c: c["study"].update(second="Nope"), r"config key study/second: unknown test set 'Nope'"),
    (lambda c: c["test_sets"]["Synth-Test-S-C"].update(seed_set="Synth-Test-O"), r"test_sets/Synth-Test-S-C/seed_set"),
    (lambda c: c["evaluation"].update(run_depth_by_testset={"Synth-Test-X": 50}),
     r"evaluation/run_depth_by_testset: unknown test set 'Synth-Test-X'"),
    (lambda c: c["evaluation"].update(run_depth_by_testset={"Synth-Test-S": 5}),
     r"evaluation/run_depth_by_testset/Synth-Test-S: 5 is less than the minimum of 10"),
    (lambda c: c["pooling"].update(depth=60) or c["evaluation"].update(run_depth_by_testset={"Synth-Test-S": 50}),
     r"config key pooling/depth: deeper than the run depth of Synth-Test-S"),
    (lambda c: c["evaluation"].update(run_depth_by_testset={"Synth-Test-S-C": 50}),
     r"config key evaluation/trec_export/depth: deeper than the run depth of Synth-Test-S-C"),
])
def test_config_errors_name_the_key(edit, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = deepcopy(load("tiny.yaml"))
    edit(cfg)
    with pytest.raises(ConfigError, match=message):
        validate_config(cfg, ROOT / "config/schema.yaml")


def test_dataset_overrides_replace_only_the_given_keys(monkeypatch):
    from kgeval.config import model_settings

    monkeypatch.chdir(ROOT)
    cfg = load("tiny.yaml")
    cfg["models"]["DistMult"]["datasets"] = {"Synth2": {"train": {"max_epochs": 1}}}
    cfg = validate_config(cfg, ROOT / "config/schema.yaml")
    base = model_settings(cfg, "Synth", "DistMult")["train"]
    over = model_settings(cfg, "Synth2", "DistMult")["train"]
    assert over["max_epochs"] == 1 and base["max_epochs"] == 12
    assert {k: v for k, v in over.items() if k != "max_epochs"} == {k: v for k, v in base.items() if k != "max_epochs"}


def test_run_depth_per_test_set(monkeypatch):
    from kgeval.config import run_depth

    monkeypatch.chdir(ROOT)
    cfg = load("tiny.yaml")
    cfg["evaluation"]["run_depth_by_testset"] = {"Synth-Test-O": 20}
    cfg = validate_config(cfg, ROOT / "config/schema.yaml")
    assert run_depth(cfg, "Synth-Test-O") == 20
    assert run_depth(cfg, "Synth-Test-S") == cfg["evaluation"]["run_depth"] == 100
