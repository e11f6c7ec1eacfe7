"""What the scale benchmarks share (scale_ranking.py, scale_gpu.py): a random long-tailed graph, random DistMult
weights, the test split's questions and answers, and the bare block product the engine is measured against."""

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
