"""Arrays on disk, byte for byte the same for the same content (np.savez stamps each member with the clock)."""

from __future__ import annotations

import struct
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import CorruptFileError
from ..io import atomic_path

#: the arrays of a synthetic graph file (:mod:`.synth`): its splits, the hidden true triples, the planted vectors
SYNTHETIC = ("train", "valid", "test", "hidden", "z", "w")


@contextmanager
def _readable(path: str | Path):
    """A missing, truncated or foreign array file as one line naming it (a CorruptFileError passes as it is)."""
    try:
        yield
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, struct.error) as exc:
        raise CorruptFileError(path, f"not a readable array file: {exc}") from exc


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed .npz (np.load reads it) with fixed member dates, atomically."""
    with atomic_path(path) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as fh:
                # np.ascontiguousarray would make a 0-d array 1-d
                arr = np.asarray(arr)
                np.lib.format.write_array(fh, arr if arr.flags.c_contiguous else arr.copy(order="C"),
                                          allow_pickle=False)


def load_arrays(path: str | Path, names: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """The named arrays of a file :func:`save_arrays` wrote, and those of ``optional`` it holds; a missing or
    unreadable file names itself."""
    with _readable(path):
        with np.load(path, allow_pickle=False) as z:
            missing = [n for n in names if n not in z.files]
            if missing:
                raise CorruptFileError(path, f"no array {missing[0]!r} (has {', '.join(z.files)})")
            return {n: z[n] for n in names + tuple(n for n in optional if n in z.files)}


def members(path: str | Path) -> set[str]:
    """The array names of an .npz file; a missing or unreadable file names itself."""
    with _readable(path), np.load(path, allow_pickle=False) as z:
        return set(z.files)


def map_arrays(path: str | Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Those of ``names`` that the file holds, mapped read-only from disk instead of read: a member of an
    uncompressed .npz (:func:`save_arrays`) is a .npy at an offset of the zip, so indexing a few rows reads only
    those (ogbl-wikikg2's fixed negatives are 2 × 2.4 GB, of which an estimate needs its sampled answers' rows)."""
    out = {}
    with _readable(path):
        with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
            for name in names:
                try:
                    info = zf.getinfo(f"{name}.npy")
                except KeyError:
                    continue
                if info.compress_type != zipfile.ZIP_STORED:
                    raise CorruptFileError(path, f"array {name!r} is compressed: it cannot be mapped")
                fh.seek(info.header_offset)
                local = fh.read(30)  # the local file header; its name and extra field lengths are at 26 and 28
                if local[:4] != b"PK\x03\x04":
                    raise CorruptFileError(path, f"array {name!r}: no zip entry at its offset")
                n_name, n_extra = struct.unpack("<HH", local[26:30])
                fh.seek(info.header_offset + 30 + n_name + n_extra)
                version = np.lib.format.read_magic(fh)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, fortran, dtype = read(fh)
                if dtype.hasobject:
                    raise CorruptFileError(path, f"array {name!r} holds Python objects")
                out[name] = np.memmap(path, dtype=dtype, mode="r", offset=fh.tell(), shape=shape,
                                      order="F" if fortran else "C")
    return out


#: values of an id array checked at a time: the check of a mapped array reads it in pieces of this many
_CHECK_STEP = 1 << 23


def check_ids(path: str | Path, name: str, a: np.ndarray, highs: list[int], words: list[str]) -> None:
    """Every row of the id array ``name`` of the file ``path`` holds, in column j, an id of 0 to
    ``highs[j]`` - 1 (``words[j]``: what it counts, "entity" or "relation"); else one line naming the file, the
    array, the row and the bound. A graph file's ids index the model's rows and the filter's keys: one out of
    range is an IndexError deep inside the ranking, and a negative one silently another entity's row."""
    if a.ndim != 2 or a.shape[1] != len(highs) or a.dtype.kind not in "iu":
        raise CorruptFileError(path, f"array {name!r} is a {a.ndim}-d {a.dtype} array of shape {a.shape}, "
                                     f"expected integer ids, {len(highs)} a row")
    high = np.asarray(highs, np.int64)
    step = max(1, _CHECK_STEP // max(1, len(highs)))
    for start in range(0, len(a), step):  # in pieces: a mapped array is read once, never held whole
        block = np.asarray(a[start:start + step])
        bad = (block < 0) | (block >= high)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise CorruptFileError(path, f"array {name!r} row {start + row:,} names {words[col]} "
                                         f"{int(block[row, col]):,}, outside 0 to {int(high[col]) - 1:,} (the "
                                         f"graph's {int(high[col]):,} {_plural(words[col])})")


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + "s"
