"""Training settings (one model on one dataset) and the hash that identifies them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

REGIMES = ("negative_sampling", "1vsAll", "KvsAll")
NS_LOSSES = ("self_adversarial", "softmax", "bce", "margin")
OPTIMIZERS = ("adam", "adagrad", "adamax", "sgd")
SCHEDULES = ("none", "plateau", "warmup_linear", "step")


@dataclass
class TrainConfig:
    regime: str = "1vsAll"
    loss: str = "ce"  # 1vsAll: ce; KvsAll: bce; negative_sampling: one of NS_LOSSES
    grouped: bool = False  # 1vsAll over distinct questions (same objective, one score row per question)
    num_negatives: int = 256
    adversarial_temperature: float = 1.0
    margin: float = 1.0  # only for loss "margin" (pairwise hinge)
    label_smoothing: float = 0.0
    optimizer: str = "adam"
    lr: float = 1e-3
    weight_decay: float = 0.0
    regularizer: str | None = None  # "n3" or "l2" on model.factors()
    regularization_weight: float = 0.0
    batch_size: int = 1024
    max_epochs: int = 10
    max_steps: int | None = None  # stop after this many optimiser steps (across epochs)
    max_batches_per_epoch: int | None = None  # smoke runs: an epoch is its first N shuffled batches
    eval_every: int = 1  # epochs between validation evaluations
    patience: int | None = None  # evaluations without improvement before stopping
    valid_max_triples: int | None = None  # evaluate on a fixed seeded subset of validation triples
    lr_schedule: str = "none"
    lr_factor: float = 0.5  # plateau: factor; warmup_linear: final lr share
    lr_patience: int = 2
    lr_milestones: list[int] = field(default_factory=list)  # step: epochs after which lr is multiplied by lr_factor
    warmup_steps: int = 0
    grad_clip: float | None = None
    snapshots: bool = False  # keep the weights at every evaluation (for the KP early-stopping study)
    compile: bool = True  # distances through torch.compile on CPU in training and validation (models.compiled)
    threads: int = 1  # torch CPU threads of the training job (fixed, so results do not depend on --cores)
    autocast: str | None = None  # "bf16": forward passes of training batches under bfloat16 autocast
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.regime not in REGIMES:
            raise ValueError(f"train.regime {self.regime!r} is not one of {REGIMES}")
        if self.regime == "negative_sampling" and self.loss not in NS_LOSSES:
            raise ValueError(f"train.loss {self.loss!r} is not one of {NS_LOSSES} for negative sampling")
        if self.regime == "1vsAll" and self.loss != "ce":
            raise ValueError("train.loss must be 'ce' for 1vsAll")
        if self.regime == "KvsAll" and self.loss != "bce":
            raise ValueError("train.loss must be 'bce' for KvsAll")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"train.optimizer {self.optimizer!r} is not one of {OPTIMIZERS}")
        if self.lr_schedule not in SCHEDULES:
            raise ValueError(f"train.lr_schedule {self.lr_schedule!r} is not one of {SCHEDULES}")
        if self.lr_schedule == "step" and not self.lr_milestones:
            raise ValueError("train.lr_schedule 'step' needs train.lr_milestones (epochs after which the learning "
                             "rate is multiplied by lr_factor)")
        if any(int(e) < 1 for e in self.lr_milestones) or list(self.lr_milestones) != sorted(set(self.lr_milestones)):
            raise ValueError(f"train.lr_milestones {self.lr_milestones} must be increasing epoch numbers >= 1")
        if not 1 <= int(self.threads) <= 256:
            raise ValueError(f"train.threads {self.threads} must lie in 1..256")
        if self.autocast not in (None, "bf16"):
            raise ValueError(f"train.autocast {self.autocast!r} is not bf16 or null")
        if self.grouped and self.regime != "1vsAll":
            raise ValueError("train.grouped applies to the 1vsAll regime only")
        if self.regularizer not in (None, "n3", "l2"):
            raise ValueError(f"train.regularizer {self.regularizer!r} is not n3, l2 or null")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown train settings: {sorted(unknown)}")
        return cls(**d)


def train_settings(cfg: TrainConfig) -> dict[str, Any]:
    """The settings that identify a training: ``autocast`` only where set, so that adding it left the hash
    (and the work checkpoints' names) of every float32 training as it was."""
    d = asdict(cfg)
    if d["autocast"] is None:
        del d["autocast"]
    return d


def config_hash(obj: Any) -> str:
    """SHA-256 of a JSON rendering with sorted keys: equal settings give equal hashes."""
    if isinstance(obj, TrainConfig):
        obj = train_settings(obj)
    elif hasattr(obj, "__dataclass_fields__"):
        obj = asdict(obj)
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()
