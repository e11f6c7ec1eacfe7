"""Issue 60, items 2 and 9: the scale stage's readers of real graphs read nothing without a bound. OGB's mapping
``.csv.gz`` is streamed through kgeval.limits before pandas holds it: its rows against what the split files allow
(a row per id), what it expands to against the memory there is; Wikidata5M's split files likewise, NUL bytes
refused at once; ids that would silently make new entities (white space, NUL) or a huge id space (one stray id
2^33) are refused in one line naming the file and the line or triple."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from test_cli_safety import one_line_error
from test_input_limits import GB, _kgeval

from kgeval.cli import main
from kgeval.errors import InputError
from kgeval.scale.readers import read_wikidata5m, read_wikikg2

ONE = {"train": np.array([[0, 0, 1], [1, 1, 2]]), "valid": np.array([[2, 0, 3]]), "test": np.array([[3, 1, 0]])}


def _wikikg2(root: Path, splits=ONE, rows: dict[str, int] | None = None) -> Path:
    """An ogbl-wikikg2 folder; ``rows``: per mapping file ("nodeidx2entityid", "reltype2relid") its rows."""
    (root / "split" / "time").mkdir(parents=True)
    for name, t in splits.items():
        torch.save({"head": t[:, 0], "relation": t[:, 1], "tail": t[:, 2]}, root / "split" / "time" / f"{name}.pt")
    if rows:
        (root / "mapping").mkdir()
        for name, n in rows.items():
            head = "node idx,entity id" if name.startswith("node") else "reltype,rel id"
            with gzip.open(root / "mapping" / f"{name}.csv.gz", "wt", compresslevel=1) as fh:
                fh.write(head + "\n")
                for start in range(0, n, 1 << 20):  # in pieces: the writer's memory stays small too
                    fh.write("".join(f"{i},Q{i}\n" for i in range(start, min(n, start + (1 << 20)))))
    return root


def test_a_mapping_of_the_graph_reads(tmp_path):
    g = read_wikikg2(_wikikg2(tmp_path / "kg", rows={"nodeidx2entityid": 6, "reltype2relid": 2}))
    assert g["entities"] == [f"Q{i}" for i in range(6)] and g["num_entities"] == 6 and g["num_relations"] == 2


def test_a_mapping_with_far_more_rows_than_the_graph_has_ids_is_refused_as_it_streams(tmp_path):
    """The split files name 4 entities: a mapping may have at most 1,000,004 rows; one of 1,100,000 rows (a
    1.5 MB gzip here; 200 M rows took 4.77 GB before) is refused at the first row past that, before pandas
    reads any of it."""
    root = _wikikg2(tmp_path / "kg", rows={"nodeidx2entityid": 1_100_000, "reltype2relid": 2})
    with pytest.raises(InputError) as err:
        read_wikikg2(root)
    msg = str(err.value)
    assert msg.startswith(f"{root / 'mapping' / 'nodeidx2entityid.csv.gz'}:1000006: more than 1,000,005 lines: "
                          "the split files name 4 distinct entities"), msg
    assert "KGEVAL_MAX_IDS=<entities>" in msg and "\n" not in msg


def test_an_explicit_id_limit_bounds_the_mapping(tmp_path, monkeypatch):
    root = _wikikg2(tmp_path / "kg", rows={"nodeidx2entityid": 6, "reltype2relid": 2})
    monkeypatch.setenv("KGEVAL_MAX_IDS", "5")
    with pytest.raises(InputError, match=r"nodeidx2entityid\.csv\.gz:7: more than 6 lines: the limit KGEVAL_MAX_IDS"):
        read_wikikg2(root)
    monkeypatch.setenv("KGEVAL_MAX_IDS", "6")
    assert read_wikikg2(root)["num_entities"] == 6


def test_a_mapping_is_weighed_against_the_memory_there_is(tmp_path, monkeypatch):
    root = _wikikg2(tmp_path / "kg", rows={"nodeidx2entityid": 20_000, "reltype2relid": 2})
    monkeypatch.setenv("KGEVAL_MAX_MEMORY_MB", "1")
    with pytest.raises(InputError) as err:
        read_wikikg2(root)
    size = len("node idx,entity id\n") + sum(len(f"{i},Q{i}\n") for i in range(20_000))  # what it expands to
    # 2 bytes a byte and 128 a line (20,001 lines)
    assert str(err.value) == (f"{root / 'mapping' / 'nodeidx2entityid.csv.gz'}: its 20,000 rows need about "
                              f"{2 * size + 128 * 20_001:,} bytes of memory, more than the 1,048,576 available "
                              "(if the file is right, free memory or set KGEVAL_MAX_MEMORY_MB=<MB> to what kgeval "
                              "may use)")


def test_a_mapping_with_a_nul_byte_is_refused_at_its_line(tmp_path):
    root = _wikikg2(tmp_path / "kg")
    (root / "mapping").mkdir()
    with gzip.open(root / "mapping" / "nodeidx2entityid.csv.gz", "wb") as fh:
        fh.write(b"node idx,entity id\n0,Q0\n1,Q\x001\n" + b"\0" * 10_000_000)
    with pytest.raises(InputError, match=r"nodeidx2entityid\.csv\.gz:3: holds a NUL byte: not a text file"):
        read_wikikg2(root)


def test_one_stray_id_without_a_mapping_is_refused(tmp_path, capsys):
    """Item 9: one id 2^33 in a folder without mapping/ made an 8.6-billion-entity graph."""
    splits = dict(ONE, valid=np.array([[2, 0, 3], [1, 0, 2**33]]))
    root = _wikikg2(tmp_path / "kg", splits)
    line = one_line_error(capsys, main(["scale", "graph", "--from", "wikikg2", str(root), "--out",
                                        str(tmp_path / "out")]))
    assert line == (f"kgeval: error: {root / 'split' / 'time' / 'valid.pt'}: triple 1 names id 8,589,934,592, more "
                    "than 1,000,005 entities: the split files name 5 distinct entities, and a graph may have at "
                    "most twice those or 1,000,000 more (a stray id, or a mapping of another graph; if it is "
                    "right, set KGEVAL_MAX_IDS=<entities>)")
    assert not (tmp_path / "out" / "graph.npz").exists()
    # ids a little beyond those in use are a graph's entities in no triple: read
    splits = dict(ONE, valid=np.array([[2, 0, 3], [1, 0, 9]]))
    assert read_wikikg2(_wikikg2(tmp_path / "kg2", splits))["num_entities"] == 10


def _wikidata5m(root: Path, train: bytes) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "wikidata5m_transductive_train.txt").write_bytes(train)
    for split in ("valid", "test"):
        (root / f"wikidata5m_transductive_{split}.txt").write_text("Q1\tP1\tQ2\n")
    return root


@pytest.mark.parametrize("train, words", [
    (b"Q1\tP1\tQ2\nQ2\tP1\tQ3 \n", "train.txt:2: the tail 'Q3 ' begins or ends with white space"),
    (b"Q1\tP1\tQ2\n\n Q2\tP1\tQ3\n", "train.txt:3: the head ' Q2' begins or ends with white space"),
    (b"Q1\tP1\tQ2\nQ2\tP1 \tQ3\r\n", "train.txt:2: the relation 'P1 ' begins or ends with white space"),
    (b"Q1\tP1\tQ2\nQ2\tP1\tQ\x003\n", "train.txt:2: holds a NUL byte: not a text file"),
])
def test_wikidata5m_ids_that_would_be_new_entities_are_refused(tmp_path, train, words):
    """Item 9: "Q3 " and "Q\\x003" became entities apart from "Q3"."""
    with pytest.raises(InputError) as err:
        read_wikidata5m(_wikidata5m(tmp_path, train))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_wikidata5m_split_files_are_bounded(tmp_path, monkeypatch):
    root = _wikidata5m(tmp_path, b"Q1\tP1\tQ2\n" * 50)
    monkeypatch.setenv("KGEVAL_MAX_ROWS", "40")
    with pytest.raises(InputError, match=r"train\.txt:41: more than 40 lines, over the limit of 40 lines"):
        read_wikidata5m(root)
    monkeypatch.setenv("KGEVAL_MAX_ROWS", "50")
    monkeypatch.setenv("KGEVAL_MAX_MEMORY_MB", "1")
    assert read_wikidata5m(root)["train"].shape == (50, 3)  # 52 lines of 9 bytes: about 2 kB to hold
    (root / "wikidata5m_transductive_train.txt").write_bytes(b"Q1\tP1\tQ2\n" * 50_000)
    monkeypatch.delenv("KGEVAL_MAX_ROWS")
    with pytest.raises(InputError, match=r"train\.txt: the split files' 50,002 lines need about 2,100,084 bytes"):
        read_wikidata5m(root)


def test_a_huge_nul_split_file_is_refused_in_constant_memory(tmp_path):
    """A 5 GB NUL file given as Wikidata5M's train split (2 GB took 2.24 GB before, Arrow reading it whole):
    refused at its first line under a 3 GB address-space limit, the size limit raised above it."""
    root = _wikidata5m(tmp_path / "w5m", b"")
    os.truncate(root / "wikidata5m_transductive_train.txt", 5 * GB)  # sparse: NUL bytes never written
    rc, err, _ = _kgeval(["scale", "graph", "--from", "wikidata5m", str(root), "--out", str(tmp_path / "out")],
                         tmp_path, {"KGEVAL_MAX_INPUT_MB": "8192"}, address_space=3 * GB)
    assert rc != 0 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (f"kgeval: error: {root / 'wikidata5m_transductive_train.txt'}:1: holds "
                                            "a NUL byte: not a text file"), err
