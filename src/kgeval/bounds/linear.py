"""The selection engine of a linear metric (P@k, DCG@k, RBP): exact bounds, E and Var of every pair's Δ, and
MTC's priorities.

Per pair (A, B), with d_e = (w_A(e) − w_B(e))/Q and x_e ~ Bernoulli(p_e) independently:
known part K = Σ_known d_e x_e; E[Δ] = K + Σ_U d_e p_e; Var[Δ] = Σ_U d_e² p_e(1−p_e); exact bounds
Δ_lo = K + Σ_U min(0, d_e), Δ_hi = K + Σ_U max(0, d_e); P(A > B) = Φ(E/√Var) (MTC's normal approximation), and
exactly 1[E > 0] when Var = 0. None of these needs the pairs × items matrix but the bounds: the system-level sums
Σ_U w_s p and the Gram matrix Σ_U w_s w_t p(1−p) give E and Var of all pairs; the bounds' Σ min(0, d) is computed
over the unknown items only, in chunks of pairs × items.

Priority (the decision value of judging e): Σ over undecided pairs of d_e² p_e(1−p_e), the variance of the pair
differences that judging e removes (MTC); ties are broken by Σ over the undecided pairs of d_e².
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from kgeval.errors import InputError

from ..judgments.candidates import LINEAR_METRICS, TOL, Candidates, blocks, item_weights
from .engine import PairEngine


class LinearPairs(PairEngine):
    """Every pair's known part, bounds, E and Var of Δ for a linear metric, updated as labels are revealed."""

    def __init__(self, cand: Candidates, p, metric: str = "P@k", rbp_p: float = 0.8):
        if metric not in LINEAR_METRICS:
            raise InputError(None, None, f"metric {metric!r} is not linear: expected one of {LINEAR_METRICS}")
        super().__init__(cand, p, metric)
        self.W = item_weights(cand.ranks, metric, cand.k, rbp_p) / self.Q
        self.known_sys = self.W[:, self.state == 1].sum(1)
        self._prior_moments()
        self.neg, self.pos = self._slack(self.W[:, self.unknown])

    def _prior_moments(self) -> None:
        """The unknown items' Σ w_s p per system and their Gram matrix Σ w_s w_t p(1−p) under the prior."""
        U = self.unknown
        WU, pu = self.W[:, U], self.p[U]
        self.mean_sys = WU @ pu
        self.G = (WU * (pu * (1 - pu))) @ WU.T

    def _slack(self, Wi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per pair, Σ min(0, d_e) and Σ max(0, d_e) over the items whose weights are the columns of Wi."""
        neg, pos = np.zeros(self.n_pairs), np.zeros(self.n_pairs)
        for blk in blocks(self.n_pairs, Wi.shape[1]):
            d = Wi[self.a[blk]] - Wi[self.b[blk]]
            neg[blk] = np.minimum(d, 0).sum(1)
            pos[blk] = np.maximum(d, 0).sum(1)
        return neg, pos

    def set_prior(self, p) -> None:
        super().set_prior(p)
        self._prior_moments()

    def known(self) -> np.ndarray:
        return self.known_sys[self.a] - self.known_sys[self.b]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        k = self.known()
        return k + self.neg, k + self.pos

    def expectation(self) -> tuple[np.ndarray, np.ndarray]:
        """E[Δ] and Var[Δ] per pair under the prior."""
        e = self.known() + self.mean_sys[self.a] - self.mean_sys[self.b]
        G = self.G
        var = G[self.a, self.a] + G[self.b, self.b] - 2 * G[self.a, self.b]
        return e, np.maximum(var, 0.0)

    def prob_a_beats_b(self) -> np.ndarray:
        e, var = self.expectation()
        sd = np.sqrt(var)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = ndtr(e / sd)
        return np.where(sd > TOL, z, (e > TOL).astype(float))

    def _quadratic(self, und: np.ndarray, U: np.ndarray) -> np.ndarray:
        """Σ over the undecided pairs of (w_A(e) − w_B(e))² for the items U, through the S × S pair matrix."""
        S = self.cand.n_systems
        M = np.zeros((S, S))
        M[self.a[und], self.b[und]] = 1.0
        M += M.T
        WU = self.W[:, U]
        return M.sum(1) @ (WU * WU) - np.einsum("se,se->e", WU, M @ WU)

    def priority(self, und: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(items, priority, tie-break key) over the unknown items: Σ_undecided d² p(1−p) and Σ_undecided d²."""
        U = self.unknown
        sq = np.maximum(self._quadratic(und, U), 0.0)
        sq[sq <= TOL * TOL] = 0.0
        pu = self.p[U]
        return U, sq * pu * (1 - pu), sq

    def bears_on(self, und: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Boolean (undecided pairs × items): d_e ≠ 0."""
        pairs = np.flatnonzero(und)
        Wi = self.W[:, items]
        return np.abs(Wi[self.a[pairs]] - Wi[self.b[pairs]]) > TOL

    def reveal(self, items: np.ndarray, labels: np.ndarray) -> None:
        items = np.asarray(items, dtype=np.int64)
        x = np.asarray(labels, dtype=float)
        if (self.state[items] != -1).any():
            raise InputError(None, None, "reveal: an item is already judged")
        Wi = self.W[:, items]
        pi = self.p[items]
        self.known_sys += Wi @ x
        self.mean_sys -= Wi @ pi
        self.G -= (Wi * (pi * (1 - pi))) @ Wi.T
        neg, pos = self._slack(Wi)
        self.neg -= neg
        self.pos -= pos
        self.state[items] = np.asarray(labels, dtype=np.int8)

    def sample_means(self, X: np.ndarray) -> np.ndarray:
        """System means (draws × S) when the unknown items (in ``self.unknown``'s order) take the labels X."""
        return self.known_sys[None, :] + np.asarray(X, dtype=float) @ self.W[:, self.unknown].T
