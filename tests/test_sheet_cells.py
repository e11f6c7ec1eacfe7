"""Issue 39, item 6: the sheets kgeval writes for people neutralise formula cells (OWASP's CSV-injection rule: a
quote before a cell beginning with =, +, -, @, a tab or a CR) and its readers read them back unchanged."""

from __future__ import annotations

import csv
import itertools
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from kgeval.cells import neutralise, neutralise_text_columns, restore, restore_text_columns, write_sheet_csv
from kgeval.pools.annotation import export_batch, export_disagreements, read_export, read_triple_list

EX = ROOT / "annotations" / "example"
FORMULAS = ["=HYPERLINK(\"http://evil\",\"x\")", "@SUM(A1:A9)", "+1+cmd|' /C calc'!A0", "-2+3", "\t=1+1",
            "\r=1+1"]


def _dangerous(cell: str) -> bool:
    return cell[:1] in ("=", "+", "-", "@", "\t", "\r")


def test_neutralise_then_restore_is_the_identity_on_every_short_string():
    """Exact enumeration over an alphabet of every trigger, the quote and plain characters, lengths 0 to 4."""
    alphabet = "=+-@\t\r'a1"
    for n in range(5):
        for chars in itertools.product(alphabet, repeat=n):
            cell = "".join(chars)
            safe = neutralise(cell)
            assert restore(safe) == cell, repr(cell)
            assert not _dangerous(safe), repr(cell)
            assert safe == cell or safe == "'" + cell
    assert neutralise("=1+1") == "'=1+1" and neutralise("'=x") == "''=x" and neutralise("it's") == "it's"
    assert neutralise("'plain") == "'plain"  # a quote before ordinary text is left alone


def test_only_text_columns_are_touched(tmp_path):
    df = pd.DataFrame({"System": ["=cmd", "Alpha", "-x"], "delta": [-0.25, 0.5, -1.0], "n": [-3, 2, 1]})
    write_sheet_csv(df, tmp_path / "t.csv")
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines == ["System,delta,n", "'=cmd,-0.25,-3", "Alpha,0.5,2", "'-x,-1,1"]
    back = restore_text_columns(pd.read_csv(tmp_path / "t.csv"))
    pd.testing.assert_frame_equal(back, df)
    assert neutralise_text_columns(df)["delta"].dtype == np.float64


def _rows(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh, delimiter="\t"))


def test_adjudication_sheet_neutralises_annotators_notes(synth_kg, tmp_path):
    """d99e1f8 copied the notes verbatim: =HYPERLINK(…), @SUM(…) and +1+cmd|… cells in the adjudication sheet."""
    d = tmp_path / "ex"
    shutil.copytree(EX, d)
    rows = _rows(d / "batch.A.tsv")
    disagreeing = {"4", "6", "9"}
    notes = iter(FORMULAS)
    for row in rows[1:]:
        if row[1] in disagreeing:
            row[10] = next(notes)
    with open(d / "batch.A.tsv", "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(rows)
    export_disagreements(d / "batch.tsv", d / "batch.A.tsv", d / "batch.B.tsv", tmp_path / "adj.tsv")
    written = _rows(tmp_path / "adj.tsv")
    assert not [c for r in written for c in r if _dangerous(c)]
    assert [r[13] for r in written[1:]] == ["'" + f for f in FORMULAS[:3]]
    # the reader gives the annotator's note back, character for character
    from kgeval.pools.annotation.formats import _read_sheet

    header, back = _read_sheet(tmp_path / "adj.tsv")
    assert [fields[header.index("note_a")] for _, fields in back] == FORMULAS[:3]

def test_a_template_beginning_with_at_gives_safe_questions_that_read_back(synth_kg, tmp_path):
    d = tmp_path / "ex"
    shutil.copytree(EX, d)
    triples = read_triple_list(d / "triples.tsv", synth_kg)
    relations = sorted({synth_kg.relations[r] for r in np.asarray(triples)[:, 1]})
    templates = {rel: "@SUM(1+1) is {head} related to {tail}?" for rel in relations}
    out = tmp_path / "batch.tsv"
    export_batch(triples, synth_kg, templates, out, "b1")
    written = _rows(out)
    assert all(r[7].startswith("'@SUM(1+1) is ") for r in written[1:])
    assert not [c for r in written for c in r if _dangerous(c)]
    back = read_export(out)
    assert all(row.question.startswith("@SUM(1+1) is ") for row in back)


@pytest.mark.parametrize("cell", FORMULAS + ["'=x", "''", "-"])
def test_a_sheet_round_trips_every_formula_cell(tmp_path, cell):
    from kgeval.pools.annotation.formats import _read_sheet, _write_sheet

    _write_sheet(tmp_path / "s.tsv", ["a", "b"], [[cell, "plain"]])
    assert not [c for r in _rows(tmp_path / "s.tsv") for c in r if _dangerous(c)]
    header, rows = _read_sheet(tmp_path / "s.tsv")
    # the reader strips whitespace around a cell: a leading tab or CR survives only behind the quote
    assert rows == [(2, [cell, "plain"])]
