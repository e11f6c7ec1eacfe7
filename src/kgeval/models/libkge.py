"""LibKGE's published checkpoints (the "download" path): load them into kgeval's own models.

LibKGE (Broscheit et al. 2020, ``uma-pi1/kge``) published trained RESCAL, TransE, DistMult, ComplEx, ConvE and
RotatE models for FB15k-237 and WN18RR (``shared/specs/models.md``). This module turns such a file into a kgeval
model, or into a kgeval checkpoint that :func:`kgeval.models.checkpoint.load_model` loads:

* :func:`fetch_libkge` downloads a file (URL, or a mirror folder) with the project's downloader semantics: the
  bytes must match the pinned SHA-256, and nothing half-written is ever left at the destination;
* :func:`read_libkge_checkpoint` verifies the file's SHA-256 and unpickles it with a restricted unpickler;
* :func:`load_libkge` returns ``(kgeval model name, hyperparameters, kgeval state_dict)`` with entity and
  relation rows permuted into the knowledge graph's order; :func:`libkge_model` builds the model from that;
* :func:`convert_checkpoint` gives the state and provenance of a kgeval checkpoint; the workflow step that
  writes it (and its sidecar JSON) is ``kgeval.training.steps.convert_libkge``.

**Why the hash comes first.** A LibKGE checkpoint is a ``torch.save`` of a dict whose ``config`` entry is a pickled
``kge.config.Config`` object, so it cannot be read with ``torch.load(weights_only=True)``. A pickle is a program:
unpickling calls whatever callables the file names (``os.system`` included), so an unpickled file can run any code
with our privileges. The file is therefore read into memory once, its SHA-256 compared with the value the
configuration pins, and only those same verified bytes are unpickled (no second read of the path that could see
other bytes). On a mismatch :class:`~kgeval.errors.ChecksumError` names the file, the expected and the actual hash,
and nothing is unpickled. As a second line of defence the unpickler is restricted: its ``find_class`` resolves only
an allow-list (torch's tensor/storage rebuild functions and dtypes, ``collections.OrderedDict``, a few harmless
builtins, numpy scalars/arrays that a training trace may hold, and ``kge.config.Config``, which maps to the
stand-in :class:`LibKGEConfig` that keeps its ``options`` dict). Anything else, e.g. ``os.system``, is refused with
:class:`UnsafeCheckpointError` naming the global — even for a file whose hash matches.

**Format** (LibKGE ``TrainingJob.save``): a dict with ``type``, ``epoch``, ``valid_trace``, ``model`` = (state_dict,
meta), optimiser (and scheduler) state, ``job_id`` and ``config``. Both ``torch.save`` formats (the zip format and
the legacy one of torch < 1.6, which the 2020 files may use) are read. Parameters used:

* embeddings ``_entity_embedder._embeddings.weight`` / ``_relation_embedder._embeddings.weight`` (older files:
  ``…embeddings.weight``, LibKGE's own ``backward_compatible_keys``). A reciprocal-relations model
  (``model: reciprocal_relations_model``, older name ``inverse_relations_model``; its base model type is
  ``<model>.base_model.type``) keeps the base model under ``_base_model.``, with 2|R| relation rows (forward rows
  first, then the reciprocal ones, LibKGE's ``_reciprocal`` ids). Its state_dict also repeats the same tensors
  without the prefix; the ``_base_model.`` keys are preferred, the unprefixed ones used as fallback. kgeval's
  reciprocal models use the same row layout (relation r⁻¹ = r + |R|), so both halves are permuted alike.
* DistMult, RESCAL (relation rows are the d×d matrices flattened row-major, ``p.view(d, d)``), ComplEx ([re ‖ im];
  LibKGE's score Re⟨s, r, conj(o)⟩ is kgeval's): the tables are copied.
* TransE: ``transe.l_norm`` (default 1) → ``norm``; ``gamma = 0`` (LibKGE's score is −‖s + p − o‖ with no margin).
  LibKGE computes *spo* scores with ``F.pairwise_distance``, which adds ε = 1e-6 to the difference; kgeval gives
  the exact −‖s + p − o‖, which is what LibKGE's *sp_*/*_po* (``torch.cdist``) scores — the ones its ranking
  evaluation uses — are.
* RotatE: entities [re ‖ im] (2k columns), relations k phases in radians (cos/sin) → kgeval ``RotatE`` with
  ``dim = k``, ``phase_scale = 1.0``, ``gamma = 0`` and ``norm`` = ``rotate.l_norm`` (LibKGE default 1.0: the sum of
  the complex moduli as in the paper; 2.0: the complex 2-norm); other norms are refused. The score is the negated
  distance −‖s ∘ p − o‖ of LibKGE's later ``rotate.py`` (with ``normalize_phases``); its first versions returned
  the distance un-negated, which would rank the most distant entity first, so the published RotatE
  (``libkge-models/``, MRR .333) is taken to come from the fixed scorer. Phases enter only through cos/sin, so
  LibKGE's phase normalisation to [−π, π] changes nothing.
* ConvE (LibKGE's ``conve.py``; reciprocal only, as kgeval's ConvE): both tables carry an extra column 0 (LibKGE's
  "HACK to add bias terms"): entity column 0 is the object bias b_t → ``entity_bias``, the rest the embedding;
  relation column 0 is unused and dropped. The scorer (``_scorer.``) maps ``convolution`` → ``conv``,
  ``projection`` → ``fc``, ``bn1``/``bn2`` → ``bn1``/``bn2``; LibKGE's batch norms have no affine parameters and load
  as weight 1, bias 0 (running statistics copied). LibKGE reshapes s and p (d columns after dropping column 0) to
  ``emb_height × emb_width`` with emb_height = √(d / ``2D_aspect_ratio``) (default 2; d = 200 gives 10 × 20) and
  stacks them along the height, subject first (``torch.cat([s_2d, p_2d], 2)``) — kgeval's ConvE ``stack`` with
  ``k_h = emb_height``. Then conv → bn1 → ReLU → feature-map dropout → projection → dropout → bn2 → ReLU → · e_o + b_o,
  as kgeval's ConvE with ``input_batch_norm=False``. Filters (32) and the square kernel come from the convolution
  weight, ``padding`` from the config (default 0), the bias flag from the presence of ``convolution.bias``; only
  ``stride`` 1 exists in kgeval. The projection width is checked against the image shape.
* ``<embedder>.normalize.p`` > 0 (or the oldest ``normalize: L2``): LibKGE normalises the rows (current versions
  renormalise the stored weights after every batch, the oldest normalised at lookup), so the rows are
  L_p-normalised on load — a no-op for weights that are already normalised.
* Dropout rates are copied where kgeval has the same knob (embedding dropout of DistMult, RESCAL, ComplEx, TransE;
  ConvE's ``input_dropout`` ← the entity embedder's dropout, ``feature_map_dropout``, ``hidden_dropout`` ←
  ``projection_dropout``). They only matter in training mode; the loaded model is meant for evaluation.

**Entity and relation order.** Checkpoint rows are LibKGE's dataset indices (``entity_ids.del`` /
``relation_ids.del``, lines ``index<TAB>id``). Rows are always matched to the knowledge graph **by id string**,
never by position. Without those files, LibKGE's order is derived from the knowledge graph's split triples by
LibKGE's rule (``data/preprocess``: first appearance over train, valid, test, within a triple subject, relation,
object) — the rule kgeval uses for its own ids, so the permutation is then the identity, but it is still built by
id string. An id in LibKGE's order unknown to the graph, a duplicate id, or a count that does not match the
checkpoint's rows or the graph is an error naming the problem.

Assumptions that could not be checked against the published files (their URLs are unreachable from the build
machine; the tests use checkpoints they write in LibKGE's layout): the key names and option names above follow
LibKGE's source (``kge_model.py``, ``reciprocal_relations_model.py``, ``lookup_embedder.py``, ``conve.py``,
``rotate.py``, ``transe.py``, ``config.py``); the published files are assumed to be training checkpoints of that
layout (a ``kge package`` file has the same ``model``/``config`` entries and loads too).
"""

from __future__ import annotations

import codecs
import collections
import hashlib
import io
import logging
import math
import pickle
import re
import types
import urllib.error
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..data.download import fetch, resolve_mirror
from ..data.kg import SPLITS, KnowledgeGraph
from ..data.manifest import Resource
from ..errors import ChecksumError, ConfigError, CorruptFileError, InputError, KgevalError
from ..io import set_aside
from ..limits import check_size, read_text
from . import build_model
from .base import KGEModel

log = logging.getLogger(__name__)

SOURCE = "libkge"
_SHA = re.compile(r"^[0-9a-f]{64}$")

# LibKGE model type -> kgeval model name
LIBKGE_MODELS = {"rescal": "RESCAL", "transe": "TransE", "distmult": "DistMult", "complex": "ComplEx",
                 "conve": "ConvE", "rotate": "RotatE"}
RECIPROCAL_WRAPPERS = ("reciprocal_relations_model", "inverse_relations_model")


class LibKGEError(KgevalError):
    """A LibKGE checkpoint that does not fit the knowledge graph or is not a supported model."""


class UnsafeCheckpointError(CorruptFileError):
    """A pickle that references a global outside the allow-list (it could run code on load)."""


# ---- restricted unpickling --------------------------------------------------------------------------------------
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


# ---- entity / relation order ------------------------------------------------------------------------------------
def read_ids(path: str | Path) -> list[str]:
    """LibKGE's ``entity_ids.del`` / ``relation_ids.del`` (``index<TAB>id``) as the list of ids by index."""
    path = Path(path)
    by_index: dict[int, tuple[str, int]] = {}
    seen: dict[str, int] = {}
    with io.StringIO(read_text(path, "utf-8"), newline="") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\n").rstrip("\r")
            if not line:
                continue
            parts = line.split("\t", 1)
            if len(parts) != 2 or not parts[0].strip().isdigit():
                raise InputError(path, lineno, "expected 'index<TAB>id'")
            idx, name = int(parts[0]), parts[1]
            if idx in by_index:
                raise InputError(path, lineno, f"index {idx} already used on line {by_index[idx][1]}")
            if name in seen:
                raise InputError(path, lineno, f"id {name!r} already listed on line {seen[name]}")
            by_index[idx] = (name, lineno)
            seen[name] = lineno
    n = len(by_index)
    missing = sorted(set(range(n)) - set(by_index))
    if missing:
        raise InputError(path, None, f"indices are not 0..{n - 1}: index {missing[0]} is missing")
    return [by_index[i][0] for i in range(n)]


def libkge_order(kg: KnowledgeGraph) -> tuple[list[str], list[str]]:
    """LibKGE's entity and relation order for the graph's splits: first appearance over train, valid and test,
    within a triple subject, relation, object (LibKGE's ``data/preprocess``), as id strings."""
    triples = np.concatenate([kg.splits[s] for s in SPLITS], axis=0).reshape(-1, 3)
    ents = triples[:, [0, 2]].reshape(-1)
    _, first = np.unique(ents, return_index=True)
    ent_order = ents[np.sort(first)]
    rels = triples[:, 1]
    _, first = np.unique(rels, return_index=True)
    rel_order = rels[np.sort(first)]
    return [kg.entities[i] for i in ent_order.tolist()], [kg.relations[i] for i in rel_order.tolist()]


def _permutation(lib_ids: list[str], ours: list[str], what: str, source: str, kg_name: str) -> torch.Tensor:
    """``perm`` with our row j = LibKGE row ``perm[j]``, matched by id string."""
    ours_index = {name: i for i, name in enumerate(ours)}
    lib_index: dict[str, int] = {}
    for i, name in enumerate(lib_ids):
        if name not in ours_index:
            raise LibKGEError(f"{source}: {what} {name!r} (LibKGE index {i}) is not in knowledge graph {kg_name}")
        if name in lib_index:
            raise LibKGEError(f"{source}: {what} {name!r} is listed twice (indices {lib_index[name]} and {i})")
        lib_index[name] = i
    if len(lib_ids) != len(ours):
        absent = next(name for name in ours if name not in lib_index)
        raise LibKGEError(f"{source}: {len(lib_ids)} {what} ids, knowledge graph {kg_name} has {len(ours)} "
                          f"({what} {absent!r} has no LibKGE index)")
    return torch.tensor([lib_index[name] for name in ours], dtype=torch.long)


# ---- state-dict helpers -----------------------------------------------------------------------------------------
def _model_state(ckpt: dict[str, Any], path: Path) -> dict[str, torch.Tensor]:
    model = ckpt["model"]
    state = model[0] if isinstance(model, (tuple, list)) else model
    if not isinstance(state, dict):
        raise CorruptFileError(path, "LibKGE checkpoint 'model' holds no state_dict")
    return state


def _find(state: dict[str, torch.Tensor], candidates: list[str], path: Path, required: bool = True
          ) -> torch.Tensor | None:
    for key in candidates:
        if key in state:
            value = state[key]
            if not isinstance(value, torch.Tensor):
                raise CorruptFileError(path, f"LibKGE state entry {key} is not a tensor")
            return value.detach().to(torch.float32) if value.is_floating_point() else value.detach()
    if required:
        keys = ", ".join(sorted(state)[:12])
        raise CorruptFileError(path, f"LibKGE state_dict has none of {', '.join(candidates)} (keys: {keys} …)")
    return None


def _embedder_keys(which: str, reciprocal: bool) -> list[str]:
    keys = [f"_{which}_embedder._embeddings.weight", f"_{which}_embedder.embeddings.weight"]
    return [f"_base_model.{k}" for k in keys] + keys if reciprocal else keys


def _option(cfg: LibKGEConfig, key: str, default: Any) -> Any:
    try:
        return cfg.get_default(key)
    except KeyError:
        return default


def _dropout(cfg: LibKGEConfig, key: str) -> float:
    value = _option(cfg, key, 0.0)
    try:
        return max(0.0, float(value))  # LibKGE treats negative dropout as 0
    except (TypeError, ValueError):
        return 0.0


def _normalize(weight: torch.Tensor, cfg: LibKGEConfig, embedder_key: str) -> torch.Tensor:
    p = _option(cfg, f"{embedder_key}.normalize.p", None)
    if p is None and _option(cfg, f"{embedder_key}.normalize", None) == "L2":
        p = 2.0
    try:
        p = float(p) if p is not None else -1.0
    except (TypeError, ValueError):
        p = -1.0
    if p > 0:
        return torch.nn.functional.normalize(weight, p=p, dim=-1)
    return weight


def _norm_option(cfg: LibKGEConfig, key: str, path: Path) -> int:
    value = float(_option(cfg, f"{key}.l_norm", 1.0))
    if value not in (1.0, 2.0):
        raise LibKGEError(f"{path}: l_norm {value} is not supported (kgeval offers the L1 and L2 norms)")
    return int(value)


# ---- the conversion ---------------------------------------------------------------------------------------------
def _detect(cfg: LibKGEConfig, path: Path) -> tuple[str, str, bool]:
    """(LibKGE model type, its configuration key, reciprocal)."""
    try:
        model = cfg.get("model")
    except KeyError:
        raise CorruptFileError(path, "LibKGE config has no 'model' option") from None
    reciprocal = model in RECIPROCAL_WRAPPERS
    key = model
    if reciprocal:
        key = f"{model}.base_model"
        try:
            model = cfg.get_default(f"{key}.type")
        except KeyError:
            raise CorruptFileError(path, f"LibKGE config has no {key}.type") from None
    if model not in LIBKGE_MODELS:
        raise LibKGEError(f"{path}: LibKGE model {model!r} is not supported "
                          f"(supported: {', '.join(sorted(LIBKGE_MODELS))})")
    return model, key, reciprocal


def load_libkge(path: str | Path, kg: KnowledgeGraph, sha256: str, entity_ids: str | Path | None = None,
                relation_ids: str | Path | None = None) -> tuple[str, dict[str, Any], dict[str, torch.Tensor]]:
    """Load a LibKGE checkpoint pinned by ``sha256`` for ``kg``.

    Returns (kgeval model name, constructor hyperparameters, state_dict): ``build_model(name, kg.num_entities,
    kg.num_relations, **hparams).load_state_dict(state_dict)`` gives a model whose scores equal LibKGE's (in eval
    mode), with entity and relation ids those of ``kg``. ``entity_ids``/``relation_ids`` are LibKGE's
    ``entity_ids.del``/``relation_ids.del``; without them LibKGE's order is derived from the graph's splits.
    """
    path = Path(path)
    ckpt = read_libkge_checkpoint(path, sha256)
    name, hparams, state, _ = _convert(ckpt, path, kg, entity_ids, relation_ids)
    return name, hparams, state


def _convert(ckpt: dict[str, Any], path: Path, kg: KnowledgeGraph, entity_ids: str | Path | None,
             relation_ids: str | Path | None) -> tuple[str, dict[str, Any], dict[str, torch.Tensor], str]:
    cfg: LibKGEConfig = ckpt["config"]
    lib_model, key, reciprocal = _detect(cfg, path)
    name = LIBKGE_MODELS[lib_model]
    state = _model_state(ckpt, path)

    ent = _find(state, _embedder_keys("entity", reciprocal), path)
    rel = _find(state, _embedder_keys("relation", reciprocal), path)
    assert ent is not None and rel is not None
    if ent.dim() != 2 or rel.dim() != 2:
        raise CorruptFileError(path, "LibKGE embedding tables are not matrices")
    ent = _normalize(ent, cfg, f"{key}.entity_embedder")
    rel = _normalize(rel, cfg, f"{key}.relation_embedder")

    # ids: LibKGE's order (files or derived by its rule) matched to the graph by id string
    derived_e, derived_r = (None, None) if entity_ids and relation_ids else libkge_order(kg)
    lib_e = read_ids(entity_ids) if entity_ids else derived_e
    lib_r = read_ids(relation_ids) if relation_ids else derived_r
    assert lib_e is not None and lib_r is not None
    e_src = str(entity_ids) if entity_ids else f"LibKGE entity order derived from {kg.name}'s splits"
    r_src = str(relation_ids) if relation_ids else f"LibKGE relation order derived from {kg.name}'s splits"
    if ent.shape[0] != len(lib_e):
        raise LibKGEError(f"{path}: {ent.shape[0]} entity rows, but {e_src} lists {len(lib_e)} entities")
    rows = len(lib_r) * (2 if reciprocal else 1)
    if rel.shape[0] != rows:
        raise LibKGEError(f"{path}: {rel.shape[0]} relation rows, but {r_src} lists {len(lib_r)} relations"
                          + (" (a reciprocal model has 2|R| rows)" if reciprocal else ""))
    e_perm = _permutation(lib_e, kg.entities, "entity", e_src, kg.name)
    r_perm = _permutation(lib_r, kg.relations, "relation", r_src, kg.name)
    if reciprocal:
        r_perm = torch.cat([r_perm, r_perm + len(lib_r)])

    hparams: dict[str, Any] = {"reciprocal": reciprocal}
    out: dict[str, torch.Tensor] = {}
    ed = _dropout(cfg, f"{key}.entity_embedder.dropout")
    rd = _dropout(cfg, f"{key}.relation_embedder.dropout")
    d = int(ent.shape[1])
    if lib_model in ("distmult", "complex", "rescal"):
        want = d * d if lib_model == "rescal" else d
        if rel.shape[1] != want:
            raise CorruptFileError(path, f"LibKGE {lib_model}: relation width {rel.shape[1]}, expected {want} "
                                         f"for entity width {d}")
        if lib_model == "complex" and d % 2:
            raise CorruptFileError(path, f"LibKGE complex: odd entity width {d}")
        hparams.update(dim=d, entity_dropout=ed, relation_dropout=rd)
        out["entity.weight"], out["relation.weight"] = ent, rel
    elif lib_model == "transe":
        if rel.shape[1] != d:
            raise CorruptFileError(path, f"LibKGE transe: relation width {rel.shape[1]} != entity width {d}")
        hparams.update(dim=d, norm=_norm_option(cfg, key, path), gamma=0.0, entity_dropout=ed,
                       relation_dropout=rd)
        out["entity.weight"], out["relation.weight"] = ent, rel
    elif lib_model == "rotate":
        if d % 2 or rel.shape[1] != d // 2:
            raise CorruptFileError(path, f"LibKGE rotate: entity width {d} must be even and twice the relation "
                                         f"width {rel.shape[1]}")
        hparams.update(dim=d // 2, gamma=0.0, norm=_norm_option(cfg, key, path), phase_scale=1.0)
        out["entity.weight"], out["relation.weight"] = ent, rel
    else:  # conve
        if not reciprocal:
            raise LibKGEError(f"{path}: LibKGE ConvE without reciprocal relations is not supported "
                              "(kgeval's ConvE answers head questions through reciprocal relations)")
        hparams.update(_conve(cfg, key, state, path, d - 1, rel.shape[1] - 1, out))
        hparams.update(input_dropout=ed)
        out["entity_bias"], out["entity.weight"], out["relation.weight"] = ent[:, 0], ent[:, 1:], rel[:, 1:]

    for k in ("entity.weight", "entity_bias"):
        if k in out:
            out[k] = out[k][e_perm]
    out["relation.weight"] = out["relation.weight"][r_perm]
    out = {k: v.contiguous().clone() for k, v in out.items()}

    # validate against the kgeval model itself (shapes, completeness)
    model = build_model(name, kg.num_entities, kg.num_relations, graph=kg.splits["train"], **hparams)
    try:
        model.load_state_dict(out, strict=True)
    except RuntimeError as exc:
        raise LibKGEError(f"{path}: converted LibKGE {lib_model} weights do not fit kgeval's {name}: {exc}") from exc
    return name, hparams, {k: v.detach().clone() for k, v in model.state_dict().items()}, lib_model


def _conve(cfg: LibKGEConfig, key: str, state: dict[str, torch.Tensor], path: Path, d: int, rd: int,
           out: dict[str, torch.Tensor]) -> dict[str, Any]:
    """ConvE's scorer weights into ``out`` (kgeval names); returns its hyperparameters."""
    if rd != d:
        raise CorruptFileError(path, f"LibKGE conve: relation width {rd + 1} != entity width {d + 1}")
    prefixes = ["_base_model._scorer.", "_scorer."]
    prefix = next((p for p in prefixes if f"{p}convolution.weight" in state), None)
    if prefix is None:
        raise CorruptFileError(path, "LibKGE conve: no _scorer.convolution.weight in the state_dict")

    def get(name: str, required: bool = True) -> torch.Tensor | None:
        return _find(state, [prefix + name], path, required)

    conv_w = get("convolution.weight")
    assert conv_w is not None
    if conv_w.dim() != 4 or conv_w.shape[1] != 1 or conv_w.shape[2] != conv_w.shape[3]:
        raise CorruptFileError(path, f"LibKGE conve: unexpected convolution weight shape {tuple(conv_w.shape)}")
    filters, kernel = int(conv_w.shape[0]), int(conv_w.shape[2])
    stride = int(_option(cfg, f"{key}.stride", 1))
    if stride != 1:
        raise LibKGEError(f"{path}: LibKGE conve stride {stride} is not supported (kgeval's ConvE uses stride 1)")
    padding = int(_option(cfg, f"{key}.padding", 0))
    aspect = float(_option(cfg, f"{key}.2D_aspect_ratio", 2))
    k_h = int(math.sqrt(d / aspect))  # LibKGE: emb_height = sqrt(d / ratio), views with int(emb_height)
    k_w = int(k_h * aspect)
    if k_h <= 0 or k_h * k_w != d:
        raise LibKGEError(f"{path}: LibKGE conve: 2D_aspect_ratio {aspect} gives no integer image for dim {d}")
    proj_w, proj_b = get("projection.weight"), get("projection.bias")
    assert proj_w is not None and proj_b is not None
    fc_in = filters * (2 * k_h + 2 * padding - kernel + 1) * (k_w + 2 * padding - kernel + 1)
    if tuple(proj_w.shape) != (d, fc_in):
        raise CorruptFileError(path, f"LibKGE conve: projection weight {tuple(proj_w.shape)}, expected {(d, fc_in)} "
                                     f"for a {k_h}×{k_w} image, {filters} filters {kernel}×{kernel}, padding "
                                     f"{padding}")
    conv_b = get("convolution.bias", required=False)
    out["conv.weight"], out["fc.weight"], out["fc.bias"] = conv_w, proj_w, proj_b
    if conv_b is not None:
        out["conv.bias"] = conv_b
    for bn, width in (("bn1", filters), ("bn2", d)):
        mean, var = get(f"{bn}.running_mean"), get(f"{bn}.running_var")
        tracked = get(f"{bn}.num_batches_tracked", required=False)
        if get(f"{bn}.weight", required=False) is not None:
            raise CorruptFileError(path, f"LibKGE conve: {bn} has affine weights (LibKGE's have none)")
        out[f"{bn}.running_mean"], out[f"{bn}.running_var"] = mean, var  # type: ignore[assignment]
        out[f"{bn}.weight"], out[f"{bn}.bias"] = torch.ones(width), torch.zeros(width)
        out[f"{bn}.num_batches_tracked"] = (tracked.to(torch.long) if tracked is not None
                                            else torch.tensor(0, dtype=torch.long))
    return {"dim": d, "k_h": k_h, "filters": filters, "kernel_size": kernel, "padding": padding,
            "conv_bias": conv_b is not None, "input_batch_norm": False,
            "feature_map_dropout": _dropout(cfg, f"{key}.feature_map_dropout"),
            "hidden_dropout": _dropout(cfg, f"{key}.projection_dropout")}


def libkge_model(path: str | Path, kg: KnowledgeGraph, sha256: str, entity_ids: str | Path | None = None,
                 relation_ids: str | Path | None = None) -> KGEModel:
    """The kgeval model of a LibKGE checkpoint, in eval mode on the CPU."""
    name, hparams, state = load_libkge(path, kg, sha256, entity_ids, relation_ids)
    model = build_model(name, kg.num_entities, kg.num_relations, graph=kg.splits["train"], **hparams)
    model.load_state_dict(state)
    return model.eval()


def _plain(value: Any) -> Any:
    """A trace value as plain data (loadable with ``weights_only=True`` and writable as JSON)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _best_valid(cfg: LibKGEConfig, trace: list[Any], epoch: Any) -> float | None:
    metric = _option(cfg, "valid.metric", "mean_reciprocal_rank_filtered_with_test")
    values = [(e.get("epoch"), e[metric]) for e in trace if isinstance(e, dict) and isinstance(e.get(metric),
                                                                                              (int, float))]
    at_epoch = [v for ep, v in values if ep == epoch]
    if at_epoch:
        return float(at_epoch[-1])
    return float(max(v for _, v in values)) if values else None


def convert_checkpoint(path: str | Path, kg_path: str | Path, sha256: str, entity_ids: str | Path | None = None,
                       relation_ids: str | Path | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pinned LibKGE checkpoint as the state of a kgeval checkpoint and its provenance record, for the graph
    saved at ``kg_path`` (written by ``kgeval.training.steps.convert_libkge``)."""
    path = Path(path)
    kg = KnowledgeGraph.load(kg_path)
    try:
        ckpt = read_libkge_checkpoint(path, sha256)
    except ChecksumError as exc:  # a damaged download: set aside, so that the next run fetches it again
        aside = set_aside(path, str(exc))
        raise ChecksumError(f"{path} (set aside as {aside.name}, safe to delete; a rerun fetches it again)",
                            exc.expected, exc.actual) from exc
    name, hparams, state, lib_model = _convert(ckpt, path, kg, entity_ids, relation_ids)
    trace = _plain(ckpt.get("valid_trace") or [])
    epoch = _plain(ckpt.get("epoch"))
    valid = _best_valid(ckpt["config"], trace, epoch)
    record = {"source": SOURCE, "source_file": path.name, "source_sha256": _check_sha(sha256),
              "libkge_model": lib_model, "libkge_epoch": epoch, "valid_mrr": valid}
    st = {"model_name": name, "model_hparams": hparams, "dataset": kg.name,
          "dataset_fingerprint": kg.fingerprint(), "epoch": epoch if isinstance(epoch, int) else -1,
          "trace": trace, "state_dict": state, **record}
    return st, record


# ---- download ---------------------------------------------------------------------------------------------------
def default_mirror_path(url: str) -> str:
    """Where a LibKGE file lies in a mirror folder: ``libkge/<last two URL path segments>``, e.g.
    ``libkge/iclr2020-models/fb15k-237-rescal.pt``."""
    parts = [p for p in urllib.parse.urlparse(url).path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise ConfigError(f"not a usable LibKGE checkpoint URL: {url!r}")
    return "/".join(["libkge", *parts[-2:]])


def fetch_libkge(url: str, sha256: str, out: str | Path, mirror: str | Path | None = None, size: int | None = None,
                 mirror_path: str | None = None, prefer_mirror: bool = True, timeout: float = 60.0) -> str:
    """Download a LibKGE checkpoint to ``out`` from ``url`` or a mirror folder; returns the source used.

    The downloader's semantics (``kgeval.data.download.fetch``): the bytes are hashed while written to a temporary
    file beside ``out`` and renamed into place only when the SHA-256 (and ``size``, when given) match; otherwise
    nothing is left at ``out`` (ChecksumError names the file, expected and actual hash). A LibKGE URL is not pinned
    to a commit, so the Resource is built here rather than read from the manifest; the pinned SHA-256 is what
    guarantees the bytes. ``KGEVAL_MIRROR`` wins over ``mirror``.
    """
    sha = _check_sha(sha256)
    res = Resource(mirror_path or default_mirror_path(url), url, sha, int(size) if size is not None else -1)
    mirror_dir = resolve_mirror(str(mirror) if mirror else None)
    return fetch(res, out, mirror=mirror_dir, prefer_mirror=prefer_mirror, timeout=timeout)
