"""Real graphs and trained models through the scale workflow (config scale.graphs / scale.models, issue 53): the
config names a bad key in one line; a tiny ogbl-wikikg2 folder (with OGB's fixed negatives) and two model files
make the job graph of the synthetic shapes' rules (graph, sample, shards, a gather per model, tables; no pools);
and the workflow's graph and tables are byte for byte those of ``kgeval scale graph --from`` and ``kgeval scale
evaluate --system``."""

from __future__ import annotations

import re
import subprocess
import sys
from copy import deepcopy
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from conftest import ROOT

from kgeval.cli import main
from kgeval.config import validate_config
from kgeval.errors import ConfigError

E, R = 30, 3
SCALE = {"k": 5, "negatives": 10, "sample_size": 100, "bootstrap": 100, "shards": 2}


def _tiny_config():
    with open(ROOT / "config" / "tiny.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.mark.parametrize("scale, message", [
    ({"graphs": {"wikikg2": {"from": "wikikg2", "path": "d"}}, "models": {"wikikg2": {"m": "m.npz"}}},
     r"config key scale/graphs/wikikg2: the name of a synthetic shape"),
    ({"graphs": {"g": {"from": "freebase", "path": "d"}}}, r"config key scale/graphs/g/from: 'freebase' is not one of"),
    ({"graphs": {"g": {"from": "wikikg2"}}}, r"config key scale/graphs/g: 'path' is a required property"),
    ({"graphs": {"g": {"from": "wikikg2", "path": "d", "pth": "e"}}}, r"config key scale/graphs/g/pth: unknown key"),
    ({"graphs": {"g": {"from": "wikikg2", "path": "d"}}}, r"config key scale/models/g: no models for graph 'g'"),
    ({"graphs": {"g": {"from": "wikikg2", "path": "d", "prefix": "p"}}, "models": {"g": {"m": "m.npz"}}},
     r"config key scale/graphs/g/prefix: only for from: wikidata5m"),
    ({"models": {"h": {"m": "m.npz"}}}, r"config key scale/models/h: not a graph of scale/graphs"),
    ({"graphs": {"g": {"from": "wikikg2", "path": "d"}}, "models": {"g": {}}},
     r"config key scale/models/g: \{\} has 0 entries \(expected at least 1\)"),
    ({"graphs": {"g": {"from": "wikikg2", "path": "d"}}, "models": {"g": {"m": 3}}},
     r"config key scale/models/g/m: 3 is not of type 'string'"),
])
def test_bad_scale_graphs_name_the_key(scale, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = deepcopy(_tiny_config())
    cfg["scale"] = scale
    with pytest.raises(ConfigError, match=message):
        validate_config(cfg, ROOT / "config/schema.yaml", models=False)


def test_the_config_check_knows_the_synthetic_shapes():
    from kgeval.config.references import SCALE_SHAPES
    from kgeval.scale.synth import SHAPES

    assert set(SCALE_SHAPES) == set(SHAPES)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A working folder with a tiny ogbl-wikikg2 download (OGB's fixed negatives included), two models, and the
    config naming them."""
    d = tmp_path_factory.mktemp("scale-workflow")
    rng = np.random.default_rng(0)
    keys = rng.choice(E * R * E, 200, replace=False)
    h, rest = np.divmod(keys, R * E)
    r, t = np.divmod(rest, E)
    triples = np.stack([h, r, t], 1)
    triples = triples[triples[:, 0] != triples[:, 2]]
    split = d / "ogbl_wikikg2" / "split" / "time"
    split.mkdir(parents=True)
    for name, x in (("train", triples[:120]), ("valid", triples[120:140]), ("test", triples[140:170])):
        arrays = {"head": x[:, 0], "relation": x[:, 1], "tail": x[:, 2]}
        if name != "train":
            arrays |= {"head_neg": rng.integers(0, E, (len(x), 10)), "tail_neg": rng.integers(0, E, (len(x), 10))}
        torch.save(arrays, split / f"{name}.pt")
    for name in ("distmult", "transe"):
        np.savez(d / f"{name}.npz", model=name, entity=rng.normal(size=(E, 4)), relation=rng.normal(size=(R, 4)))
    scale = {"graphs": {"tiny": {"from": "wikikg2", "path": "ogbl_wikikg2"}},
             "models": {"tiny": {"DistMult": "distmult.npz", "TransE": "transe.npz"}}, **SCALE}
    (d / "scale-own.yaml").write_text(yaml.safe_dump({"scale": scale}))
    return d


def _snakemake(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The checkout's workflow run in ``folder`` with the default config and ``scale-own.yaml``."""
    from test_workflow_errors import _env

    snakemake = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run([str(snakemake), "-s", str(ROOT / "Snakefile"), "--directory", str(folder),
                           "--configfile", str(ROOT / "config" / "config.yaml"), "scale-own.yaml", "--cores", "2",
                           *args, "--", "scale_all"], cwd=folder, env=_env(), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_a_real_graph_takes_the_synthetic_shapes_rules(folder):
    out = _snakemake(folder, "--dry-run", "--quiet", "rules").stdout
    jobs = dict(re.findall(r"^(scale_\w+)\s+(\d+)$", out, re.M))
    # the graph read from its files, one sample, a job per shard, a gather per model, the tables and their
    # summary page; no pools
    assert jobs == {"scale_real_graph": "1", "scale_sample": "1", "scale_rank": "2", "scale_gather_model": "2",
                    "scale_evaluate": "1", "scale_summary": "1", "scale_all": "1"}, out


@pytest.mark.slow
def test_the_workflow_gives_the_commands_bytes(folder, tmp_path, capsys):
    _snakemake(folder)
    assert main(["scale", "graph", "--from", "wikikg2", str(folder / "ogbl_wikikg2"), "--out",
                 str(tmp_path / "g")]) == 0
    assert (tmp_path / "g" / "graph.npz").read_bytes() == (folder / "resources/scale/tiny/graph.npz").read_bytes()
    args = [f"--{k.replace('_', '-')}={v}" for k, v in SCALE.items()]
    assert main(["scale", "evaluate", str(tmp_path / "g" / "graph.npz"), "--out", str(tmp_path / "ev"), *args,
                 "--system", f"DistMult={folder / 'distmult.npz'}", "--system", f"TransE={folder / 'transe.npz'}"]) == 0
    results = folder / "results/scale/tiny"
    names = sorted(p.name for p in (tmp_path / "ev").iterdir() if not p.name.startswith("."))
    assert names == ["estimates.csv", "exact.csv", "negatives.csv", "negatives_tau.json", "paired.csv"]
    for name in names:
        assert (results / name).read_bytes() == (tmp_path / "ev" / name).read_bytes(), name
    assert "DistMult" in (results / "exact.csv").read_text() and ",ogb\n" in (results / "negatives.csv").read_text()
