"""Significance marks of kgeval.compare's tables beyond 26 systems: the letters run a … z, aa, ab, … (ranx's), so
a cell's marks are joined with commas once a table has more than 26 systems; with 26 or fewer they stay ranx's
``ab``. Every mark is plain ASCII (no look-alike superscript characters: Unicode has no superscript q)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.external.comparison import to_latex, to_markdown
from kgeval.external.report import letters


def table(n: int) -> pd.DataFrame:
    return pd.DataFrame({"System": [f"s{i}" for i in range(n)], "micro_mrr": np.linspace(0.9, 0.1, n)})


def row(text: str, system: str) -> str:
    return next(line for line in text.splitlines() if f"| {system} |" in line or f"& {system} &" in line)


def test_marks_beyond_26_systems_are_separated():
    n = 30
    assert letters(n)[16] == "q" and letters(n)[26] == "aa"
    marks = {"micro_mrr": [[1, 16, 26]] + [[]] * (n - 1)}   # s0 beats b, q (the 17th) and aa (the 27th)
    md = to_markdown(table(n), ["micro_mrr"], marks)
    assert "<sup>b,q,aa</sup>" in row(md, "s0")
    tex = to_latex(table(n), ["micro_mrr"], marks)
    assert "$^{b,q,aa}$" in row(tex, "s0")
    assert (md + tex).isascii()


def test_marks_of_26_systems_stay_ranx_letters():
    n = 20
    marks = {"micro_mrr": [[1, 16]] + [[]] * (n - 1)}
    md = to_markdown(table(n), ["micro_mrr"], marks)
    assert "<sup>bq</sup>" in row(md, "s0")
    assert "$^{bq}$" in row(to_latex(table(n), ["micro_mrr"], marks), "s0")
