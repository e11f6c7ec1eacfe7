"""Training priorities: the workflow starts the trainings expected to take longest first."""

from __future__ import annotations

import yaml

from kgeval.config import model_settings
from kgeval.training.cost import EPOCH_SECONDS, expected_train_seconds


def test_expected_seconds_are_epochs_times_epoch_cost():
    assert expected_train_seconds("RotatE", {"max_epochs": 5}) == 5 * 254
    assert expected_train_seconds("DistMult", {"max_epochs": 3, "lr": 0.1}) == 186
    # no max_epochs: TrainConfig's default (10); an unknown model: the median epoch cost (81 s)
    assert expected_train_seconds("DistMult", {}) == 620
    assert sorted(EPOCH_SECONDS.values())[len(EPOCH_SECONDS) // 2] == 81
    assert expected_train_seconds("NewModel", {"max_epochs": 2}) == 162


def test_default_config_puts_the_longest_fb15k237_trainings_first():
    with open("config/config.yaml", encoding="utf-8") as fh:
        config = yaml.safe_load(fh)
    prio = {m: expected_train_seconds(m, model_settings(config, "FB15k-237", m)["train"])
            for m in config["models"] if config["models"][m].get("source", "train") == "train"}
    # the four longest jobs of the measured default run (README: HAKE 1550 s, RotatE 1268 s, HittER 1197 s,
    # CompGCN 924 s; the next, InteractE, 485 s)
    assert set(sorted(prio, key=prio.get, reverse=True)[:4]) == {"HAKE", "RotatE", "HittER", "CompGCN"}


def test_data_jobs_outrank_every_training():
    """Priorities do not flow upstream in Snakemake: the data jobs a training needs must outrank all trainings,
    or one dataset's trainings hold back the other dataset's kg (measured in the first full run: FB15k-237's kg
    was prepared only after all 13 WN18RR trainings)."""
    import re

    common = open("workflow/rules/common.smk", encoding="utf-8").read()
    data_priority = int(re.search(r"^DATA_PRIORITY = ([\d_]+)$", common, re.M)[1])
    blocks = re.split(r"^rule ", open("workflow/rules/data.smk", encoding="utf-8").read(), flags=re.M)[1:]
    with_priority = {b.split(":", 1)[0] for b in blocks if "priority: DATA_PRIORITY" in b}
    assert {"download", "extract_splits", "synthesize", "prepare_kg", "build_testset"} <= with_priority
    top = 0
    for name in ("config/config.yaml", "config/paper.yaml"):
        with open(name, encoding="utf-8") as fh:
            config = yaml.safe_load(fh)
        for dataset in config["datasets"]:
            for m in config["models"]:
                if config["models"][m].get("source", "train") == "train":
                    top = max(top, expected_train_seconds(m, model_settings(config, dataset, m)["train"]))
    assert 1000 < top < data_priority
