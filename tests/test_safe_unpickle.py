"""Issue 60, item 1: no code runs from a data file. Every pickled input (ogbl-wikikg2's split files, LibKGE
checkpoints) goes through one allow-list unpickler (kgeval.io.unpickle): OGB's real files, ``torch.save``d dicts of
numpy int64 arrays, read exactly; a file whose object's ``__reduce__`` names any other callable is refused in one
line naming the file and the global, in torch's zip and legacy formats, and the callable never runs (before the
fix, ``torch.load(weights_only=False)`` ran it and ``kgeval scale graph --from wikikg2`` exited 0)."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from test_cli_safety import one_line_error

from kgeval.cli import main
from kgeval.errors import CorruptFileError
from kgeval.io.unpickle import UnsafePickleError, safe_load
from kgeval.scale.readers import read_wikikg2

FORMATS = {"zip": True, "legacy": False}


class _Marker:
    """Unpickling this calls ``fn(*args)``: what a malicious file does; here it only creates ``marker``."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _payloads(marker: Path) -> dict:
    """Callables a file could name, each of which would create ``marker``, and the global each is refused as."""
    return {"system": (_Marker(os.system, f"touch {marker}"), f"{os.name}.system"),
            "mkdir": (_Marker(os.mkdir, str(marker)), f"{os.name}.mkdir"),
            "open": (_Marker(open, str(marker), "w"), "io.open")}


def _save(obj, path: Path, fmt: str) -> None:
    torch.save(obj, path, _use_new_zipfile_serialization=FORMATS[fmt])


def _ogb(rng, n: int, negatives: bool) -> dict:
    d = {"head": rng.integers(0, 50, n), "relation": rng.integers(0, 4, n), "tail": rng.integers(0, 50, n)}
    if negatives:
        d |= {"head_neg": rng.integers(0, 50, (n, 7)), "tail_neg": rng.integers(0, 50, (n, 7))}
    return d


def _folder(root: Path, fmt: str, test=None) -> dict:
    """An ogbl-wikikg2 folder as OGB writes it (dicts of numpy int64 arrays), ``test`` replacing test.pt's."""
    rng = np.random.default_rng(7)
    split = root / "split" / "time"
    split.mkdir(parents=True)
    written = {}
    for name, n in (("train", 40), ("valid", 6), ("test", 5)):
        written[name] = _ogb(rng, n, name != "train")
        _save(written[name] if test is None or name != "test" else test, split / f"{name}.pt", fmt)
    return written


@pytest.mark.parametrize("fmt", FORMATS)
def test_real_looking_ogb_files_read_exactly(tmp_path, fmt):
    written = _folder(tmp_path, fmt)
    g = read_wikikg2(tmp_path)
    for name, d in written.items():
        np.testing.assert_array_equal(g[name], np.stack([d["head"], d["relation"], d["tail"]], 1))
    np.testing.assert_array_equal(g["test_head_neg"], written["test"]["head_neg"])
    np.testing.assert_array_equal(g["valid_tail_neg"], written["valid"]["tail_neg"])
    # the same dict as torch's own unrestricted loader gives
    ref = torch.load(tmp_path / "split" / "time" / "test.pt", weights_only=False)
    got = safe_load(tmp_path / "split" / "time" / "test.pt", "a test file")
    assert got.keys() == ref.keys() and all(np.array_equal(got[k], ref[k]) for k in ref)
    assert all(type(v) is np.ndarray and v.dtype == np.int64 for v in got.values())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fn", ["system", "mkdir", "open"])
def test_a_pickle_that_runs_code_is_refused_by_the_reader(tmp_path, fmt, fn):
    marker = tmp_path / "marker"
    payload, qualified = _payloads(marker)[fn]
    rng = np.random.default_rng(1)
    _folder(tmp_path / "kg", fmt, test=_ogb(rng, 5, True) | {"note": payload})
    with pytest.raises(UnsafePickleError) as err:
        read_wikikg2(tmp_path / "kg")
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'kg' / 'split' / 'time' / 'test.pt'}: refusing to unpickle global "
                          f"'{qualified}'") and "\n" not in msg, msg
    assert not marker.exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_pickle_that_runs_code_is_refused_by_the_command(tmp_path, capsys, fmt):
    marker = tmp_path / "marker"
    payload, qualified = _payloads(marker)["system"]
    _folder(tmp_path / "kg", fmt, test={"head": payload, "relation": np.zeros(1, int), "tail": np.zeros(1, int)})
    out = tmp_path / "out"
    line = one_line_error(capsys, main(["scale", "graph", "--from", "wikikg2", str(tmp_path / "kg"), "--out",
                                        str(out)]))
    assert f"test.pt: refusing to unpickle global '{qualified}'" in line and "nothing in the file was run" in line
    assert not marker.exists()
    assert not out.exists() or not [p for p in out.iterdir() if not p.name.startswith(".")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_code_inside_an_object_array_is_refused(tmp_path, fmt):
    """An object array's elements are unpickled from the file too: through the same allow-list."""
    marker = tmp_path / "marker"
    _save({"head": np.array([_Marker(os.mkdir, str(marker))], dtype=object)}, tmp_path / "t.pt", fmt)
    with pytest.raises(UnsafePickleError, match=f"'{os.name}.mkdir'"):
        safe_load(tmp_path / "t.pt", "a test file")
    assert not marker.exists()


def test_tensors_only_where_the_caller_allows_them(tmp_path):
    """OGB's files hold numpy arrays: a tensor is refused there by torch's rebuild function's name; a LibKGE
    checkpoint's caller allows torch's rebuild functions."""
    torch.save({"head": torch.arange(3)}, tmp_path / "t.pt")
    with pytest.raises(UnsafePickleError, match=r"'torch\._utils\._rebuild_tensor_v2'"):
        safe_load(tmp_path / "t.pt", "a test file")
    assert torch.equal(safe_load(tmp_path / "t.pt", "a test file", torch=True)["head"], torch.arange(3))


def test_numpy_reconstruct_only_as_numpy_pickles(tmp_path):
    """numpy pickles an array as ``_reconstruct(ndarray, (0,), b'b')`` then its state; a file asking
    ``_reconstruct`` for a large shape would allocate what it does not hold."""
    from numpy._core import multiarray

    class Big:
        def __reduce__(self):
            return multiarray._reconstruct, (np.ndarray, (1 << 40,), b"b")

    _save({"head": Big()}, tmp_path / "t.pt", "legacy")
    with pytest.raises(CorruptFileError, match=r"_reconstruct\('ndarray', \(1099511627776,\)\) is not how numpy"):
        safe_load(tmp_path / "t.pt", "a test file")


def test_a_compressed_member_is_refused_before_it_is_inflated(tmp_path):
    """torch.save stores its members; a deflated one could expand to what its directory claims."""
    buf = io.BytesIO()
    torch.save({"head": np.arange(4)}, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    with zipfile.ZipFile(tmp_path / "t.pt", "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    with pytest.raises(CorruptFileError, match=r"t\.pt: member '.*data\.pkl' is compressed"):
        safe_load(tmp_path / "t.pt", "a test file")


def test_a_damaged_file_is_one_line(tmp_path):
    (tmp_path / "t.pt").write_bytes(pickle.dumps({"head": np.arange(3)})[:20])
    with pytest.raises(CorruptFileError, match=r"t\.pt: not a readable torch file") as err:
        safe_load(tmp_path / "t.pt", "a test file")
    assert "\n" not in str(err.value)
