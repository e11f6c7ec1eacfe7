"""The one way kgeval reads a pickled file (``torch.save``'s zip or legacy format): an allow-list unpickler.

A pickle is a program: unpickling calls whatever callables the file names, so ``torch.load(weights_only=False)``
of a file whose object's ``__reduce__`` names ``os.system`` runs it. Files kgeval reads in this format hold
numpy arrays in plain containers (ogbl-wikikg2's split files) or, with ``torch`` set, tensors too (LibKGE
checkpoints, which add their own stand-in classes through ``extra``). The unpickler resolves only those
globals; any other is refused before it is called, as one line naming the file and the global. numpy arrays
are rebuilt only the way numpy pickles them (``_reconstruct`` of an empty array, then its state), and a zip
member torch did not write uncompressed is refused before it is inflated, so a small file cannot claim a large
allocation.
"""

from __future__ import annotations

import codecs
import collections
import io
import pickle
import types
import zipfile
from pathlib import Path
from typing import Any

from ..errors import CorruptFileError


class UnsafePickleError(CorruptFileError):
    """A pickle that names a global outside the allow-list (it could run code on load): nothing was called."""


class RefusedGlobal(pickle.UnpicklingError):
    """Raised inside the unpickler; :func:`safe_load` turns it into an :class:`UnsafePickleError`."""

    def __init__(self, module: str, name: str, what: str):
        self.qualified = f"{module}.{name}"
        super().__init__(f"refusing to unpickle global {self.qualified!r}: not on the allow-list of {what}; "
                         "nothing in the file was run")


def _multiarray() -> Any:
    try:
        from numpy._core import multiarray  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core import multiarray  # type: ignore[no-redef]
    return multiarray


def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> Any:
    """numpy's ``_reconstruct`` as numpy pickles an array: an empty ndarray whose state then sets the shape and
    the data (which must then be in the file); any other call could allocate what the file does not hold."""
    import numpy as np

    if subtype is not np.ndarray or tuple(shape) != (0,):
        raise pickle.UnpicklingError(f"numpy _reconstruct({getattr(subtype, '__name__', subtype)!r}, {shape!r}) "
                                     "is not how numpy pickles an array")
    return _multiarray()._reconstruct(subtype, shape, dtype)


def numpy_globals() -> dict[tuple[str, str], Any]:
    """numpy arrays, their dtypes and scalars, and the plain containers and bytes of a pickle."""
    import numpy as np

    allowed: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "complex"): complex,
        ("_codecs", "encode"): codecs.encode,  # protocol 2 pickles bytes as _codecs.encode(str, 'latin1')
        ("numpy", "dtype"): np.dtype,
        ("numpy", "ndarray"): np.ndarray,
    }
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):  # numpy 1 and numpy 2 name it apart
        allowed[(mod, "scalar")] = _multiarray().scalar
        allowed[(mod, "_reconstruct")] = _reconstruct
    return allowed


def torch_globals() -> dict[tuple[str, str], Any]:
    """torch's own rebuild functions of tensors and parameters, sizes and devices (dtypes: :class:`_Unpickler`)."""
    import torch
    import torch._utils as tu

    allowed: dict[tuple[str, str], Any] = {
        ("torch", "Size"): torch.Size,
        ("torch", "device"): torch.device,
        ("torch", "Tensor"): torch.Tensor,
        ("torch.nn.parameter", "Parameter"): torch.nn.Parameter,
    }
    for name in ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
                 "_rebuild_parameter_with_state"):
        if hasattr(tu, name):
            allowed[("torch._utils", name)] = getattr(tu, name)
    rebuild_from_type = getattr(torch._tensor, "_rebuild_from_type_v2", None)
    if rebuild_from_type is not None:
        allowed[("torch._tensor", "_rebuild_from_type_v2")] = rebuild_from_type
    return allowed


def _pickle_module(allowed: dict[tuple[str, str], Any], torch_dtypes: bool, what: str) -> types.ModuleType:
    """The ``pickle_module`` handed to ``torch.load``: it uses ``Unpickler`` (zip and legacy format) and ``load``
    (legacy); torch wraps the unpickler to resolve its storage types itself first."""

    class _Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            key = (module, name)
            if key in allowed:
                return allowed[key]
            if torch_dtypes and module == "torch":
                import torch

                if isinstance(getattr(torch, name, None), torch.dtype):
                    return getattr(torch, name)
            raise RefusedGlobal(module, name, what)

    def load(file: Any, **kwargs: Any) -> Any:
        return _Unpickler(file, **kwargs).load()

    module = types.ModuleType("kgeval_safe_pickle")
    module.Unpickler = _Unpickler  # type: ignore[attr-defined]
    module.load = load  # type: ignore[attr-defined]
    module.UnpicklingError = pickle.UnpicklingError  # type: ignore[attr-defined]
    return module


def refused_in_chain(exc: BaseException) -> RefusedGlobal | None:
    """The :class:`RefusedGlobal` that ``exc`` was raised from, if any (torch re-raises some errors)."""
    seen = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, RefusedGlobal):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _stored_only(path: Path, data: bytes | None) -> None:
    """Refuse a zip-format file with a compressed member: ``torch.save`` stores every member as it is, and
    torch would inflate a member whole to the size its directory claims."""
    source: Any = io.BytesIO(data) if data is not None else path
    if not zipfile.is_zipfile(source):
        return
    try:
        with zipfile.ZipFile(io.BytesIO(data) if data is not None else path) as zf:
            packed = [i.filename for i in zf.infolist() if i.compress_type != zipfile.ZIP_STORED]
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptFileError(path, f"not a readable torch file: {exc}") from None
    if packed:
        raise CorruptFileError(path, f"member {packed[0]!r} is compressed: torch.save writes every member "
                                     "uncompressed, so this is not a file it wrote")


def safe_load(path: str | Path, what: str, *, torch: bool = False,
              extra: dict[tuple[str, str], Any] | None = None, data: bytes | None = None) -> Any:
    """``torch.load`` of ``path`` (or of its bytes ``data``, already read and verified) through the allow-list
    (numpy, plain containers; with ``torch`` tensors; ``extra``'s globals); ``what`` names the file's kind in
    the refusal. A refused global is an :class:`UnsafePickleError`, a damaged file a :class:`CorruptFileError`,
    each one line naming ``path``."""
    import torch as _torch

    path = Path(path)
    allowed = numpy_globals() | (torch_globals() if torch else {}) | (extra or {})
    _stored_only(path, data)
    try:
        return _torch.load(io.BytesIO(data) if data is not None else path, map_location="cpu",
                           pickle_module=_pickle_module(allowed, torch, what), weights_only=False)
    except Exception as exc:  # a damaged archive: pickle, zip and torch each raise their own types
        refused = refused_in_chain(exc)
        if refused is not None:
            raise UnsafePickleError(path, str(refused)) from None
        raise CorruptFileError(path, f"not a readable torch file: {type(exc).__name__}: {exc}") from None
