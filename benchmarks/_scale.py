"""What the scale benchmarks share: a random long-tailed graph, random DistMult weights, the test split's
questions and answers, and the bare block product the engine is measured against (scale_ranking.py,
scale_gpu.py); the options naming a synthetic graph of a shape, and that graph (scale_pools.py,
scale_mrr_time.py)."""

from __future__ import annotations

import time

import numpy as np
import torch


def long_tailed(rng: np.random.Generator, entities: int):
    """A draw of n entity ids with Zipf-like popularity (a random permutation ranks the entities), so that some
    questions have large filters, as in the real graphs."""
    pop = rng.permutation(entities)

    def draw(n: int) -> np.ndarray:
        return pop[np.minimum((rng.pareto(1.2, n) * entities / 50).astype(np.int64), entities - 1)]

    return draw


def triples(rng: np.random.Generator, draw, relations: int, n: int) -> np.ndarray:
    return np.stack([draw(n), rng.integers(0, relations, n), draw(n)], 1)


def weights(entities: int, relations: int, dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(entities, dim, generator=g) * 0.1, torch.randn(relations, dim, generator=g) * 0.1


def bare_product(scorer, questions, entities: int, batch: int, block: int, device: str = "cpu") -> float:
    """Seconds of the engine's block products alone: the same question batches and entity blocks, nothing kept."""

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    sync()
    t0 = time.perf_counter()
    with torch.no_grad():
        for side in (0, 1):
            idx = np.flatnonzero(questions.side == side)
            for b0 in range(0, len(idx), batch):
                qi = idx[b0:b0 + batch]
                qv = scorer.query(torch.as_tensor(questions.entity[qi], device=device),
                                  torch.as_tensor(questions.relation[qi], device=device), side)
                for lo in range(0, entities, block):
                    scorer.block(qv, lo, lo + block)
    sync()
    return time.perf_counter() - t0


def bare_tiles(scorer, questions, entities: int, batch: int, workers: int, width: int | None = None) -> float:
    """Seconds of the fused CPU pass's products alone (kgeval.scale.tiles): each batch's questions split among
    ``workers`` threads, each multiplying entity tiles by its transposed queries on one torch thread into one
    reused buffer, nothing kept."""
    from concurrent.futures import ThreadPoolExecutor

    from kgeval.scale.tiles import tile_width

    threads = torch.get_num_threads()

    def part(qv):
        torch.set_num_threads(1)
        w = width or tile_width(qv.shape[0])
        qt = torch.zeros(qv.shape[1], -(-qv.shape[0] // 8) * 8)
        qt[:, :qv.shape[0]] = qv.T
        buf = torch.empty(w, qt.shape[1])
        for lo in range(0, entities, w):
            scorer.block_t(qt, lo, min(entities, lo + w), out=buf[:min(entities, lo + w) - lo])

    t0 = time.perf_counter()
    try:
        with torch.no_grad(), ThreadPoolExecutor(workers) as pool:
            for side in (0, 1):
                idx = np.flatnonzero(questions.side == side)
                for b0 in range(0, len(idx), batch):
                    qi = idx[b0:b0 + batch]
                    qv = scorer.query(torch.as_tensor(questions.entity[qi]), torch.as_tensor(questions.relation[qi]),
                                      side)
                    bounds = np.linspace(0, len(qi), workers + 1).astype(int)
                    list(pool.map(part, [qv[bounds[i]:bounds[i + 1]] for i in range(workers)]))
    finally:
        torch.set_num_threads(threads)
    return time.perf_counter() - t0


def shape_args(ap) -> None:
    """The options naming a scale graph (scale_pools.py, scale_mrr_time.py): a shape and factor, or a file."""
    ap.add_argument("--shape", choices=["wikidata5m", "wikikg2"], default="wikikg2")
    ap.add_argument("--factor", type=float, default=1.0)
    ap.add_argument("--graph", help="an existing graph.npz of the shape (else generated, and timed apart)")
    ap.add_argument("--seed", type=int, default=0)


def shape_graph(a, tmp, out: dict):
    """The graph of :func:`shape_args`' options: ``--graph``, or generated into ``tmp`` (seconds in ``out``)."""
    from pathlib import Path

    from kgeval.scale.steps import graph_step

    if a.graph:
        return Path(a.graph)
    graph = Path(tmp) / "graph.npz"
    t0 = time.perf_counter()
    graph_step(a.shape, a.factor, a.seed, graph)
    out["graph_seconds"] = time.perf_counter() - t0
    return graph
