"""The annotation round trip: templates, export, strict validation of completed sheets, kappa, merge."""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from kgeval.cli import main
from kgeval.data.labels import read_labels
from kgeval.errors import InputError
from kgeval.pools.annotation import (
    EXPORT_HEADER,
    cohen_kappa,
    derive_template,
    disagreements,
    export_batch,
    export_disagreements,
    load_templates,
    merge,
    merge_into_qrels,
    question,
    read_annotations,
    read_export,
    read_template_rows,
    read_triple_list,
)

ANN = ROOT / "annotations"
EX = ANN / "example"


# ---- templates -------------------------------------------------------------------------------------------
def test_templates_file_is_well_formed():
    rows = read_template_rows(ANN / "templates.tsv")
    assert len(rows) == 237
    for row in rows:
        assert row.template.count("{head}") == 1 and row.template.count("{tail}") == 1, row
        assert row.template.endswith("?"), row
        assert row.source in ("hand", "derived")
        if row.source == "derived":  # the committed derived rows follow the documented rule
            assert row.template == derive_template(row.relation)
    assert sum(r.source == "hand" for r in rows) >= 60


def test_templates_cover_fb15k237(fb_files):
    rels = Counter()
    test_rels = Counter()
    for split in ("train", "valid", "test"):
        for line in Path(fb_files[split]).read_text(encoding="utf-8").splitlines():
            r = line.split("\t")[1]
            rels[r] += 1
            if split == "test":
                test_rels[r] += 1
    rows = {r.relation: r for r in read_template_rows(ANN / "templates.tsv")}
    assert set(rows) == set(rels) and len(rels) == 237
    ranked = sorted(test_rels, key=lambda r: (-test_rels[r], -rels[r]))
    assert all(rows[r].source == "hand" for r in ranked[:60])


def test_derive_template_rule():
    assert derive_template("/location/country/capital") == "For {head} (a country), is {tail} listed under 'capital'?"
    assert derive_template("/film/actor/film./film/performance/special_performance_type") == (
        "For {head} (an actor), is {tail} the 'special performance type' of one of its 'film' records "
        "(performance)?")
    # Freebase's disambiguating suffixes are dropped
    assert "'spouse' records (marriage)" in derive_template("/people/person/spouse_s./people/marriage/spouse")
    assert "(a university)" in derive_template("/education/university/fraternities_and_sororities")
    with pytest.raises(ValueError):
        derive_template("capital")


def test_question_uses_display_names_and_falls_back(synth_kg):
    templates = load_templates(EX / "templates.tsv")
    h, t = synth_kg.entity_id("/s/e00112"), synth_kg.entity_id("/s/e00204")
    r = synth_kg.relation_id("/t0/rel02/t3")
    assert question(synth_kg, (h, r, t), templates) == "Is Type0 entity 112 in relation rel02 with Type3 entity 204?"
    assert question(synth_kg, (h, r, t), {}) == "For Type0 entity 112 (a rel02), is Type3 entity 204 listed under 't3'?"


def test_bad_templates_file(tmp_path):
    bad = tmp_path / "t.tsv"
    bad.write_text("relation\ttemplate\tsource\n/a/b/c\tIs {head} a {tail}\thand\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_templates(bad)
    assert exc.value.line == 2 and "?" in exc.value.problem


# ---- kappa -----------------------------------------------------------------------------------------------
def test_kappa_hand_computed():
    # p_o = 3/4; p_A(Y) = 1/2, p_B(Y) = 1/4; p_e = 1/8 + 3/8 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    assert cohen_kappa("YYNN", "YNNN") == 0.5
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == 0.5
    assert cohen_kappa("YN", "NY") == -1.0
    assert cohen_kappa("YNYN", "YNYN") == 1.0
    # 5 items: p_o = 2/5, p_A(Y) = 3/5, p_B(Y) = 2/5, p_e = 6/25 + 6/25 = 12/25, kappa = (-2/25) / (13/25)
    assert cohen_kappa("YYYNN", "YNNYN") == pytest.approx(-2 / 13, abs=1e-15)
    assert math.isnan(cohen_kappa("YYY", "YYY"))
    with pytest.raises(ValueError):
        cohen_kappa("YN", "Y")
    with pytest.raises(ValueError):
        cohen_kappa("Yx", "YN")


def test_disagreements():
    assert disagreements({"1": "Y", "2": "N", "3": "Y"}, {"3": "N", "1": "Y", "2": "Y"}) == ["2", "3"]
    with pytest.raises(ValueError):
        disagreements({"1": "Y"}, {"2": "Y"})


# ---- the worked example ----------------------------------------------------------------------------------
def _example_copy(tmp_path: Path) -> Path:
    d = tmp_path / "ex"
    shutil.copytree(EX, d)
    return d


def _merge_example(d: Path, out: Path, **kw):
    args = dict(export=d / "batch.tsv", annotator_a=d / "batch.A.tsv", annotator_b=d / "batch.B.tsv",
                adjudicator=d / "batch.adjudication.tsv", out_labels=out / "labels.txt", report=out / "report.json")
    args.update(kw)
    return merge(**args)


def _without_paths(rep: dict) -> dict:
    rep = json.loads(json.dumps(rep))
    for f in rep["files"].values():
        if f:
            f.pop("path")
    for k in ("path", "merged"):
        rep.get("into", {}).pop(k, None)
    for u in rep["sources_outside_verified_list"]:
        u.pop("file")
    return rep


def test_worked_example_end_to_end(synth_kg, tmp_path):
    d = _example_copy(tmp_path)
    out = tmp_path / "out"
    triples = read_triple_list(d / "triples.tsv", synth_kg)
    export_batch(triples, synth_kg, load_templates(d / "templates.tsv"), out / "batch.tsv", "synth-demo-1")
    assert (out / "batch.tsv").read_bytes() == (EX / "batch.tsv").read_bytes()

    items = export_disagreements(d / "batch.tsv", d / "batch.A.tsv", d / "batch.B.tsv", out / "adj.tsv")
    assert items == ["4", "6", "9"]
    with open(out / "adj.tsv", encoding="utf-8") as fh, open(d / "batch.adjudication.tsv", encoding="utf-8") as gh:
        made, done = list(csv.reader(fh, delimiter="\t")), list(csv.reader(gh, delimiter="\t"))
    assert [r[:8] + r[11:] for r in made] == [r[:8] + r[11:] for r in done]
    assert all(r[8:11] == ["", "", ""] for r in made[1:])

    rep = _merge_example(d, out, into=d / "existing_judgments.txt", merged=out / "merged.txt")
    assert (out / "labels.txt").read_text() == (EX / "expected_labels.txt").read_text()
    assert (out / "merged.txt").read_text() == (EX / "expected_merged.txt").read_text()
    # kappa by hand: p_o = 7/10, p_A(Y) = 5/10, p_B(Y) = 4/10, p_e = 0.5*0.4 + 0.5*0.6 = 0.5 -> (0.7-0.5)/0.5
    assert rep["kappa"] == 0.4
    assert (rep["agreements"], rep["disagreements"], rep["labels"]["final"]) == (7, 3, {"Y": 4, "N": 6})
    assert [(r["item"], r["final"], r["sided_with"]) for r in rep["resolutions"]] == [
        ("4", "Y", "A"), ("6", "N", "B"), ("9", "N", "A")]
    assert rep["into"]["added"] == 9 and rep["into"]["already_present"] == 1
    expected = json.loads((EX / "expected_report.json").read_text(encoding="utf-8"))
    assert _without_paths(json.loads((out / "report.json").read_text())) == _without_paths(expected)
    # the merged judgments are in the published format
    labels = read_labels(out / "labels.txt", synth_kg)
    assert sorted(v for v, _ in labels.values()) == [0] * 6 + [1] * 4
    assert len(read_labels(out / "merged.txt", synth_kg)) == 12
    # Markdown report
    _merge_example(d, out, out_labels=out / "labels2.txt", report=out / "report.md")
    md = (out / "report.md").read_text()
    assert "Cohen's kappa = 0.4000" in md and "| 9 | /s/e00103 /t3/rel15/t3 /s/e00089 | N | Y | N | N |" in md


def test_sheet_edited_in_a_spreadsheet_is_accepted(tmp_path):
    d = _example_copy(tmp_path)
    text = (d / "batch.A.tsv").read_text(encoding="utf-8")
    lines = text.splitlines()
    header, body = lines[0], lines[1:]
    body = body[::-1]
    body[0] = body[0].replace("\tN\t", "\t N \t")  # whitespace around a value
    body[1] = '\t'.join(f'"{f}"' if i == 10 else f for i, f in enumerate(body[1].split("\t")))  # quoted
    body[2] = body[2].rstrip("\t")  # trailing empty cells dropped
    (d / "batch.A.tsv").write_bytes(("\ufeff" + "\r\n".join([header, "", *body]) + "\r\n").encode("utf-8"))
    rows = read_export(d / "batch.tsv")
    judg = read_annotations(d / "batch.A.tsv", rows)
    assert list(judg) == [str(i) for i in range(1, 11)]
    assert "".join("YN"[1 - j.label] for j in judg.values()) == "NYNYYYYNNN"
    rep = _merge_example(d, tmp_path / "out")
    assert rep["kappa"] == 0.4


# ---- malformed sheets ------------------------------------------------------------------------------------
def _edit(path: Path, which: str, **changes) -> int:
    """Change columns of one item's row; return its 1-based line."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    for i, row in enumerate(rows):
        if i and row[1] == which:
            for col, value in changes.items():
                row[EXPORT_HEADER.index(col)] = value
            line = i + 1
            break
    else:
        raise AssertionError(which)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(rows)
    return line


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _put(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _line_of(path: Path, item: str) -> int:
    return next(i for i, line in enumerate(_lines(path), start=1) if i > 1 and line.split("\t")[1] == item)


# one cell edited: (case, sheet, item, the cell's new values, words of the error)
EDITS = [
    ("unknown_label", "batch.A.tsv", "3", {"label": "maybe"}, "is not Y or N"),
    ("lowercase_label", "batch.B.tsv", "1", {"label": "n"}, "is not Y or N"),
    ("empty_label", "batch.A.tsv", "8", {"label": ""}, "has no label"),
    ("y_without_source", "batch.B.tsv", "7", {"source_link": ""}, "without a source link"),
    ("bad_url", "batch.A.tsv", "5", {"source_link": "www.imdb.com/title/tt0111161"}, "http(s) URL"),
    ("bad_url_on_n", "batch.A.tsv", "3", {"source_link": "ftp://example.org/x"}, "http(s) URL"),
    ("unknown_triple", "batch.B.tsv", "5", {"tail_id": "/s/e00081"}, "is not in batch synth-demo-1"),
    ("wrong_item_number", "batch.A.tsv", "5", {"item": "6"}, "item 6 is"),
    ("other_batch", "batch.A.tsv", "2", {"batch": "other"}, "not the exported batch"),
    ("adjudicator_y_without_source", "batch.adjudication.tsv", "4", {"source_link": ""}, "without a source"),
]


def _cell_edit(sheet, item, changes, words):
    def case(d):
        return sheet, _edit(d / sheet, item, **changes), words
    return case


def _duplicate_item(d):
    p = d / "batch.A.tsv"
    lines = _lines(p)
    _put(p, lines + [lines[4]])
    return "batch.A.tsv", len(lines) + 1, "item 4 is a duplicate of line 5"


def _missing_item(d):
    p = d / "batch.B.tsv"
    _put(p, [line for line in _lines(p) if line.split("\t")[1] not in ("3", "7")])
    return "batch.B.tsv", None, "items 3, 7"


def _header_mismatch(d):
    p = d / "batch.A.tsv"
    lines = _lines(p)
    _put(p, [lines[0].replace("source_link", "source")] + lines[1:])
    return "batch.A.tsv", 1, "header must be"


def _adjudicator_missing_disagreement(d):
    p = d / "batch.adjudication.tsv"
    _put(p, [line for line in _lines(p) if line.split("\t")[1] != "6"])
    return "batch.adjudication.tsv", None, "items 6"


def _adjudicator_extra_item(d):
    p = d / "batch.adjudication.tsv"
    row = _lines(d / "batch.A.tsv")[2]  # item 2: A and B agree
    _put(p, _lines(p) + [row])
    return "batch.adjudication.tsv", 5, "items 2 are not disagreements"


BAD = {name: _cell_edit(sheet, item, changes, words) for name, sheet, item, changes, words in EDITS} | {
    f.__name__.strip("_"): f for f in (_duplicate_item, _missing_item, _header_mismatch,
                                       _adjudicator_missing_disagreement, _adjudicator_extra_item)}


@pytest.mark.parametrize("case", BAD.values(), ids=list(BAD))
def test_malformed_sheet_fails_cleanly(case, tmp_path):
    d = _example_copy(tmp_path)
    name, line, words = case(d)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(InputError) as exc:
        _merge_example(d, out, into=d / "existing_judgments.txt", merged=out / "merged.txt")
    assert exc.value.path == str(d / name)
    assert exc.value.line == line
    assert words in exc.value.problem
    assert str(d / name) in str(exc.value)
    assert list(out.iterdir()) == []  # nothing written, no temporary files left


def test_missing_adjudicator_when_needed(tmp_path):
    d = _example_copy(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(InputError, match="items 4, 6, 9.*annotate-disagreements"):
        _merge_example(d, out, adjudicator=None)
    assert not out.exists() or list(out.iterdir()) == []


def test_no_disagreements_needs_no_adjudicator(tmp_path):
    d = _example_copy(tmp_path)
    shutil.copy(d / "batch.A.tsv", d / "batch.B.tsv")
    rep = _merge_example(d, tmp_path / "out", adjudicator=None)
    assert rep["disagreements"] == 0 and rep["kappa"] == 1.0 and rep["resolutions"] == []


def test_same_file_for_both_annotators_is_refused(tmp_path):
    d = _example_copy(tmp_path)
    with pytest.raises(InputError, match="independent"):
        _merge_example(d, tmp_path / "out", annotator_b=d / "batch.A.tsv")


def test_output_must_not_overwrite_input(tmp_path):
    d = _example_copy(tmp_path)
    before = (d / "batch.A.tsv").read_bytes()
    with pytest.raises(InputError, match="must not overwrite"):
        _merge_example(d, tmp_path, out_labels=d / "batch.A.tsv")
    assert (d / "batch.A.tsv").read_bytes() == before


# ---- published-format judgments --------------------------------------------------------------------------
def test_merge_into_qrels(tmp_path):
    old = tmp_path / "old.txt"
    old.write_text("a\tr\tb\tY\nc\tr\td\tN\n", encoding="utf-8")
    new = tmp_path / "new.txt"
    new.write_text("c\tr\td\tN\ne\tr\tf\tY\n", encoding="utf-8")
    assert merge_into_qrels(old, new, tmp_path / "out.txt") == {"added": 1, "already_present": 1}
    assert (tmp_path / "out.txt").read_text() == "a\tr\tb\tY\nc\tr\td\tN\ne\tr\tf\tY\n"
    # in place
    merge_into_qrels(old, new, old)
    assert old.read_text() == "a\tr\tb\tY\nc\tr\td\tN\ne\tr\tf\tY\n"


def test_merge_into_qrels_refuses_conflicts(tmp_path):
    old = tmp_path / "old.txt"
    old.write_text("a\tr\tb\tY\nc\tr\td\tN\n", encoding="utf-8")
    new = tmp_path / "new.txt"
    new.write_text("e\tr\tf\tY\nc\tr\td\tY\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        merge_into_qrels(old, new, tmp_path / "out.txt")
    assert exc.value.path == str(new) and exc.value.line == 2
    assert f"{old}:2" in exc.value.problem
    assert not (tmp_path / "out.txt").exists()
    bad = tmp_path / "bad.txt"
    bad.write_text("a\tr\tb\tmaybe\n", encoding="utf-8")
    with pytest.raises(InputError, match="is not Y or N"):
        merge_into_qrels(old, bad, tmp_path / "out.txt")


def test_merge_with_conflicting_into_writes_nothing(tmp_path):
    d = _example_copy(tmp_path)
    (d / "existing_judgments.txt").write_text("/s/e00087\t/t1/rel11/t3\t/s/e00139\tN\n", encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(InputError) as exc:
        _merge_example(d, out, into=d / "existing_judgments.txt", merged=out / "merged.txt")
    assert f"{d / 'existing_judgments.txt'}:1" in exc.value.problem
    assert not out.exists() or list(out.iterdir()) == []


# ---- export ----------------------------------------------------------------------------------------------
def test_export_is_deterministic_and_deduplicated(synth_kg, tmp_path):
    triples = read_triple_list(EX / "triples.tsv", synth_kg)
    shuffled = np.concatenate([triples[::-1], triples[:3]])
    export_batch(shuffled, synth_kg, load_templates(EX / "templates.tsv"), tmp_path / "b.tsv", "synth-demo-1")
    assert (tmp_path / "b.tsv").read_bytes() == (EX / "batch.tsv").read_bytes()
    with pytest.raises(ValueError, match="batch name"):
        export_batch(triples, synth_kg, {}, tmp_path / "c.tsv", "bad name")
    assert not (tmp_path / "c.tsv").exists()


def test_triple_list_errors(synth_kg, tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("/s/e00067\t/t3/rel15/t3\t/s/e00146\n/s/nope\t/t3/rel15/t3\t/s/e00146\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_triple_list(p, synth_kg)
    assert exc.value.line == 2
    p.write_text("head\trelation\ttail\tdepth\n/s/e00067\t/t3/rel15/t3\t/s/e00146\t1\n", encoding="utf-8")
    assert read_triple_list(p, synth_kg).shape == (1, 3)


# ---- command line ----------------------------------------------------------------------------------------
def test_cli_round_trip(synth_kg, tmp_path, capsys):
    d = _example_copy(tmp_path)
    synth_kg.save(tmp_path / "kg.npz")
    out = tmp_path / "out"
    assert main(["annotate-export", "--kg", str(tmp_path / "kg.npz"), "--triples", str(d / "triples.tsv"),
                 "--templates", str(d / "templates.tsv"), "--batch", "synth-demo-1",
                 "--out", str(out / "batch.tsv")]) == 0
    assert (out / "batch.tsv").read_bytes() == (EX / "batch.tsv").read_bytes()
    assert main(["annotate-disagreements", "--export", str(d / "batch.tsv"), "--a", str(d / "batch.A.tsv"),
                 "--b", str(d / "batch.B.tsv"), "--out", str(out / "adj.tsv")]) == 0
    assert "3 disagreements: items 4, 6, 9" in capsys.readouterr().out
    args = ["annotate-merge", "--export", str(d / "batch.tsv"), "--a", str(d / "batch.A.tsv"),
            "--b", str(d / "batch.B.tsv"), "--adjudicator", str(d / "batch.adjudication.tsv"),
            "--out", str(out / "labels.txt"), "--report", str(out / "report.json")]
    assert main(args + ["--into", str(d / "existing_judgments.txt"), "--merged", str(out / "merged.txt")]) == 0
    printed = capsys.readouterr().out
    assert "kappa 0.4000" in printed and "9 added" in printed
    assert (out / "labels.txt").read_text() == (EX / "expected_labels.txt").read_text()
    assert (out / "merged.txt").read_text() == (EX / "expected_merged.txt").read_text()
    # an error: exit status 2, file and line on stderr, nothing written
    line = _edit(d / "batch.B.tsv", "7", source_link="")
    assert main([*args[:-4], "--out", str(tmp_path / "l2.txt"), "--report", str(tmp_path / "r2.json")]) == 2
    assert f"{d / 'batch.B.tsv'}:{line}:" in capsys.readouterr().err
    assert not (tmp_path / "l2.txt").exists() and not (tmp_path / "r2.json").exists()
