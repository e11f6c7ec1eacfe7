"""The graph-kernel baseline GK of Knowledge Persistence's Table 2 (kgeval.kp.kernel): edge lengths, sampling,
the shortest-path kernel by hand and against an independent implementation (scipy's shortest paths)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("grakel")

from kgeval.kp.kernel import (  # noqa: E402
    edge_lengths,
    graph_kernel_distance,
    kernel_distance,
    sample_subgraph,
    to_grakel,
)


def edges(pairs, weights):
    u, v = np.array(pairs, dtype=np.int64).T
    return u, v, np.asarray(weights, float)


def test_edge_lengths_by_hand():
    assert edge_lengths(np.array([0.0, 0.19, 0.2, 1.0, 1.99, 2.0]), 10).tolist() == [1, 1, 2, 6, 10, 10]
    assert edge_lengths(np.array([0.0, 2.0]), 1).tolist() == [1, 1]


def test_shortest_path_kernel_by_hand():
    # path a-b-c with lengths (1, 2): shortest paths 1, 2, 3; with lengths (2, 2): 2, 2, 4.
    # Histograms (per unordered pair) {1, 2, 3} and {2, 2, 4}: k(1,2) = 2, k(1,1) = 3, k(2,2) = 5;
    # the normalisation cancels GraKeL's count of both orders: k̂ = 2 / √15
    bins = 10  # weight w' ↦ 1 + ⌊5 w'⌋: 0 → 1, 0.2 → 2
    g1 = to_grakel(edges([(0, 1), (1, 2)], [0.0, 0.2]), bins)
    g2 = to_grakel(edges([(0, 1), (1, 2)], [0.2, 0.2]), bins)
    k_hat = 2 / math.sqrt(15)
    assert kernel_distance(g1, g2) == pytest.approx(math.sqrt(2 - 2 * k_hat), abs=1e-9)
    assert kernel_distance(g1, g1) == pytest.approx(0.0, abs=1e-7)


def _sp_histogram(graph, bins):
    """Shortest-path length histogram of an undirected weighted graph with scipy (independent of GraKeL)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    u, v, w = graph
    nodes, inv = np.unique(np.concatenate([u, v]), return_inverse=True)
    a, b = inv[: len(u)], inv[len(u):]
    n = len(nodes)
    m = coo_matrix((edge_lengths(w, bins).astype(float), (a, b)), shape=(n, n)).tocsr()
    d = shortest_path(m, directed=False)
    iu = np.triu_indices(n, 1)
    lengths = d[iu][np.isfinite(d[iu])]
    return np.bincount(lengths.astype(int))


def test_shortest_path_kernel_equals_scipy_histograms():
    rng = np.random.default_rng(3)
    for _ in range(4):
        graphs = []
        for _g in range(2):
            u, v = rng.integers(0, 30, 45), rng.integers(0, 30, 45)
            keep = u != v
            u, v = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
            pairs = np.unique(np.stack([u, v], 1), axis=0)
            graphs.append((pairs[:, 0], pairs[:, 1], rng.uniform(0, 2, len(pairs))))
        h1, h2 = (_sp_histogram(g, 10) for g in graphs)
        n = max(len(h1), len(h2))
        h1, h2 = np.pad(h1, (0, n - len(h1))), np.pad(h2, (0, n - len(h2)))
        k_hat = h1 @ h2 / math.sqrt((h1 @ h1) * (h2 @ h2))
        expected = math.sqrt(max(0.0, 2 - 2 * k_hat))
        assert kernel_distance(to_grakel(graphs[0], 10), to_grakel(graphs[1], 10)) == pytest.approx(expected,
                                                                                                   abs=1e-9)


def test_sample_subgraph_is_induced_on_sampled_edges():
    rng = np.random.default_rng(0)
    u = np.arange(0, 100)
    g = (u, u + 1, rng.uniform(0, 2, 100))  # a path 0-1-…-100
    small = sample_subgraph(g, 500, rng)
    assert all(np.array_equal(a, b) for a, b in zip(small, g))  # fewer edges than asked: the whole graph
    sub = sample_subgraph(g, 10, rng)
    assert 10 <= len(sub[0]) <= 19  # the 10 drawn edges plus edges between their endpoints (neighbours)
    nodes = set(sub[0]) | set(sub[1])
    full = {(int(a), int(b)) for a, b in zip(g[0], g[1]) if a in nodes and b in nodes}
    assert {(int(a), int(b)) for a, b in zip(sub[0], sub[1])} == full


def test_graph_kernel_distance_seeded_identical_and_empty():
    rng = np.random.default_rng(1)
    u, v = rng.integers(0, 200, 400), rng.integers(0, 200, 400)
    keep = u < v
    pos = (u[keep], v[keep], rng.uniform(1, 2, keep.sum()))
    neg = (u[keep], v[keep], rng.uniform(0, 1, keep.sum()))
    a = graph_kernel_distance(pos, neg, edges=50, runs=3, seed=7)
    assert a == graph_kernel_distance(pos, neg, edges=50, runs=3, seed=7) and a > 0.1
    assert graph_kernel_distance(pos, pos, edges=10**6, runs=2) == pytest.approx(0.0, abs=1e-7)
    wl = graph_kernel_distance(pos, neg, kernel="weisfeiler_lehman", edges=50, runs=3, seed=7)
    assert 0 < wl <= math.sqrt(2) + 1e-9
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    assert math.isnan(graph_kernel_distance(pos, empty))
    with pytest.raises(ValueError, match="unknown graph kernel 'rbf'"):
        graph_kernel_distance(pos, neg, kernel="rbf")


def test_kp_graphs_are_kps_own_graphs(synth_kg):
    """GK compares the very graphs KP compares: same edge counts and the same joint normalisation."""
    import torch

    from kgeval.kp.persistence import knowledge_persistence, kp_graphs
    from kgeval.models import build_model

    torch.manual_seed(0)
    model = build_model("DistMult", synth_kg.num_entities, synth_kg.num_relations, dim=8).eval()
    r = knowledge_persistence(model, synth_kg, "test", sample_multiple=0.5, seed=4)
    pos, neg = kp_graphs(model, synth_kg, "test", sample_multiple=0.5, seed=4)
    assert (len(pos[2]), len(neg[2])) == (r.n_edges_positive, r.n_edges_negative)
    both = np.concatenate([pos[2], neg[2]])
    assert both.min() == 0.0 and both.max() == pytest.approx(2.0)
    assert np.all(pos[0] < pos[1]) and np.all(neg[0] < neg[1])
