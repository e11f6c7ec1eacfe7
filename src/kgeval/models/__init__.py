"""The 13 models of the study, each faithful to its row in ``shared/specs/models.md``, and the three more of
Knowledge Persistence's model set (TransH, TransR, ConvKB).

``build_model(name, num_entities, num_relations, graph=None, **hparams)`` builds one by name; ``MODELS`` lists
them. Each exposes ``score_spo``, ``score_sp``, ``score_po`` and ``score_questions`` (see ``base.KGEModel``).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from .base import KGEModel

# name -> "module:Class"
_REGISTRY = {
    "TransE": "translational:TransE",
    "RotatE": "translational:RotatE",
    "HAKE": "hake:HAKE",
    "AttE": "atte:AttE",
    "DistMult": "bilinear:DistMult",
    "RESCAL": "bilinear:RESCAL",
    "ComplEx": "bilinear:ComplEx",
    "TuckER": "bilinear:TuckER",
    "BiQUE": "quaternion:BiQUE",
    "ConvE": "conv:ConvE",
    "InteractE": "conv:InteractE",
    "CompGCN": "compgcn:CompGCN",
    "HittER": "hitter:HittER",
    # Knowledge Persistence's model set adds these three (Bastos et al. 2023)
    "TransH": "projected:TransH",
    "TransR": "projected:TransR",
    "ConvKB": "convkb:ConvKB",
}
MODELS = list(_REGISTRY)


def model_class(name: str) -> type[KGEModel]:
    if name not in _REGISTRY:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    module, cls = _REGISTRY[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def build_model(name: str, num_entities: int, num_relations: int, graph: np.ndarray | None = None,
                **hparams: Any) -> KGEModel:
    """Build a model; ``graph`` (training triples, (n, 3) ids) is passed to models that need it."""
    cls = model_class(name)
    if cls.needs_graph:
        if graph is None:
            raise ValueError(f"{name} needs the training graph")
        return cls(num_entities, num_relations, graph=graph, **hparams)
    return cls(num_entities, num_relations, **hparams)
