"""Reading a LibKGE checkpoint safely: its SHA-256 first, then a restricted unpickler.

A LibKGE checkpoint is a ``torch.save`` of a dict whose ``config`` entry is a pickled ``kge.config.Config``, so it
cannot be read with ``torch.load(weights_only=True)``. A pickle is a program: unpickling calls whatever callables
the file names. The file is therefore read into memory once, its SHA-256 compared with the pinned value, and only
those same verified bytes are unpickled; the unpickler resolves only an allow-list of globals, even for a file
whose hash matches.
"""

from __future__ import annotations

import codecs
import collections
import hashlib
import io
import pickle
import re
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...errors import ChecksumError, ConfigError, CorruptFileError
from ...limits import check_size
from .errors import UnsafeCheckpointError

_SHA = re.compile(r"^[0-9a-f]{64}$")


class LibKGEConfig:
    """Stand-in for ``kge.config.Config``: keeps the pickled attributes, above all the nested ``options`` dict, and
    resolves option names as LibKGE's ``Config.get`` / ``Config.get_default`` do."""

    def __init__(self, options: dict[str, Any] | None = None):
        self.options: dict[str, Any] = options if options is not None else {}

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(f"unexpected state of kge.config.Config: {type(state).__name__}")
        self.__dict__.update(state)
        if not isinstance(self.__dict__.get("options"), dict):
            raise pickle.UnpicklingError("kge.config.Config without an options dict")

    def get(self, key: str) -> Any:
        """The value at a dotted key of the nested options; KeyError when absent."""
        result: Any = self.options
        for name in key.split("."):
            if not isinstance(result, dict) or name not in result:
                raise KeyError(key)
            result = result[name]
        return result

    def get_default(self, key: str) -> Any:
        """LibKGE's ``Config.get_default``: the value at ``key``, else the default found by following ``type``
        entries (``reciprocal_relations_model.base_model.l_norm`` → ``rotate.l_norm``) up the hierarchy."""
        try:
            return self.get(key)
        except KeyError:
            pass
        if "." not in key:
            raise KeyError(key)
        parent, field = key.rsplit(".", 1)
        seen = set()
        while True:
            try:
                parent_type = self.get(parent + ".type")
                new_key = f"{parent_type}.{field}"
                if new_key in seen:
                    raise KeyError(key)
                seen.add(new_key)
                parent, field = new_key.rsplit(".", 1)
            except KeyError:
                if "." not in parent:
                    raise KeyError(key) from None
                up, last = parent.rsplit(".", 1)
                field, parent = f"{last}.{field}", up
                continue
            try:
                return self.get(f"{parent}.{field}")
            except KeyError:
                continue


class _RefusedGlobal(pickle.UnpicklingError):
    def __init__(self, module: str, name: str):
        self.qualified = f"{module}.{name}"
        super().__init__(f"refusing to unpickle global {self.qualified!r}: not on the allow-list of a LibKGE "
                         "checkpoint (tensors, storages, OrderedDict, plain data and kge.config.Config)")


def _allowed_globals() -> dict[tuple[str, str], Any]:
    import torch._utils as tu

    allowed: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): codecs.encode,  # protocol 2 pickles bytes as _codecs.encode(str)
        ("torch", "Size"): torch.Size,
        ("torch", "device"): torch.device,
        ("torch", "Tensor"): torch.Tensor,
        ("torch.nn.parameter", "Parameter"): torch.nn.Parameter,
        ("kge.config", "Config"): LibKGEConfig,
        ("numpy", "dtype"): np.dtype,
        ("numpy", "ndarray"): np.ndarray,
    }
    for name in ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
                 "_rebuild_parameter_with_state"):
        if hasattr(tu, name):
            allowed[("torch._utils", name)] = getattr(tu, name)
    rebuild_from_type = getattr(torch._tensor, "_rebuild_from_type_v2", None)
    if rebuild_from_type is not None:
        allowed[("torch._tensor", "_rebuild_from_type_v2")] = rebuild_from_type
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(mod, "scalar")] = _numpy_attr("scalar")
        allowed[(mod, "_reconstruct")] = _numpy_attr("_reconstruct")
    return allowed


def _numpy_attr(name: str) -> Any:
    try:
        from numpy._core import multiarray  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core import multiarray  # type: ignore[no-redef]
    return getattr(multiarray, name)


class _RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` whose ``find_class`` resolves only the allow-list (torch wraps it to resolve storage
    types itself first)."""

    _allowed: dict[tuple[str, str], Any] | None = None

    def find_class(self, module: str, name: str) -> Any:
        cls = type(self)
        if cls._allowed is None:
            cls._allowed = _allowed_globals()
        key = (module, name)
        if key in cls._allowed:
            return cls._allowed[key]
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        raise _RefusedGlobal(module, name)


def _restricted_load(file: Any, **kwargs: Any) -> Any:
    return _RestrictedUnpickler(file, **kwargs).load()


# the ``pickle_module`` handed to torch.load: it uses ``Unpickler`` (zip and legacy format) and ``load`` (legacy)
_PICKLE_MODULE = types.ModuleType("kgeval_libkge_pickle")
_PICKLE_MODULE.Unpickler = _RestrictedUnpickler  # type: ignore[attr-defined]
_PICKLE_MODULE.load = _restricted_load  # type: ignore[attr-defined]
_PICKLE_MODULE.UnpicklingError = pickle.UnpicklingError  # type: ignore[attr-defined]


def _check_sha(sha256: str) -> str:
    if not isinstance(sha256, str) or not _SHA.match(sha256.strip().lower()):
        raise ConfigError(f"LibKGE checkpoint SHA-256 must be 64 hex digits, got {sha256!r}")
    return sha256.strip().lower()


def _refused_in_chain(exc: BaseException) -> _RefusedGlobal | None:
    seen = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, _RefusedGlobal):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def read_libkge_checkpoint(path: str | Path, sha256: str) -> dict[str, Any]:
    """Verify the file's SHA-256, then unpickle exactly the verified bytes with the restricted unpickler."""
    path = Path(path)
    expected = _check_sha(sha256)
    if not path.is_file():
        raise CorruptFileError(path, "LibKGE checkpoint not found")
    check_size(path)  # read whole below, to hash and unpickle the same bytes
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise ChecksumError(path, expected, actual)  # before anything is unpickled
    try:
        ckpt = torch.load(io.BytesIO(data), map_location="cpu", pickle_module=_PICKLE_MODULE, weights_only=False)
    except Exception as exc:  # torch raises several types for damaged archives
        refused = _refused_in_chain(exc)
        if refused is not None:
            raise UnsafeCheckpointError(path, str(refused)) from None
        raise CorruptFileError(path, f"not a readable LibKGE checkpoint: {type(exc).__name__}: {exc}") from exc
    if not isinstance(ckpt, dict) or "model" not in ckpt or "config" not in ckpt:
        raise CorruptFileError(path, "not a LibKGE checkpoint (expected a dict with 'model' and 'config')")
    if not isinstance(ckpt["config"], LibKGEConfig):
        raise CorruptFileError(path, f"LibKGE checkpoint 'config' is a {type(ckpt['config']).__name__}, "
                                     "not a kge.config.Config")
    return ckpt
