"""The knowledge graph: entity and relation ids over all three splits, names, relation categories.

Entity and relation ids are assigned in order of first appearance over train, valid and test (LibKGE's order),
so entities that occur only in the test split (30 in FB15k-237) still get ids. Triples are ``(head, relation,
tail)`` rows of an ``int64`` array.
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_path
from .tsv import iter_rows, read_triples

SPLITS = ("train", "valid", "test")
CATEGORIES = ("one_to_one", "one_to_many", "many_to_one", "many_to_many")
CATEGORY_SHORT = {"one_to_one": "1-1", "one_to_many": "1-N", "many_to_one": "N-1", "many_to_many": "N-N"}

# Question sides. A head question (?, r, t) asks for the head; a tail question (h, r, ?) for the tail.
HEAD, TAIL = 0, 1
SIDE_NAMES = ("head", "tail")


def triple_keys(triples: np.ndarray, num_entities: int, num_relations: int) -> np.ndarray:
    """One int64 key per (h, r, t) row: (h · |R| + r) · |E| + t."""
    t = np.asarray(triples, dtype=np.int64)
    return keys_of(t[:, 0], t[:, 1], t[:, 2], num_entities, num_relations)


def keys_of(h, r, t, num_entities: int, num_relations: int) -> np.ndarray:
    """:func:`triple_keys` of heads, relations and tails given apart (arrays or scalars, broadcast together)."""
    return (np.asarray(h, np.int64) * num_relations + np.asarray(r, np.int64)) * num_entities + np.asarray(t, np.int64)


@dataclass
class KnowledgeGraph:
    name: str
    entities: list[str]
    relations: list[str]
    splits: dict[str, np.ndarray]
    entity_names: list[str] | None = None
    relation_category: list[str] | None = None
    relation_domain: list[str] | None = None
    relation_range: list[str] | None = None
    entity_types: list[str] | None = None
    _eidx: dict[str, int] = field(default_factory=dict, repr=False)
    _ridx: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._eidx = {e: i for i, e in enumerate(self.entities)}
        self._ridx = {r: i for i, r in enumerate(self.relations)}

    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        return len(self.relations)

    def entity_id(self, name: str) -> int:
        return self._eidx[name]

    def relation_id(self, name: str) -> int:
        return self._ridx[name]

    def has_entity(self, name: str) -> bool:
        return name in self._eidx

    def has_relation(self, name: str) -> bool:
        return name in self._ridx

    def display_name(self, e: int) -> str:
        return self.entity_names[e] if self.entity_names else self.entities[e]

    def encode_row(self, path: str | Path, lineno: int, h: str, r: str, t: str) -> tuple[int, int, int]:
        """Map one string triple to ids; an unknown entity or relation is an error naming file and line."""
        for ent in (h, t):
            if ent not in self._eidx:
                raise InputError(path, lineno, f"entity {ent!r} is not in knowledge graph {self.name}")
        if r not in self._ridx:
            raise InputError(path, lineno, f"relation {r!r} is not in knowledge graph {self.name}")
        return self._eidx[h], self._ridx[r], self._eidx[t]

    def decode(self, triples: np.ndarray) -> list[tuple[str, str, str]]:
        return [(self.entities[h], self.relations[r], self.entities[t]) for h, r, t in triples.tolist()]

    def known(self, splits=SPLITS) -> np.ndarray:
        return np.concatenate([self.splits[s] for s in splits], axis=0)

    def fingerprint(self) -> str:
        """SHA-256 over ids and splits: checkpoints and dumps record it to refuse another dataset's files."""
        h = hashlib.sha256()
        h.update("\n".join(self.entities).encode())
        h.update(b"\0")
        h.update("\n".join(self.relations).encode())
        for s in SPLITS:
            h.update(s.encode())
            h.update(np.ascontiguousarray(self.splits[s], dtype=np.int64).tobytes())
        return h.hexdigest()

    # ---- persistence -------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        arrays = {
            "name": np.array(self.name),
            "entities": np.array(self.entities, dtype=str),
            "relations": np.array(self.relations, dtype=str),
            "fingerprint": np.array(self.fingerprint()),
        }
        for s in SPLITS:
            arrays[s] = self.splits[s].astype(np.int64)
        for key in ("entity_names", "relation_category", "relation_domain", "relation_range", "entity_types"):
            value = getattr(self, key)
            if value is not None:
                arrays[key] = np.array(value, dtype=str)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> KnowledgeGraph:
        from ..errors import CorruptFileError

        try:
            with np.load(path, allow_pickle=False) as z:
                kw = {k: z[k].tolist() for k in ("entity_names", "relation_category", "relation_domain",
                                                   "relation_range", "entity_types") if k in z.files}
                kg = cls(name=str(z["name"]), entities=z["entities"].tolist(), relations=z["relations"].tolist(),
                         splits={s: z[s].astype(np.int64) for s in SPLITS}, **kw)
                stored = str(z["fingerprint"])
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            # numpy's own words for a pickle suggest loading it unsafely: kgeval never does, so say that instead
            why = ("it holds pickled objects, which kgeval never loads (a kg.npz holds arrays only)"
                   if "pickle" in str(exc) else str(exc))
            raise CorruptFileError(path, f"not a readable knowledge-graph file: {why}") from exc
        if kg.fingerprint() != stored:
            raise CorruptFileError(path, "knowledge-graph fingerprint does not match its content")
        return kg


def build_kg(name: str, train: str | Path, valid: str | Path, test: str | Path, names: str | Path | None = None,
             categories_dir: str | Path | None = None, relation_types: str | Path | None = None,
             entity_types: str | Path | None = None) -> KnowledgeGraph:
    """Build a knowledge graph from the three split files and optional side information."""
    raw = {s: read_triples(p) for s, p in zip(SPLITS, (train, valid, test))}
    eidx: dict[str, int] = {}
    ridx: dict[str, int] = {}
    for s in SPLITS:
        for h, r, t in raw[s]:
            eidx.setdefault(h, len(eidx))
            ridx.setdefault(r, len(ridx))
            eidx.setdefault(t, len(eidx))
    splits = {}
    for s in SPLITS:
        arr = np.array([(eidx[h], ridx[r], eidx[t]) for h, r, t in raw[s]], dtype=np.int64).reshape(-1, 3)
        splits[s] = arr
    entities, relations = list(eidx), list(ridx)
    kg = KnowledgeGraph(name=name, entities=entities, relations=relations, splits=splits)
    if names is not None:
        kg.entity_names = read_entity_names(names, kg)
    if categories_dir is not None:
        kg.relation_category = read_categories(categories_dir, kg)
    else:
        kg.relation_category = infer_categories(kg)
    if relation_types is not None:
        kg.relation_domain, kg.relation_range = read_relation_types(relation_types, kg)
    if entity_types is not None:
        kg.entity_types = read_entity_types(entity_types, kg)
    return kg


def read_entity_names(path: str | Path, kg: KnowledgeGraph) -> list[str]:
    """Entity id to display name (``mid2name.txt``); entities without a name keep their id."""
    names = list(kg.entities)
    seen: dict[str, int] = {}
    for lineno, (eid, label) in iter_rows(path, 2):
        if eid in seen:
            raise InputError(path, lineno, f"entity {eid!r} already named on line {seen[eid]}")
        seen[eid] = lineno
        if kg.has_entity(eid):
            names[kg.entity_id(eid)] = label
    return names


def read_categories(folder: str | Path, kg: KnowledgeGraph) -> list[str]:
    """Relation categories from ``one_to_one.txt`` … ``many_to_many.txt`` (one relation per line).

    A relation listed twice, or listed but unknown to the graph, is an error; relations not listed get the
    category inferred from the data (see ``infer_categories``).
    """
    folder = Path(folder)
    found: dict[str, tuple[str, Path, int]] = {}
    for cat in CATEGORIES:
        path = folder / f"{cat}.txt"
        for lineno, (rel,) in iter_rows(path, 1):
            if rel in found:
                prev = found[rel]
                raise InputError(path, lineno, f"relation {rel!r} already in {prev[0]} ({prev[1]}:{prev[2]})")
            if not kg.has_relation(rel):
                raise InputError(path, lineno, f"relation {rel!r} is not in knowledge graph {kg.name}")
            found[rel] = (cat, path, lineno)
    inferred = infer_categories(kg)
    return [found[r][0] if r in found else inferred[i] for i, r in enumerate(kg.relations)]


def infer_categories(kg: KnowledgeGraph, threshold: float = 1.5) -> list[str]:
    """Categories by Wang et al. (2014): average tails per head (tph) and heads per tail (hpt) over all
    splits; a side is "many" when its average exceeds ``threshold``."""
    known = kg.known()
    cats = []
    for r in range(kg.num_relations):
        sub = known[known[:, 1] == r]
        if len(sub) == 0:
            cats.append("many_to_many")
            continue
        pairs_h = np.unique(sub[:, 0])
        pairs_t = np.unique(sub[:, 2])
        tph = len(sub) / len(pairs_h)
        hpt = len(sub) / len(pairs_t)
        cats.append(("many" if hpt > threshold else "one") + "_to_" + ("many" if tph > threshold else "one"))
    return cats


def read_relation_types(path: str | Path, kg: KnowledgeGraph) -> tuple[list[str], list[str]]:
    """Domain and range type per relation (``relation_specific.txt``); unlisted relations get ""."""
    dom = [""] * kg.num_relations
    rng = [""] * kg.num_relations
    for lineno, (rel, d, r) in iter_rows(path, 3):
        if not kg.has_relation(rel):
            raise InputError(path, lineno, f"relation {rel!r} is not in knowledge graph {kg.name}")
        i = kg.relation_id(rel)
        dom[i], rng[i] = d, r
    return dom, rng


def read_entity_types(path: str | Path, kg: KnowledgeGraph) -> list[str]:
    """One type per entity (``entity <TAB> type``); entities not listed get ""."""
    types = [""] * kg.num_entities
    for lineno, (eid, typ) in iter_rows(path, 2):
        if not kg.has_entity(eid):
            raise InputError(path, lineno, f"entity {eid!r} is not in knowledge graph {kg.name}")
        types[kg.entity_id(eid)] = typ
    return types
