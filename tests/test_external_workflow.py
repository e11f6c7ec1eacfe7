"""Outside systems in the workflow (config key external_systems): the config checks, and the step that turns
one configured system into a score dump beside the study's models."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from helpers import random_scorer, write_run

from kgeval.config import validate_config
from kgeval.data.questions import load_questions
from kgeval.errors import ConfigError, InputError
from kgeval.external.steps import configured_system, import_system
from kgeval.external.systems import System, dump_system
from kgeval.metrics.evaluate import evaluate, qrels_at_depth
from kgeval.scores.dumps import load_dump

TESTSETS = ("Synth-Test-O", "Synth-Test-S", "Synth-Test-S-C")


def tiny_config(workdir, **external):
    config = yaml.safe_load((workdir / "config/tiny.yaml").read_text())
    config["manifest"] = str(workdir / "config/resources.tsv")
    config["external_systems"] = external
    return config


@pytest.mark.parametrize("entry, message", [
    ({"TransE": {"dataset": "Synth", "system": "x.pt"}}, "already a model of the study"),
    ({"Mine": {"dataset": "Nope", "system": "x.pt"}}, r"external_systems/Mine/dataset: unknown dataset 'Nope'"),
    ({"Mine": {"dataset": "Synth", "runs": {"Synth-Test-O": "o.run"}}},
     r"external_systems/Mine/runs: no run for test set\(s\) \['Synth-Test-S', 'Synth-Test-S-C'\]"),
    ({"Mine": {"dataset": "Synth", "runs": {t: "r.run" for t in (*TESTSETS, "Synth2")}}},
     r"external_systems/Mine/runs: \['Synth2'\] are not test sets of dataset Synth"),
    ({"Mine": {"dataset": "Synth", "system": "a.pt", "runs": {}}}, "external_systems"),
    ({"Mine": {"dataset": "Synth", "systen": "a.pt"}}, "systen"),
])
def test_config_names_the_bad_key(workdir, entry, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(tiny_config(workdir, **entry), workdir / "config/schema.yaml", models=False)


def test_config_accepts_both_forms(workdir):
    ok = tiny_config(workdir, A={"dataset": "Synth", "system": "folder"},
                     B={"dataset": "Synth", "runs": {t: f"{t}.run" for t in TESTSETS}})
    checked = validate_config(copy.deepcopy(ok), workdir / "config/schema.yaml", models=False)
    assert checked["external_systems"]["A"]["allow_missing"] is False  # the schema's default


def _files(workdir, testset):
    t = workdir / "resources/testsets"
    return {"kg_path": str(workdir / "resources/datasets/Synth/kg.npz"), "testset_path": str(t / f"{testset}.tsv"),
            "questions_path": str(t / f"{testset}.questions.tsv")}


def test_runs_and_run_folder_give_the_same_dump_as_dump_system(workdir, synth_kg, tmp_path):
    """The step reads a run named in ``runs`` or found in a ``system`` folder exactly as ``kgeval evaluate`` does
    (dump_system), and the dump evaluates to finite metrics with the system's name."""
    kg = synth_kg
    folder = tmp_path / "runs"
    folder.mkdir()
    for t in TESTSETS:
        qs = load_questions(workdir / f"resources/testsets/{t}.questions.tsv", kg)
        write_run(folder / f"{t}.run", kg, qs, random_scorer(kg, seed=3, ties=True), depth=50)
    t = "Synth-Test-S-C"
    by_runs = import_system("Mine", {"dataset": "Synth", "runs": {x: str(folder / f"{x}.run") for x in TESTSETS}},
                            out=str(tmp_path / "a"), testset_name=t, **_files(workdir, t))
    by_folder = import_system("Mine", {"dataset": "Synth", "system": str(folder)}, out=str(tmp_path / "b"),
                              testset_name=t, **_files(workdir, t))
    f = _files(workdir, t)
    direct = dump_system(System("Mine", "run", folder / f"{t}.run", {t: folder / f"{t}.run"}), kg, t,
                         {"tsv": f["testset_path"], "questions": f["questions_path"]}, tmp_path / "c")
    assert by_runs["run_depth"] == by_folder["run_depth"] == direct["run_depth"] == 50
    a, b, c = (load_dump(tmp_path / x) for x in "abc")
    for col in ("n_gt", "n_eq", "retrieved", "run_entity", "run_score"):  # run_score: NaN past a question's run
        same = {"equal_nan": True} if col == "run_score" else {}
        assert np.array_equal(getattr(a, col), getattr(b, col), **same)
        assert np.array_equal(getattr(a, col), getattr(c, col), **same)
    ev = evaluate(a, qrels_at_depth(a), kg.relation_category, [])
    assert a.meta["model"] == "Mine" and 0 < ev.summary["micro_mrr"] < 1 and np.isfinite(ev.summary["macro_mrr"])


def test_checkpoint_system_scores_like_its_model(workdir, synth_kg, tmp_path):
    """A kgeval checkpoint named in ``system`` goes through the model dump step (every entity ranked)."""
    from kgeval.training.steps import train_seed

    kg_path = _files(workdir, "Synth-Test-O")["kg_path"]
    ckpt = tmp_path / "m" / "seed0.pt"
    ckpt.parent.mkdir()
    train_seed(kg_path, "DistMult", {"dim": 8, "reciprocal": True},
               {"regime": "1vsAll", "lr": 0.01, "batch_size": 256, "max_epochs": 1, "eval_every": 1}, 0, ckpt,
               tmp_path / "work", device="cpu")
    meta = import_system("Mine", {"dataset": "Synth", "system": str(ckpt)}, out=str(tmp_path / "d"),
                         testset_name="Synth-Test-O", k=30, **_files(workdir, "Synth-Test-O"))
    d = load_dump(tmp_path / "d")
    assert meta["source"] == "kgeval" and meta["run_complete"] and d.meta["model"] == "Mine"
    assert d.n_gt.max() < synth_kg.num_entities and d.run_entity.shape[1] == 30


def test_missing_run_for_a_test_set_is_named(workdir, tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "Synth-Test-O.run").write_text("")
    with pytest.raises(ConfigError, match=r"external_systems/Mine/system: .* no run file named after test set "
                                          r"Synth-Test-S"):
        configured_system("Mine", {"dataset": "Synth", "system": str(tmp_path / "runs")}, "Synth-Test-S")
    with pytest.raises(InputError, match="no such file or folder"):
        configured_system("Mine", {"dataset": "Synth", "system": str(tmp_path / "none.pt")}, "Synth-Test-S")
