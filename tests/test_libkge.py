"""LibKGE's published checkpoints → kgeval models (``kgeval.models.libkge``).

Every checkpoint here is written by the test in LibKGE's layout (``torch.save`` of the training-job dict with a
pickled ``kge.config.Config``, registered as a fake module only while saving), with LibKGE's key names and shapes,
and an entity/relation order that differs from kgeval's. Reference scores are computed from the raw LibKGE
tensors with LibKGE's scoring functions (``distmult.py``, ``rescal.py``, ``complex.py``, ``transe.py``,
``rotate.py``, ``conve.py``, ``reciprocal_relations_model.py``), in float64.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import types
from pathlib import Path

import pytest
import torch
from libkge_fakes import (
    CASES,
    KGEVAL_NAME,
    SEED,
    build_case,
    lib_spo,
    libkge_options,
    libkge_state,
    make_weights,
    sha,
    write_checkpoint,
)

from kgeval.data.kg import build_kg
from kgeval.errors import ChecksumError, InputError
from kgeval.models.checkpoint import load_checkpoint, load_model
from kgeval.models.libkge import (
    LibKGEError,
    UnsafeCheckpointError,
    fetch_libkge,
    libkge_model,
    libkge_order,
    load_libkge,
    read_libkge_checkpoint,
)
from kgeval.models.libkge import unpickle as libkge
from kgeval.training.steps import convert_libkge

TRAIN = [("/m/a", "r/x", "/m/b"), ("/m/b", "r/y", "/m/c"), ("/m/c", "r/x", "/m/d"), ("/m/d", "r/z", "/m/a"),
         ("/m/e", "r/y", "/m/a"), ("/m/a", "r/z", "/m/f"), ("/m/f", "r/x", "/m/b"), ("/m/c", "r/y", "/m/e")]
VALID = [("/m/g", "r/x", "/m/a"), ("/m/b", "r/z", "/m/e")]
TEST = [("/m/h", "r/y", "/m/g"), ("/m/d", "r/x", "/m/f")]


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    d = tmp_path_factory.mktemp("tinykg")
    for name, rows in (("train", TRAIN), ("valid", VALID), ("test", TEST)):
        (d / f"{name}.txt").write_text("".join("\t".join(t) + "\n" for t in rows))
    return build_kg("Tiny", d / "train.txt", d / "valid.txt", d / "test.txt")


@pytest.fixture(scope="module")
def lib_order(kg, tmp_path_factory):
    """A LibKGE order unlike kgeval's, as ``entity_ids.del``/``relation_ids.del`` (lines not in index order)."""
    rng = random.Random(SEED)
    ents, rels = list(kg.entities), list(kg.relations)
    while ents == kg.entities:
        rng.shuffle(ents)
    while rels == kg.relations:
        rng.shuffle(rels)
    d = tmp_path_factory.mktemp("libkge_ids")
    for fname, ids in (("entity_ids.del", ents), ("relation_ids.del", rels)):
        lines = [f"{i}\t{name}\n" for i, name in enumerate(ids)]
        rng.shuffle(lines)
        (d / fname).write_text("".join(lines))
    return {"entities": ents, "relations": rels, "entity_ids": d / "entity_ids.del",
            "relation_ids": d / "relation_ids.del"}


# ---- writing LibKGE-format checkpoints ---------------------------------------------------------------------------
def check_scores(model, kg, w, lib_model, reciprocal, variant, e_lib, r_lib):
    """kgeval's score_spo/score_sp/score_po against LibKGE's formulas, mapped through the id strings."""
    n_r = len(r_lib)
    ours_e = torch.tensor([e_lib[name] for name in kg.entities])  # LibKGE index of our entity j
    triples = torch.tensor([(kg.entity_id(h), kg.relation_id(r), kg.entity_id(t)) for h, r, t in TRAIN + TEST])
    s, p, o = triples.T
    ls, lo = ours_e[s], ours_e[o]
    lp = torch.tensor([r_lib[kg.relations[i]] for i in p.tolist()])
    n_e = kg.num_entities
    B = len(s)
    cand = ours_e.repeat(B)  # every entity, in kgeval's order
    with torch.no_grad():
        got = model.score_spo(s, p, o)
        want = lib_spo(lib_model, w, ls, lp, lo, variant)
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-4)

        want_sp = lib_spo(lib_model, w, ls.repeat_interleave(n_e), lp.repeat_interleave(n_e), cand, variant)
        torch.testing.assert_close(model.score_sp(s, p).double(), want_sp.view(B, n_e), rtol=1e-5, atol=1e-4)

        if reciprocal:  # LibKGE: score_po(p, o) = scorer(o, p + |R|, all subjects, "sp_")
            want_po = lib_spo(lib_model, w, lo.repeat_interleave(n_e), (lp + n_r).repeat_interleave(n_e), cand,
                              variant)
            want_s = lib_spo(lib_model, w, lo, lp + n_r, ls, variant)
            torch.testing.assert_close(model.score_spo(s, p, o, direction="s").double(), want_s, rtol=1e-5,
                                       atol=1e-4)
        else:
            want_po = lib_spo(lib_model, w, cand, lp.repeat_interleave(n_e), lo.repeat_interleave(n_e), variant)
        torch.testing.assert_close(model.score_po(p, o).double(), want_po.view(B, n_e), rtol=1e-5, atol=1e-4)
    return got


# ---- 1. every model type -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lib_model,reciprocal,variant", CASES,
                         ids=[f"{m}{'-recip' if r else ''}{''.join('-' + k for k in v)}" for m, r, v in CASES])
def test_scores_equal_libkge(tmp_path, kg, lib_order, lib_model, reciprocal, variant):
    e_lib = {name: i for i, name in enumerate(lib_order["entities"])}
    r_lib = {name: i for i, name in enumerate(lib_order["relations"])}
    w, path, digest = build_case(tmp_path, kg, lib_model, reciprocal, variant, kg.num_entities, kg.num_relations)
    assert "kge" not in sys.modules  # loaded without LibKGE

    name, hparams, state = load_libkge(path, kg, digest, lib_order["entity_ids"], lib_order["relation_ids"])
    assert name == KGEVAL_NAME[lib_model]
    assert hparams["reciprocal"] is reciprocal
    if lib_model in ("transe", "rotate"):
        assert hparams["gamma"] == 0.0 and hparams["norm"] == int(variant.get("l_norm", 1.0))
    if lib_model == "rotate":
        assert hparams["phase_scale"] == 1.0 and hparams["dim"] == w["R"].shape[1]
    if lib_model == "conve":
        assert hparams["input_batch_norm"] is False and hparams["k_h"] == 2 and hparams["filters"] == 32
        assert hparams["padding"] == variant.get("padding", 0)
        assert hparams["conv_bias"] is not variant.get("no_conv_bias", False)
        assert torch.equal(state["bn1.weight"], torch.ones(32)) and torch.equal(state["bn2.bias"], torch.zeros(8))
        # the bias column, permuted into kgeval's order
        assert torch.equal(state["entity_bias"], w["E"][[e_lib[n] for n in kg.entities], 0])
    if lib_model in ("distmult", "rescal", "complex", "transe"):
        assert hparams["entity_dropout"] == 0.25 and hparams["relation_dropout"] == 0.1
    # rows are remapped by id string: our relation j is LibKGE's row of the same id
    rel_rows = [r_lib[n] for n in kg.relations]
    if reciprocal:
        rel_rows += [i + kg.num_relations for i in rel_rows]
    if lib_model != "conve":
        assert torch.equal(state["relation.weight"], w["R"][rel_rows])

    model = libkge_model(path, kg, digest, lib_order["entity_ids"], lib_order["relation_ids"])
    assert not model.training
    check_scores(model, kg, w, lib_model, reciprocal, variant, e_lib, r_lib)


def test_order_derived_from_splits(tmp_path, kg):
    """Without the .del files LibKGE's order is derived from the splits (first appearance, s/p/o) — kgeval's."""
    ents, rels = libkge_order(kg)
    assert ents == kg.entities and rels == kg.relations
    assert ents[:4] == ["/m/a", "/m/b", "/m/c", "/m/d"] and ents[-1] == "/m/h"  # /m/h only in test
    e_lib = {name: i for i, name in enumerate(ents)}
    r_lib = {name: i for i, name in enumerate(rels)}
    variant: dict = {}
    w, path, digest = build_case(tmp_path, kg, "complex", True, variant, kg.num_entities, kg.num_relations)
    check_scores(libkge_model(path, kg, digest), kg, w, "complex", True, variant, e_lib, r_lib)


# ---- 2. a wrong SHA-256 is refused before anything is unpickled --------------------------------------------------
class _RunsCode:
    """Unpickling this calls ``fn(*args)`` (what a malicious checkpoint would do)."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def test_wrong_sha_refused_before_unpickling(tmp_path, kg, monkeypatch):
    sentinel = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    actual = write_checkpoint(path, {}, libkge_options("distmult", False, 4),
                              extra={"job_id": _RunsCode(os.mkdir, str(sentinel))})

    def must_not_run(*a, **k):
        raise AssertionError("the file was unpickled before its hash was checked")

    monkeypatch.setattr(libkge, "safe_load", must_not_run)
    monkeypatch.setattr("torch.load", must_not_run)
    wrong = hashlib.sha256(b"another file").hexdigest()
    with pytest.raises(ChecksumError) as err:
        load_libkge(path, kg, wrong)
    msg = str(err.value)
    assert str(path) in msg and wrong in msg and actual in msg
    assert err.value.expected == wrong and err.value.actual == actual
    assert not sentinel.exists()
    with pytest.raises(ChecksumError):
        convert_libkge(path, _saved_kg(kg, tmp_path), wrong, tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def _saved_kg(kg, tmp_path: Path) -> Path:
    out = tmp_path / "kg.npz"
    if not out.exists():
        kg.save(out)
    return out


# ---- 3. a global outside the allow-list is refused even when the hash matches ------------------------------------
@pytest.mark.parametrize("fn", ["mkdir", "system"])
def test_unsafe_global_refused(tmp_path, kg, fn):
    sentinel = tmp_path / "pwned"
    payload = _RunsCode(os.mkdir, str(sentinel)) if fn == "mkdir" else _RunsCode(os.system, f"mkdir {sentinel}")
    path = tmp_path / "evil.pt"
    variant: dict = {}
    w = make_weights("distmult", kg.num_entities, kg.num_relations, False, variant)
    state = libkge_state("distmult", w, False, variant)
    digest = write_checkpoint(path, state, libkge_options("distmult", False, 6), extra={"job_id": payload})
    with pytest.raises(UnsafeCheckpointError) as err:
        load_libkge(path, kg, digest)
    msg = str(err.value)
    assert str(path) in msg and f".{fn}'" in msg and "allow-list" in msg
    assert not sentinel.exists()


def test_other_kge_classes_refused(tmp_path, kg):
    """Only ``kge.config.Config`` is mapped to the stand-in; any other LibKGE class is refused by name."""
    kge_job = types.ModuleType("kge.job")

    class Trace:
        pass

    Trace.__module__, Trace.__qualname__ = "kge.job", "Trace"
    kge_job.Trace = Trace
    sys.modules["kge.job"] = kge_job
    try:
        digest = write_checkpoint(tmp_path / "x.pt", {}, libkge_options("distmult", False, 4),
                                  extra={"trace": Trace()})
    finally:
        sys.modules.pop("kge.job", None)
    with pytest.raises(UnsafeCheckpointError, match=r"kge\.job\.Trace"):
        read_libkge_checkpoint(tmp_path / "x.pt", digest)


def test_plain_checkpoint_reads_config(tmp_path, kg):
    opts = libkge_options("rotate", True, 4)
    digest = write_checkpoint(tmp_path / "c.pt", {}, opts)
    ckpt = read_libkge_checkpoint(tmp_path / "c.pt", digest.upper())
    cfg = ckpt["config"]
    assert isinstance(cfg, libkge.LibKGEConfig) and cfg.options == opts
    assert cfg.folder.startswith("local/experiments")
    # LibKGE's get_default: a base-model option falls back to the base model type's defaults
    assert cfg.get_default("reciprocal_relations_model.base_model.entity_embedder.dim") == 4
    assert cfg.get_default("reciprocal_relations_model.base_model.entity_embedder.initialize") == "normal_"
    assert ckpt["epoch"] == 7 and ckpt["valid_trace"][1]["mean_reciprocal_rank_filtered_with_test"] == 0.34
    with pytest.raises(Exception, match="64 hex digits"):
        read_libkge_checkpoint(tmp_path / "c.pt", "abc")


# ---- 4. ids that do not fit the knowledge graph ------------------------------------------------------------------
def test_unknown_entity_is_named(tmp_path, kg, lib_order):
    w, path, digest = build_case(tmp_path, kg, "distmult", False, {}, kg.num_entities, kg.num_relations)
    ents = list(lib_order["entities"])
    ents[3] = "/m/ghost"
    bad = tmp_path / "entity_ids.del"
    bad.write_text("".join(f"{i}\t{n}\n" for i, n in enumerate(ents)))
    with pytest.raises(LibKGEError, match=r"entity '/m/ghost' \(LibKGE index 3\) is not in knowledge graph Tiny"):
        load_libkge(path, kg, digest, bad, lib_order["relation_ids"])

    rels = list(lib_order["relations"])
    rels[0] = "r/unknown"
    bad_r = tmp_path / "relation_ids.del"
    bad_r.write_text("".join(f"{i}\t{n}\n" for i, n in enumerate(rels)))
    with pytest.raises(LibKGEError, match="relation 'r/unknown'"):
        load_libkge(path, kg, digest, lib_order["entity_ids"], bad_r)


def test_size_mismatch_and_bad_id_files(tmp_path, kg, lib_order):
    # a checkpoint with one entity row more than the id list
    w, path, digest = build_case(tmp_path, kg, "transe", False, {}, kg.num_entities + 1, kg.num_relations)
    with pytest.raises(LibKGEError, match=rf"{kg.num_entities + 1} entity rows, but .* lists {kg.num_entities}"):
        load_libkge(path, kg, digest, lib_order["entity_ids"], lib_order["relation_ids"])
    with pytest.raises(LibKGEError, match="entity rows"):  # and without .del files
        load_libkge(path, kg, digest)
    # an id list that misses one of the graph's entities
    short = tmp_path / "short.del"
    short.write_text("".join(f"{i}\t{n}\n" for i, n in enumerate(lib_order["entities"][:-1])))
    (tmp_path / "b").mkdir()
    w, path2, digest2 = build_case(tmp_path / "b", kg, "transe", False, {}, kg.num_entities - 1, kg.num_relations)
    with pytest.raises(LibKGEError, match=rf"{kg.num_entities - 1} entity ids, knowledge graph Tiny has "
                                          rf"{kg.num_entities} \(entity '{lib_order['entities'][-1]}' has no"):
        load_libkge(path2, kg, digest2, short, lib_order["relation_ids"])
    # malformed .del files
    dup = tmp_path / "dup.del"
    dup.write_text("0\t/m/a\n1\t/m/a\n")
    with pytest.raises(InputError, match=r"dup.del:2: id '/m/a' already listed on line 1"):
        load_libkge(path, kg, digest, dup, lib_order["relation_ids"])
    gap = tmp_path / "gap.del"
    gap.write_text("0\t/m/a\n2\t/m/b\n")
    with pytest.raises(InputError, match="index 1 is missing"):
        load_libkge(path, kg, digest, gap, lib_order["relation_ids"])


def test_unsupported_model_and_settings(tmp_path, kg):
    opts = libkge_options("transh", False, 4)
    digest = write_checkpoint(tmp_path / "h.pt", {}, opts)
    with pytest.raises(LibKGEError, match="LibKGE model 'transh' is not supported"):
        load_libkge(tmp_path / "h.pt", kg, digest)
    variant: dict = {}
    w = make_weights("rotate", kg.num_entities, kg.num_relations, False, variant)
    opts = libkge_options("rotate", False, 12, {"l_norm": 3.0})
    digest = write_checkpoint(tmp_path / "r.pt", libkge_state("rotate", w, False, variant), opts)
    with pytest.raises(LibKGEError, match="l_norm 3.0 is not supported"):
        load_libkge(tmp_path / "r.pt", kg, digest)


# ---- 5. the workflow step: a kgeval checkpoint that load_model reads ---------------------------------------------
@pytest.mark.parametrize("lib_model", ["conve", "rescal"])
def test_convert_then_load_model(tmp_path, kg, lib_order, lib_model):
    reciprocal = lib_model == "conve"
    variant: dict = {}
    w, path, digest = build_case(tmp_path, kg, lib_model, reciprocal, variant, kg.num_entities, kg.num_relations)
    out = tmp_path / "results" / "model.pt"
    convert_libkge(path, _saved_kg(kg, tmp_path), digest, out, lib_order["entity_ids"], lib_order["relation_ids"])
    model = load_model(out, kg, device="cpu")
    direct = libkge_model(path, kg, digest, lib_order["entity_ids"], lib_order["relation_ids"])
    q = torch.arange(kg.num_entities)
    with torch.no_grad():
        for r in range(kg.num_relations):
            rr = torch.full_like(q, r)
            assert torch.equal(model.score_sp(q, rr), direct.score_sp(q, rr))
            assert torch.equal(model.score_po(rr, q), direct.score_po(rr, q))
    e_lib = {name: i for i, name in enumerate(lib_order["entities"])}
    r_lib = {name: i for i, name in enumerate(lib_order["relations"])}
    check_scores(model, kg, w, lib_model, reciprocal, variant, e_lib, r_lib)

    info = json.loads(out.with_name("model.pt.json").read_text())
    assert info["source"] == "libkge" and info["source_sha256"] == digest and info["source_file"] == path.name
    assert info["model_name"] == KGEVAL_NAME[lib_model] and info["libkge_epoch"] == 7
    assert info["valid_mrr"] == pytest.approx(0.34) and info["sha256"] == sha(out)
    st = load_checkpoint(out, dataset_fingerprint=kg.fingerprint())
    assert st["trace"][0]["epoch"] == 5 and st["source"] == "libkge"


# ---- download ----------------------------------------------------------------------------------------------------
def test_fetch_libkge(tmp_path, monkeypatch):
    monkeypatch.delenv("KGEVAL_MIRROR", raising=False)
    payload = b"not really a checkpoint, just bytes" * 100
    src = tmp_path / "web" / "iclr2020-models" / "fb15k-237-rescal.pt"
    src.parent.mkdir(parents=True)
    src.write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    url = src.as_uri()
    out = tmp_path / "dl" / "fb15k-237-rescal.pt"
    assert fetch_libkge(url, digest, out) == "url"
    assert out.read_bytes() == payload
    out.unlink()
    assert fetch_libkge(url, digest, out, size=len(payload)) == "url"  # through download.fetch
    out.unlink()

    # a mirror folder: libkge/<last two URL path segments>
    mirror = tmp_path / "mirror"
    (mirror / "libkge" / "iclr2020-models").mkdir(parents=True)
    (mirror / "libkge" / "iclr2020-models" / "fb15k-237-rescal.pt").write_bytes(payload)
    missing = (tmp_path / "nowhere" / "iclr2020-models" / "fb15k-237-rescal.pt").as_uri()
    assert fetch_libkge(missing, digest, out, mirror=mirror) == "mirror"
    assert out.read_bytes() == payload
    out.unlink()

    # wrong bytes: refused, nothing (not even a temporary file) left behind
    wrong = hashlib.sha256(b"other").hexdigest()
    for size in (None, len(payload)):
        with pytest.raises(ChecksumError) as err:
            fetch_libkge(url, wrong, out, size=size)
        assert wrong in str(err.value) and digest in str(err.value)
        assert not out.exists() and list(out.parent.iterdir()) == []
