"""Test sets with judgments: FB-Test-O, FB-Test-S, FB-Test-S-C(d) and any plain test split.

A test set is a list of judged triples: label 1 (relevant, a positive) or 0 (judged non-relevant), and the
published pooling depth at which the triple was judged (0 for the original test triples). FB-Test-S-C(d) is the
subset with depth <= d, so one file holds every depth. Definitions: ``shared/specs/reproduction.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import CorruptFileError, InputError
from .kg import KnowledgeGraph
from .labels import read_depths, read_labels
from .questions import Questions
from .tsv import iter_rows, read_triples, write_rows

HEADER = ["head", "relation", "tail", "label", "depth"]


@dataclass
class TestSet:
    __test__ = False  # not a pytest class

    name: str
    triples: np.ndarray  # (n, 3) int64
    label: np.ndarray  # (n,) int8: 1 relevant, 0 judged non-relevant
    depth: np.ndarray  # (n,) int16: 0 = original test triple, d = entered the pool at depth d

    def __len__(self) -> int:
        return len(self.triples)

    @property
    def positives(self) -> np.ndarray:
        return self.triples[self.label == 1]

    @property
    def negatives(self) -> np.ndarray:
        return self.triples[self.label == 0]

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if len(self.depth) else 0

    def at_depth(self, d: int) -> TestSet:
        keep = self.depth <= d
        return TestSet(f"{self.name}({d})", self.triples[keep], self.label[keep], self.depth[keep])

    def questions(self, kg: KnowledgeGraph) -> Questions:
        return Questions.from_triples(self.positives, kg.num_entities, kg.num_relations)

    def counts(self) -> dict[str, int]:
        return {"#Triples": len(self), "#Positives": int(self.label.sum()),
                "#Negatives": int((self.label == 0).sum())}

    def save(self, path: str | Path, kg: KnowledgeGraph) -> None:
        rows = [(*kg.decode(self.triples[i:i + 1])[0], int(self.label[i]), int(self.depth[i]))
                for i in range(len(self))]
        write_rows(path, rows, header=HEADER)

    @classmethod
    def load(cls, path: str | Path, kg: KnowledgeGraph, name: str | None = None) -> TestSet:
        path = Path(path)
        triples, labels, depths = [], [], []
        rows = iter_rows(path, 5)
        for lineno, fields in rows:
            if lineno == 1 or fields == HEADER:
                if fields != HEADER:
                    raise CorruptFileError(path, f"expected header {HEADER}")
                continue
            h, r, t, lab, dep = fields
            if lab not in ("0", "1") or not dep.isdigit():
                raise InputError(path, lineno, f"bad label {lab!r} or depth {dep!r}")
            triples.append(kg.encode_row(path, lineno, h, r, t))
            labels.append(int(lab))
            depths.append(int(dep))
        return cls(name or path.name.split(".")[0], np.array(triples, dtype=np.int64).reshape(-1, 3),
                   np.array(labels, dtype=np.int8), np.array(depths, dtype=np.int16))


def full_test(kg: KnowledgeGraph, name: str) -> TestSet:
    """The whole test split, every triple relevant (FB-Test-O, WN18RR)."""
    n = len(kg.splits["test"])
    return TestSet(name, kg.splits["test"].copy(), np.ones(n, np.int8), np.zeros(n, np.int16))


def sample_test(kg: KnowledgeGraph, name: str, idx_path: str | Path, samples_path: str | Path | None) -> TestSet:
    """Test triples at zero-based line indices of the test split (FB-Test-S), checked against ``samples``."""
    test = kg.splits["test"]
    idx: list[int] = []
    seen: dict[int, int] = {}
    for lineno, (value,) in iter_rows(idx_path, 1):
        if not value.isdigit():
            raise InputError(idx_path, lineno, f"{value!r} is not a non-negative line index")
        i = int(value)
        if i >= len(test):
            raise InputError(idx_path, lineno, f"index {i} is beyond the test split ({len(test)} triples)")
        if i in seen:
            raise InputError(idx_path, lineno, f"index {i} repeats line {seen[i]}")
        seen[i] = lineno
        idx.append(i)
    triples = test[np.array(idx, dtype=np.int64)].reshape(-1, 3)
    if samples_path is not None:
        listed = read_triples(samples_path, duplicates="error")
        if len(listed) != len(triples):
            raise InputError(samples_path, None, f"lists {len(listed)} triples, {idx_path} selects {len(triples)}")
        for k, (want, got) in enumerate(zip(kg.decode(triples), listed)):
            if want != got:
                raise InputError(samples_path, k + 1, f"triple {' '.join(got)} differs from test line "
                                                      f"{idx[k]} selected by {idx_path}: {' '.join(want)}")
    n = len(triples)
    return TestSet(name, triples, np.ones(n, np.int8), np.zeros(n, np.int16))


def pooled_test(kg: KnowledgeGraph, name: str, seed: TestSet, annotations: str | Path,
                pooling_depth: str | Path) -> TestSet:
    """The seed test set plus every judged pooled triple with its published depth (FB-Test-S-C).

    Every seed triple present in the annotations must be labelled Y; every pooled triple (in the depth file)
    must be labelled; every labelled triple must be a seed or pooled triple.
    """
    depths = read_depths(pooling_depth, kg)
    labels = read_labels(annotations, kg, allow_empty=not depths)  # an empty pool needs no judgments
    seed_set = {tuple(t) for t in seed.triples.tolist()}
    for triple, (label, lineno) in labels.items():
        if triple in seed_set:
            if label != 1:
                raise InputError(annotations, lineno, f"seed test triple {' '.join(kg.decode(np.array([triple]))[0])}"
                                                      " is labelled N")
        elif triple not in depths:
            raise InputError(annotations, lineno, "labelled triple is neither a seed triple nor in "
                                                  f"{Path(pooling_depth).name}")
    for triple, (_, lineno) in depths.items():
        if triple in seed_set:
            raise InputError(pooling_depth, lineno, "a seed test triple cannot have a pooling depth")
        if triple not in labels:
            raise InputError(pooling_depth, lineno, f"pooled triple has no label in {Path(annotations).name}")
    pooled = sorted(depths, key=lambda tr: depths[tr][1])  # file order
    triples = np.concatenate([seed.triples, np.array(pooled, dtype=np.int64).reshape(-1, 3)])
    label = np.concatenate([seed.label, np.array([labels[t][0] for t in pooled], dtype=np.int8)])
    depth = np.concatenate([seed.depth, np.array([depths[t][0] for t in pooled], dtype=np.int16)])
    known = {tuple(t) for t in kg.known(("train", "valid")).tolist()}
    clash = [i for i, t in enumerate(triples.tolist()) if label[i] == 0 and tuple(t) in known]
    if clash:
        raise InputError(annotations, None, f"{len(clash)} triples labelled N are training/validation facts")
    return TestSet(name, triples, label, depth)
