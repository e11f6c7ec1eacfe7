"""One filling of a relation's question template (kgeval.pools.annotation.templates.relation_question) for the
annotation sheets and the ir_datasets queries: both give the same text, and a name containing a placeholder
stays as written."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from kgeval.data.kg import KnowledgeGraph
from kgeval.home import default_file
from kgeval.pools.annotation.templates import derive_template, load_templates, question, relation_question

REL = "/film/film/country"


def kg(names: list[str]) -> KnowledgeGraph:
    empty = np.zeros((0, 3), np.int64)
    return KnowledgeGraph("t", ["/m/a", "/m/b"], [REL], {"train": np.array([[0, 0, 1]]), "valid": empty,
                                                       "test": empty}, entity_names=names)


def test_relation_question_fills_in_one_pass():
    template = derive_template(REL)
    assert relation_question(REL, "Alien", "France", {}) == template.replace("{head}", "Alien").replace("{tail}",
                                                                                                      "France")
    assert relation_question(REL, "Alien", "France", {REL: "Is {tail} where {head} was made?"}) == \
        "Is France where Alien was made?"
    # a head name holding "{tail}" is not filled again
    assert relation_question(REL, "Film {tail} cut", "?", {REL: "Is {tail} where {head} was made?"}) == \
        "Is ? where Film {tail} cut was made?"


def test_ir_datasets_queries_are_the_sheets_questions():
    pytest.importorskip("ir_datasets")
    from kgeval.integrations.ir_datasets import _handlers

    graph = kg(["Film {tail} cut", "France"])
    questions = pd.DataFrame({"qid": ["head0", "tail0"], "side": ["head", "tail"], "entity": ["/m/b", "/m/a"],
                              "relation": [REL, REL]})
    source = SimpleNamespace(kg=graph, testset=SimpleNamespace(questions=questions))
    head_q, tail_q = list(_handlers(source)[1].queries_iter())
    path = default_file("annotations/templates.tsv")
    templates = load_templates(path) if path.is_file() else {}
    # the query is the sheet's question of a triple whose asked entity is named "?"
    assert tail_q.text == question(kg(["Film {tail} cut", "?"]), (0, 0, 1), templates)
    assert head_q.text == question(kg(["?", "France"]), (0, 0, 1), templates)
    assert tail_q.text == relation_question(REL, "Film {tail} cut", "?", templates)
    assert "Film {tail} cut" in tail_q.text and tail_q.text.count("?") == 2   # the blank and the question mark
