"""LibKGE's entity and relation order, matched to a knowledge graph by id string (never by position)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import torch

from ...data.kg import SPLITS, KnowledgeGraph
from ...errors import InputError
from ...limits import read_text
from .errors import LibKGEError


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


def permutation(lib_ids: list[str], ours: list[str], what: str, source: str, kg_name: str) -> torch.Tensor:
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
