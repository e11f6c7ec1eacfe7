"""Graphs at scale (kgeval.scale.synth): exact split sizes, distinct triples, long-tailed degrees, the same bytes
for a seed, and systems whose order by exact filtered MRR is the planted one."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.data.questions import AnswerIndex
from kgeval.metrics.ranks import micro_ranks
from kgeval.scale.engine import rank_blocks, split_questions
from kgeval.scale.synth import SHAPES, generate, load_graph, scaled, system, write_graph

SPEC = scaled(SHAPES["wikikg2"], 0.002)


@pytest.fixture(scope="module")
def graph():
    return generate(SPEC, seed=3, show_progress=False)


def test_sizes_distinct_and_disjoint(graph):
    assert SPEC.num_entities == 5001 and SPEC.train == 32218 and SPEC.test == 1197
    for split in ("train", "valid", "test"):
        assert len(graph[split]) == getattr(SPEC, split)
    allt = np.concatenate([graph[s] for s in ("train", "valid", "test", "hidden")]).astype(np.int64)
    assert len(np.unique(allt, axis=0)) == len(allt)  # distinct, so no triple is in two splits
    assert allt.min() >= 0 and allt[:, [0, 2]].max() < SPEC.num_entities and allt[:, 1].max() < SPEC.num_relations
    assert not (allt[:, 0] == allt[:, 2]).any()


def test_degrees_are_long_tailed(graph):
    deg = np.bincount(graph["train"][:, [0, 2]].ravel(), minlength=SPEC.num_entities)
    # a power law: the busiest entity holds hundreds of times the median degree, the top 1 % a large share
    assert deg.max() > 100 * max(np.median(deg), 1)
    assert np.sort(deg)[-SPEC.num_entities // 100:].sum() > 0.2 * deg.sum()


def test_same_seed_same_bytes_other_seed_other_graph(tmp_path):
    small = scaled(SHAPES["wikidata5m"], 0.0005)
    write_graph(tmp_path / "a.npz", small, seed=1)
    write_graph(tmp_path / "b.npz", small, seed=1)
    write_graph(tmp_path / "c.npz", small, seed=2)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    assert (tmp_path / "a.npz").read_bytes() != (tmp_path / "c.npz").read_bytes()
    g = load_graph(tmp_path / "a.npz")
    np.testing.assert_array_equal(g["train"], generate(small, seed=1, show_progress=False)["train"])


def test_systems_order_is_the_planted_one(graph):
    E, R = SPEC.num_entities, SPEC.num_relations
    test = graph["test"].astype(np.int64)
    questions, judged = split_questions(test, E, R)
    known = AnswerIndex(np.concatenate([graph["train"], graph["valid"]]).astype(np.int64), E, R)
    mrr = []
    for quality in range(5):
        r = rank_blocks(system(graph, quality), questions, judged, known, k=0, show_progress=False)
        ranks = micro_ranks(judged.q, r.score, r.n_gt, r.n_eq, r.n_candidates, judged.label == 1)
        mrr.append(float(np.mean(1.0 / ranks.realistic)))
    assert mrr == sorted(mrr, reverse=True)
    assert mrr[0] > 2 * mrr[-1] and mrr[-1] > 100 / E  # graded, and the worst still far above random


def test_write_columns_writes_the_bytes_of_write_rows(tmp_path):
    from kgeval.data.tsv import write_columns, write_rows

    names = np.array(["/s/e0", "/s/e1", "/m/ü"])
    cols = [names[[0, 2, 1]], np.array(["/r/a", "/r/b", "/r/a"]), np.array([3, 10, 0])]
    write_columns(tmp_path / "a.txt", cols)
    write_rows(tmp_path / "b.txt", list(zip(*[c.tolist() for c in cols])))
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    write_columns(tmp_path / "empty.txt", [np.array([], str)])
    assert (tmp_path / "empty.txt").read_bytes() == b""


def test_generation_logs_its_share_of_the_total(caplog):
    # the progress line counts distinct triples against all those wanted (the splits and the hidden 10 %), so
    # it has a share and a time left, not a bare count
    want = SPEC.train + SPEC.valid + SPEC.test + int(np.ceil(SPEC.hidden * (SPEC.train + SPEC.valid + SPEC.test)))
    with caplog.at_level("INFO", logger="kgeval.progress"):
        generate(SPEC, seed=3)
    lines = [r.getMessage() for r in caplog.records if "scale synth" in r.getMessage()]
    assert lines and f"{want:,}/{want:,} triples (100.0 %)" in lines[-1] and "left 0:00" in lines[-1]
