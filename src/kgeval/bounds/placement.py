"""What the judgments decide about one outside system against each of the study's systems (``kgeval evaluate``'s
pair columns of ``placement.csv``).

The outside system is one more list beside the study's: the unknowns are the unjudged (question, entity) pairs in
any of the S + 1 top-k lists, so an unknown shared by the outside system and a study system takes one value in
both, as in the bounds stage (:mod:`kgeval.bounds.pairs`). Questions are those of the macro filter (at least one
relevant entity under the judgments), as in ``results/bounds/<test set>/pairs.csv``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..judgments.labels import match_positions, state
from ..judgments.metrics import bounded_metric
from ..metrics.evaluate import Qrels
from .pairs import decisions, pair_bounds


def column_prefix(base: str, k: int) -> str:
    """``P@10``: the prefix of a metric's columns (RBP's persistence is the config's, not part of the name)."""
    return f"{base}@{k}"


def one_against_many(own: np.ndarray, study: np.ndarray, qrels: Qrels, num_entities: int,
                     metrics: tuple[str, ...] = ("P", "Success", "RR", "DCG", "RBP"),
                     rbp_p: float = 0.8) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per bounded metric (column prefix): Δ_lo, Δ_hi of M_own − M_study and whether the pair is decided, each
    (S,) over the study systems. ``own``: (Q, k) top k of the outside system; ``study``: (S, Q, k) of the study's
    systems, same questions in the same order."""
    entity = np.concatenate([study, own[None]], 0)
    k = entity.shape[2]
    code, qmask = state(entity, qrels, num_entities)
    pos = match_positions(entity[:, qmask])
    S = len(study)
    out = {}
    for base in metrics:
        lo, hi = pair_bounds(code[:, qmask], pos, bounded_metric(base, k, rbp_p))
        decided, _ = decisions(lo, hi)
        out[column_prefix(base, k)] = (lo[S, :S], hi[S, :S], decided[S, :S])
    return out


def pair_columns(name: str, testset: str, opponents: list[str], bounds: dict) -> pd.DataFrame:
    """One row per study system: ``System``, ``TestSet``, ``Opponent`` and ``<M>_delta_lo`` / ``_delta_hi`` /
    ``_decided`` of :func:`one_against_many`."""
    cols: dict = {"System": name, "TestSet": testset, "Opponent": opponents}
    for prefix, (lo, hi, decided) in bounds.items():
        cols[f"{prefix}_delta_lo"], cols[f"{prefix}_delta_hi"], cols[f"{prefix}_decided"] = lo, hi, decided
    return pd.DataFrame(cols)
