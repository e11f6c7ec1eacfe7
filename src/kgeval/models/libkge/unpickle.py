"""Reading a LibKGE checkpoint safely: its SHA-256 first, then a restricted unpickler.

A LibKGE checkpoint is a ``torch.save`` of a dict whose ``config`` entry is a pickled ``kge.config.Config``, so it
cannot be read with ``torch.load(weights_only=True)``. A pickle is a program: unpickling calls whatever callables
the file names. The file is therefore read into memory once, its SHA-256 compared with the pinned value, and only
those same verified bytes are unpickled by kgeval's one allow-list unpickler (:mod:`kgeval.io.unpickle`), with
the stand-in below for LibKGE's config class, even for a file whose hash matches.
"""

from __future__ import annotations

import hashlib
import pickle
import re
from pathlib import Path
from typing import Any

from ...errors import ChecksumError, ConfigError, CorruptFileError
from ...io.unpickle import UnsafePickleError, safe_load
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


#: the globals a LibKGE checkpoint adds to the shared allow-list (numpy, plain containers, torch's tensors)
_LIBKGE_GLOBALS = {("kge.config", "Config"): LibKGEConfig, ("builtins", "bytearray"): bytearray}
_WHAT = "a LibKGE checkpoint (tensors, storages, OrderedDict, plain data and kge.config.Config)"


def _check_sha(sha256: str) -> str:
    if not isinstance(sha256, str) or not _SHA.match(sha256.strip().lower()):
        raise ConfigError(f"LibKGE checkpoint SHA-256 must be 64 hex digits, got {sha256!r}")
    return sha256.strip().lower()


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
        ckpt = safe_load(path, _WHAT, torch=True, extra=_LIBKGE_GLOBALS, data=data)
    except UnsafePickleError as exc:
        raise UnsafeCheckpointError(path, exc.problem) from None
    if not isinstance(ckpt, dict) or "model" not in ckpt or "config" not in ckpt:
        raise CorruptFileError(path, "not a LibKGE checkpoint (expected a dict with 'model' and 'config')")
    if not isinstance(ckpt["config"], LibKGEConfig):
        raise CorruptFileError(path, f"LibKGE checkpoint 'config' is a {type(ckpt['config']).__name__}, "
                                     "not a kge.config.Config")
    return ckpt
