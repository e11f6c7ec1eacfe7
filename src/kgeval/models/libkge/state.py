"""Reading tensors and options out of a LibKGE checkpoint's state_dict and configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ...errors import CorruptFileError
from .errors import LibKGEError
from .unpickle import LibKGEConfig


def model_state(ckpt: dict[str, Any], path: Path) -> dict[str, torch.Tensor]:
    model = ckpt["model"]
    state = model[0] if isinstance(model, (tuple, list)) else model
    if not isinstance(state, dict):
        raise CorruptFileError(path, "LibKGE checkpoint 'model' holds no state_dict")
    return state


def find(state: dict[str, torch.Tensor], candidates: list[str], path: Path, required: bool = True
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


def embedder_keys(which: str, reciprocal: bool) -> list[str]:
    keys = [f"_{which}_embedder._embeddings.weight", f"_{which}_embedder.embeddings.weight"]
    return [f"_base_model.{k}" for k in keys] + keys if reciprocal else keys


def option(cfg: LibKGEConfig, key: str, default: Any) -> Any:
    try:
        return cfg.get_default(key)
    except KeyError:
        return default


def dropout(cfg: LibKGEConfig, key: str) -> float:
    value = option(cfg, key, 0.0)
    try:
        return max(0.0, float(value))  # LibKGE treats negative dropout as 0
    except (TypeError, ValueError):
        return 0.0


def normalize(weight: torch.Tensor, cfg: LibKGEConfig, embedder_key: str) -> torch.Tensor:
    p = option(cfg, f"{embedder_key}.normalize.p", None)
    if p is None and option(cfg, f"{embedder_key}.normalize", None) == "L2":
        p = 2.0
    try:
        p = float(p) if p is not None else -1.0
    except (TypeError, ValueError):
        p = -1.0
    if p > 0:
        return torch.nn.functional.normalize(weight, p=p, dim=-1)
    return weight


def norm_option(cfg: LibKGEConfig, key: str, path: Path) -> int:
    value = float(option(cfg, f"{key}.l_norm", 1.0))
    if value not in (1.0, 2.0):
        raise LibKGEError(f"{path}: l_norm {value} is not supported (kgeval offers the L1 and L2 norms)")
    return int(value)
