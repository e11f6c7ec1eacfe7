"""The content manifest of a run or a reference pack (``manifest.json``): a SHA-256 of the *values* of every
trained model, score dump and metrics table, the claims' verdicts, and the environment that made them.

Values, not files: a checkpoint's bytes depend on torch's archive format and a parquet file's on its writer
and compression, while what a rerun must reproduce is the numbers. So

* a model is its parameters: each array of its ``state_dict`` in the order of the sorted names, with its name,
  dtype and shape, then its raw little-endian bytes (no file date or archive layout enters);
* a score dump is the columns of its parquet files and its ``scores.npy``, file by file in name order;
* a table is hashed column by column (the column digests let ``kgeval reproduce`` name what changed, and compare
  a pack's per-item tables, which keep only the headline columns, float32 where exact, with the run's). A column
  is canonical before hashing: floats as float64, integers as int64, text as UTF-8 (a dictionary-encoded column
  as its values). ``evaluation.csv`` is parsed (every float round-trips from its text) rather than hashed as
  bytes: the writer is canonical today, but its values are what a pack copies and a reader compares, and a
  byte-level digest would also change with a line ending or the float format, not only with a number.

Nothing in a manifest depends on a clock or a host name: the same config, seed and environment give the same
bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import limits
from ..errors import CorruptFileError, InputError

FORMAT = "kgeval-manifest"
VERSION = 1
MANIFEST = "manifest.json"


# ---- digests ---------------------------------------------------------------------------------------------------
def _update(h, name: str, dtype: str, shape: tuple[int, ...], data: bytes) -> None:
    # lengths first, so that no two different (name, dtype, shape, bytes) sequences give the same stream
    head = json.dumps([name, dtype, list(shape), len(data)]).encode()
    h.update(len(head).to_bytes(8, "little") + head)
    h.update(data)


def _array_bytes(a: Any) -> tuple[str, tuple[int, ...], bytes]:
    """dtype label, shape and little-endian bytes of a numpy array or a torch tensor (bfloat16 included)."""
    if hasattr(a, "detach"):  # a torch tensor: numpy has no bfloat16, so read its bytes through a uint8 view
        t = a.detach().cpu().contiguous()
        return str(t.dtype).removeprefix("torch."), tuple(t.shape), t.reshape(-1).view(dtype=_uint8()).numpy().tobytes()
    arr = np.asarray(a)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.dtype.name, arr.shape, np.ascontiguousarray(arr).tobytes()


def _uint8():
    import torch

    return torch.uint8


def array_digest(arrays: Mapping[str, Any]) -> str:
    """SHA-256 of named arrays (numpy or torch), independent of the mapping's order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        _update(h, name, *_array_bytes(arrays[name]))
    return h.hexdigest()


def _canonical(values: pa.ChunkedArray | pa.Array | pd.Series) -> tuple[str, bytes]:
    """A column's canonical kind and bytes: float64, int64, bool or UTF-8 text (see the module's docstring)."""
    if isinstance(values, (pa.ChunkedArray, pa.Array)):
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        values = pd.Series(values.to_numpy(zero_copy_only=False))
    v = values.to_numpy()
    if v.dtype.kind == "f":
        return "float64", v.astype("<f8").tobytes()
    if v.dtype.kind in "iu":
        return "int64", v.astype("<i8").tobytes()
    if v.dtype.kind == "b":
        return "bool", v.astype(np.uint8).tobytes()
    # text: each value's UTF-8 bytes with its length, so that no two different columns join to the same stream
    parts = [str(x).encode() for x in v]
    return "text", b"".join(len(p).to_bytes(4, "little") + p for p in parts)


def column_digests(table: pa.Table | pd.DataFrame) -> dict[str, str]:
    """Column → SHA-256 of its canonical values (name, kind, rows and bytes)."""
    out = {}
    for name in table.column_names if isinstance(table, pa.Table) else table.columns:
        col = table.column(name) if isinstance(table, pa.Table) else table[name]
        kind, data = _canonical(col)
        h = hashlib.sha256()
        _update(h, str(name), kind, (len(col),), data)
        out[str(name)] = h.hexdigest()
    return out


def combined(digests: Mapping[str, str]) -> str:
    """One digest of several (by name, order-free)."""
    return hashlib.sha256(json.dumps(dict(sorted(digests.items()))).encode()).hexdigest()


def read_table(path: str | Path, text: bool = False) -> pa.Table | pd.DataFrame:
    """A metrics table as values: a parquet file as it is stored, a CSV with every float as its text round-trips,
    or with ``text`` every cell verbatim (findings: its cells are sentences and numbers as printed)."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            limits.check_size(path)
            return pq.read_table(path)
        limits.scan(path)  # a NUL byte, an endless line or file: refused before pandas reads it whole
        if text:
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
        typed = pd.read_csv(path, keep_default_na=False, na_values=[""])
        for c in typed.columns[[k == "f" for k in typed.dtypes.map(lambda d: d.kind)]]:
            # Python's float() rounds every text correctly: each value's exact bits, whatever pandas' parser does
            typed[c] = raw[c].replace("", "nan").to_numpy(dtype=object).astype(np.float64)
        return typed
    except (OSError, pa.ArrowException, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"unreadable table: {str(exc).splitlines()[0] if str(exc) else exc}") from None


def table_entry(path: str | Path, text: bool = False) -> dict[str, Any]:
    table = read_table(path, text)
    cols = column_digests(table)
    return {"kind": "table", "sha256": combined(cols), "rows": int(table.num_rows if isinstance(table, pa.Table)
                                                                  else len(table)), "columns": cols}


def model_entry(path: str | Path) -> dict[str, Any]:
    """A trained model's parameters (its checkpoint's ``state_dict``) as one digest, with their count."""
    from ..models.checkpoint import load_checkpoint

    state = load_checkpoint(path, set_aside_corrupt=False)
    params = state.get("state_dict")
    if not isinstance(params, dict):
        raise CorruptFileError(Path(path), "checkpoint without a state_dict: not a trained model")
    return {"kind": "model", "model": state.get("model_name"), "dataset": state.get("dataset"),
            "sha256": array_digest(params), "arrays": len(params),
            "parameters": int(sum(int(np.prod(tuple(v.shape))) for v in params.values()))}


def dump_entry(folder: str | Path) -> dict[str, Any]:
    """A score dump's arrays: the columns of each parquet file and ``scores.npy``, file by file in name order
    (``meta.json`` holds timings and is left out)."""
    folder = Path(folder)
    meta_path = folder / "meta.json"
    try:
        meta = json.loads(limits.read_text(meta_path, encoding="utf-8"))
        files = sorted(meta["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(folder, None, "not a score dump (no readable meta.json listing its files)") from None
    outside = [n for n in files if not isinstance(n, str) or Path(n).name != n or n in ("", ".", "..")]
    if outside:  # a dump's files lie in its folder: a listed path elsewhere is never read
        raise InputError(meta_path, None, f"lists {outside[0]!r}: not a file name of the dump's folder")
    parts = {}
    for name in files:
        if name.endswith(".parquet"):
            parts[name] = combined(column_digests(pq.read_table(folder / name)))
        elif name.endswith(".npy"):
            parts[name] = array_digest({name: np.load(folder / name, allow_pickle=False)})
    return {"kind": "dump", "sha256": combined(parts), "files": parts}


# ---- the manifest ----------------------------------------------------------------------------------------------
def build_manifest(root: str | Path, models: list[str] = (), dumps: list[str] = (), tables: list[str] = (),
                   findings: str | None = None, environment: dict[str, Any] | None = None,
                   config_hash: str | None = None) -> dict[str, Any]:
    """The manifest of the run whose results lie under ``root``: each artifact by its path relative to ``root``
    (``models/<dataset>/<model>/model.pt``, ``scores/<test set>/<system>``, ``metrics/<test set>/<table>``)."""
    root = Path(root)
    artifacts: dict[str, dict[str, Any]] = {}
    for paths, entry in ((models, model_entry), (dumps, dump_entry), (tables, table_entry)):
        for p in paths:
            artifacts[_relative(p, root)] = entry(p)
    verdicts = None
    if findings is not None:
        artifacts[_relative(findings, root)] = table_entry(findings, text=True)
        verdicts = read_verdicts(findings)
    return {"format": FORMAT, "version": VERSION, "config_hash": config_hash,
            "artifacts": dict(sorted(artifacts.items())), "verdicts": verdicts, "environment": environment}


def _relative(path: str | Path, root: Path) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def read_verdicts(findings: str | Path) -> dict[str, str]:
    """claim → its verdict text (the ``holds`` column of findings.csv)."""
    df = read_table(findings, text=True)
    missing = [c for c in ("claim", "holds") if c not in df.columns]
    if missing:
        raise InputError(findings, None, f"lacks the column(s) {', '.join(missing)}: not a findings table")
    return {str(c): str(h) for c, h in zip(df["claim"], df["holds"], strict=True)}


def read_manifest(folder: str | Path) -> dict[str, Any] | None:
    """The manifest of a results folder or pack, or None when it has none (an older pack)."""
    path = Path(folder) / MANIFEST
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():  # a folder, a dangling link: not a manifest to leave out in silence
        raise InputError(path, None, "not a file: a manifest is the JSON file the run wrote")
    try:  # bounded: size, line length and NUL bytes checked before parsing (kgeval.limits)
        data = json.loads(limits.read_text(path, encoding="utf-8"))
    except ValueError as exc:
        raise InputError(path, None, f"not a manifest (JSON): {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(path, None, f"not a kgeval manifest (format {data.get('format')!r})"
                         if isinstance(data, dict) else "not a kgeval manifest")
    return data
