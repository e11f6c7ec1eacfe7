"""Issue 18: bad hyperparameters refused up front, corrupted derived files set aside and rebuilt, outputs that
follow the umask, duplicate archive members, byte-reproducible checkpoints, one-line errors."""

from __future__ import annotations

import io
import logging
import os
import shutil
import stat
import subprocess
import tarfile
from copy import deepcopy
from pathlib import Path

import pytest
import torch
import yaml
from conftest import ROOT, tiny_kg

from kgeval.cli import main
from kgeval.config import model_parameters, validate_config
from kgeval.data.archive import safe_extract
from kgeval.data.labels import read_labels
from kgeval.errors import ChecksumError, ConfigError, InputError
from kgeval.io import atomic_open, sha256_file, write_json
from kgeval.models import MODELS, model_class
from kgeval.models.checkpoint import sidecar
from kgeval.training.config import TrainConfig
from kgeval.training.steps import train_seed
from kgeval.training.trainer import Trainer

SCHEMA = ROOT / "config/schema.yaml"


def tiny_config() -> dict:
    with open(ROOT / "config/tiny.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def weights(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# ---- 1. model hyperparameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value, problem", [(-3, r"-3 is not an integer >= 1 and <= 100000"),
                                            ("32", r"'32' \(str\) is not an integer"),
                                            (32.5, r"32.5 \(float\) is not an integer"),
                                            (True, r"True \(bool\) is not an integer")])
def test_bad_dim_is_refused_naming_model_and_key(value, problem, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = tiny_config()
    cfg["models"]["TransE"]["model"]["dim"] = value
    with pytest.raises(ConfigError, match=rf"^config key models/TransE/model/dim: {problem}"):
        validate_config(cfg, SCHEMA)


def test_dataset_override_hyperparameters_are_checked(monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = tiny_config()
    cfg["models"]["ConvE"]["datasets"] = {"Synth": {"model": {"input_dropout": 1.5}}}
    with pytest.raises(ConfigError, match=r"models/ConvE/datasets/Synth/model/input_dropout: 1.5 .* < 1"):
        validate_config(cfg, SCHEMA)


def test_every_constructor_argument_is_declared():
    from kgeval.models.hparams import declared_hparams

    for name in MODELS:
        assert set(declared_hparams(model_class(name))) == model_parameters(name), name


def _wrong(spec) -> object:
    """A value of the wrong type for a declared hyperparameter."""
    return "x" if spec.kind != "str" else 3


@pytest.mark.parametrize("name", MODELS)
def test_every_declared_hyperparameter_refuses_a_wrong_type(name, monkeypatch):
    from kgeval.models.hparams import declared_hparams

    monkeypatch.chdir(ROOT)
    base = tiny_config()
    for key, spec in declared_hparams(model_class(name)).items():
        cfg = deepcopy(base)
        cfg["models"].setdefault(name, {"model": {}})
        cfg["models"][name].setdefault("model", {})[key] = _wrong(spec)
        with pytest.raises(ConfigError, match=rf"^config key models/{name}/model/{key}: "):
            validate_config(cfg, SCHEMA)


def test_divisibility_and_choices():
    from kgeval.models.hparams import check_hparams

    assert check_hparams(model_class("ComplEx"), {"dim": 31})[0] == "dim"
    assert check_hparams(model_class("ComplEx"), {"dim": 32}) is None
    assert "a multiple of 8" in check_hparams(model_class("BiQUE"), {"dim": 12})[1]
    assert check_hparams(model_class("TransE"), {"norm": 3})[1] == "3 is not one of 1, 2"
    assert check_hparams(model_class("ConvE"), {"kernel_size": [3, 5]}) is None
    assert check_hparams(model_class("ConvE"), {"kernel_size": [3, 0]})[0] == "kernel_size"
    assert check_hparams(model_class("DistMult"), {"relation_dim": None}) is None
    assert check_hparams(model_class("DistMult"), {"dim": None})[0] == "dim"
    assert check_hparams(model_class("HittER"), {"source_mask": float("nan")})[0] == "source_mask"


def test_validate_config_cli_refuses_bad_dim_without_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = tiny_config()
    cfg["models"]["RotatE"]["model"]["dim"] = -3
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    assert main(["validate-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == "kgeval: error: config key models/RotatE/model/dim: -3 is not an integer >= 1 and <= 100000\n"


# ---- 2. corrupted derived files are set aside and rebuilt -----------------------------------------------------
def test_corrupted_work_checkpoint_is_set_aside_and_training_starts_over(synth_kg, tmp_path, caplog):
    cfg = dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=2, eval_every=1)
    hp = {"dim": 8, "reciprocal": True}
    ref = Trainer(synth_kg, "DistMult", hp, TrainConfig(**cfg), seed=0, device="cpu").fit()
    work = tmp_path / "seed0.partial.pt"
    part = Trainer(synth_kg, "DistMult", hp, TrainConfig(**cfg), seed=0, device="cpu")
    part.cfg.max_epochs = 1
    part.fit(work)
    damaged = work.read_bytes()[:-50]
    work.write_bytes(damaged)  # a kill between the checkpoint's rename and its sidecar's: a stale SHA-256
    with caplog.at_level(logging.WARNING):
        res = Trainer(synth_kg, "DistMult", hp, TrainConfig(**cfg), seed=0, device="cpu").fit(work)
    assert f"{work}: SHA-256" in caplog.text and "seed0.partial.pt.corrupt" in caplog.text
    assert (tmp_path / "seed0.partial.pt.corrupt").read_bytes() == damaged
    assert (tmp_path / "seed0.partial.pt.json.corrupt").is_file()
    assert res.epochs == 2 and [t["loss"] for t in res.trace] == [t["loss"] for t in ref.trace]
    a, b = weights(ref.model), weights(res.model)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_seed_selection_sets_aside_a_corrupted_seed_checkpoint(synth_kg, tmp_path):
    from kgeval.errors import CorruptFileError
    from kgeval.training.steps import select_best

    kg_path = tmp_path / "kg.npz"
    synth_kg.save(kg_path)
    train = dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=1)
    seeds = [tmp_path / f"seed{s}.pt" for s in (0, 1)]
    for s, out in enumerate(seeds):
        train_seed(kg_path, "DistMult", {"dim": 8, "reciprocal": True}, train, s, out, tmp_path / "work",
                   device="cpu")
    data = bytearray(seeds[1].read_bytes())
    data[len(data) // 2] ^= 0xFF
    seeds[1].write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match=r"seed1.pt: SHA-256 .* set aside as seed1.pt.corrupt"):
        select_best([str(p) for p in seeds], tmp_path / "model.pt", tmp_path / "selection.json")
    assert not seeds[1].exists() and not sidecar(seeds[1]).exists() and seeds[0].exists()
    assert not (tmp_path / "model.pt").exists()


def test_corrupted_download_is_set_aside_so_a_rerun_refetches(tmp_path, monkeypatch):
    from kgeval.data.steps import verify_resources

    payload = b"a\tr\tb\n"
    digest = __import__("hashlib").sha256(payload).hexdigest()
    manifest = tmp_path / "resources.tsv"
    manifest.write_text("mirror_path\turl\tsha256\tbytes\n"
                        f"x/train.txt\thttps://example.org/{'a' * 40}/train.txt\t{digest}\t{len(payload)}\n")
    monkeypatch.chdir(tmp_path)
    target = Path("resources/downloads/x/train.txt")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"a\tr\tX\n")
    with pytest.raises(ChecksumError, match=r"train.txt \(set aside as train.txt.corrupt"):
        verify_resources(manifest, [str(target)], tmp_path / "out.csv", ["x/train.txt"])
    assert not target.exists() and Path(str(target) + ".corrupt").read_bytes() == b"a\tr\tX\n"
    target.write_bytes(payload)
    assert verify_resources(manifest, [str(target)], tmp_path / "out.csv", ["x/train.txt"])["verified"].all()


# ---- 3. written files follow the umask ------------------------------------------------------------------------
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        with atomic_open(tmp_path / "a.txt") as fh:
            fh.write("x")
        write_json(tmp_path / "b.json", {"a": 1})
        assert main(["synth", str(tmp_path / "synth")]) == 0
    finally:
        os.umask(old)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 5
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: mode for p in files}


# ---- 4. duplicate archive members -----------------------------------------------------------------------------
@pytest.mark.parametrize("second", ["data/train.txt", "./data/train.txt", "data//train.txt"])
def test_archive_with_duplicate_member_is_refused(tmp_path, second):
    arc = tmp_path / "a.tar.gz"
    with tarfile.open(arc, "w:gz") as tar:
        for name, data in [("data/train.txt", b"first\n"), ("data/valid.txt", b"v\n"), (second, b"second\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(InputError, match=rf"a.tar.gz: unsafe member '{second}': a second member of that name"):
        safe_extract(arc, tmp_path / "out")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").rglob("*")) == []


# ---- 5. byte-reproducible checkpoints -------------------------------------------------------------------------
def test_same_config_and_seed_give_the_same_checkpoint_bytes(synth_kg, tmp_path):
    kg_path = tmp_path / "kg.npz"
    synth_kg.save(kg_path)
    train = dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=3, eval_every=1, snapshots=True)
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run / "seed0.pt"
        train_seed(kg_path, "DistMult", {"dim": 8, "reciprocal": True}, train, 0, out, tmp_path / run / "work",
                   snapshot_dir=tmp_path / run / "snap", device="cpu")
        outs.append(out)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    for snap in sorted((tmp_path / "a/snap").glob("*.pt")):
        assert snap.read_bytes() == (tmp_path / "b/snap" / snap.name).read_bytes()
    # the timings live in the sidecar, beside the checkpoint
    info = yaml.safe_load(sidecar(outs[0]).read_text())
    assert info["sha256"] == sha256_file(outs[0]) and info["train_seconds"] > 0
    assert all(t["seconds"] > 0 for t in info["trace"])
    st = torch.load(outs[0], weights_only=True)
    assert st["trace"] and all("seconds" not in t and "eval_seconds" not in t for t in st["trace"])


# ---- 6. clean errors ------------------------------------------------------------------------------------------
def test_missing_config_file_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["validate-config", str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err == f"kgeval: error: {tmp_path / 'missing.yaml'}: config file not found\n"
    folder = tmp_path / "a_folder.yaml"
    folder.mkdir()
    assert main(["validate-config", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kgeval: error: {folder}: cannot read the config file") and err.count("\n") == 1


def test_malformed_yaml_names_line_and_column(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    bad = tmp_path / "bad.yaml"
    bad.write_text("seeds: [0, 1\nmodels: {}\n")
    assert main(["validate-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kgeval: error: {bad}:2:7: malformed YAML: ") and err.count("\n") == 1


def test_empty_labels_file_is_an_error_or_a_warning(tmp_path, caplog):
    kg = tiny_kg()
    p = tmp_path / "ann.txt"
    for text in ("", "\n  \n"):
        p.write_text(text)
        with pytest.raises(InputError, match=r"ann.txt: no labels: the file is empty or blank"):
            read_labels(p, kg)
    with caplog.at_level(logging.WARNING):
        assert read_labels(p, kg, allow_empty=True) == {}
    assert "ann.txt: no labels" in caplog.text


def test_labels_file_with_a_bom_is_accepted(tmp_path):
    kg = tiny_kg()
    p = tmp_path / "ann.txt"
    p.write_bytes("\ufeffa\tr\tb\tY\r\na\tr\tc\tN\r\n".encode())
    assert read_labels(p, kg) == {(0, 0, 1): (1, 1), (0, 0, 2): (0, 2)}


@pytest.mark.parametrize("where", ["top", "model"])
def test_duplicate_seeds_are_refused(where, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = tiny_config()
    if where == "top":
        cfg["seeds"] = [0, 0]
        key, dup = "seeds", 0
    else:
        cfg["models"]["TransE"]["seeds"] = [1, 2, 1]
        key, dup = "models/TransE/seeds", 1
    with pytest.raises(ConfigError, match=rf"^config key {key}: {dup} is listed twice"):
        validate_config(cfg, SCHEMA)


# ---- 7. a config typo: one line with the closest key ----------------------------------------------------------
@pytest.mark.parametrize("edit, message", [
    (lambda c: c["models"]["TransE"].update(modle=c["models"]["TransE"].pop("model")),
     "config key models/TransE/modle: unknown key (expected one of: source, model, train, seeds, libkge, "
     "datasets); did you mean 'model'?"),
    (lambda c: c.update(evalutaion={}), "config key evalutaion: unknown key"),
    (lambda c: c["models"]["TransE"]["train"].update(lr="fast"), "config key models/TransE/train/lr: 'fast' is "
                                                                 "not of type 'number'"),
])
def test_config_typo_is_one_line_with_the_closest_key(edit, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = tiny_config()
    edit(cfg)
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, SCHEMA)
    text = str(err.value)
    assert text.startswith(message) and "\n" not in text and len(text) < 300
    if "evalutaion" in message:
        assert text.endswith("did you mean 'evaluation'?")


@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")
def test_snakemake_dry_run_reports_a_typo_in_one_line(tmp_path):
    cfg = tiny_config()
    cfg["models"]["TransE"]["modle"] = cfg["models"]["TransE"].pop("model")
    bad = tmp_path / "typo.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(["snakemake", "-n", "--cores", "1", "--configfile", str(bad),
                           "--replace-workflow-config"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "kgeval: error: config key models/TransE/modle: unknown key" in out and "did you mean 'model'?" in out
    assert len(out.splitlines()) < 10 and "Traceback" not in out and "$schema" not in out
