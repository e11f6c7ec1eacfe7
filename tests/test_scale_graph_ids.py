"""Issue 60, item 5: ``kgeval scale evaluate`` checks every id of a graph file (its triples, OGB's negatives)
and of its sample file against the counts when it reads them: one line naming the file, the array, the row and
the bound. Before, a test id at or above the entity count or OGB negatives out of range gave an IndexError
traceback, and a relation id -1 gave rc 0 and full tables (numpy's negative indexing)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_cli_safety import one_line_error

from kgeval.cli import main
from kgeval.errors import CorruptFileError
from kgeval.scale import store
from kgeval.scale.steps import graph_step
from kgeval.scale.store import check_ids, save_arrays

E, R = 9, 3


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """A graph file read from an ogbl-wikikg2 folder with OGB's negatives, and a DistMult model file for it."""
    d = tmp_path_factory.mktemp("ids")
    rng = np.random.default_rng(3)
    keys = rng.choice(E * R * E, size=30, replace=False)
    t = np.stack([keys // (R * E), keys // E % R, keys % E], 1)
    splits = {"train": t[:20], "valid": t[20:24], "test": t[24:]}
    (d / "kg" / "split" / "time").mkdir(parents=True)
    for name, x in splits.items():
        neg = {} if name == "train" else {"head_neg": rng.integers(0, E, (len(x), 4)),
                                          "tail_neg": rng.integers(0, E, (len(x), 4))}
        torch.save({"head": x[:, 0], "relation": x[:, 1], "tail": x[:, 2]} | neg, d / "kg" / "split" / "time" / f"{name}.pt")
    assert main(["scale", "graph", "--from", "wikikg2", str(d / "kg"), "--out", str(d / "g")]) == 0
    np.savez(d / "m.npz", model="distmult", entity=rng.normal(size=(E, 4)), relation=rng.normal(size=(R, 4)))
    return d / "g" / "graph.npz", d / "m.npz"


def _doctored(graph, out, **changes) -> None:
    """``graph`` with ``changes`` (array name: a function changing a copy of it in place, or a new value)."""
    with np.load(graph) as z:
        arrays = {n: z[n].copy() for n in z.files}
    for name, change in changes.items():
        if callable(change):
            change(arrays[name])
        else:
            arrays[name] = change
    save_arrays(out, arrays)


def _set(row, col, value):
    def change(a):
        a[row, col] = value
    return change


@pytest.mark.parametrize("changes, words", [
    ({"test": _set(0, 0, E)}, "array 'test' row 0 names entity 9, outside 0 to 8 (the graph's 9 entities)"),
    ({"test": _set(1, 1, -1)}, "array 'test' row 1 names relation -1, outside 0 to 2 (the graph's 3 relations)"),
    ({"train": _set(5, 2, 1000)}, "array 'train' row 5 names entity 1,000, outside 0 to 8"),
    ({"valid": _set(3, 1, R)}, "array 'valid' row 3 names relation 3, outside 0 to 2"),
    ({"test_tail_neg": _set(2, 3, E)}, "array 'test_tail_neg' row 2 names entity 9, outside 0 to 8"),
    ({"test_head_neg": _set(0, 0, -7)}, "array 'test_head_neg' row 0 names entity -7, outside 0 to 8"),
    ({"test_head_neg": np.zeros((2, 4), np.int32)}, "array 'test_head_neg' has shape (2, 4), expected a row per test"),
    ({"num_entities": np.array(0)}, "array 'num_entities' is 0: expected a positive whole number"),
    ({"num_relations": np.array([3, 3])}, "array 'num_relations' is [3, 3]: expected a positive whole number"),
    ({"test": np.zeros((3, 2), np.int32)}, "array 'test' is a 2-d int32 array of shape (3, 2), expected integer ids"),
    ({"num_entities": np.array(2**32)}, "4,294,967,296 entities and 3 relations: more than kgeval's int64 triple"),
])
def test_a_doctored_real_graph_is_one_line(real, tmp_path, capsys, changes, words):
    graph, model = real
    bad = tmp_path / "graph.npz"
    _doctored(graph, bad, **changes)
    line = one_line_error(capsys, main(["scale", "evaluate", str(bad), "--system", f"m={model}", "--out",
                                        str(tmp_path / "ev"), "--sample-size", "100", "--bootstrap", "100"]))
    assert line == f"kgeval: error: {bad}: {words}" or line.startswith(f"kgeval: error: {bad}: {words}"), line
    assert not (tmp_path / "ev" / "exact.csv").exists()


def test_the_real_graph_itself_evaluates(real, tmp_path):
    graph, model = real
    assert main(["scale", "evaluate", str(graph), "--system", f"m={model}", "--out", str(tmp_path / "ev"),
                 "--sample-size", "100", "--bootstrap", "100"]) == 0


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    path = tmp_path_factory.mktemp("synth") / "graph.npz"
    graph_step("wikikg2", 0.0005, 0, path)
    return path


@pytest.mark.parametrize("name, col, value, words", [
    ("test", 2, "E", "array 'test' row 4 names entity {E:,}, outside 0 to {top_e:,}"),
    ("test", 1, -1, "array 'test' row 4 names relation -1, outside 0 to {top_r:,}"),
    ("hidden", 0, "E", "array 'hidden' row 4 names entity {E:,}, outside 0 to {top_e:,}"),
])
def test_a_doctored_synthetic_graph_is_one_line(synthetic, tmp_path, capsys, name, col, value, words):
    with np.load(synthetic) as z:
        n_e, n_r = len(z["z"]), len(z["w"])
    _doctored(synthetic, tmp_path / "graph.npz", **{name: _set(4, col, n_e if value == "E" else value)})
    line = one_line_error(capsys, main(["scale", "evaluate", str(tmp_path / "graph.npz"), "--systems", "2",
                                        "--out", str(tmp_path / "ev"), "--sample-size", "100"]))
    assert line.startswith(f"kgeval: error: {tmp_path / 'graph.npz'}: {words.format(E=n_e, top_e=n_e - 1, top_r=n_r - 1)}"), line


def test_check_ids_names_the_row_across_pieces(tmp_path, monkeypatch):
    """The check reads an array in pieces (a mapped one is never held whole): the row it names is the file's."""
    monkeypatch.setattr(store, "_CHECK_STEP", 9)  # 3 rows of 3 ids a piece
    a = np.zeros((10, 3), np.int64)
    check_ids(tmp_path / "g.npz", "test", a, [1, 1, 1], ["entity", "relation", "entity"])
    a[7, 2] = 1
    with pytest.raises(CorruptFileError, match=r"g\.npz: array 'test' row 7 names entity 1, outside 0 to 0 \(the "
                                               r"graph's 1 entities\)"):
        check_ids(tmp_path / "g.npz", "test", a, [1, 1, 1], ["entity", "relation", "entity"])


def test_a_doctored_sample_is_one_line(synthetic, tmp_path):
    from kgeval.scale.steps import rank_shard_step

    save_arrays(tmp_path / "s.npz", {"idx": np.array([0, -1]), "plan": np.array([0]), "exact": np.array(False)})
    with pytest.raises(CorruptFileError, match=r"s\.npz: array 'idx' row 1 names answer -1, outside 0 to "):
        rank_shard_step(synthetic, tmp_path / "s.npz", 1, 0, 1, 5, 64, 16, 0, tmp_path / "out.npz")
