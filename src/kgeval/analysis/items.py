"""Per-item score matrices of a test set, read from the metric stage's per-answer / per-question files.

An item matrix has one row per item and one column per system (in a fixed system order) for one metric:
answers (question, entity) for micro metrics, questions for macro and trec metrics. Each item also knows its
*units*, the test triples it comes from, so that subsampling the test set (Figure 7) can select triples:
an answer belongs to one triple; a question to every triple that asks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.kg import HEAD, SIDE_NAMES, KnowledgeGraph
from ..data.questions import Questions, question_key
from ..data.testsets import TestSet
from ..pools.pooling import triple_key


@dataclass
class ItemTable:
    systems: list[str]
    matrices: dict[str, np.ndarray]  # metric column -> (n_items, n_systems)
    units: np.ndarray | list[np.ndarray]  # triple index per item (answers) or triples per item (questions)
    info: pd.DataFrame  # descriptors of each item (qid, side, relation, category, ...)
    n_units: int
    # metric column -> a key per row naming the item across test sets of one graph (an answer: its triple and
    # side; a question: its side, known entity and relation), so that a bootstrap can pair shared items
    keys: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.info)


def _pivot(df: pd.DataFrame, keys: list[str], metrics: list[str], systems: list[str]) -> tuple[pd.DataFrame, dict]:
    missing = set(systems) - set(df["System"].unique())
    if missing:
        raise ValueError(f"per-item table lacks systems {sorted(missing)}")
    first = df[df["System"] == systems[0]].set_index(keys).sort_index()
    mats = {}
    for m in metrics:
        wide = df.pivot_table(index=keys, columns="System", values=m, aggfunc="first").reindex(first.index)
        if wide[systems].isna().any().any():
            raise ValueError(f"metric {m}: systems do not share the same items")
        mats[m] = wide[systems].to_numpy(dtype=np.float64)
    return first.reset_index(), mats


def _triple_index(testset: TestSet, kg: KnowledgeGraph) -> dict[int, int]:
    pos = testset.positives
    return {int(k): i for i, k in enumerate(triple_key(pos, kg))}


def micro_items(per_answer: pd.DataFrame, questions: Questions, testset: TestSet, kg: KnowledgeGraph,
                metrics: list[str], systems: list[str]) -> ItemTable:
    info, mats = _pivot(per_answer, ["qid", "entity"], metrics, systems)
    qpos = {q: i for i, q in enumerate(questions.qid)}
    qi = np.array([qpos[q] for q in info["qid"]])
    known, rel, side = questions.entity[qi], questions.relation[qi], questions.side[qi]
    ent = info["entity"].to_numpy()
    triples = np.stack([np.where(side == HEAD, ent, known), rel, np.where(side == HEAD, known, ent)], 1)
    index = _triple_index(testset, kg)
    tkeys = triple_key(triples, kg)
    units = np.array([index[int(k)] for k in tkeys])
    keys = tkeys * 2 + side.astype(np.int64)
    return ItemTable(systems, mats, units, info, len(testset.positives), {m: keys for m in mats})


def macro_items(per_question: pd.DataFrame, questions: Questions, testset: TestSet, kg: KnowledgeGraph,
                metrics: list[str], systems: list[str]) -> ItemTable:
    info, mats = _pivot(per_question, ["qid"], metrics, systems)
    pos = testset.positives
    keyed: dict[tuple[int, int, int], list[int]] = {}
    for i, (h, r, t) in enumerate(pos.tolist()):
        keyed.setdefault((0, t, r), []).append(i)
        keyed.setdefault((1, h, r), []).append(i)
    qpos = {q: i for i, q in enumerate(questions.qid)}
    units = []
    qi = np.array([qpos[q] for q in info["qid"]], dtype=np.int64)
    for i in qi.tolist():
        units.append(np.array(keyed[(int(questions.side[i]), int(questions.entity[i]), int(questions.relation[i]))]))
    keys = question_key(questions.side[qi], questions.entity[qi], questions.relation[qi], kg.num_entities,
                        kg.num_relations)
    return ItemTable(systems, mats, units, info, len(pos), {m: keys for m in mats})


def side_name(side: int) -> str:
    return SIDE_NAMES[side]
