"""What both selection engines share (:class:`PairEngine`): the labels, the prior p(e), the system pairs and the
unknown items, and the stops read from the engine's bounds and P(A > B).

Stops: hard, when every pair is decided by its bounds (Δ_lo > 0 or Δ_hi < 0) or can no longer change (Δ_lo = Δ_hi,
all its unknowns judged); soft, when besides every remaining pair has P(A > B) ≥ 0.95 or ≤ 0.05.
"""

from __future__ import annotations

import copy

import numpy as np

from kgeval.errors import InputError

from ..judgments.candidates import TOL, Candidates, blocks, system_pairs


def checked_prior(p, n_items: int) -> np.ndarray:
    """p(e) as one float per item (a number is broadcast), refused unless every value lies in [0, 1]."""
    p = np.broadcast_to(np.asarray(p, dtype=float), (n_items,)).copy()
    if ((p < 0) | (p > 1)).any() or not np.isfinite(p).all():
        raise InputError(None, None, "prior: every p(e) must lie in [0, 1]")
    return p


class PairEngine:
    """Shared state of both engines: labels, prior, pairs, the unknown items; mutated by ``reveal``. A subclass
    gives ``bounds()`` (Δ_lo, Δ_hi per pair), ``prob_a_beats_b()``, ``priority(undecided)`` and
    ``bears_on(undecided, items)``."""

    def __init__(self, cand: Candidates, p, metric: str):
        self.cand, self.metric, self.p = cand, metric, checked_prior(p, cand.n_items)
        self.Q = cand.n_questions
        self.state = cand.state.copy()
        self.a, self.b = system_pairs(cand.n_systems)
        self.n_pairs = self.a.size

    @property
    def unknown(self) -> np.ndarray:
        return np.flatnonzero(self.state == -1)

    def set_prior(self, p) -> None:
        """A new prior (e.g. refitted on the labels judged so far); the bounds do not depend on it."""
        self.p = checked_prior(p, self.cand.n_items)

    def copy(self):
        return copy.deepcopy(self)

    def decided(self) -> np.ndarray:
        lo, hi = self.bounds()
        return (lo > TOL) | (hi < -TOL)

    def resolved(self) -> np.ndarray:
        """Decided, or no label left that could change it (Δ_lo = Δ_hi: a tie the labels fix)."""
        lo, hi = self.bounds()
        return (lo > TOL) | (hi < -TOL) | (hi - lo <= TOL)

    def undecided(self, stop: str = "hard", level: float = 0.95) -> np.ndarray:
        und = ~self.resolved()
        if stop == "soft":
            pr = self.prob_a_beats_b()
            und &= (pr < level) & (pr > 1 - level)
        elif stop != "hard":
            raise InputError(None, None, f"stop {stop!r}: expected 'hard' or 'soft'")
        return und

    def bears_on_blocks(self, und: np.ndarray, items: np.ndarray):
        """:meth:`bears_on` over ``items`` in blocks of bounded size: (offset into items, pairs × block)."""
        for blk in blocks(items.size, int(und.sum())):
            yield blk.start, self.bears_on(und, items[blk])


def sample_unknown_labels(engine: PairEngine, draws: int, seed) -> np.ndarray:
    """draws × |unknown| Bernoulli(p) labels of the engine's unknown items; ``seed`` a number or a generator whose
    stream the draw continues."""
    U = engine.unknown
    return np.random.default_rng(seed).random((draws, U.size)) < engine.p[U][None, :]
