"""Hoyt et al. (2022)'s case study (Figure 1), the null moments of each metric and the paper's Table 3
aggregations (``shared/papers/unified-rank-based-metrics.txt``).

* **Figure 1**: the same models on datasets of growing size with each base metric (MR, MRR, Hits@10) beside its
  chance-adjusted (AMR, AMRI, AMRR, AH@10) and z-scored (ZMR, ZMRR, ZH@10) forms. ``case_study_rows`` computes
  them from per-task ranks (the small graphs ranked here) and reads them from a study test set's
  ``evaluation.csv`` (the ``micro_*`` columns, the same filtered per-answer ranks) for the large ones.
  ``size_trend`` gives, per metric, the mean over models of Kendall's τ between the number of entities and
  the metric: a metric comparable across datasets should not follow the size.
* **Null moments**: E and Var of MR, MRR, Hits@k, GMR and IGMR of a split under r_i ~ U{1…N_i}, per side and both sides,
  from the closed forms of :mod:`kgeval.metrics.rank_based` with the filtered N_i of every task
  (``filtered_candidates``).
* **Table 3's aggregations**: the generalised (Hölder) power means M_p of the ranks for p = −∞ (min), −1
  (harmonic), 0 (geometric), 1 (arithmetic), 2 (quadratic) and +∞ (max), beside their value under random
  ranks (seeded Monte-Carlo: no closed form for p ∉ {1}).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..metrics.adjusted import (
    AdjustedHitsAtK,
    AdjustedMeanRank,
    AdjustedMeanRankIndex,
    AdjustedMeanReciprocalRank,
    ZHitsAtK,
    ZMeanRank,
    ZMeanReciprocalRank,
)
from ..metrics.kendall import tau_b
from ..metrics.rank_based import (
    GeometricMeanRank,
    HitsAtK,
    InverseGeometricMeanRank,
    MeanRank,
    MeanReciprocalRank,
)

# (column key, base metric, family) of Figure 1; AMR is in the table, the figure draws the adjusted index
CASE_METRICS: list[tuple[str, str, str]] = [
    ("mr", "MR", "original"), ("amr", "MR", "expectation-normalised"), ("amri", "MR", "adjusted index"),
    ("zmr", "MR", "z-score"),
    ("mrr", "MRR", "original"), ("amrr", "MRR", "adjusted index"), ("zmrr", "MRR", "z-score"),
    ("hits@10", "Hits@10", "original"), ("ah@10", "Hits@10", "adjusted index"), ("zh@10", "Hits@10", "z-score"),
]
_OBJECTS = {"mr": MeanRank(), "amr": AdjustedMeanRank(), "amri": AdjustedMeanRankIndex(), "zmr": ZMeanRank(),
            "mrr": MeanReciprocalRank(), "amrr": AdjustedMeanReciprocalRank(), "zmrr": ZMeanReciprocalRank(),
            "hits@10": HitsAtK(10), "ah@10": AdjustedHitsAtK(10), "zh@10": ZHitsAtK(10)}
# the lower-is-better metrics of the list (the others: higher is better)
LOWER_IS_BETTER = {"mr", "amr"}

HOLDER = [("min", -np.inf), ("harmonic", -1.0), ("geometric", 0.0), ("arithmetic", 1.0), ("quadratic", 2.0),
          ("max", np.inf)]


def case_study_rows(dataset: str, num_entities: int, model: str, ranks=None, num_candidates=None,
                    evaluation_row: pd.Series | None = None) -> list[dict]:
    """Figure 1's metrics of one model on one dataset, from ranks and N_i or from an evaluation.csv row."""
    rows = []
    for key, base, family in CASE_METRICS:
        if evaluation_row is not None:
            value = float(evaluation_row[f"micro_{key}"])
        else:
            value = _OBJECTS[key](np.asarray(ranks, dtype=float), np.asarray(num_candidates, dtype=float))
        rows.append({"dataset": dataset, "entities": int(num_entities), "model": model, "metric": key,
                     "base": base, "family": family, "value": float(value)})
    return rows


def size_trend(table: pd.DataFrame) -> pd.DataFrame:
    """Per metric: mean, min and max over models of Kendall's τ-b between the datasets' numbers of entities and
    the model's metric values (τ < 0: the metric falls as the graph grows), oriented so that τ > 0 means the
    model *looks better* on larger graphs (lower-is-better metrics flipped)."""
    rows = []
    for key, g in table.groupby("metric", sort=False):
        taus = []
        for _, m in g.groupby("model", sort=False):
            if m["dataset"].nunique() < 3:
                continue
            v = m["value"].to_numpy(float)
            taus.append(tau_b(m["entities"].to_numpy(float), -v if key in LOWER_IS_BETTER else v, True, True))
        if taus:
            rows.append({"metric": key, "base": g["base"].iloc[0], "family": g["family"].iloc[0],
                         "models": len(taus), "tau_mean": float(np.mean(taus)), "tau_min": float(np.min(taus)),
                         "tau_max": float(np.max(taus))})
    return pd.DataFrame(rows, columns=["metric", "base", "family", "models", "tau_mean", "tau_min", "tau_max"])


def filtered_candidates(kg: KnowledgeGraph, split: str) -> pd.DataFrame:
    """N_i of every task of a split (both sides) in the filtered setting: |E| minus the other entities that
    complete the question anywhere in train ∪ valid ∪ test. Columns: side, num_candidates."""
    known = pd.DataFrame(kg.known(), columns=["h", "r", "t"])
    tr = pd.DataFrame(kg.splits[split], columns=["h", "r", "t"])
    frames = []
    for side, keys in (("head", ["r", "t"]), ("tail", ["h", "r"])):
        counts = known.groupby(keys).size().rename("answers").reset_index()
        n = tr.merge(counts, on=keys, how="left")["answers"].to_numpy()
        frames.append(pd.DataFrame({"side": side, "num_candidates": kg.num_entities - n + 1}))
    return pd.concat(frames, ignore_index=True)


def null_moments(kg: KnowledgeGraph, splits=("valid", "test"), ks=(1, 3, 10)) -> pd.DataFrame:
    """E and Var of MR, MRR, Hits@k, GMR and IGMR per split and side (head, tail, both) under uniformly random
    ranks (the metrics with a closed form: IMR and HMR have none)."""
    metrics = ([("mr", MeanRank()), ("mrr", MeanReciprocalRank())] + [(f"hits@{k}", HitsAtK(k)) for k in ks]
               + [("gmr", GeometricMeanRank()), ("igmr", InverseGeometricMeanRank())])
    rows = []
    for split in splits:
        cands = filtered_candidates(kg, split)
        for side in ("head", "tail", "both"):
            N = cands["num_candidates"].to_numpy(float) if side == "both" else \
                cands.loc[cands["side"] == side, "num_candidates"].to_numpy(float)
            for key, m in metrics:
                var = m.variance(N)
                rows.append({"dataset": kg.name, "split": split, "side": side, "tasks": len(N),
                             "entities": kg.num_entities, "mean_candidates": float(N.mean()), "metric": key,
                             "expectation": float(m.expected_value(N)), "variance": float(var),
                             "std": float(np.sqrt(var))})
    return pd.DataFrame(rows)


def power_mean(x: np.ndarray, p: float) -> float:
    """Hölder mean M_p(x) (p = 0: geometric; ±inf: max / min)."""
    x = np.asarray(x, dtype=np.float64)
    if np.isposinf(p):
        return float(x.max())
    if np.isneginf(p):
        return float(x.min())
    if p == 0:
        return float(np.exp(np.mean(np.log(x))))
    return float(np.mean(x ** p) ** (1.0 / p))


def holder_aggregations(dataset: str, model: str, ranks, num_candidates, samples: int = 20,
                        seed: int = 0) -> list[dict]:
    """Table 3's aggregations of one model's ranks, with their mean under random ranks r_i ~ U{1…N_i}
    (``samples`` seeded draws of every task; the uniform draw is ⌈u·N_i⌉)."""
    r = np.asarray(ranks, dtype=np.float64)
    N = np.asarray(num_candidates, dtype=np.float64)
    rng = np.random.default_rng(seed)
    draws = np.maximum(np.ceil(rng.random((samples, N.size)) * N), 1.0)
    rows = []
    for name, p in HOLDER:
        chance = np.mean([power_mean(d, p) for d in draws])
        rows.append({"dataset": dataset, "model": model, "aggregation": name, "p": p, "value": power_mean(r, p),
                     "random": float(chance)})
    return rows
