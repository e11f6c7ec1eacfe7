"""Checkpoints of trained models (written by the training core, read by every later stage).

A checkpoint is a ``torch.save`` of plain tensors, lists, dicts and strings, loaded with
``weights_only=True`` (no code can run on load). It records the model's name and hyperparameters, the training
settings and their hash, the dataset fingerprint, the seed, the epoch and step reached, optimiser, scheduler and
RNG states, the training trace and the best weights so far. A JSON sidecar (``<file>.json``) holds the
checkpoint's SHA-256 and a human-readable summary (with the wall-clock timings, which a finished checkpoint
leaves out so that retraining gives the same bytes); loading verifies it, so a truncated or corrupted file is
reported by name. Loading for another dataset or other settings is refused with a message naming both.
"""

from __future__ import annotations

import io
import pickle
import re
from pathlib import Path
from typing import Any

import torch

from ..data.kg import KnowledgeGraph
from ..errors import CorruptFileError, KgevalError
from ..io import OutputStage, read_json, set_aside, sha256_file, sidecar, write_json
from . import build_model
from .base import KGEModel

FORMAT = "kgeval-checkpoint"
VERSION = 1


#: wall-clock fields of a training-trace entry: kept in the JSON sidecar, never in a finished checkpoint, so that
#: the same config and seed give the same checkpoint bytes (and SHA-256) on every run
TIMING_KEYS = ("seconds", "eval_seconds")


def without_timings(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The training trace without its wall-clock fields (what a finished checkpoint or snapshot stores)."""
    return [{k: v for k, v in entry.items() if k not in TIMING_KEYS} for entry in trace]


class CheckpointMismatch(KgevalError):
    """A checkpoint written for another dataset or other settings."""


def save_checkpoint(state: dict[str, Any], path: str | Path, summary: dict[str, Any] | None = None) -> None:
    path = Path(path)
    state = {"format": FORMAT, "version": VERSION, **state}
    buf = io.BytesIO()
    torch.save(state, buf)
    info = {key: state[key] for key in ("model_name", "model_hparams", "train_config", "config_hash",
                                        "dataset", "dataset_fingerprint", "seed", "epoch", "step")
            if key in state}
    info.update(summary or {})
    # the checkpoint and its sidecar replace the old pair together: a stop signal between the two renames would
    # leave a new checkpoint beside the old checksum, which a resume must discard
    with OutputStage("") as stage:
        tmp = stage.path(path)
        tmp.write_bytes(buf.getvalue())
        info["sha256"] = sha256_file(tmp)
        write_json(stage.path(sidecar(path)), info)


def load_checkpoint(path: str | Path, config_hash: str | None = None, dataset_fingerprint: str | None = None,
                    map_location: str | torch.device = "cpu", set_aside_corrupt: bool = True) -> dict[str, Any]:
    """Load and verify a checkpoint; refuse one written for another dataset or other settings.

    A checkpoint the pipeline derived (training writes it) that is truncated, corrupted or lacks its sidecar is
    set aside as ``<file>.corrupt`` (with its sidecar) before the error is raised, so that the next run rebuilds
    it instead of failing on it again. ``set_aside_corrupt=False`` for a user's file, which is never renamed."""
    path = Path(path)
    if not path.is_file():
        raise CorruptFileError(path, "checkpoint not found")
    try:
        state = _read_verified(path, map_location)
    except CorruptFileError as exc:
        if not set_aside_corrupt:
            raise
        aside = set_aside(path, str(exc))
        if sidecar(path).is_file():
            set_aside(sidecar(path), "sidecar of a corrupted checkpoint")
        raise CorruptFileError(exc.path, f"{exc.problem}; set aside as {aside.name} (safe to delete), "
                                         "a rerun rebuilds it") from exc
    if dataset_fingerprint is not None and state.get("dataset_fingerprint") != dataset_fingerprint:
        raise CheckpointMismatch(
            f"{path}: written for dataset {state.get('dataset')} (fingerprint "
            f"{str(state.get('dataset_fingerprint'))[:12]}…), this run uses fingerprint {dataset_fingerprint[:12]}…; "
            "it cannot be used here")
    if config_hash is not None and state.get("config_hash") != config_hash:
        raise CheckpointMismatch(
            f"{path}: written with settings hash {str(state.get('config_hash'))[:12]}…, this run's settings hash "
            f"is {config_hash[:12]}…; delete the checkpoint to retrain with the new settings")
    return state


def _read_verified(path: Path, map_location: str | torch.device) -> dict[str, Any]:
    side = sidecar(path)
    if not side.is_file():
        raise CorruptFileError(side, "checkpoint sidecar (with its SHA-256) is missing")
    try:
        expected = read_json(side)["sha256"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFileError(side, f"unreadable checkpoint sidecar: {exc}") from exc
    actual = sha256_file(path)
    if actual != expected:
        raise CorruptFileError(path, f"SHA-256 {actual} differs from {expected} recorded in {side.name}: "
                                     "truncated or corrupted checkpoint")
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:  # objects beyond tensors and containers: possibly code, never run
        raise CorruptFileError(path, f"refused: {load_refusal(exc)}") from None
    except Exception as exc:  # torch raises several types for damaged archives
        raise CorruptFileError(path, f"unreadable checkpoint: {load_refusal(exc)}") from exc
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CorruptFileError(path, "not a kgeval checkpoint")
    return state


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# sentences of torch's refusal that advise loading the file anyway (weights_only=False runs any code the file
# holds; allow-listing its globals trusts them): a security refusal never passes that advice on
_ADVICE = re.compile(r"weights_only|torch\.load|trust|safe_globals|can still be loaded|load failed|arbitrary code|"
                     r"In PyTorch \d", re.IGNORECASE)


def load_refusal(exc: BaseException) -> str:
    """torch's load error as one plain line: colour codes removed and its advice to load the file unsafely left
    out, keeping what it found (``unsupported GLOBAL posix.system …``)."""
    text = _ANSI.sub("", str(exc))
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    kept = [s for s in sentences if not _ADVICE.search(s)]
    found = " ".join(kept) or type(exc).__name__
    if isinstance(exc, pickle.UnpicklingError):
        return (f"the file holds objects other than tensors and plain containers, which could run code when "
                f"loaded ({found}); kgeval does not load it")
    return found


def resolve_device(device: str | None = "auto") -> torch.device:
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def load_model(path: str | Path, kg: KnowledgeGraph, device: str | None = "auto",
               set_aside_corrupt: bool = True, compile_distances: bool = False) -> KGEModel:
    """Rebuild a trained model from its checkpoint, refusing one made for another dataset (``set_aside_corrupt``:
    see :func:`load_checkpoint`); ``compile_distances``: evaluate through torch.compile where the model has a
    compiled path (:mod:`kgeval.models.compiled`)."""
    st = load_checkpoint(path, dataset_fingerprint=kg.fingerprint(), set_aside_corrupt=set_aside_corrupt)
    model = build_model(st["model_name"], kg.num_entities, kg.num_relations, graph=kg.splits["train"],
                        **st["model_hparams"])
    model.load_state_dict(st["state_dict"])
    model.eval()
    model.compile_distances = bool(compile_distances)
    return model.to(resolve_device(device))
