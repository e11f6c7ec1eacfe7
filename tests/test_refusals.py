"""Issue 39, item 8 (all but reanalyze's): a name that differs from a study system's by whitespace, errors naming
temporary paths, a malicious checkpoint's refusal, a file:// URL, a full disk during fetch, and synth's speed."""

from __future__ import annotations

import builtins
import errno
import hashlib
import json
import os
import pickle
import re
import subprocess

import pandas as pd
import pytest
import torch
from conftest import ROOT

from kgeval.cli import main
from kgeval.data import download
from kgeval.data.manifest import Resource, read_manifest
from kgeval.errors import CorruptFileError, InputError, KgevalError, user_paths
from kgeval.external.placement import check_names
from kgeval.models.checkpoint import load_checkpoint, load_refusal

SHA = "0" * 40


# ---- --name 'Alpha ' ---------------------------------------------------------------------------------------
def test_a_name_with_surrounding_whitespace_is_refused(tmp_path, capsys):
    rc = main(["evaluate", f"Synth-Test-S={tmp_path / 'x.run'}", "--dataset", "Synth", "--name", "Alpha ",
               "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].endswith("argument --name: 'Alpha ': a name may not begin or end with whitespace "
                           "(see kgeval evaluate --help)")


@pytest.mark.parametrize("name", ["Alpha ", " Alpha", "alpha", "ALPHA\u00a0"])
def test_the_clash_check_compares_names_as_a_reader_sees_them(tmp_path, name):
    """d99e1f8 compared raw strings: 'Alpha ' (say, from the API or a config) passed beside the study's Alpha."""
    ev = tmp_path / "evaluation.csv"
    pd.DataFrame({"System": ["Alpha", "Beta"], "micro_mrr": [0.2, 0.1]}).to_csv(ev, index=False)
    with pytest.raises(InputError, match=r"system name 'Alpha' is also a study system here"):
        check_names({"Synth-Test-S": {"evaluation": ev}}, [name])
    check_names({"Synth-Test-S": {"evaluation": ev}}, ["Alphas", "Gamma"])


# ---- errors name the user's paths -------------------------------------------------------------------------------
def test_user_paths_maps_every_temporary_name_to_its_destination():
    staging = "/d/out/.kgeval-staging-node-7.local-4242-ab_9z1k3"
    assert user_paths(f"{staging}/figure3.png: No space left on device") == "/d/out/figure3.png: No space left on device"
    assert user_paths(f"{staging}: cannot") == "/d/out: cannot"
    assert user_paths("/d/.evaluation.csv.k3j_a9zq.part: x") == "/d/evaluation.csv: x"
    assert user_paths("'/d/.s.tsv.abcdefgh.part'") == "'/d/s.tsv'"
    for kept in ("/d/.bashrc: x", "/d/my.part: x", "a.b.abcdefgh.part", "/d/.kgeval-outputs.json"):
        assert user_paths(kept) == kept


def test_a_full_disk_during_reanalyze_names_the_output_not_the_staging_folder(tmp_path, capsys):
    """d99e1f8: 'kgeval: error: …/o/.kgeval-staging-vm-15311-sze7f4z4/figure3.png: No space left on device'."""
    from test_cli_safety import tmpfs
    from test_reanalyze import hand_tables

    hand_tables(tmp_path / "release")
    with tmpfs(tmp_path / "full", "size=1m") as full:
        free = os.statvfs(full).f_bavail * os.statvfs(full).f_frsize
        with open(full / "filler", "wb") as fh:
            fh.write(b"\0" * (free - 32 * 1024))
        rc = main(["reanalyze", str(tmp_path / "release"), "--out", str(full / "o")])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2
        assert re.fullmatch(rf"kgeval: error: {re.escape(str(full / 'o'))}/[\w.]+: No space left on device",
                            err[-1]), err[-1]
        assert not (full / "o").exists() or not list((full / "o").iterdir())


def test_the_api_names_the_run_argument_not_its_temporary_file(workdir):
    """d99e1f8: '/tmp/kgeval-api-ukyj9eps/Synth-Test-S-C.run:1: question id 'nope' is not a question …'."""
    from kgeval.api import evaluate, load_testset

    sc = load_testset("Synth-Test-S-C", workdir=workdir, config="config/tiny.yaml")
    with pytest.raises(KgevalError) as caught:
        evaluate({"nope": {"/s/e00001": 1.0}}, sc, measures=["MRR"], bootstrap=20)
    assert str(caught.value) == ("run: question id 'nope' is not a question of Synth-Test-S-C "
                                 "(row 'nope Q0 /s/e00001 1 1.0 run')")


# ---- a malicious checkpoint ------------------------------------------------------------------------------------
class _Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_malicious_checkpoint_is_refused_without_the_unsafe_advice(tmp_path):
    marker = tmp_path / "pwned"
    ckpt = tmp_path / "evil.pt"
    torch.save({"format": "kgeval-checkpoint", "x": _Payload(marker)}, ckpt)
    (tmp_path / "evil.pt.json").write_text(json.dumps({"sha256": hashlib.sha256(ckpt.read_bytes()).hexdigest()}))
    with pytest.raises(CorruptFileError) as caught:
        load_checkpoint(ckpt, set_aside_corrupt=False)
    msg = str(caught.value)
    assert msg.startswith(f"{ckpt}: refused: the file holds objects other than tensors and plain containers")
    assert "posix.system" in msg and msg.endswith("kgeval does not load it")
    for advice in ("weights_only", "likely succeed", "trusted source", "safe_globals", "\x1b", "\n"):
        assert advice not in msg
    assert not marker.exists() and ckpt.is_file()


def test_torchs_coloured_advice_is_dropped():
    """The wording of torch 2.6 to 2.8, with its terminal colour codes."""
    text = ("\x1b[1mWeights only load failed.\x1b[0m This file can still be loaded, to do so you have two options, "
            "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we "
            "changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. "
            "Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
            "arbitrary code execution. Do it only if you got the file from a trusted source.\n\t(2) Alternatively, "
            "to load with `weights_only=True` please check the recommended steps in the following error message.\n"
            "\tWeightsUnpickler error: Unsupported global: GLOBAL posix.system was not an allowlisted global by "
            "default. Please use `torch.serialization.add_safe_globals([system])` or the "
            "`torch.serialization.safe_globals([system])` context manager to allowlist this global if you trust "
            "this class/function.\n\nCheck the documentation of torch.load to learn more about types accepted by "
            "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    assert load_refusal(pickle.UnpicklingError(text)) == (
        "the file holds objects other than tensors and plain containers, which could run code when loaded "
        "(WeightsUnpickler error: Unsupported global: GLOBAL posix.system was not an allowlisted global by "
        "default.); kgeval does not load it")


# ---- fetch: schemes and a full disk ------------------------------------------------------------------------------
def test_a_file_url_is_a_scheme_error(tmp_path):
    manifest = tmp_path / "resources.tsv"
    manifest.write_text(f"mirror_path\turl\tsha256\tbytes\nx/f\tfile:///etc/{SHA}/passwd\t{'a' * 64}\t1\n")
    with pytest.raises(InputError, match=r"resources\.tsv:2: URL 'file:///etc/0+/passwd' has scheme 'file://': "
                                         r"only https:// \(or http://\) URLs are downloaded"):
        read_manifest(manifest)
    manifest.write_text(f"mirror_path\turl\tsha256\tbytes\nx/f\thttps://host.org/{SHA[:39]}/f\t{'a' * 64}\t1\n")
    with pytest.raises(InputError, match=r"resources\.tsv:2: URL is not pinned to a commit"):
        read_manifest(manifest)


def test_a_full_disk_stops_fetch_before_the_next_source(tmp_path, monkeypatch):
    """The mirror is tried first; its copy hits a full disk (/dev/full): d99e1f8 then tried the URL."""
    payload = b"kgeval\n" * 1000
    (tmp_path / "mirror/x").mkdir(parents=True)
    (tmp_path / "mirror/x/f.bin").write_bytes(payload)
    res = Resource("x/f.bin", f"http://127.0.0.1:9/{SHA}/f.bin", hashlib.sha256(payload).hexdigest(), len(payload))
    tried = []
    monkeypatch.setattr(download, "_from_url", lambda *a, **k: tried.append(a) or "0" * 64)
    real_open = builtins.open
    monkeypatch.setattr(download, "open", lambda path, mode="r", *a, **k:
                        real_open("/dev/full", mode) if "w" in mode else real_open(path, mode, *a, **k),
                        raising=False)
    dest = tmp_path / "out" / "f.bin"
    dest.parent.mkdir()
    with pytest.raises(OSError) as caught:
        download.fetch(res, dest, mirror=tmp_path / "mirror")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(dest)
    assert tried == [] and list(dest.parent.iterdir()) == []


# ---- synth ---------------------------------------------------------------------------------------------------
def _synth_reference(out, seed, spec):
    """d99e1f8's generator (a Python loop over the pooled questions), as the reference for the vectorised one."""
    src = subprocess.run(["git", "show", "d99e1f8:src/kgeval/data/synth.py"], cwd=ROOT, capture_output=True,
                         text=True)
    if src.returncode != 0:
        pytest.skip("d99e1f8 is not in this checkout")
    import types

    module = types.ModuleType("kgeval.data._synth_d99e1f8")
    module.__package__ = "kgeval.data"
    import sys

    sys.modules[module.__name__] = module
    try:
        exec(compile(src.stdout, "synth_d99e1f8.py", "exec"), module.__dict__)  # noqa: S102 - our own history
        return module.synthesize(out, seed, module.SynthSpec(**spec))
    finally:
        del sys.modules[module.__name__]


@pytest.mark.parametrize("seed,spec", [(1, {}), (4, dict(num_entities=30, num_types=1, num_relations=8,
                                                            pool_depth=25)),
                                       (5, dict(num_entities=40, num_types=7, num_relations=30))])
def test_the_vectorised_pool_writes_the_same_bytes(tmp_path, seed, spec):
    from kgeval.data.synth import SynthSpec, synthesize

    synthesize(tmp_path / "new", seed, SynthSpec(**spec))
    _synth_reference(tmp_path / "old", seed, spec)
    files = sorted(p.relative_to(tmp_path / "old") for p in (tmp_path / "old").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "new") for p in (tmp_path / "new").rglob("*")
                                     if p.is_file())
    for f in files:
        assert (tmp_path / "new" / f).read_bytes() == (tmp_path / "old" / f).read_bytes(), f



def test_synth_key_set_is_membership_in_the_sorted_keys(monkeypatch):
    """The pooling's membership test (a hashed bitmap before the binary search, issue 60 item 9) answers as
    the binary search alone did, also where the bitmap is tiny and nearly every value is a false hit."""
    import numpy as np

    from kgeval.data import synth

    rng = np.random.default_rng(4)
    keys = np.unique(rng.integers(0, 10**9, 5_000))
    values = np.concatenate([rng.choice(keys, 3_000), rng.integers(0, 10**9, 3_000), [0, 10**9]]).reshape(2, -1)
    want = np.isin(values, keys)
    for bits in (24, 4):
        monkeypatch.setattr(synth._KeySet, "BITS", bits)
        np.testing.assert_array_equal(synth._KeySet(keys).has(values), want)
    assert not synth._KeySet(np.zeros(0, np.int64)).has(values).any()


@pytest.mark.parametrize("block", [1 << 22, 40])
def test_synth_pooling_is_the_per_question_ranking(monkeypatch, block):
    """d99e1f8 pooled with a Python loop over every sample question and candidate (`synth --relations 10000` ran
    for 7 minutes); the pooling is now one matrix product per block of questions. Its pooled candidates and ranks
    equal the per-question walk they replaced, written out here (a block of one question at a time too). Its
    speed is a benchmark's to measure, never a unit test's (DEVELOPERS.md)."""
    import numpy as np

    from kgeval.data import synth

    monkeypatch.setattr(synth, "POOL_BLOCK", block)  # 40 // 20 entities: two questions per block
    rng = np.random.default_rng(3)
    n, R, spec, seed = 20, 4, synth.SynthSpec(pool_depth=4, dim=3), 7
    noisy, etype = rng.normal(size=(n, spec.dim)), rng.integers(0, 2, n)
    dom_t, ran_t, in_kg = rng.integers(0, 2, R), rng.integers(0, 2, R), rng.random(n) < 0.85
    keys = synth._TripleKeys(n, R)
    filtered = keys.sorted(np.stack([rng.integers(0, n, 60), rng.integers(0, R, 60), rng.integers(0, n, 60)], 1))
    sample = np.stack([rng.integers(0, n, 9), rng.integers(0, R, 9), rng.integers(0, n, 9)], 1)
    filter_set = set(filtered.tolist())
    for side in (0, 1):
        got = synth._pool_side(sample, side, noisy, etype, (dom_t, ran_t)[side][sample[:, 1]],
                               synth._relation_weights(sample[:, 1], seed, spec.dim), in_kg,
                               synth._KeySet(filtered), keys, synth._pool_depth(sample, side, filtered, keys, spec),
                               spec)
        want = []
        for h, r, t in sample.tolist():
            w = np.random.default_rng([seed, 1000 + r]).normal(size=spec.dim)
            anchor, typ = (t, dom_t[r]) if side == 0 else (h, ran_t[r])
            score = noisy @ (w * noisy[anchor]) - 1e3 * (etype != typ)
            score[~in_kg] = -np.inf
            rank = 0
            for c in np.argsort(-score, kind="stable").tolist():
                key = int(keys.of(c, r, t) if side == 0 else keys.of(h, r, c))
                if not in_kg[c] or key in filter_set:
                    continue
                rank += 1
                if rank > spec.pool_depth:
                    break
                want.append((key, rank))
        assert sorted(zip(got[0].tolist(), got[1].tolist())) == sorted(want)
        assert len(want) > 2 * len(sample)  # the case exercises several ranks per question


def test_synth_too_small_for_its_test_sets_is_one_line(tmp_path, capsys):
    """`synth --entities 20 --relations 4` left one test triple and numpy's "Cannot take a larger sample than
    population" came out as a traceback (benchmarks/probe_promise.py); now one line, and no output folder."""
    out = tmp_path / "synth"
    assert main(["synth", "--entities", "20", "--relations", "4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kgeval: error: synth: 20 entities and 4 relations left 1 test triples")
    assert not out.exists()
