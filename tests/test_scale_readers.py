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
    with pytest.raises(InputError, match=r"train.txt: .*line 2"):
        read_wikidata5m(tmp_path)
