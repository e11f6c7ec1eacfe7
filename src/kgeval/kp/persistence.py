"""Knowledge Persistence (KP; Bastos et al., 2023): a topological proxy of the ranking metrics.

KP compares the topology of two graphs whose edge weights are a model's scores: G+ built from true triples and
G− from corrupted ones. A model that separates true from false triples gives the two graphs different
persistence diagrams, so a higher KP should mean a better model (positive correlation with MRR and Hits@k,
negative with MR). The nine steps, as the project's specification (``shared/specs/knowledge-persistence.md``)
states them, each vectorised:

1. **Positives**: the triples of the evaluated split, subsampled without replacement to
   ``round(c · |V|)`` triples (c = ``sample_multiple``, |V| = the number of entities) when the split is larger;
   a split with fewer triples is used whole (``n_positive < n_requested`` in the result records it).
2. **Negatives**: one corruption per positive: its head or its tail (probability ½ each) replaced by a
   uniformly drawn entity; a corruption that is a known triple (train ∪ valid ∪ test) is redrawn, so no negative
   is ever a known triple (the positive itself included). A triple none of whose redraws succeed within
   ``max_rounds`` rounds is an error (it only happens on graphs so small that nearly every corruption is known).
3. **Scores**: ``model.score_spo`` in batches, one score per triple (higher = more plausible; reciprocal
   models score the triple in its forward direction). A NaN or infinite score is a ``ScoreError`` naming the
   model, the split and the triple.
4. **Graphs**: entities are vertices, each triple gives the undirected edge {h, t}; several triples on the same
   pair keep the best (largest) score; self-loops (h = t) are dropped — they never merge two components, so
   they cannot change a 0-dimensional diagram.
5. **Normalisation**: the weights of G+ and G− are mapped jointly to [0, 2] by w' = 2 (w − m) / (M − m), m and
   M the minimum and maximum over both graphs. If M = m every score is equal, the graphs cannot be told apart
   by their weights, and KP is **0** by definition (``degenerate`` says why).
6. **Filtrations**: a sublevel filtration (edge e enters at w'_e) and a superlevel one (edges enter in
   decreasing weight: filtration value −w'_e). Vertices enter at the lowest value of the filtration's range
   (0 for the sublevel, −2 for the superlevel filtration), the same for both graphs, so the birth coordinates
   of G+ and G− are comparable.
7. **Diagrams**: 0-dimensional persistence of each filtration with gudhi (``SimplexTree`` with the vertices
   and the edges, ``compute_persistence`` then the dimension-0 intervals, which is what ``persistence()``
   returns for dimension 0), keeping zero-length intervals (``min_persistence=-1``) and dropping the intervals
   that never die. The finite deaths are then exactly the merge values of Kruskal's minimum (sublevel) or
   maximum (superlevel, negated) spanning forest. PD(G) is the concatenation of the sublevel and superlevel
   diagrams, an (n, 2) array of (birth, death) points. Isolated vertices only give infinite intervals, so only
   the vertices that carry an edge are inserted.
8. **Distance**: POT's ``ot.sliced_wasserstein_distance`` between PD(G+) and PD(G−) as uniformly weighted 2-D
   point clouds, ``projections`` random directions (50) drawn from a fixed seed, power ``p`` (2). If either
   diagram is empty (a graph without edges) the distance is **0** by definition.
9. **KP** is that distance.

**Corrections of the authors' slips** (the published code, ``ansonb/Knowledge_Persistence``, differs from the
paper's description; this module implements the paper's intent):

* *one score per triple*: the published batching reused the scores of the first batch for every batch; here
  every triple is scored and the count of scores is checked against the count of triples;
* *every edge counts (symmetric)*: the published sparse distance matrix handed to ripser kept only its upper
  triangle, dropping about half the edges; here each triple is one undirected edge {h, t} whatever the order of
  h and t, and the SimplexTree holds every edge;
* *fixed projection seed*: the published sliced-Wasserstein projections were unseeded, so KP changed from run
  to run; here the projections come from a seed derived from ``seed``, and the whole computation (samples,
  negatives, projections) is reproducible for a fixed seed;
* *superlevel filtration by negating the weights*: the published "superlevel" diagram mirrored the ranks of
  the weights; here the superlevel filtration is the sublevel filtration of the negated weights;
* *negatives corrupt the evaluated triples*: the published negatives were corruptions of random KG triples;
  here negative i is a corruption of positive i, with known triples rejected.

Seeds: one integer ``seed`` feeds ``numpy.random.SeedSequence(seed)``, whose three children draw the positives,
the negatives and the projection seed, so changing the sample size does not change the projections.

Edge cases are errors or documented values, never crashes: an empty split is a ``KPError``; a split smaller
than c·|V| is used whole; NaN/inf scores are a ``ScoreError``; all-equal scores give KP = 0
(``degenerate="all scores equal"``); graphs without edges (every triple a self-loop) give KP = 0
(``degenerate="empty diagram"``).

The geometric baselines of the paper (Sharma et al., 2018) are here too: **conicity**, the average cosine
between each entity embedding and the mean entity embedding, and the **average vector length** (AVL), the mean
Euclidean norm of the entity embeddings — both over all entities of ``model.entity_embeddings()``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import gudhi
import numpy as np
import ot
import torch

from ..data.kg import KnowledgeGraph, triple_keys
from ..errors import KgevalError, ScoreError

log = logging.getLogger(__name__)

STEPS = ("sampling", "scoring", "diagrams", "distance")


class KPError(KgevalError):
    """Knowledge Persistence cannot be computed for this input (an empty split, uncorruptible triples)."""


@dataclass
class KPResult:
    """KP of one model on one split, with what produced it and how long each step took."""

    value: float
    split: str
    model: str
    n_requested: int  # round(c · |V|)
    n_positive: int  # positives used (the split whole when it is smaller than requested)
    n_negative: int
    n_edges_positive: int  # distinct undirected pairs of G+ (self-loops dropped)
    n_edges_negative: int
    n_points_positive: int  # points of PD(G+) (sublevel + superlevel)
    n_points_negative: int
    score_min: float
    score_max: float
    params: dict[str, Any]
    seconds: dict[str, float] = field(default_factory=dict)
    degenerate: str | None = None  # why KP is 0 by definition, if it is

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- step 1 and 2: sampling ------------------------------------------------------------------------------------
def known_keys(kg: KnowledgeGraph) -> np.ndarray:
    """Sorted unique keys of every known triple (train ∪ valid ∪ test)."""
    return np.unique(triple_keys(kg.known(), kg.num_entities, kg.num_relations))


def _is_known(keys: np.ndarray, known: np.ndarray) -> np.ndarray:
    if len(known) == 0:
        return np.zeros(len(keys), bool)
    pos = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    return known[pos] == keys


def sample_positives(triples: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows drawn without replacement (in their original order), or all rows if there are fewer."""
    if len(triples) <= n:
        return np.asarray(triples, dtype=np.int64).copy()
    idx = np.sort(rng.choice(len(triples), size=n, replace=False))
    return np.asarray(triples[idx], dtype=np.int64)


def corrupt(positives: np.ndarray, num_entities: int, num_relations: int, known: np.ndarray,
            rng: np.random.Generator, max_rounds: int = 100) -> np.ndarray:
    """One corruption per positive (head or tail replaced by a uniform entity), never a known triple."""
    neg = np.asarray(positives, dtype=np.int64).copy()
    todo = np.arange(len(neg))
    for _ in range(max_rounds):
        if len(todo) == 0:
            return neg
        side = rng.integers(0, 2, size=len(todo))  # 0: replace the head, 1: the tail
        ent = rng.integers(0, num_entities, size=len(todo))
        rows = positives[todo].copy()
        rows[side == 0, 0] = ent[side == 0]
        rows[side == 1, 2] = ent[side == 1]
        neg[todo] = rows
        todo = todo[_is_known(triple_keys(rows, num_entities, num_relations), known)]
    if len(todo):
        raise KPError(f"{len(todo)} of {len(neg)} triples could not be corrupted into an unknown triple in "
                      f"{max_rounds} rounds (first: {positives[todo[0]].tolist()}); the graph is too dense")
    return neg


# ---- step 3: scores -----------------------------------------------------------------------------------------------
def _device_of(model: Any) -> torch.device:
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration):
        return torch.device("cpu")


def score_triples(model: Any, triples: np.ndarray, batch_size: int = 4096, model_name: str = "model",
                  what: str = "") -> np.ndarray:
    """One score per triple from ``model.score_spo``, in batches; non-finite scores are an error."""
    n = len(triples)
    out = np.empty(n, np.float64)
    device = _device_of(model)
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    try:
        with torch.no_grad():
            for b0 in range(0, n, batch_size):
                t = torch.as_tensor(triples[b0:b0 + batch_size], dtype=torch.long, device=device)
                s = model.score_spo(t[:, 0], t[:, 1], t[:, 2])
                if s.shape != (len(t),):
                    raise ScoreError(f"model {model_name}: score_spo returned shape {tuple(s.shape)} for a "
                                     f"batch of {len(t)} triples; expected one score per triple")
                out[b0:b0 + len(t)] = s.detach().to(torch.float64).cpu().numpy()
    finally:
        if was_training and hasattr(model, "train"):
            model.train(True)
    bad = np.flatnonzero(~np.isfinite(out))
    if len(bad):
        i = int(bad[0])
        raise ScoreError(f"model {model_name}: non-finite score {out[i]} for {what} triple "
                         f"{np.asarray(triples[i]).tolist()} ({len(bad)} of {n} scores are not finite)")
    return out


# ---- step 4: graphs -----------------------------------------------------------------------------------------------
def build_graph(triples: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Undirected edges (u < v) with the best score per pair; self-loops dropped. Returns (u, v, w)."""
    h = np.asarray(triples[:, 0], dtype=np.int64)
    t = np.asarray(triples[:, 2], dtype=np.int64)
    u, v = np.minimum(h, t), np.maximum(h, t)
    keep = u != v
    u, v, w = u[keep], v[keep], np.asarray(scores, dtype=np.float64)[keep]
    if len(w) == 0:
        return u, v, w
    order = np.lexsort((-w, v, u))  # by pair, best score first
    u, v, w = u[order], v[order], w[order]
    first = np.r_[True, (u[1:] != u[:-1]) | (v[1:] != v[:-1])]
    return u[first], v[first], w[first]


# ---- step 5: normalisation ------------------------------------------------------------------------------------------
def normalise_jointly(w_pos: np.ndarray, w_neg: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Map both weight vectors to [0, 2] with the same affine map; (0, 0)-weights when M = m (guarded)."""
    both = np.concatenate([w_pos, w_neg])
    if len(both) == 0:
        return w_pos, w_neg, float("nan"), float("nan")
    m, M = float(both.min()), float(both.max())
    if M == m:
        return np.zeros_like(w_pos), np.zeros_like(w_neg), m, M
    scale = 2.0 / (M - m)
    return (w_pos - m) * scale, (w_neg - m) * scale, m, M


# ---- steps 6 and 7: filtrations and diagrams ------------------------------------------------------------------------
def zero_dim_diagram(u: np.ndarray, v: np.ndarray, w: np.ndarray, vertex_value: float) -> np.ndarray:
    """Finite 0-dimensional persistence intervals of a weighted graph (gudhi), an (n, 2) array.

    Vertices enter at ``vertex_value`` (must not exceed any weight), edge {u, v} at its weight. Zero-length
    intervals are kept, so the deaths are exactly the merge values of Kruskal's minimum spanning forest.
    """
    if len(w) == 0:
        return np.zeros((0, 2))
    if float(np.min(w)) < vertex_value:
        raise ValueError(f"edge weight {float(np.min(w))} below the vertex value {vertex_value}")
    st = gudhi.SimplexTree()
    vertices = np.unique(np.concatenate([u, v]))
    st.insert_batch(vertices[None, :].astype(np.int32), np.full(len(vertices), float(vertex_value)))
    st.insert_batch(np.stack([u, v]).astype(np.int32), np.asarray(w, dtype=np.float64))
    st.compute_persistence(homology_coeff_field=2, min_persistence=-1.0)
    d = np.asarray(st.persistence_intervals_in_dimension(0), dtype=np.float64).reshape(-1, 2)
    d = d[np.isfinite(d[:, 1])]
    return d[np.lexsort((d[:, 0], d[:, 1]))]


def persistence_diagram(u: np.ndarray, v: np.ndarray, w_norm: np.ndarray) -> np.ndarray:
    """PD(G): the sublevel diagram (vertices at 0) followed by the superlevel one (negated weights, vertices at
    −2), for weights normalised to [0, 2]."""
    sub = zero_dim_diagram(u, v, w_norm, 0.0)
    sup = zero_dim_diagram(u, v, -w_norm, -2.0)
    return np.concatenate([sub, sup], axis=0)


# ---- step 8: distance ---------------------------------------------------------------------------------------------
def sliced_wasserstein(pd_a: np.ndarray, pd_b: np.ndarray, projections: int = 50, seed: int = 0,
                       p: float = 2.0) -> float:
    """Sliced Wasserstein distance between two diagrams as uniform 2-D point clouds (POT); 0 if either is
    empty."""
    if len(pd_a) == 0 or len(pd_b) == 0:
        return 0.0
    return float(ot.sliced_wasserstein_distance(np.asarray(pd_a, dtype=np.float64),
                                                np.asarray(pd_b, dtype=np.float64),
                                                n_projections=int(projections), p=p, seed=int(seed)))


# ---- the whole metric ---------------------------------------------------------------------------------------------
def seeds_for(seed: int) -> tuple[np.random.Generator, np.random.Generator, int]:
    """Generators of the positives and negatives, and the projection seed, all derived from ``seed``."""
    pos_ss, neg_ss, proj_ss = np.random.SeedSequence(int(seed)).spawn(3)
    return (np.random.default_rng(pos_ss), np.random.default_rng(neg_ss),
            int(proj_ss.generate_state(1, np.uint32)[0]))


def knowledge_persistence(model: Any, kg: KnowledgeGraph, split: str = "test", sample_multiple: float = 1.0,
                          projections: int = 50, seed: int = 0, p: float = 2.0, batch_size: int = 4096,
                          known: np.ndarray | None = None, model_name: str | None = None,
                          max_rounds: int = 100) -> KPResult:
    """KP of ``model`` on the triples of ``kg.splits[split]`` (see the module docstring for every step).

    ``known`` (sorted keys of train ∪ valid ∪ test, ``known_keys(kg)``) may be passed to reuse it across calls;
    otherwise building it counts towards the sampling time.
    """
    name = model_name or type(model).__name__
    if sample_multiple <= 0:
        raise ValueError(f"sample_multiple must be positive, got {sample_multiple}")
    if projections < 1:
        raise ValueError(f"projections must be at least 1, got {projections}")
    if split not in kg.splits:
        raise KPError(f"knowledge graph {kg.name} has no split {split!r}")
    triples = kg.splits[split]
    if len(triples) == 0:
        raise KPError(f"split {split!r} of knowledge graph {kg.name} has no triples: KP({split}) is undefined")
    n_requested = max(1, int(round(sample_multiple * kg.num_entities)))
    params = {"sample_multiple": float(sample_multiple), "projections": int(projections), "seed": int(seed),
              "p": float(p), "batch_size": int(batch_size), "max_rounds": int(max_rounds)}
    seconds = dict.fromkeys(STEPS, 0.0)

    t0 = time.perf_counter()
    rng_pos, rng_neg, proj_seed = seeds_for(seed)
    if known is None:
        known = known_keys(kg)
    pos = sample_positives(triples, n_requested, rng_pos)
    neg = corrupt(pos, kg.num_entities, kg.num_relations, known, rng_neg, max_rounds)
    seconds["sampling"] = time.perf_counter() - t0
    params["projection_seed"] = proj_seed

    t0 = time.perf_counter()
    s_pos = score_triples(model, pos, batch_size, name, f"positive ({split})")
    s_neg = score_triples(model, neg, batch_size, name, f"negative ({split})")
    seconds["scoring"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    up, vp, wp = build_graph(pos, s_pos)
    un, vn, wn = build_graph(neg, s_neg)
    wp_n, wn_n, m, M = normalise_jointly(wp, wn)
    degenerate = None
    if len(wp) and len(wn) and M == m:
        degenerate = "all scores equal"
        pd_pos = pd_neg = np.zeros((0, 2))
    else:
        pd_pos = persistence_diagram(up, vp, wp_n)
        pd_neg = persistence_diagram(un, vn, wn_n)
    seconds["diagrams"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    if degenerate is None and (len(pd_pos) == 0 or len(pd_neg) == 0):
        degenerate = "empty diagram"
    value = 0.0 if degenerate else sliced_wasserstein(pd_pos, pd_neg, projections, proj_seed, p)
    seconds["distance"] = time.perf_counter() - t0
    seconds["total"] = sum(seconds[s] for s in STEPS)
    result = KPResult(value=value, split=split, model=name, n_requested=n_requested, n_positive=len(pos),
                      n_negative=len(neg), n_edges_positive=len(wp), n_edges_negative=len(wn),
                      n_points_positive=len(pd_pos), n_points_negative=len(pd_neg),
                      score_min=float(min(s_pos.min(), s_neg.min())),
                      score_max=float(max(s_pos.max(), s_neg.max())), params=params, seconds=seconds,
                      degenerate=degenerate)
    log.info("KP(%s) of %s = %.6g (%d positives, %d + %d edges, %s) in %.3f s%s", split, name, value, len(pos),
             len(wp), len(wn), {k: round(v, 3) for k, v in seconds.items() if k != "total"}, seconds["total"],
             f" [{degenerate}]" if degenerate else "")
    return result


def kp_graphs(model: Any, kg: KnowledgeGraph, split: str = "test", sample_multiple: float = 1.0, seed: int = 0,
              batch_size: int = 4096, known: np.ndarray | None = None, model_name: str | None = None,
              max_rounds: int = 100) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                                               tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """G+ and G− as ``knowledge_persistence`` builds them for the same arguments (steps 1-5: the same samples,
    scores and joint normalisation), as (u, v, w') edge arrays, for the graph-kernel baseline (``kp.kernel``)."""
    name = model_name or type(model).__name__
    triples = kg.splits[split]
    if len(triples) == 0:
        raise KPError(f"split {split!r} of knowledge graph {kg.name} has no triples")
    rng_pos, rng_neg, _ = seeds_for(seed)
    pos = sample_positives(triples, max(1, int(round(sample_multiple * kg.num_entities))), rng_pos)
    neg = corrupt(pos, kg.num_entities, kg.num_relations, known_keys(kg) if known is None else known, rng_neg,
                  max_rounds)
    up, vp, wp = build_graph(pos, score_triples(model, pos, batch_size, name, f"positive ({split})"))
    un, vn, wn = build_graph(neg, score_triples(model, neg, batch_size, name, f"negative ({split})"))
    wp_n, wn_n, _, _ = normalise_jointly(wp, wn)
    return (up, vp, wp_n), (un, vn, wn_n)


# ---- geometric baselines (Sharma et al., 2018) ----------------------------------------------------------------------
def _embeddings(model: Any) -> np.ndarray | None:
    try:
        with torch.no_grad():
            e = model.entity_embeddings()
    except NotImplementedError:
        return None
    if torch.is_complex(e):
        e = torch.view_as_real(e).flatten(1)
    return e.detach().to(torch.float64).cpu().numpy().reshape(e.shape[0], -1)


def conicity(embeddings: np.ndarray) -> float:
    """Mean cosine between each row and the mean row (NaN if the mean vector is zero)."""
    x = np.asarray(embeddings, dtype=np.float64)
    mean = x.mean(axis=0)
    mn = np.linalg.norm(mean)
    norms = np.linalg.norm(x, axis=1)
    if mn == 0 or len(x) == 0:
        return float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(norms > 0, (x @ mean) / (norms * mn), 0.0)
    return float(cos.mean())


def average_vector_length(embeddings: np.ndarray) -> float:
    """Mean Euclidean norm of the rows."""
    x = np.asarray(embeddings, dtype=np.float64)
    return float(np.linalg.norm(x, axis=1).mean()) if len(x) else float("nan")


def geometry_baselines(model: Any) -> dict[str, float]:
    """Conicity and average vector length of the entity embeddings (NaN for a model without them)."""
    e = _embeddings(model)
    if e is None:
        return {"conicity": float("nan"), "avl": float("nan")}
    return {"conicity": conicity(e), "avl": average_vector_length(e)}
