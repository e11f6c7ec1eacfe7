"""Which unjudged triples to judge next: Minimal Test Collections (Carterette, Allan and Sitaraman, SIGIR 2006;
Carterette, SIGIR 2007) over every pair of compared systems, on arrays.

Data model (:class:`Candidates`): the items are the (question, entity) pairs in the union of the compared systems'
top-k lists. ``item_q[e]`` is the question of item e (0 … Q−1, Q = ``n_questions``, the number of questions the
mean divides by, including questions with no candidate item), ``ranks[s, e]`` the rank of e in system s's
filtered run (0 or > k: not in its top k), ``state[e]`` 1 known relevant, 0 known not relevant, −1 unknown.

Metrics. Linear per-question metrics M_s(q) = Σ_e w_s(e) x_e with w_s(e) for rank r ≤ k: P@k 1/k, DCG@k
1/log2(r+1), RBP (1−p) p^(r−1). Max-type metrics M_s(q) = max_e w_s(e) x_e: RR@k (w = 1/r) and Success@k (w = 1);
they are not linear in the labels. A system's score is the mean over the Q questions.

Linear metrics, per pair (A, B), with d_e = (w_A(e) − w_B(e))/Q and x_e ~ Bernoulli(p_e) independently:
known part K = Σ_known d_e x_e; E[Δ] = K + Σ_U d_e p_e; Var[Δ] = Σ_U d_e² p_e(1−p_e); exact bounds
Δ_lo = K + Σ_U min(0, d_e), Δ_hi = K + Σ_U max(0, d_e); P(A > B) = Φ(E/√Var) (MTC's normal approximation), and
exactly 1[E > 0] when Var = 0. None of these needs the pairs × items matrix but the bounds: the system-level sums
Σ_U w_s p and the Gram matrix Σ_U w_s w_t p(1−p) give E and Var of all pairs; the bounds' Σ min(0, d) is computed
over the unknown items only, in chunks of pairs × items.

Max-type metrics: the exact bounds of a pair per question are attained by labelling at most one unknown item
relevant. Proof: for a labelling with relevant unknowns T ≠ ∅, let e be the item of T that gives B its value;
T' = {e} gives B the same value and A a value no larger, so Δ(T') ≤ Δ(T): the minimum over labellings is
min(Δ(∅), min_e Δ({e})) and likewise the maximum. Questions have disjoint unknowns, so the bounds of the mean are
the means of the per-question bounds. A ``pair_bounds`` callable (state → (lo, hi) per pair) may replace them
(e.g. the bounds stage's own). P(A > B) is a seeded Monte Carlo over labellings drawn from the prior.

Priority (the decision value of judging e). Linear: Σ over undecided pairs of d_e² p_e(1−p_e), the variance of the
pair differences that judging e removes (MTC). Max-type: the variance argument does not hold (Δ is not a sum), so
the priority is Σ over undecided pairs of P(e is pivotal), the probability that e's label changes the pair's
outcome sign(Δ) ∈ {−, 0, +} when every other unknown keeps its (random) label:
P(sign(Δ | x_e = 1) ≠ sign(Δ | x_e = 0)). For a linear metric this is the natural counterpart of the variance
term; for max-type metrics it is what a judgment is worth to a decision, and it is 0 for items that cannot matter.
It is estimated from seeded draws of e's question: its value with x_e = 1 and x_e = 0 is max(V_q^{−e}, w(e)) and
V_q^{−e}, the question's value without e (from its largest and second-largest term); the rest R of Δ over the
other questions is, by default, normal with the mean and variance the draws give per question (independent
questions: they add; MTC's normal approximation), so P(pivotal | draw) = |Φ((μ+δ1)/σ) − Φ((μ+δ0)/σ)|. With
thousands of questions one item's pivot is rarer than 1/draws, and the smooth estimate still orders the items
(Spearman 0.99 against a plain Monte Carlo of 2,500 draws in the tests); it runs ~30 % low, as the normal misses
the atoms of the lattice-valued R at exact ties. ``rest="draws"`` takes R from the same draw instead: a plain
Monte Carlo estimate, exact in expectation (tested against enumeration), coarse for many questions. Ties of the priority are broken by the number (linear:
the sum of d_e²) of undecided pairs the item bears on, then by a seeded random key.

Stops: hard, when every pair is decided by its bounds (Δ_lo > 0 or Δ_hi < 0) or can no longer change (Δ_lo = Δ_hi,
all its unknowns judged); soft, when besides every remaining pair has P(A > B) ≥ 0.95 or ≤ 0.05.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import ndtr

from kgeval.errors import InputError
from kgeval.metrics.kendall import tau_b_many

from .metrics import metric as bounded_metric

LINEAR_METRICS = ("P@k", "DCG@k", "RBP")
MAX_METRICS = ("RR@k", "Success@k")
TOL = 1e-12  # differences smaller than this are ties: incremental sums drift by ~1e-16
_CHUNK = 4_000_000  # floats per temporary pairs × items (or draws × …) block: ~32 MB

PairBounds = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Candidates:
    """The candidate items of one comparison of systems (see the module docstring): ``item_q`` (n,) question of
    each item, ``ranks`` (S, n) rank of each item in each system's filtered run (0 or > k: not in its top k),
    ``state`` (n,) 1 relevant / 0 not relevant / −1 unknown, ``n_questions`` Q the mean divides by, ``k`` the
    cut-off, ``systems`` optional names."""

    item_q: np.ndarray
    ranks: np.ndarray
    state: np.ndarray
    n_questions: int
    k: int = 10
    systems: tuple[str, ...] | None = None

    def __post_init__(self):
        q, r, s = np.asarray(self.item_q), np.asarray(self.ranks), np.asarray(self.state)
        if r.ndim != 2 or q.shape != (r.shape[1],) or s.shape != q.shape:
            raise InputError(None, None, f"candidates: ranks must be systems × items and item_q, state one entry "
                                         f"per item; got ranks {r.shape}, item_q {q.shape}, state {s.shape}")
        if q.size and (q.min() < 0 or q.max() >= self.n_questions):
            raise InputError(None, None, f"candidates: item_q must lie in 0..{self.n_questions - 1}")
        if not np.isin(s, (-1, 0, 1)).all():
            raise InputError(None, None, "candidates: state must be 1 (relevant), 0 (not relevant) or -1 (unknown)")
        if self.systems is not None and len(self.systems) != r.shape[0]:
            raise InputError(None, None, f"candidates: {len(self.systems)} system names for {r.shape[0]} systems")
        object.__setattr__(self, "item_q", q.astype(np.int64))
        object.__setattr__(self, "ranks", r.astype(np.int64))
        object.__setattr__(self, "state", s.astype(np.int8))

    @property
    def n_systems(self) -> int:
        return self.ranks.shape[0]

    @property
    def n_items(self) -> int:
        return self.ranks.shape[1]

    def with_state(self, state: np.ndarray) -> Candidates:
        return replace(self, state=np.asarray(state))


def item_weights(ranks: np.ndarray, metric: str, k: int = 10, rbp_p: float = 0.8) -> np.ndarray:
    """w_s(e) (systems × items) of a linear (P@k, DCG@k, RBP) or max-type (RR@k, Success@k) metric; 0 outside
    the top k. The weight of each rank is :func:`kgeval.bounds.metrics.metric`'s, the one table the bounds use."""
    if metric not in LINEAR_METRICS + MAX_METRICS:
        raise InputError(None, None, f"metric {metric!r}: expected one of {LINEAR_METRICS + MAX_METRICS}")
    r = np.asarray(ranks)
    inside = (r >= 1) & (r <= k)
    by_rank = np.append(bounded_metric(metric.split("@")[0], k, rbp_p).weights, 0.0)  # index k: outside
    return by_rank[np.where(inside, r - 1, k)]


def system_pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) with a < b: the order of every per-pair array here (Δ = mean(a) − mean(b))."""
    return np.triu_indices(n_systems, k=1)


def _pair_blocks(n_pairs: int, width: int):
    step = max(1, _CHUNK // max(width, 1))
    for i in range(0, n_pairs, step):
        yield slice(i, min(n_pairs, i + step))


class _Engine:
    """Shared state of both engines: labels, prior, pairs, the unknown items; mutated by :meth:`reveal`."""

    def __init__(self, cand: Candidates, p: np.ndarray, metric: str, rbp_p: float):
        p = np.broadcast_to(np.asarray(p, dtype=float), (cand.n_items,)).copy()
        if ((p < 0) | (p > 1)).any() or not np.isfinite(p).all():
            raise InputError(None, None, "prior: every p(e) must lie in [0, 1]")
        self.cand, self.metric, self.p = cand, metric, p
        self.Q = cand.n_questions
        self.state = cand.state.copy()
        self.a, self.b = system_pairs(cand.n_systems)
        self.n_pairs = self.a.size

    @property
    def unknown(self) -> np.ndarray:
        return np.flatnonzero(self.state == -1)

    def set_prior(self, p) -> None:
        """A new prior (e.g. refitted on the labels judged so far); the bounds do not depend on it."""
        p = np.broadcast_to(np.asarray(p, dtype=float), (self.cand.n_items,)).copy()
        if ((p < 0) | (p > 1)).any() or not np.isfinite(p).all():
            raise InputError(None, None, "prior: every p(e) must lie in [0, 1]")
        self.p = p

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


class LinearPairs(_Engine):
    """Every pair's known part, bounds, E and Var of Δ for a linear metric, updated as labels are revealed."""

    def __init__(self, cand: Candidates, p, metric: str = "P@k", rbp_p: float = 0.8):
        if metric not in LINEAR_METRICS:
            raise InputError(None, None, f"metric {metric!r} is not linear: expected one of {LINEAR_METRICS}")
        super().__init__(cand, p, metric, rbp_p)
        self.W = item_weights(cand.ranks, metric, cand.k, rbp_p) / self.Q
        known1 = self.state == 1
        self.known_sys = self.W[:, known1].sum(1)
        U = self.unknown
        WU = self.W[:, U]
        pu = self.p[U]
        self.mean_sys = WU @ pu
        self.G = (WU * (pu * (1 - pu))) @ WU.T
        self.neg = np.zeros(self.n_pairs)
        self.pos = np.zeros(self.n_pairs)
        for blk in _pair_blocks(self.n_pairs, U.size):
            d = WU[self.a[blk]] - WU[self.b[blk]]
            self.neg[blk] = np.minimum(d, 0).sum(1)
            self.pos[blk] = np.maximum(d, 0).sum(1)

    def set_prior(self, p) -> None:
        super().set_prior(p)
        U = self.unknown
        WU, pu = self.W[:, U], self.p[U]
        self.mean_sys = WU @ pu
        self.G = (WU * (pu * (1 - pu))) @ WU.T

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
        for blk in _pair_blocks(self.n_pairs, items.size):
            d = Wi[self.a[blk]] - Wi[self.b[blk]]
            self.neg[blk] -= np.minimum(d, 0).sum(1)
            self.pos[blk] -= np.maximum(d, 0).sum(1)
        self.state[items] = np.asarray(labels, dtype=np.int8)

    def sample_means(self, X: np.ndarray) -> np.ndarray:
        """System means (draws × S) when the unknown items (in ``self.unknown``'s order) take the labels X."""
        return self.known_sys[None, :] + np.asarray(X, dtype=float) @ self.W[:, self.unknown].T


class MaxPairs(_Engine):
    """Bounds, Monte Carlo P(A > B) and pivot priorities of a max-type metric (RR@k, Success@k)."""

    def __init__(self, cand: Candidates, p, metric: str = "RR@k", pair_bounds: PairBounds | None = None,
                 draws: int = 200, seed: int = 0, rest: str = "normal"):
        if metric not in MAX_METRICS:
            raise InputError(None, None, f"metric {metric!r}: expected one of {MAX_METRICS}")
        super().__init__(cand, p, metric, 0.8)
        self.W = item_weights(cand.ranks, metric, cand.k)
        if rest not in ("normal", "draws"):
            raise InputError(None, None, f"rest {rest!r}: expected 'normal' or 'draws'")
        self.pair_bounds, self.draws, self.rest = pair_bounds, draws, rest
        self.rng = np.random.default_rng(seed)
        self.base = np.zeros((cand.n_systems, self.Q))
        self._raise_base(np.flatnonzero(self.state == 1))
        self.q_slack = np.zeros((2, self.n_pairs, self.Q))
        self._question_bounds(np.arange(self.Q))

    def _raise_base(self, items: np.ndarray) -> None:
        np.maximum.at(self.base.T, self.cand.item_q[items], self.W[:, items].T)

    def _groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Unknown items sorted by question, the start of each question's run, its question, item → run."""
        U = self.unknown
        U = U[np.argsort(self.cand.item_q[U], kind="stable")]
        qU = self.cand.item_q[U]
        starts = np.flatnonzero(np.r_[True, qU[1:] != qU[:-1]]) if U.size else np.zeros(0, np.int64)
        grp = np.cumsum(np.r_[False, qU[1:] != qU[:-1]]) if U.size else np.zeros(0, np.int64)
        return U, starts, qU[starts], grp

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if self.pair_bounds is not None:
            lo, hi = self.pair_bounds(self.state.copy())
            return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        return self.q_slack[0].sum(1) / self.Q, self.q_slack[1].sum(1) / self.Q

    def _question_bounds(self, questions: np.ndarray) -> None:
        """Recompute the per-question bounds of every pair's Δ (pairs × questions, kept in ``q_slack``) for the
        given questions: base difference plus min(0, min_e t_e) (max likewise) over their unknown items."""
        a, b, base = self.a, self.b, self.base
        diff = base[a][:, questions] - base[b][:, questions]
        lo, hi = diff.copy(), diff.copy()
        U = self.unknown
        U = U[np.isin(self.cand.item_q[U], questions)]
        if U.size:
            U = U[np.argsort(self.cand.item_q[U], kind="stable")]
            qU = self.cand.item_q[U]
            starts = np.flatnonzero(np.r_[True, qU[1:] != qU[:-1]])
            col = np.searchsorted(questions, qU[starts])
            WU = self.W[:, U]
            for blk in _pair_blocks(self.n_pairs, U.size):
                ba, bb = base[a[blk]][:, qU], base[b[blk]][:, qU]
                t = np.maximum(ba, WU[a[blk]]) - np.maximum(bb, WU[b[blk]]) - (ba - bb)
                lo[blk, col] += np.minimum(np.minimum.reduceat(t, starts, axis=1), 0)
                hi[blk, col] += np.maximum(np.maximum.reduceat(t, starts, axis=1), 0)
        self.q_slack[0][:, questions] = lo
        self.q_slack[1][:, questions] = hi

    def sample_means(self, X: np.ndarray) -> np.ndarray:
        """System means (draws × S) when the unknown items (in ``self.unknown``'s order) take the labels X."""
        X = np.atleast_2d(np.asarray(X, dtype=bool))
        U0 = self.unknown
        U, starts, uq, grp = self._groups()
        X = X[:, np.searchsorted(U0, U)]
        out = np.repeat(self.base.sum(1)[None, :], X.shape[0], axis=0)
        if U.size:
            # only the relevant unknowns of a draw can raise a question's value: per (draw, question) the
            # largest weight among them (entries in draw-major, question order: nonzero's order on X), then
            # what it adds above the question's base
            WU, bq = self.W[:, U], self.base[:, uq]
            step = max(1, _CHUNK // max(U.size, 1))
            for i in range(0, X.shape[0], step):
                dq, gq, m = self._draw_question_max(X[i:i + step], WU, grp, uq.size)
                if dq.size == 0:
                    continue
                add = np.maximum(m, bq[:, gq]) - bq[:, gq]
                rows = min(step, X.shape[0] - i)
                out[i:i + step] += np.stack([np.bincount(dq, weights=a, minlength=rows) for a in add], 1)
        return out / self.Q

    def _draw(self, n: int) -> np.ndarray:
        return self.rng.random((n, self.unknown.size)) < self.p[self.unknown][None, :]

    def prob_a_beats_b(self) -> np.ndarray:
        m = self.sample_means(self._draw(self.draws))
        return ((m[:, self.a] - m[:, self.b]) > TOL).mean(0)

    def bears_on(self, und: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Boolean (undecided pairs × items): the item is in the top k of either system."""
        pairs = np.flatnonzero(und)
        Wi = self.W[:, items] > 0
        return Wi[self.a[pairs]] | Wi[self.b[pairs]]

    @staticmethod
    def _draw_question_max(X: np.ndarray, WU: np.ndarray, grp: np.ndarray,
                           n_questions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per (draw, question) with a relevant unknown in draw X: the draw, the question (index into the grouped
        questions) and each system's largest weight among those unknowns (S × groups). Entries come in
        draw-major, question order (np.nonzero's order on X, whose columns are grouped by question)."""
        d, e = np.nonzero(X)
        if d.size == 0:
            return d, d, np.zeros((WU.shape[0], 0))
        g = d * n_questions + grp[e]
        first = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        return d[first], grp[e[first]], np.maximum.reduceat(WU[:, e], first, axis=1)

    @classmethod
    def _question_values(cls, X: np.ndarray, WU: np.ndarray, grp: np.ndarray, bq: np.ndarray) -> np.ndarray:
        """Vq of :meth:`_question_terms` alone (draws × S × questions), from the relevant unknowns of each draw
        only: the same values, without the draws × S × items products."""
        Vq = np.repeat(bq[None], X.shape[0], axis=0)
        dq, gq, m = cls._draw_question_max(X, WU, grp, bq.shape[1])
        if dq.size:
            Vq[dq, :, gq] = np.maximum(m.T, bq[:, gq].T)
        return Vq

    def _question_terms(self, X: np.ndarray, WU: np.ndarray, starts, grp, bq):
        """Per draw: the question's value Vq (draws × S × questions with unknowns) and, per item, the value of its
        question without it (from the largest and second-largest term)."""
        Y = X[:, None, :] * WU[None]                                    # draws × S × items
        m1 = np.maximum.reduceat(Y, starts, axis=2)
        is_max = Y == m1[..., grp]
        only = np.add.reduceat(is_max, starts, axis=2)[..., grp] == 1
        m2 = np.maximum.reduceat(np.where(is_max, 0.0, Y), starts, axis=2)
        Vq = np.maximum(m1, bq[None])
        minus = np.maximum(np.where(is_max & only, m2[..., grp], m1[..., grp]), bq[None][..., grp])
        return Vq, minus

    def priority(self, und: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(items, Σ_undecided P(pivotal), number of undecided pairs borne on) over the unknown items.

        ``rest="normal"`` (default): the question of e is drawn, the sum R over the other questions is taken
        as normal with the mean and variance the draws give per question (independent questions: the
        variances add), so P(pivotal | draw) = |Φ((μ + δ1)/σ) − Φ((μ + δ0)/σ)|, MTC's normal approximation
        across questions; smooth even where one item's pivot is rarer than 1/draws. ``rest="draws"``: R from
        the same draw, a plain Monte Carlo estimate (exact in expectation, coarse for many questions)."""
        U0 = self.unknown
        U, starts, uq, grp = self._groups()
        pairs = np.flatnonzero(und)
        pri = np.zeros(U.size)
        if U.size == 0 or pairs.size == 0:
            return U0, np.zeros(U0.size), np.zeros(U0.size)
        S = self.cand.n_systems
        und_mat = np.zeros((S, S), bool)
        und_mat[self.a[pairs], self.b[pairs]] = True
        und_mat |= und_mat.T
        WU, bq = self.W[:, U], self.base[:, uq]
        X = self._draw(self.draws)[:, np.searchsorted(U0, U)]
        base_sum = self.base.sum(1)[None, :, None]
        tol = TOL * self.Q
        step = max(1, _CHUNK // (S * S * U.size))
        normal = self.rest == "normal"
        if normal:  # per question: the mean and covariance over the draws of the systems' values
            mean_q = np.zeros((S, uq.size))
            cov_q = np.zeros((uq.size, S, S))
            for i in range(0, X.shape[0], step):
                Vq = self._question_values(X[i:i + step], WU, grp, bq)
                mean_q += Vq.sum(0)
                cov_q += np.einsum("dsg,dtg->gst", Vq, Vq)
            mean_q /= X.shape[0]
            cov_q = cov_q / X.shape[0] - np.einsum("sg,tg->gst", mean_q, mean_q)
            total_mean = (mean_q - bq).sum(1) + self.base.sum(1)
            total_cov = cov_q.sum(0)
        # e is pivotal for (s, t) only if its gain g = max(V^{-e}, w(e)) − V^{-e} differs between s and t, so
        # only (draw, s, e) with g > 0 are visited, each against every t (a pair with both gains > 0 once)
        for i in range(0, X.shape[0], step):
            Vq, minus = self._question_terms(X[i:i + step], WU, starts, grp, bq)
            gain = np.maximum(minus, WU[None]) - minus
            d_i, s_i, e_i = np.nonzero(gain > 0)
            rows = np.arange(d_i.size)
            g, m = gain[d_i, :, e_i], minus[d_i, :, e_i]                # visits × S
            if normal:
                q = grp[e_i]
                rest = total_mean[None, :] - mean_q[:, q].T             # the other questions' mean, per system
                diag = np.diagonal(total_cov)[None, :] - np.diagonal(cov_q, axis1=1, axis2=2)[q]   # visits × S
                cross = total_cov[s_i] - cov_q[q, s_i, :]                # Cov(s, t) of the other questions
                var = diag[rows, s_i][:, None] + diag - 2 * cross
                x0 = (rest[rows, s_i] + m[rows, s_i])[:, None] - (rest + m)
            else:
                w0 = (Vq - bq[None]).sum(2, keepdims=True) + base_sum - Vq[..., grp] + minus
                w0 = w0[d_i, :, e_i]
                x0 = w0[rows, s_i][:, None] - w0
            x1 = x0 + g[rows, s_i][:, None] - g
            exact = ((x1 > tol) != (x0 > tol)) | ((x1 < -tol) != (x0 < -tol))
            if normal:
                sd = np.sqrt(np.maximum(var, 0.0))
                with np.errstate(divide="ignore", invalid="ignore"):
                    smooth = np.abs(ndtr(x1 / sd) - ndtr(x0 / sd))
                piv = np.where(sd > tol, smooth, exact)
            else:
                piv = exact.astype(float)
            piv *= und_mat[s_i] & ((g == 0) | (np.arange(S)[None, :] > s_i[:, None]))
            pri += np.bincount(e_i, weights=piv.sum(1), minlength=U.size)
        pri /= X.shape[0]
        n_pairs = self.bears_on(und, U).sum(0).astype(float)
        back = np.argsort(U)  # U0 is sorted by item index
        return U0, pri[back], n_pairs[back]

    def reveal(self, items: np.ndarray, labels: np.ndarray) -> None:
        items = np.asarray(items, dtype=np.int64)
        if (self.state[items] != -1).any():
            raise InputError(None, None, "reveal: an item is already judged")
        self.state[items] = np.asarray(labels, dtype=np.int8)
        self._raise_base(items[np.asarray(labels, dtype=bool)])
        self._question_bounds(np.unique(self.cand.item_q[items]))


def make_engine(cand: Candidates, p, metric: str, rbp_p: float = 0.8, pair_bounds: PairBounds | None = None,
                draws: int = 200, seed: int = 0, rest: str = "normal") -> LinearPairs | MaxPairs:
    """The engine of a metric: exact E/Var for linear metrics, seeded Monte Carlo for max-type ones."""
    if metric in LINEAR_METRICS:
        return LinearPairs(cand, p, metric, rbp_p)
    return MaxPairs(cand, p, metric, pair_bounds, draws, seed, rest)


@dataclass
class Plan:
    """The items to judge next, best first: ``items`` (indices into the candidates), their ``priority`` and
    ``p``, and the undecided pairs each bears on as CSR (``pairs[ptr[i]:ptr[i+1]]`` indexes
    :func:`system_pairs`)."""

    items: np.ndarray
    priority: np.ndarray
    p: np.ndarray
    ptr: np.ndarray
    pairs: np.ndarray

    def bears_on_labels(self, systems) -> list[str]:
        """Per item, its pairs as 'A|B;C|D' with the given system names."""
        a, b = system_pairs(len(systems))
        return [";".join(f"{systems[a[j]]}|{systems[b[j]]}" for j in self.pairs[self.ptr[i]:self.ptr[i + 1]])
                for i in range(self.items.size)]


def _order(items: np.ndarray, pri: np.ndarray, tie: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Positions of the items bearing on an undecided pair, best first: priority, tie-break, seeded key."""
    keep = np.flatnonzero(tie > 0)
    return keep[np.lexsort((key[items[keep]], -tie[keep], -pri[keep]))]


def plan(engine: LinearPairs | MaxPairs, stop: str = "hard", seed: int = 0) -> Plan:
    """The current ranking of the unknown items that bear on an undecided pair, by decision value. Without labels,
    the ranking does not change as items are set aside (the priorities of linear metrics are per item and only
    the set of undecided pairs changes, which needs labels): after a round of judgments, reveal them and plan
    again."""
    und = engine.undecided(stop)
    items, pri, tie = engine.priority(und)
    key = np.random.default_rng(seed).random(engine.cand.n_items)
    pos = _order(items, pri, tie, key)
    chosen = items[pos]
    ptr, pairs = np.zeros(chosen.size + 1, np.int64), np.zeros(0, np.int64)
    if chosen.size:
        und_idx = np.flatnonzero(und)
        rows, cols = [], []
        step = max(1, _CHUNK // max(und_idx.size, 1))
        for i in range(0, chosen.size, step):
            bo = engine.bears_on(und, chosen[i:i + step])               # pairs × items
            c, r = np.nonzero(bo.T)
            rows.append(c + i)
            cols.append(und_idx[r])
        rows, pairs = np.concatenate(rows), np.concatenate(cols)
        ptr[1:] = np.cumsum(np.bincount(rows, minlength=chosen.size))
    return Plan(chosen, pri[pos], engine.p[chosen], ptr, pairs)


@dataclass
class Trace:
    """One greedy run: the items revealed in order, the judgments made, and per pair the number of judgments
    after which it was resolved (−1: never)."""

    order: np.ndarray
    judgments: int
    decided_at: np.ndarray
    all_decided: bool


MAX_REFRESH = 0.05  # greedy on a max-type metric: re-rank after judging this fraction of the ranked items


def greedy(engine: LinearPairs | MaxPairs, reveal: Callable[[np.ndarray], np.ndarray], batch: int = 50,
           stop: str = "hard", max_judgments: int | None = None, seed: int = 0,
           refresh: float | None = None) -> Trace:
    """Judge in batches of the best ``batch`` items until every pair is resolved (hard) or besides sure at 95 %
    (soft), taking the best items of the current ranking. ``reveal(items) -> labels`` is the annotator (or a
    simulation of one); the engine is mutated. The stop is checked after every batch, so the counts are exact to
    the batch (a smaller batch, a finer count).

    Re-ranking. A linear metric's ranking depends on the undecided pairs only (the priorities are per item), so
    it is recomputed when they change and is otherwise the previous ranking less the judged items: the same
    order as re-ranking after every batch, exactly. A max-type metric's priorities also move with every label
    (a question's other items, the rest's normal) and each ranking costs a Monte Carlo over every unknown item,
    so it is recomputed once ``refresh`` (default :data:`MAX_REFRESH`, 0.05) × the items of the last ranking have
    been judged since; in between, the next items of the last ranking that still bear on an undecided pair are
    taken (items of pairs resolved since are skipped, not judged). ``refresh=0`` re-ranks after every batch (the
    exact but slow form: on FB-Test-S-C's 124k unknowns one ranking takes 1–3 s and a run ~300 batches, ~15 min
    per metric; the coarser ranking changes the counts by a few percent, see docs/guide/judgments.md)."""
    key = np.random.default_rng(seed).random(engine.cand.n_items)
    if refresh is None:
        refresh = 0.0 if isinstance(engine, LinearPairs) else MAX_REFRESH
    exact_reuse = isinstance(engine, LinearPairs)
    decided_at = np.where(engine.resolved(), 0, -1)
    order, n = [], 0
    ranked, at, und_ranked, since = np.zeros(0, np.int64), 0, None, 0
    while max_judgments is None or n < max_judgments:
        und = engine.undecided(stop)
        if not und.any():
            break
        changed = und_ranked is None or not np.array_equal(und, und_ranked)
        fresh = (at >= ranked.size or (changed and (exact_reuse or refresh == 0))
                 or (not exact_reuse and since >= max(refresh * ranked.size, 1)))
        if fresh:
            items, pri, tie = engine.priority(und)
            ranked, at, und_ranked, since = items[_order(items, pri, tie, key)], 0, und, 0
            if ranked.size == 0:
                break
        want = batch if max_judgments is None else min(batch, max_judgments - n)
        nxt = ranked[at:]
        open_ = engine.state[nxt] == -1                               # skip items judged since (by another caller)
        if changed and not fresh:   # max-type between rankings: skip the items that bear on no undecided pair now
            open_[open_] = engine.bears_on(und, nxt[open_]).any(0)
        open_ = np.flatnonzero(open_)[:want]
        if open_.size == 0:
            at, und_ranked = ranked.size, None
            continue
        take = nxt[open_]
        at += int(open_[-1]) + 1
        engine.reveal(take, np.asarray(reveal(take)))
        order.append(take)
        n += take.size
        since += take.size
        now = engine.resolved() if stop == "hard" else ~engine.undecided(stop)
        decided_at[(decided_at < 0) & now] = n
    done = not engine.undecided(stop).any()
    return Trace(np.concatenate(order) if order else np.zeros(0, np.int64), n, decided_at, done)


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
                open_ = (lo_x <= TOL) & (hi_x >= -TOL) & (hi_x - lo_x > TOL)
                key = (int(open_.sum()), float(np.minimum(-lo_x, hi_x)[open_].sum()), -x)
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
    if und.any() and U.size:
        step = max(1, _CHUNK // max(und.sum(), 1))
        for i in range(0, U.size, step):
            bo = engine.bears_on(und, U[i:i + step])
            worst_pair[und] += bo.sum(1)
            any_bears[i:i + step] = bo.any(0)
    per_draw, per_pair = [], []
    for d in range(draws):
        truth = np.zeros(engine.cand.n_items, np.int8)
        truth[U] = rng.random(U.size) < engine.p[U]
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


def sample_unknown_labels(engine: LinearPairs | MaxPairs, draws: int, seed: int) -> np.ndarray:
    """draws × |unknown| Bernoulli(p) labels of the engine's unknown items, seeded."""
    U = engine.unknown
    return np.random.default_rng(seed).random((draws, U.size)) < engine.p[U][None, :]


def tau_distribution(engine: LinearPairs | MaxPairs, reference: np.ndarray, draws: int = 1000, seed: int = 0,
                     level: float = 0.95, chunk: int = 250) -> TauDistribution:
    """τ-b(reference, system means) over ``draws`` seeded labellings of the unknowns (vectorised over draws in
    chunks); ``reference`` is the other test set's metric per system (higher = better on both)."""
    rng = np.random.default_rng(seed)
    U = engine.unknown
    taus = []
    for i in range(0, draws, chunk):
        X = rng.random((min(chunk, draws - i), U.size)) < engine.p[U][None, :]
        taus.append(tau_b_many(engine.sample_means(X), np.asarray(reference, dtype=float)))
    taus = np.concatenate(taus)
    lo, hi = np.nanquantile(taus, [(1 - level) / 2, (1 + level) / 2])
    return TauDistribution(taus, float(np.nanmean(taus)), float(lo), float(hi))
