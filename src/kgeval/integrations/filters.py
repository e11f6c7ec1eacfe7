"""The per-question lists of entities kgeval removes before ranking (the KGC filtered setting), for a tool that
ranks outside kgeval (an IR system, ir_measures, ranx): with these removed from its run, the tool's per-question
measures equal kgeval's macro values."""

from __future__ import annotations

import numpy as np

from ..api import TestCollection


def filtered_entities(testset: TestCollection) -> dict[str, list[str]]:
    """``{qid: [entity id, ...]}``: each question's macro filter, its train ∪ valid answers except its own test
    answers (:func:`kgeval.scores.ranking.macro_filter`), under all the test set's judgments, as kgeval's score
    dumps record it (a depth-cut test set keeps the full set's filter, as its evaluation does)."""
    from ..data.questions import AnswerIndex, load_questions
    from ..data.testsets import TestSet
    from ..scores.ranking import judged_entities, macro_filter

    kg = testset.load_kg()
    qs = load_questions(testset.files["questions"], kg)
    ts = TestSet.load(testset.files["tsv"], kg, testset.base)
    known = AnswerIndex(kg.known(("train", "valid")), kg.num_entities, kg.num_relations)
    rows, ents = macro_filter(qs, judged_entities(ts, qs), known)
    names = np.asarray(kg.entities, dtype=object)
    qids = list(qs.qid)
    bounds = np.searchsorted(rows, np.arange(len(qids) + 1))  # rows are sorted
    return {qids[i]: names[ents[bounds[i]:bounds[i + 1]]].tolist() for i in range(len(qids))}
