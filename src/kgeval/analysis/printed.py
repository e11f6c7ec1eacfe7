"""The SIGIR study's Table 2 as printed, looked up in the data, beside the automatic choice of Table 2.

The paper prints three tail questions with their original answers and some added annotations; two of those
annotations (and more, see the labels) are judged N in the published judgments, so the printed table mixes
relevant and non-relevant added answers. Each printed name is resolved among the judged answers of its
question (a name of ``mid2name.txt`` can stand for several entities: only the one judged for the question
counts), and reported with its label in the completed test set and its pooling depth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import SIDE_NAMES, TAIL, KnowledgeGraph
from ..data.testsets import TestSet
from ..published import PAPER_TABLE2
from . import study

PAPER, AUTOMATIC = "paper (as printed)", "automatic (most added answers)"
ORIGINAL, ANNOTATION = "original answer", "annotation"
ABSENT = "not in the data"
ANSWER_COLUMNS = ["Question", "Printed as", "Answer", "Entity", "In sample", "Label", "Depth"]


def _names(kg: KnowledgeGraph) -> np.ndarray:
    return np.array(kg.entity_names if kg.entity_names else kg.entities, dtype=object)


def _question_rows(triples: np.ndarray, subjects: np.ndarray, relation: int, side: int) -> np.ndarray:
    """Rows of ``triples`` answering the question (subject, relation, side) for any of the subject ids."""
    known = triples[:, 0] if side == TAIL else triples[:, 2]
    return np.flatnonzero((triples[:, 1] == relation) & np.isin(known, subjects))


def question_text(subject: str, relation: str, side: int) -> str:
    return f"({subject}, {relation}, ?)" if side == TAIL else f"(?, {relation}, {subject})"


def printed_answers(sample: TestSet, complete: TestSet, kg: KnowledgeGraph,
                    printed=PAPER_TABLE2) -> pd.DataFrame:
    """One row per answer the paper prints: whether it is in the sampled test set, its label in the completed
    one (Y, N, or not in the data) and its pooling depth (0 = an original test triple)."""
    names = _names(kg)
    sample_keys = {tuple(t) for t in sample.triples.tolist()}
    rows = []
    for subject, relation, side_name, originals, added in printed:
        side = SIDE_NAMES.index(side_name)
        q = question_text(subject, relation, side)
        found = kg.has_relation(relation)
        idx = _question_rows(complete.triples, np.flatnonzero(names == subject), kg.relation_id(relation),
                             side) if found else np.array([], dtype=np.int64)
        answer_col = 2 if side == TAIL else 0
        for kind, answers in ((ORIGINAL, originals), (ANNOTATION, added)):
            for answer in answers:
                hit = idx[names[complete.triples[idx, answer_col]] == answer]
                if len(hit) == 0:
                    rows.append({"Question": q, "Printed as": kind, "Answer": answer, "Entity": "",
                                 "In sample": "N", "Label": ABSENT, "Depth": -1})
                    continue
                i = int(hit[0])
                rows.append({"Question": q, "Printed as": kind, "Answer": answer,
                             "Entity": kg.entities[int(complete.triples[i, answer_col])],
                             "In sample": "Y" if tuple(complete.triples[i].tolist()) in sample_keys else "N",
                             "Label": "Y" if complete.label[i] == 1 else "N", "Depth": int(complete.depth[i])})
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def judged_counts(complete: TestSet, kg: KnowledgeGraph, printed=PAPER_TABLE2) -> dict[str, str]:
    """Per printed question: how many of its answers the completed test set holds, relevant and not."""
    names = _names(kg)
    out = {}
    for subject, relation, side_name, _, _ in printed:
        side = SIDE_NAMES.index(side_name)
        if not kg.has_relation(relation):
            out[question_text(subject, relation, side)] = ABSENT
            continue
        idx = _question_rows(complete.triples, np.flatnonzero(names == subject), kg.relation_id(relation), side)
        pos = int(complete.label[idx].sum())
        seeds = int((complete.depth[idx] == 0).sum())
        out[question_text(subject, relation, side)] = (f"{len(idx)} judged: {seeds} original, "
                                                       f"{pos - seeds} added Y, {len(idx) - pos} N")
    return out


def _listed(group: pd.DataFrame) -> str:
    return ", ".join(f"{a} ({lab})" if lab in ("Y", "N") else f"{a} ({ABSENT})"
                     for a, lab in zip(group["Answer"], group["Label"]))


def table2_beside(answers: pd.DataFrame, counts: dict[str, str], automatic: pd.DataFrame) -> pd.DataFrame:
    """The printed questions (each answer with its label in the data) above today's automatic choice."""
    rows = []
    for q, group in answers.groupby("Question", sort=False):
        rows.append({"Choice": PAPER, "Triple Question": q,
                     "Original Answers": _listed(group[group["Printed as"] == ORIGINAL]),
                     "Annotations": _listed(group[group["Printed as"] == ANNOTATION]),
                     "In the data": counts.get(q, ABSENT)})
    for _, r in automatic.iterrows():
        rows.append({"Choice": AUTOMATIC, "Triple Question": r["Triple Question"],
                     "Original Answers": r["Original Answers"], "Annotations": r["Annotations"],
                     "In the data": ""})
    return pd.DataFrame(rows, columns=["Choice", "Triple Question", "Original Answers", "Annotations",
                                       "In the data"])


def table2_printed(sample: TestSet, complete: TestSet, kg: KnowledgeGraph,
                   printed=PAPER_TABLE2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the table: printed questions, then the automatic choice; one row per printed answer)."""
    answers = printed_answers(sample, complete, kg, printed)
    automatic = study.examples(sample.positives, complete, kg)
    return table2_beside(answers, judged_counts(complete, kg, printed), automatic), answers
