"""Array files of the scale stage: members of an uncompressed .npz mapped from disk equal the arrays read."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.errors import CorruptFileError
from kgeval.scale.store import load_arrays, map_arrays, save_arrays


def test_mapped_members_equal_the_read_ones(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {"neg": rng.integers(0, 2**40, (300, 7)), "small": np.arange(5, dtype=np.int32),
              "flag": np.array(True), "score": rng.random((4, 3)).astype(np.float32),
              "names": np.array(["Q1", "Q22", "Q333"])}
    path = tmp_path / "g.npz"
    save_arrays(path, arrays)
    mapped = map_arrays(path, ("neg", "small", "flag", "score", "names", "absent"))
    assert set(mapped) == set(arrays)  # a name the file lacks is left out
    read = load_arrays(path, tuple(arrays))
    for name, a in arrays.items():
        assert isinstance(mapped[name], np.memmap)
        np.testing.assert_array_equal(mapped[name], read[name])
        assert mapped[name].dtype == a.dtype and mapped[name].shape == a.shape
    rows = np.array([299, 3, 3, 150])
    np.testing.assert_array_equal(mapped["neg"][rows], arrays["neg"][rows])


def test_a_compressed_or_broken_file_is_one_line(tmp_path):
    np.savez_compressed(tmp_path / "c.npz", neg=np.zeros((3, 2)))
    with pytest.raises(CorruptFileError, match="'neg' is compressed"):
        map_arrays(tmp_path / "c.npz", ("neg",))
    (tmp_path / "x.npz").write_text("not a zip")
    with pytest.raises(CorruptFileError, match="x.npz"):
        map_arrays(tmp_path / "x.npz", ("neg",))
