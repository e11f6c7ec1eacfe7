"""The unified metric framework's motivating figure (``shared/papers/unified-metric-framework-slides.txt``,
"When KGC and long tail comes together"): answer-entity classes sorted by their number of training triples and
cut into districts holding an equal number of classes (district 1: the most frequent classes); per district and
model the mean over its classes of the class's MRR. A falling curve shows the micro MRR's bias towards the
populous head classes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph


def training_frequency(kg: KnowledgeGraph) -> np.ndarray:
    """Number of training triples each entity takes part in (as head or tail)."""
    train = kg.splits["train"]
    return np.bincount(np.concatenate([train[:, 0], train[:, 2]]), minlength=kg.num_entities)


def districts(per_answer: pd.DataFrame, frequency: np.ndarray, num_districts: int = 10,
              value: str = "micro_mrr") -> pd.DataFrame:
    """Per model and district: classes, answers, the training-frequency range and the mean class MRR.

    ``per_answer``: one row per (question, answer entity, System) with ``entity`` and ``value``. Classes are
    the answer entities; they are sorted by training frequency, most frequent first (ties by entity id), and
    split into ``num_districts`` districts of equal size (the first ones one class larger when the count does
    not divide)."""
    classes = np.unique(per_answer["entity"].to_numpy())
    if len(classes) < num_districts:
        raise ValueError(f"{len(classes)} answer entities cannot fill {num_districts} districts")
    freq = frequency[classes]
    order = np.lexsort((classes, -freq))
    district = np.empty(len(classes), dtype=np.int64)
    district[order] = np.repeat(np.arange(1, num_districts + 1),
                                [len(a) for a in np.array_split(order, num_districts)])
    cls = pd.DataFrame({"entity": classes, "district": district, "frequency": freq})
    per_class = (per_answer.groupby(["System", "entity"], observed=True, sort=False)[value]
                 .agg(["mean", "size"]).reset_index().merge(cls, on="entity"))
    out = per_class.groupby(["System", "district"], observed=True, sort=True).agg(
        classes=("entity", "size"), answers=("size", "sum"), min_frequency=("frequency", "min"),
        max_frequency=("frequency", "max"), mean_mrr=("mean", "mean")).reset_index()
    return out.rename(columns={"System": "model"})
