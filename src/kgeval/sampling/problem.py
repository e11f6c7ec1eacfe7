"""One metric's comparisons on candidates with unknown labels, in the units the metric is sampled in: items for
a linear metric (d_e per item and pair, the known part K), questions for RR@k and Success@k (the cost of a
question, the prior's expected per-question difference μ_q and, by Monte Carlo under the prior, Var_p(D_q) for the
allocation only).

A sampled question is judged in rank order (``judging="rank_order"``, the default): each compared list is judged
from the top down to its first relevant item and no further (the items below it cannot move its RR@k or
Success@k), so a question costs a number of judgments that depends on its labels: the design allocates with its
expectation under the prior (:meth:`Problem.cost_of`) and a simulation counts what the hidden labels make it cost
(:meth:`Problem.judged_of`). ``judging="all"`` judges every unknown above each list's first *known* relevant
item, a fixed cost. Either way the sampled question's D_q is observed exactly, so the estimator is the same.

The Monte Carlo draws a question's labels together, not one by one (``mc_rho``, :data:`LABEL_CORRELATION`): a
Gaussian copula keeps each item's probability p_e and correlates the items of one question with ρ, the latent
relevance √ρ z_q + √(1 − ρ) ε_e falling below Φ⁻¹(p_e). Labels of one question go together (a question with
many answers has many relevant candidates, a question with one has few); drawn independently, a question's lists
looked likelier to stop at an early relevant item than they are, and plans judged more than they planned. ρ is
set by the spread of the number relevant per question about the prior's expectation on FB-Test-S-C's hidden
items (docs/guide/sampling.md says how, and what it changed). It moves the allocation only (Var(D_q) and the
expected cost); the estimator's μ_q is the prior's exact expectation either way.

``truth`` gives the unknown labels where they are known (the simulation's hidden labels; zeros in a plan, whose
true Δ is then meaningless): the estimator reads them only on sampled units."""

from __future__ import annotations

import hashlib

import numpy as np
from scipy.special import ndtri

from ..errors import InputError
from ..judgments.candidates import Candidates, metric_weights
from . import design as dz
from . import weights as wt
from .estimate import Estimate, difference, question_difference

JUDGING = ("rank_order", "all")
#: ρ of the Monte Carlo's Gaussian copula within a question (module docstring); a plan records its ρ (``mc_rho``)
LABEL_CORRELATION = 0.5
LEGACY_LABEL_CORRELATION = 0.0  # the ρ of a plan whose sidecar does not record one: independent labels
#: labellings behind a question's Var_p(D_q) and expected cost (``sampling.mc_draws``'s default, declared here for
#: the code): 64 left RR@10's median pair 4-5 judgments over its 200 on the budget grid, 256 put it under, for four
#: times an RR plan's time (docs/guide/sampling.md)
MC_DRAWS = 256


class Problem:
    """One metric on candidates whose state marks the unknowns (−1): per pair the true Δ (``true``, from
    ``truth``), per unit and pair the variances under a prior, and the estimate from a draw."""

    def __init__(self, cand: Candidates, truth: np.ndarray, metric: str, rbp_p: float = 0.8, mc_draws: int = MC_DRAWS,
                 seed: int = 0, judging: str = "rank_order", p_clip: float | None = None,
                 mc_rho: float | None = None):
        if judging not in JUDGING:
            raise InputError(None, None, f"sampling.judging {judging!r}: expected one of {JUDGING}")
        self.p_clip = dz.P_CLIP if p_clip is None else float(p_clip)  # an item metric's allocation only
        if not 0 <= self.p_clip < 0.5:
            raise InputError(None, None, f"p_clip {self.p_clip:g}: expected a clip in [0, 0.5)")
        self.mc_rho = LABEL_CORRELATION if mc_rho is None else float(mc_rho)  # a question metric's allocation only
        if not 0 <= self.mc_rho < 1:
            raise InputError(None, None, f"mc_rho {self.mc_rho:g}: expected a correlation in [0, 1)")
        self.cand, self.judging = cand, judging
        self.unknown = cand.state == -1
        self.x = np.where(self.unknown, truth, cand.state).astype(float)
        self.linear = wt.is_linear(metric)
        self.a, self.b = cand.pairs
        m, w = metric_weights(cand, metric, rbp_p)  # the metric resolved once: its weights per rank and item
        self.Q, self.mc_draws, self.seed = cand.n_questions, mc_draws, seed
        self._drawn_key, self._drawn = None, []  # the last prior's labellings (:meth:`_labellings`)
        if self.linear:
            d = wt.pair_differences(cand, w)
            self.true = self.x @ d
            U = np.flatnonzero(self.unknown)
            self.known = self.x[~self.unknown] @ d[~self.unknown]
            self.d, self.xu, self.U = d[U], self.x[U], U
            self.cost = np.ones(U.size)
        else:
            self.pos, self.g = wt.position_items(cand), m.weights
            m = wt.max_metric(self.pos, self.g, self.x)
            self.dq = (m[self.a] - m[self.b]).T
            self.true = self.dq.mean(0)
            # a known relevant item closes the list below it: only the unknowns above it are judged
            self.relevant = np.where(self.unknown, 0, self.x)
            self.open = wt.open_positions(self.pos, self.unknown, self.relevant)
            self.inert = wt.inert_questions(self.pos, self.unknown, self.relevant, self.a, self.b)
            self.cost = wt.question_costs(self.pos, self.unknown, None, self.relevant).astype(float)

    def settings(self) -> dict:
        """What a plan's sidecar records of the problem besides its design, so an estimate rebuilds the same one
        (:func:`.sheet.plan_pi`): the Monte Carlo's draws, seed and correlation, the judging and the allocation's
        clip."""
        return {"mc_draws": self.mc_draws, "mc_seed": self.seed, "judging": self.judging, "p_clip": self.p_clip,
                "mc_rho": self.mc_rho}

    def variances(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per unit and pair v (under the prior) and the prior's expected per-question difference (max)."""
        if self.linear:
            return dz.item_variances(self.d, p[self.U], self.p_clip), None
        p_eff = np.where(self.unknown, p, self.x)
        e = wt.expected_max_metric(self.pos, self.g, p_eff)
        mu = (e[self.a] - e[self.b]).T
        s1 = np.zeros((self.a.size, self.Q))
        s2 = np.zeros_like(s1)
        n = 0
        # Monte Carlo of Var_p(D_q): the allocation only, never the estimate
        for xs in self._labellings(p, self.mc_draws, 7):
            m = wt.max_metric(self.pos, self.g, xs.astype(float))
            dd = m[:, self.a] - m[:, self.b]
            s1 += dd.sum(0)
            s2 += (dd * dd).sum(0)
            n += len(xs)
        var = np.maximum(s2 / n - (s1 / n) ** 2, 0) + 1e-12
        return var.T / self.Q ** 2, mu

    def eligible(self, cols) -> np.ndarray:
        if self.linear:
            return (self.d[:, cols] != 0).any(1)
        systems = self.systems_of(cols)
        live = ~self.inert[:, np.asarray(cols)].all(1)  # some compared pair's D_q can still move
        return (wt.question_costs(self.pos, self.unknown, systems, self.relevant) > 0) & live

    def _labellings(self, p: np.ndarray, draws: int, stream: int):
        """Labellings drawn from the prior, 8 at a time ((8, N) booleans each; the known items keep their
        labels), a question's together with ρ = ``mc_rho`` (module docstring; ρ = 0: each item on its own, as
        plans drew them before). The seed and the stream fix them, so the last prior's are kept and drawn again
        only for another prior: :meth:`cost_of` reads the same ones for each pair of a plan (a plan of 78 pairs
        drew them 79 times, about 40 % of an RR@10 plan's time)."""
        key = (draws, stream, p.dtype.str, hashlib.sha1(np.ascontiguousarray(p).tobytes()).digest())
        if self._drawn_key != key:
            rng = np.random.default_rng([self.seed, stream])
            if self.mc_rho > 0:
                q, a = self.cand.item_q, ndtri(np.clip(p, 0.0, 1.0))
                r, s = np.sqrt(self.mc_rho), np.sqrt(1.0 - self.mc_rho)

                def draw():
                    z = rng.standard_normal((8, self.Q))
                    return r * z[:, q] + s * rng.standard_normal((8, p.size)) < a
            else:
                def draw():
                    return rng.random((8, p.size)) < p
            self._drawn = [np.where(self.unknown, draw(), self.x > 0) for _ in range(0, draws, 8)]
            self._drawn_key = key
        return self._drawn

    def systems_of(self, cols) -> np.ndarray:
        """The systems of the pairs ``cols``, each once."""
        return np.unique(np.concatenate([self.a[np.asarray(cols)], self.b[np.asarray(cols)]]))

    def cost_of(self, cols, p: np.ndarray | None = None) -> np.ndarray:
        """Per unit, the judgments it costs for the pairs ``cols``: 1 per item; per question the open unknowns
        of the compared lists (``judging="all"``, or without a prior ``p``), or their expected number under
        ``p`` when each list is judged down to its first relevant item (``"rank_order"``, by Monte Carlo)."""
        if self.linear:
            return self.cost
        systems = self.systems_of(cols)
        if p is None or self.judging == "all":
            return wt.question_costs(self.pos, self.unknown, systems, self.relevant).astype(float)
        total, n = np.zeros(self.Q), 0
        for xs in self._labellings(p, max(self.mc_draws, 8), 13):
            total += wt.question_costs(self.pos, self.unknown, systems, xs, judged=True).sum(0)
            n += len(xs)
        return total / n

    def judged_of(self, cols) -> np.ndarray:
        """Per unit, the judgments the labels ``truth`` make it cost (a simulation's count)."""
        if self.linear or self.judging == "all":
            return self.cost_of(cols)
        return wt.question_costs(self.pos, self.unknown, self.systems_of(cols), self.x, judged=True).astype(float)

    def estimate(self, p, mu, pi, incl, cols) -> Estimate:
        sub = np.flatnonzero(pi > 0)
        if self.linear:
            pu = p[self.U]
            base = self.known[cols] + pu @ self.d[:, cols]
            return difference(base - pu[sub] @ self.d[sub][:, cols], self.d[sub][:, cols], pu[sub], self.xu[sub],
                              pi[sub], incl)
        return _question(self, mu, pi, incl, sub, cols)


def _question(pb: Problem, mu, pi, incl, sub, cols) -> Estimate:
    """Questions outside ``sub`` (π = 0) hold no unknown of the compared lists: their D_q is μ_q exactly."""
    e = question_difference(mu[sub][:, cols], pb.dq[sub][:, cols], pi[sub], incl, pb.Q)
    rest = np.setdiff1d(np.arange(pb.Q), sub)
    return Estimate(e.delta + mu[rest][:, cols].sum(0) / pb.Q, e.var, e.units, e.level)
