"""Issue 60's refusals that keep a user's folder whole: a campaign create that fails leaves no campaign file (and
the corrected create is not refused), a graph of another dataset is named, not silently used."""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("starlette")
from test_baselines import SC, installed  # noqa: E402, F401, F811 (a fixture)
from test_campaign_evidence import ENTS, NAMES, RELS, TEST, TRAIN, VALID  # noqa: E402

from kgeval.campaign.build import create_campaign  # noqa: E402
from kgeval.campaign.store import connect  # noqa: E402
from kgeval.data.kg import KnowledgeGraph  # noqa: E402
from kgeval.errors import InputError  # noqa: E402

SHEET = ("batch\titem\thead_id\trelation\ttail_id\thead_name\ttail_name\tquestion\tlabel\tsource_link\tnote\n"
         "b\t7\t/m/f1\t/film/film/genre\t/m/g3\tFilm One\tGenre Three\tIs Genre Three a genre of Film One?\t\t\t\n")


def _files(tmp_path, names=NAMES, ents=ENTS):
    KnowledgeGraph("tiny", ents, RELS, {"train": np.array(TRAIN), "valid": np.array(VALID), "test": np.array(TEST)},
                   entity_names=names).save(tmp_path / "kg.npz")
    (tmp_path / "sheet.tsv").write_text(SHEET)
    (tmp_path / "t.tsv").write_text("relation\ttemplate\tsource\n/film/film/genre\tIs {tail} a genre of {head}?"
                                    "\thand\n")


def test_a_lone_surrogate_in_the_graph_is_refused_before_any_campaign_file(tmp_path):
    bad = list(NAMES)
    bad[2] = "Genre \ud800One"  # Genre One: a known answer in Film One's evidence
    _files(tmp_path, names=bad)
    db = tmp_path / "c.db"
    with pytest.raises(InputError) as info:
        create_campaign(db, tmp_path / "sheet.tsv", kg=tmp_path / "kg.npz", templates=tmp_path / "t.tsv")
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 'kg.npz'}: entity 2 ") and "U+D800" in text and "\n" not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg.npz", "sheet.tsv", "t.tsv"]  # nothing half-built
    _files(tmp_path)  # the corrected graph: the create is not refused as "already exists"
    assert create_campaign(db, tmp_path / "sheet.tsv", kg=tmp_path / "kg.npz", templates=tmp_path / "t.tsv") == (1, 0)
    conn = connect(db)
    assert conn.execute("SELECT count(*) FROM evidence").fetchone()[0] == 1
    conn.close()


def test_a_failure_while_filling_leaves_no_campaign_file(tmp_path, monkeypatch):
    """Whatever fails after the items are written (here the evidence's insert) takes the whole file with it."""
    import kgeval.campaign.evidence as evidence

    def broken(conn, ev):
        raise OSError(28, "No space left on device")

    _files(tmp_path)
    monkeypatch.setattr(evidence, "store", broken)
    with pytest.raises(OSError) as info:
        create_campaign(tmp_path / "c.db", tmp_path / "sheet.tsv", kg=tmp_path / "kg.npz", templates=tmp_path / "t.tsv")
    assert info.value.filename == str(tmp_path / "c.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg.npz", "sheet.tsv", "t.tsv"]


def test_a_graph_of_another_dataset_is_refused_and_a_partial_one_named(tmp_path, caplog):
    _files(tmp_path, ents=[e.replace("/m/", "/x/") for e in ENTS])  # no entity of the sheet's
    with pytest.raises(InputError) as info:
        create_campaign(tmp_path / "c.db", tmp_path / "sheet.tsv", kg=tmp_path / "kg.npz", templates=tmp_path / "t.tsv")
    assert str(info.value).startswith(f"{tmp_path / 'kg.npz'}: knows none of the sheet's 1 items")
    assert not (tmp_path / "c.db").exists()
    _files(tmp_path)
    (tmp_path / "sheet.tsv").write_text(SHEET + "b\t8\t/m/zz\t/film/film/genre\t/m/g3\tZ\tG\tIs G a genre of Z?\t\t\t\n")
    with caplog.at_level(logging.WARNING):
        assert create_campaign(tmp_path / "c.db", tmp_path / "sheet.tsv", kg=tmp_path / "kg.npz",
                               templates=tmp_path / "t.tsv") == (2, 0)
    assert "1 of the sheet's 2 items have entities or relations this graph does not know" in caplog.text


def test_a_lone_surrogate_in_a_sheet_names_its_line(tmp_path):
    from kgeval.campaign.sheet import read_items
    from kgeval.pools.annotation import formats

    rows = [["batch", "item", "head_id", "relation", "tail_id", "head_name", "tail_name", "question"],
            ["b", "1", "/m/a", "/r", "/m/b", "A", "B\udc80", "Q?"]]
    formats_read = formats._read_sheet

    def fake(path):  # an .xlsx cell's character reference gives such a name; a UTF-8 file cannot hold one
        return rows[0], [(2, rows[1])]

    import kgeval.campaign.sheet as sheet

    sheet._read_sheet, saved = fake, sheet._read_sheet
    try:
        with pytest.raises(InputError) as info:
            read_items(tmp_path / "s.xlsx")
    finally:
        sheet._read_sheet = saved
    assert formats_read is formats._read_sheet
    assert str(info.value).startswith(f"{tmp_path / 's.xlsx'}:2: tail_name 'B\\udc80' holds a lone surrogate")


def test_frequency_replaces_what_popularity_wrote_and_a_tag_is_one_word(installed, workdir, capsys):  # noqa: F811
    """Item 7: ``--out``'s help says an earlier baseline's files are replaced, whichever kind wrote them; item 9:
    a tag with a space would make each TREC line seven fields."""
    import gzip

    import kgeval
    from kgeval.cli import main as cli_main
    from kgeval.errors import BadValueError

    user, config = installed
    args = ["--out", "runs", "--dataset", "Synth", "--testsets", SC, "--depth", "5", "--config", str(config)]
    assert cli_main(["baseline", "popularity", *args]) == 0
    assert cli_main(["baseline", "frequency", *args]) == 0
    lines = gzip.open(user / "runs" / f"{SC}.run.gz", "rt").read().splitlines()
    assert lines and {line.split()[5] for line in lines} == {"frequency"}
    assert all(len(line.split()) == 6 for line in lines)
    capsys.readouterr()
    assert cli_main(["baseline", "popularity", *args, "--tag", "a b"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kgeval: error:") and "'a b'" in err and "\n" not in err
    with pytest.raises(BadValueError, match="tag"):
        kgeval.baseline("popularity", "runs", [SC], dataset="Synth", depth=5, config=config, tag="a\tb")
    assert gzip.open(user / "runs" / f"{SC}.run.gz", "rt").read().splitlines() == lines  # untouched


@pytest.mark.parametrize("header, row, problem", [
    ("micro_mrr", "7.5", "holds '7.5': this metric's values lie in [0, 1]"),
    ("micro_hits@10", "-0.1", "holds '-0.1': this metric's values lie in [0, 1]"),
    ("micro_mr", "0.5", "holds '0.5': this metric's values lie at least 1"),
])
def test_reanalyze_refuses_a_rank_metric_outside_its_range(tmp_path, header, row, problem):
    """Item 9: an MRR of 7.5 would rank its system first without a word; the line of the value is named."""
    from test_reanalyze import hand_tables

    from kgeval.analysis.reanalyze import reanalyze

    hand_tables(tmp_path / "r")
    (tmp_path / "r/FB-Test-S/evaluation.csv").write_text(f"System,{header}\nA,{'2' if 'mr' == header[-2:] else '0.2'}"
                                                         f"\nB,{row}\n")
    with pytest.raises(InputError) as info:
        reanalyze(tmp_path / "r", tmp_path / "o")
    assert str(info.value).endswith(f"FB-Test-S/evaluation.csv:3: column {header!r} {problem}")


def test_metric_ranges_by_column_name():
    from kgeval.analysis.metric_ranges import metric_range

    assert metric_range("micro_mrr") == metric_range("MRR") == metric_range("hits@3") == (0.0, 1.0)
    assert metric_range("macro_mr") == (1.0, np.inf)
    assert metric_range("micro_zmrr") is None and metric_range("micro_amrr") is None and metric_range("p") is None


def test_an_error_names_the_destination_of_a_kgeval_temporary(tmp_path):
    """A temporary's name (and a temporary of a temporary, as a step writing atomically into a stage's file makes)
    is never shown: the error names the output it becomes."""
    from kgeval.errors import user_paths
    from kgeval.io.temps import make_part

    part = make_part(tmp_path / "graph.npz")
    assert part.parent == tmp_path and part.name.startswith(".kgeval-part-") and part.name.endswith("-graph.npz.part")
    assert user_paths(f"{part}: No space left on device") == f"{tmp_path / 'graph.npz'}: No space left on device"
    nested = make_part(part)
    assert user_paths(f"'{nested}'") == f"'{tmp_path / 'graph.npz'}'"
