"""The plan's per-pair table read back (kgeval.sampling.sheet): what sample-estimate and campaign create share."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.errors import InputError
from kgeval.sampling.sheet import pair_columns, read_plan_pairs
from kgeval.sampling.weights import pairs


def test_pair_columns_follow_the_pairs_order(tmp_path):
    f = tmp_path / "budgets.csv"
    f.write_text("Metric,A,B,budget\nP,S1,S3,10\nP,S2,S3,20\nP,S1,S2,30\n")
    table = read_plan_pairs(f)
    cols = pair_columns(["S1", "S2", "S3"], table, f)
    a, b = pairs(3)
    # (S1,S2), (S1,S3), (S2,S3) in pairs()' order: columns 1, 2, 0 for the table's three rows
    assert cols.tolist() == [1, 2, 0]
    assert [(a[c], b[c]) for c in cols] == [(0, 2), (1, 2), (0, 1)]
    assert cols.dtype == np.int64


@pytest.mark.parametrize("text, where, says", [
    ("Metric,A,B\nP,S1,S4\n", 2, "not a pair of the study's systems"),
    ("Metric,A,B\nP,S1,S2\nP,S3,S1\n", 3, "not a pair"),  # the reversed order is another column: refused
])
def test_a_pair_of_other_systems_is_refused_with_its_line(tmp_path, text, where, says):
    f = tmp_path / "budgets.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=says) as err:
        pair_columns(["S1", "S2", "S3"], read_plan_pairs(f), f)
    assert f"{f}:{where}:" in str(err.value)


@pytest.mark.parametrize("text, says", [
    ("Metric,A,B\nP,S1,S2\nRR,S1,S3\n", "one metric"),
    ("A,B\nS1,S2\n", "one metric"),
    ("Metric,A,B\nXX,S1,S2\n", "metric 'XX'"),
    ("", "cannot read"),
])
def test_a_table_that_is_not_a_plans_is_refused(tmp_path, text, says):
    f = tmp_path / "budgets.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=says):
        read_plan_pairs(f)
