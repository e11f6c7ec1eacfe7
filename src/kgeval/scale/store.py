"""Arrays on disk, byte for byte the same for the same content (np.savez stamps each member with the clock)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from ..errors import CorruptFileError
from ..io import atomic_path


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
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [n for n in names if n not in z.files]
            if missing:
                raise CorruptFileError(path, f"no array {missing[0]!r} (has {', '.join(z.files)})")
            return {n: z[n] for n in names + tuple(n for n in optional if n in z.files)}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise CorruptFileError(path, f"not a readable array file: {exc}") from exc


def members(path: str | Path) -> set[str]:
    """The array names of an .npz file; a missing or unreadable file names itself."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return set(z.files)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise CorruptFileError(path, f"not a readable array file: {exc}") from exc
