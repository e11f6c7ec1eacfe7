"""How many judgments the greedy selection needs to decide every pair (expected under the prior, and the worst
case between an adversary's labelling and an upper bound), and Kendall's τ-b of the systems' ranking under
labellings drawn from the prior."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kgeval.metrics.kendall import tau_b_many

from ..judgments.candidates import TOL
from .engine import sample_unknown_labels
from .greedy import greedy
from .linear import LinearPairs
from .maxtype import MaxPairs


def adversary_labels(engine: LinearPairs, stop: str = "hard") -> Callable[[np.ndarray], np.ndarray]:
    """An annotator for :func:`greedy` that labels each item, one after the other, so as to keep the most pairs
    unresolved (ties: the larger Σ min(−Δ_lo, Δ_hi) over them, then not relevant) — a greedy adversary of a
    linear metric; it reads the engine's bounds, which :func:`greedy` updates after every batch."""
    a, b = engine.a, engine.b

    def reveal(items: np.ndarray) -> np.ndarray:
        lo, hi = engine.bounds()
        out = np.zeros(len(items), np.int8)
        for j, e in enumerate(items):
            d = engine.W[a, e] - engine.W[b, e]
            best = None
            for x, (lo_x, hi_x) in ((0, (lo - np.minimum(d, 0), hi - np.maximum(d, 0))),
                                    (1, (lo + np.maximum(d, 0), hi + np.minimum(d, 0)))):
                unresolved = (lo_x <= TOL) & (hi_x >= -TOL) & (hi_x - lo_x > TOL)
                key = (int(unresolved.sum()), float(np.minimum(-lo_x, hi_x)[unresolved].sum()), -x)
                if best is None or key > best[0]:
                    best = (key, x, lo_x, hi_x)
            _, out[j], lo, hi = best
        return out

    return reveal


@dataclass
class JudgmentCounts:
    """Judgments to decide every pair: ``per_draw`` under labellings drawn from the prior (its mean
    ``expected``), per pair the mean over draws (``per_pair_expected``, NaN if some draw left it unresolved),
    and the worst case's upper bound: the number of unknown items that bear on an undecided pair
    (``worst_case_upper``, and per pair ``per_pair_worst_upper``). Whatever the labels, the greedy run judges
    only such items and judges each once, so no labelling makes it need more. For linear metrics also
    ``worst_case_adversary``, the greedy run's count against :func:`adversary_labels`: a labelling that exists,
    so a lower bound of the true worst case (the greedy run is deterministic, so the true worst case is the
    maximum over labellings, which lies between the two; None for max-type metrics)."""

    expected: float
    per_draw: np.ndarray
    per_pair_expected: np.ndarray
    worst_case_upper: int
    per_pair_worst_upper: np.ndarray
    worst_case_adversary: int | None = None


def judgments_to_decide(engine: LinearPairs | MaxPairs, draws: int = 5, seed: int = 0, batch: int = 50,
                        stop: str = "hard", adversarial: bool = True, refresh: float | None = None) -> JudgmentCounts:
    """Expected (``draws`` seeded labellings from the prior, the greedy run on each) and worst-case number of
    judgments to decide every pair; the engine is left as it was. ``refresh``: :func:`greedy`'s."""
    rng = np.random.default_rng(seed)
    und = engine.undecided(stop)
    U = engine.unknown
    worst_pair = np.zeros(engine.n_pairs, np.int64)
    any_bears = np.zeros(U.size, bool)
    if und.any():
        for start, bo in engine.bears_on_blocks(und, U):
            worst_pair[und] += bo.sum(1)
            any_bears[start:start + bo.shape[1]] = bo.any(0)
    per_draw, per_pair = [], []
    for d in range(draws):
        truth = np.zeros(engine.cand.n_items, np.int8)
        truth[U] = sample_unknown_labels(engine, 1, rng)[0]
        tr = greedy(engine.copy(), lambda items, t=truth: t[items], batch, stop, seed=seed + d, refresh=refresh)
        per_draw.append(tr.judgments)
        per_pair.append(np.where(tr.decided_at >= 0, tr.decided_at, np.nan))
    per_draw = np.asarray(per_draw)
    adversary = None
    if adversarial and isinstance(engine, LinearPairs):
        eng = engine.copy()
        adversary = greedy(eng, adversary_labels(eng, stop), batch, stop, seed=seed).judgments
    return JudgmentCounts(float(per_draw.mean()) if draws else float("nan"), per_draw,
                          np.mean(per_pair, 0) if draws else np.full(engine.n_pairs, np.nan),
                          int(any_bears.sum()), worst_pair, adversary)


@dataclass
class TauDistribution:
    """Kendall's τ-b between a reference ranking and the systems' ranking under ``draws`` labellings drawn from
    the prior: every draw's τ, the mean and the central 95 % interval."""

    taus: np.ndarray
    mean: float
    lo: float
    hi: float


def tau_distribution(engine: LinearPairs | MaxPairs, reference: np.ndarray, draws: int = 1000, seed: int = 0,
                     level: float = 0.95, chunk: int = 250) -> TauDistribution:
    """τ-b(reference, system means) over ``draws`` seeded labellings of the unknowns (vectorised over draws in
    chunks); ``reference`` is the other test set's metric per system (higher = better on both)."""
    rng = np.random.default_rng(seed)
    taus = []
    for i in range(0, draws, chunk):
        X = sample_unknown_labels(engine, min(chunk, draws - i), rng)
        taus.append(tau_b_many(engine.sample_means(X), np.asarray(reference, dtype=float)))
    taus = np.concatenate(taus)
    lo, hi = np.nanquantile(taus, [(1 - level) / 2, (1 + level) / 2])
    return TauDistribution(taus, float(np.nanmean(taus)), float(lo), float(hi))
