"""The breakdowns the study's systems get, for evaluated systems: per relation category × question side
(``DIR/per_category.csv``, the rows of the pipeline's ``lp_per_rel_type.csv``, from the same
``kgeval.metrics.evaluate.per_category``) and per relation (``DIR/per_relation.csv``: the headline micro metrics
over the relation's answers, the macro and trec metrics over its questions).

A metric the system's run cannot know (a cut run's MR, Hits@k beyond its depth: NaN in its summary) is NaN in
every breakdown too, rather than an average of the ranks ∞ that stand for "not retrieved".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import KnowledgeGraph
from ..metrics.evaluate import Evaluation, per_category
from .placement import HEADLINE, item_kind


def _unknown_to_nan(df: pd.DataFrame, summary: dict[str, float]) -> pd.DataFrame:
    unknown = [c for c in df.columns if c in summary and not np.isfinite(summary[c])]
    return df.assign(**{c: np.nan for c in unknown})


def category_table(evals: dict[tuple[str, str], Evaluation]) -> pd.DataFrame:
    """``System``, ``TestSet``, then the columns of ``lp_per_rel_type.csv`` (``QuestionType``, ``RelationType``,
    micro metrics); empty when the graph has no relation categories."""
    frames = [_unknown_to_nan(per_category(ev), ev.summary).assign(System=name, TestSet=t)
              for (name, t), ev in evals.items() if "category" in ev.per_answer.columns]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["System", "TestSet"] + [c for c in out.columns if c not in ("System", "TestSet")]]


def relation_table(evals: dict[tuple[str, str], Evaluation], kg: KnowledgeGraph,
                   metrics: list[str] = HEADLINE) -> pd.DataFrame:
    """One row per (system, test set, relation): ``answers`` and the micro metrics of ``metrics`` over its
    answers, ``questions`` and the other metrics over its questions."""
    micro = [m for m in metrics if item_kind(m) == "micro"]
    macro = [m for m in metrics if item_kind(m) == "macro"]
    frames = []
    for (name, t), ev in evals.items():
        a = ev.per_answer.groupby("relation")[micro].mean().join(ev.per_answer.groupby("relation").size()
                                                                 .rename("answers"))
        q = ev.per_question.groupby("relation")[[m for m in macro if m in ev.per_question]].mean() \
            .join(ev.per_question.groupby("relation").size().rename("questions"))
        df = a.join(q, how="outer").reset_index()
        df.insert(0, "System", name)
        df.insert(1, "TestSet", t)
        df.insert(3, "relation_name", np.asarray(kg.relations, dtype=object)[df["relation"].to_numpy()])
        if kg.relation_category is not None:
            df.insert(4, "category", np.asarray(kg.relation_category, dtype=object)[df["relation"].to_numpy()])
        frames.append(_unknown_to_nan(df, ev.summary))
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    counts = ["answers", "questions"]
    out[counts] = out[counts].fillna(0).astype(np.int64)
    return out[[c for c in out.columns if c not in counts] + counts]
