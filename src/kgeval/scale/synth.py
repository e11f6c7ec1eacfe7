"""Synthetic graphs of today's large KGs' shapes, with planted structure and systems of graded quality.

Every entity has a latent vector z_e and a popularity drawn from a power law (the long-tailed degrees of real
KGs); every relation a weight vector w_r and a popularity. A true triple (h, r, t) is drawn as: h by
popularity, r by popularity, and t the most plausible of ``candidates`` entities drawn by popularity, where
plausibility is the bilinear z_h ∘ w_r · z_t plus Gumbel noise of scale ``temperature``. Every step is linear in
the number of triples (candidate scores are (chunk × candidates × dim) gathers), none in entities², so the two
shapes below take minutes. The distinct triples are shuffled into test, valid, train and a hidden share (true
facts the graph does not hold: a real KG's missing positives, for judging pooled triples by the planted truth).

Systems (:func:`system`) are DistMult models over the planted vectors plus Gaussian noise of growing scale, so
they need no training and their true order is known: system 0 is the best.

Deterministic for a seed: the chunks' sizes and their random streams do not depend on the machine.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from ..errors import KgevalError
from ..progress import Progress
from .scorers import BilinearBlocks
from .store import SYNTHETIC, load_arrays, save_arrays


@dataclass(frozen=True)
class ScaleSpec:
    num_entities: int
    num_relations: int
    train: int
    valid: int
    test: int
    hidden: float = 0.1  # true triples kept out of the graph, as a share of the graph's
    dim: int = 16
    candidates: int = 12  # entities a true tail is chosen from
    temperature: float = 0.2
    entity_exponent: float = 0.9  # popularity of the entity of popularity rank i ∝ (i + 1)^-exponent
    relation_exponent: float = 1.0
    popularity: float = 5.0  # weight of the popularity prior (the latent vectors' last coordinate)


#: the published shapes (Wang et al. 2021, Wikidata5M transductive; Hu et al. 2020, ogbl-wikikg2)
SHAPES = {
    "wikidata5m": ScaleSpec(4_594_485, 822, 20_614_279, 5_163, 5_133),
    "wikikg2": ScaleSpec(2_500_604, 535, 16_109_182, 429_456, 598_543),
}

#: triples drawn per chunk: fixed, so the random streams and the result do not depend on the machine
CHUNK = 1 << 18


def scaled(spec: ScaleSpec, factor: float) -> ScaleSpec:
    """The same shape ``factor`` times smaller (a reduced instance for CI and benchmarks)."""
    def f(n):
        return max(4, int(round(n * factor)))

    return replace(spec, num_entities=f(spec.num_entities), train=f(spec.train), valid=f(spec.valid),
                   test=f(spec.test), num_relations=max(2, min(spec.num_relations, f(spec.num_entities) // 4)))


def _zipf_sampler(n: int, exponent: float, rng: np.random.Generator):
    """Draws from {0..n-1} with P(i) ∝ about (rank(i) + 1)^-exponent, popularity ranks a random permutation: the
    continuous power law's inverse CDF, arithmetic only (a search in a table of n would read memory at random)."""
    perm = rng.permutation(n).astype(np.int64)
    a = 1.0 - exponent

    def draw(size: int, r: np.random.Generator) -> np.ndarray:
        u = r.random(size)
        if abs(a) < 1e-9:
            x = np.exp(u * math.log(n + 1.0))
        else:
            x = (1.0 + u * ((n + 1.0) ** a - 1.0)) ** (1.0 / a)
        return perm[np.minimum(x.astype(np.int64) - 1, n - 1)]

    return draw, perm


def _distinct(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.unique hashes int64, several times slower than a sort here)."""
    keys = np.sort(keys)
    return keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys


def generate(spec: ScaleSpec, seed: int = 0, show_progress: bool = True) -> dict[str, np.ndarray]:
    """The graph: ``train``/``valid``/``test``/``hidden`` (n, 3) int32 triples, ``z`` and ``w`` the planted
    vectors (float32), ``spec`` the specification's values."""
    N, R = spec.num_entities, spec.num_relations
    if N < 4 or R < 1 or min(spec.train, spec.valid, spec.test) < 1:
        raise KgevalError(f"scale synth: need at least 4 entities, 1 relation and 1 triple per split, got {spec}")
    if N >= 2**31:
        raise KgevalError(f"scale synth: {N:,} entities do not fit int32 ids")
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal((N, spec.dim), dtype=np.float32) / spec.dim ** 0.25)
    w = 1.0 + 0.5 * rng.standard_normal((R, spec.dim), dtype=np.float32)
    ent, by_popularity = _zipf_sampler(N, spec.entity_exponent, rng)
    rel, _ = _zipf_sampler(R, spec.relation_exponent, rng)
    # the last coordinate is a popularity prior (popular heads prefer popular tails), weighted 1 by every
    # relation, as real KGs' answers lean to popular entities and trained models learn that
    rank = np.empty(N, np.float64)
    rank[by_popularity] = np.arange(N)
    z[:, -1] = spec.popularity * (1.0 - np.log1p(rank) / math.log(N + 1.0))
    w[:, -1] = 1.0
    in_graph = spec.train + spec.valid + spec.test
    want = in_graph + int(math.ceil(spec.hidden * in_graph))
    zt = torch.from_numpy(z)
    keys = []
    have = 0
    n_chunks = 0
    # counted in distinct triples against the total wanted, so that the log line has a share and a time left
    with Progress(want, "scale synth: distinct triples", unit="triples",
                  interval=30 if show_progress else 1e9) as bar:
        while have < want:
            # each chunk's own stream: the triples do not depend on how many chunks came before in a run
            r_ = np.random.default_rng([seed, n_chunks])
            m = CHUNK
            h = ent(m, r_)
            r = rel(m, r_)
            cand = ent(m * spec.candidates, r_).reshape(m, spec.candidates)
            q = zt[h] * torch.from_numpy(w[r])
            s = torch.bmm(zt[cand], q[:, :, None])[:, :, 0].numpy()
            u = r_.random(s.shape, dtype=np.float32)
            s -= spec.temperature * np.log(-np.log(np.maximum(u, np.float32(1e-30))))  # Gumbel noise
            t = cand[np.arange(m), np.argmax(s, axis=1)]
            ok = h != t
            keys.append(_distinct((h[ok].astype(np.int64) * R + r[ok]) * N + t[ok]))
            n_chunks += 1
            if n_chunks % 8 == 0 or have + len(keys[-1]) >= want:
                keys = [_distinct(np.concatenate(keys))]
            before, have = have, len(keys[0]) if len(keys) == 1 else have + len(keys[-1])
            bar.update(min(have, want) - min(before, want), chunks=n_chunks)
    allk = _distinct(np.concatenate(keys)) if len(keys) > 1 else keys[0]
    if len(allk) < want:
        raise KgevalError(f"scale synth: only {len(allk):,} distinct triples for {want:,} wanted")
    allk = allk[rng.permutation(len(allk))[:want]]
    hr, t = np.divmod(allk, N)
    h, r = np.divmod(hr, R)
    triples = np.stack([h, r, t], 1).astype(np.int32)
    a, b, c = spec.test, spec.test + spec.valid, in_graph
    return {"test": triples[:a], "valid": triples[a:b], "train": triples[b:c], "hidden": triples[c:],
            "z": z, "w": w, "spec": np.array([str(asdict(spec))])}


def write_graph(path: str | Path, spec: ScaleSpec, seed: int = 0) -> None:
    save_arrays(path, generate(spec, seed) | {"seed": np.array(seed)})


def load_graph(path: str | Path) -> dict[str, np.ndarray]:
    return load_arrays(path, SYNTHETIC)


def system(graph: dict[str, np.ndarray], quality: int, noise: float = 0.2, seed: int = 0) -> BilinearBlocks:
    """System ``quality`` (0 the best): DistMult over the planted vectors plus N(0, ((quality + 1) noise)²) noise
    relative to their scale; its own seeded stream."""
    rng = np.random.default_rng([seed, 7919, quality])
    z, w = graph["z"], graph["w"]
    sigma = (quality + 1) * noise
    ent = z + (sigma * float(z.std())) * rng.standard_normal(z.shape, dtype=np.float32)
    relw = w + (sigma * float(w.std())) * rng.standard_normal(w.shape, dtype=np.float32)
    return BilinearBlocks(torch.from_numpy(ent), torch.from_numpy(relw))
