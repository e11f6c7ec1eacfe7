"""The graph-kernel baseline of Knowledge Persistence's Table 2 (GK(train), GK(test); Bastos et al. 2023, §5).

The paper compares the same two score-weighted graphs as KP, G+ (true triples) and G− (their corruptions), with a
graph kernel instead of persistent homology: "the shortest path kernel (Borgwardt and Kriegel, 2005) ... we sample
nodes (Borgwardt et al., 2007) and apply the kernel on the sampled graph, averaging multiple runs". Here, with
GraKeL's kernels:

1. **Graphs**: KP's own G+ and G− (``persistence.kp_graphs``: the same positives, negatives and scores for the
   same seed), edge weights normalised jointly to [0, 2].
2. **Sampling** (per run): ``edges`` edges drawn uniformly from each graph; the sampled graph is the subgraph
   induced on their endpoints (every edge of the graph between two sampled vertices). Drawing vertices uniformly
   instead would leave almost no edges: KP's graphs have about as many edges as the KG has entities.
3. **Edge lengths**: each weight w' becomes an integer length 1 + ⌊w' · bins / 2⌋ (at most ``bins``), so path
   lengths are comparable across the two graphs (the shortest-path kernel counts equal path lengths).
4. **Kernel**: ``shortest_path`` (the paper's; GraKeL ``ShortestPath`` over the lengths, vertices unlabelled) or
   ``weisfeiler_lehman`` (GraKeL ``WeisfeilerLehman`` with a vertex histogram, 3 iterations, each vertex labelled
   with the length of its best incident edge), normalised: k̂ = k(G+, G−) / √(k(G+, G+) · k(G−, G−)).
5. **Distance**: √(2 − 2k̂), the kernel-induced distance of the normalised feature vectors (0 for identical
   graphs), averaged over ``runs`` runs. A graph without edges gives NaN (no kernel value).
"""

from __future__ import annotations

from typing import Any

import numpy as np

KERNELS = ("shortest_path", "weisfeiler_lehman")
Edges = tuple[np.ndarray, np.ndarray, np.ndarray]  # (u, v, w): undirected edges u < v and their weights


def edge_lengths(w_norm: np.ndarray, bins: int) -> np.ndarray:
    """Integer lengths 1..bins of weights normalised to [0, 2]."""
    return np.minimum(1 + np.floor(np.asarray(w_norm, float) * bins / 2.0), bins).astype(np.int64)


def sample_subgraph(graph: Edges, edges: int, rng: np.random.Generator) -> Edges:
    """The subgraph induced on the endpoints of ``edges`` uniformly drawn edges (the whole graph if smaller)."""
    u, v, w = graph
    if len(w) <= edges:
        return u, v, w
    pick = rng.choice(len(w), size=edges, replace=False)
    nodes = np.unique(np.concatenate([u[pick], v[pick]]))
    keep = np.isin(u, nodes) & np.isin(v, nodes)
    return u[keep], v[keep], w[keep]


def to_grakel(graph: Edges, bins: int) -> Any:
    """A GraKeL graph: both directions of every edge with its integer length, each vertex labelled with the
    length of its best (longest-weight) incident edge."""
    from grakel import Graph

    u, v, w = graph
    length = edge_lengths(w, bins)
    nodes, inv = np.unique(np.concatenate([u, v]), return_inverse=True)
    best = np.zeros(len(nodes), np.int64)
    np.maximum.at(best, inv, np.concatenate([length, length]))
    a, b = inv[: len(u)], inv[len(u):]
    # GraKeL takes a dict of weighted edges: built once per sampled graph (a few hundred edges)
    edge_dict = {**dict(zip(zip(a.tolist(), b.tolist()), length.tolist())),
                 **dict(zip(zip(b.tolist(), a.tolist()), length.tolist()))}
    return Graph(edge_dict, node_labels=dict(enumerate(best.tolist())))


def kernel_distance(g_pos: Any, g_neg: Any, kernel: str = "shortest_path") -> float:
    """√(2 − 2k̂) for the normalised kernel value k̂ of two GraKeL graphs."""
    from grakel.kernels import ShortestPath, VertexHistogram, WeisfeilerLehman

    if kernel == "shortest_path":
        k = ShortestPath(normalize=True, with_labels=False)
    elif kernel == "weisfeiler_lehman":
        k = WeisfeilerLehman(n_iter=3, normalize=True, base_graph_kernel=VertexHistogram)
    else:
        raise ValueError(f"unknown graph kernel {kernel!r}; known: {', '.join(KERNELS)}")
    m = k.fit_transform([g_pos, g_neg])
    return float(np.sqrt(max(0.0, 2.0 - 2.0 * float(m[0, 1]))))


def graph_kernel_distance(pos: Edges, neg: Edges, kernel: str = "shortest_path", edges: int = 200,
                          runs: int = 5, bins: int = 10, seed: int = 0) -> float:
    """GK of the module docstring: the mean kernel distance between sampled subgraphs of G+ and G− over
    ``runs`` runs (NaN if either graph has no edge)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown graph kernel {kernel!r}; known: {', '.join(KERNELS)}")
    if len(pos[2]) == 0 or len(neg[2]) == 0:
        return float("nan")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 41]))
    values = [kernel_distance(to_grakel(sample_subgraph(pos, edges, rng), bins),
                              to_grakel(sample_subgraph(neg, edges, rng), bins), kernel) for _ in range(runs)]
    return float(np.mean(values))
