"""Readers of ogbl-wikikg2's and Wikidata5M's layouts, on small files of those layouts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.errors import InputError, KgevalError
from kgeval.scale.readers import read_wikidata5m, read_wikikg2


def test_wikikg2_folder(tmp_path):
    split = tmp_path / "split" / "time"
    split.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name, n in (("train", 6), ("valid", 2), ("test", 3)):
        d = {"head": rng.integers(0, 9, n), "relation": rng.integers(0, 3, n), "tail": rng.integers(0, 9, n)}
        if name != "train":
            d["head_neg"] = rng.integers(0, 9, (n, 5))
            d["tail_neg"] = rng.integers(0, 9, (n, 5))
        torch.save(d, split / f"{name}.pt")
    g = read_wikikg2(tmp_path)
    d = torch.load(split / "test.pt", weights_only=False)
    np.testing.assert_array_equal(g["test"], np.stack([d["head"], d["relation"], d["tail"]], 1))
    np.testing.assert_array_equal(g["test_tail_neg"], d["tail_neg"])
    allt = np.concatenate([g["train"], g["valid"], g["test"]])
    assert g["num_entities"] == allt[:, [0, 2]].max() + 1 and g["num_relations"] == allt[:, 1].max() + 1
    (split / "valid.pt").unlink()
    with pytest.raises(KgevalError, match="valid.pt: not found"):
        read_wikikg2(tmp_path)


def test_wikidata5m_files(tmp_path):
    rows = {"train": ["Q1\tP31\tQ5", "Q2\tP31\tQ5", "Q1\tP17\tQ2"], "valid": ["Q5\tP279\tQ1"], "test": ["Q7\tP31\tQ5"]}
    for split, lines in rows.items():
        (tmp_path / f"wikidata5m_transductive_{split}.txt").write_text("\n".join(lines) + "\n")
    g = read_wikidata5m(tmp_path)
    assert g["entities"] == ["Q1", "Q2", "Q5", "Q7"] and g["relations"] == ["P31", "P17", "P279"]
    assert g["train"].tolist() == [[0, 0, 2], [1, 0, 2], [0, 1, 1]]
    assert g["valid"].tolist() == [[2, 2, 0]] and g["test"].tolist() == [[3, 0, 2]]
    assert (g["num_entities"], g["num_relations"]) == (4, 3)
    (tmp_path / "wikidata5m_transductive_test.txt").write_text("Q7\tP31\n")
    with pytest.raises(InputError, match="test.txt:1: 2 tab-separated fields"):
        read_wikidata5m(tmp_path)


def test_wikidata5m_line_with_too_many_fields_is_one_line_error(tmp_path):
    for split in ("train", "valid", "test"):
        (tmp_path / f"wikidata5m_transductive_{split}.txt").write_text("Q1\tP1\tQ2\nQ2\tP1\tQ3\n")
    (tmp_path / "wikidata5m_transductive_train.txt").write_text("Q1\tP1\tQ2\nQ2\tP1\tQ3\tQ4\n")
    with pytest.raises(InputError, match=r"train.txt:2: 4 tab-separated fields, expected 3"):
        read_wikidata5m(tmp_path)


def _first_appearance(files: dict[str, str]) -> dict:
    """An independent reading: Python's split and a dict numbering ids as they first appear, over the heads of
    train, valid, test and then their tails (relations apart)."""
    rows = {s: [line.split("\t") for line in text.splitlines() if line] for s, text in files.items()}
    ent: dict[str, int] = {}
    for col in (0, 2):
        for s in ("train", "valid", "test"):
            for r in rows[s]:
                ent.setdefault(r[col], len(ent))
    rel: dict[str, int] = {}
    for s in ("train", "valid", "test"):
        for r in rows[s]:
            rel.setdefault(r[1], len(rel))
    out = {s: np.array([[ent[h], rel[r], ent[t]] for h, r, t in rows[s]], np.int64).reshape(-1, 3) for s in rows}
    return out | {"entities": list(ent), "relations": list(rel), "num_entities": len(ent), "num_relations": len(rel)}


@pytest.mark.parametrize("files", [
    {"train": "Q5\tP31\tQ9\nQ9\tP17\tQ5\nQ7\tP31\tQ5\n", "valid": "Q7\tP17\tQ9\n", "test": "Q2\tP31\tQ9\nQ5\tP279\tQ2\n"},
    # Windows line ends, a blank line, an empty split, no final line end
    {"train": "Q5\tP31\tQ9\r\n\r\nQ9\tP17\tQ5\r\n", "valid": "", "test": "Q2\tP31\tQ9"},
    # ids are any strings: spaces, quotes (never quoting), non-ASCII
    {"train": "a b\tr 1\tc\n\"q\"\tr\t'x'\nü\tr\tQ1\n", "valid": "Q1\tr\ta b\n", "test": "c\tr 1\tü\n"},
])
def test_wikidata5m_ids_in_order_of_first_appearance(tmp_path, files):
    for split, text in files.items():
        (tmp_path / f"wikidata5m_transductive_{split}.txt").write_text(text, encoding="utf-8", newline="")
    got, want = read_wikidata5m(tmp_path), _first_appearance(files)
    assert got.keys() == want.keys()
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert got[key].dtype == np.int64
            np.testing.assert_array_equal(got[key], value)
        else:
            assert got[key] == value, key


@pytest.mark.parametrize("train, words", [
    ("Q1\tP1\tQ2\n\nQ2\t\tQ3\n", "train.txt:3: an empty field"),  # line numbers count blank lines
    ("Q1\tP1\tQ2\nQ2\tP1\n", "train.txt:2: 2 tab-separated fields"),
    (b"Q1\tP1\tQ\xff\n", "train.txt: In CSV column #2: CSV conversion error to string: invalid UTF8 data"),
])
def test_wikidata5m_bad_lines_are_named(tmp_path, train, words):
    for split in ("valid", "test"):
        (tmp_path / f"wikidata5m_transductive_{split}.txt").write_text("Q1\tP1\tQ2\n")
    path = tmp_path / "wikidata5m_transductive_train.txt"
    path.write_bytes(train) if isinstance(train, bytes) else path.write_text(train)
    with pytest.raises(InputError) as err:
        read_wikidata5m(tmp_path)
    assert words in str(err.value) and "\n" not in str(err.value)
