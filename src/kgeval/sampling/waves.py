"""Waves: a plan drawn again, for the asked pairs, after the labels of the earlier waves are in hand (issue 62).

**The design.** Wave w is a Poisson draw of its own: every unit u (an item, or a question for RR@k and
Success@k) independently with π_w,u, the optimal design with its uniform floor (:func:`.design.design`) for the
pairs the wave asks, *from the prior alone*, at a budget b_w. The waves are drawn independently (their own
random numbers), so a unit is in the union sample S = S_1 ∪ … ∪ S_W with probability

    π_u = 1 − Π_w (1 − π_w,u),

and S is itself a Poisson sample with those π: the estimator stays the one-wave difference estimator
(:mod:`.estimate`) with π_u in place of the single wave's π, unbiased for any prior, its variance estimate
and interval unchanged. A unit an earlier wave drew may be drawn again: it costs nothing (its label is in hand).
The labels in hand choose only the next wave's *size*: b_w is set so that the units not yet drawn are expected to
cost the further judgments that would decide the asked pairs at the estimate in hand (:mod:`.more`), or the
number asked. An empty wave (b_w = 0) gives π_w = 0 everywhere: π and the estimate are the earlier waves'.

**Why not a design fitted to the labels in hand.** A second wave whose π depends on the first wave's labels
(through an updated prior, say) is no longer a fixed design: π_u would be an expectation over the first wave's
draws, which nobody can compute, and the union estimator would carry a bias. Here π_w,u is a function of the
prior, the asked pairs and the one number b_w. With b_w fixed in advance the union estimator is exactly
unbiased; choosing b_w from the estimate in hand (continue while undecided) is a stopping rule, whose effect
on coverage ``benchmarks/sampling_waves.py`` measures on the hidden labels (it is what makes a sequential design
lose its error rate; with two or three waves it stays within the route's 0.94).

On disk an extended plan is the whole plan: its sidecar holds every wave's units (a ``wave`` column), each with
its union π, so ``kgeval sample-estimate`` and ``kgeval campaign`` read it as any plan; ``sampling_waves.csv``
records each wave's pairs, budget, design and seed, from which the earlier waves' π over the units they did not
draw are recomputed (and checked against the sidecar's π on the units they did).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import design as dz
from .problem import Problem

WAVE_COLUMNS = ("wave", "pairs", "budget", "design", "floor_share", "seed", "new_units", "new_judgments")


def union_pi(*pis: np.ndarray) -> np.ndarray:
    """π_u = 1 − Π_w (1 − π_w,u): the inclusion probability in the union of independent Poisson waves."""
    out = np.asarray(pis[0], dtype=float).copy()
    for pi in pis[1:]:  # π + π_w (1 − π): a wave with π_w = 0 leaves π exactly as it was
        out = out + np.asarray(pi, dtype=float) * (1.0 - out)
    return out


def wave_design(pb: Problem, v: np.ndarray, p: np.ndarray, cols: np.ndarray, budget: float, kind: str = "optimal",
                floor_share: float = 0.1) -> dz.Design:
    """Wave's design over every unit for the pairs ``cols`` at the nominal ``budget`` (from the prior only)."""
    cols = np.asarray(cols)
    return dz.design(v[:, cols], pb.eligible(cols), budget, kind, pb.cost_of(cols, p), floor_share)


def budget_for_new(pb: Problem, v: np.ndarray, p: np.ndarray, cols: np.ndarray, drawn: np.ndarray, new: float,
                   kind: str = "optimal", floor_share: float = 0.1) -> float:
    """The nominal budget b whose design for the pairs ``cols`` is expected to cost ``new`` judgments on the units
    not ``drawn`` yet (:func:`nominal_budget` on the problem's units)."""
    cols = np.asarray(cols)
    return nominal_budget(v[:, cols], pb.eligible(cols), pb.cost_of(cols, p), drawn, new, kind, floor_share)


def nominal_budget(v: np.ndarray, eligible: np.ndarray, cost: np.ndarray, drawn: np.ndarray, new: float,
                   kind: str = "optimal", floor_share: float = 0.1) -> float:
    """The nominal budget b of :func:`.design.design` (per-unit variances ``v`` (U, P)) whose units not ``drawn``
    are expected to cost ``new`` judgments: bisection, that cost growing with b; the whole eligible cost if even
    that falls short, 0 for no new judgment."""
    total = float(cost[eligible].sum())
    if new <= 0 or total <= 0:
        return 0.0

    def fresh(b):
        d = dz.design(v, eligible, b, kind, cost, floor_share)
        return float((d.pi * cost)[~drawn].sum())

    if fresh(total) <= new:
        return total
    lo, hi = 0.0, total
    while hi - lo > 1e-3 * max(1.0, new) / 64:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fresh(mid) < new else (lo, mid)
    return hi


@dataclass
class Wave:
    """One wave's draw: its design, the units it drew (``drawn``, per unit), which of them the uniform floor drew
    (``audit``) and the new ones (not drawn by an earlier wave)."""

    design: dz.Design
    drawn: np.ndarray
    audit: np.ndarray
    new: np.ndarray


def draw_wave(dsg: dz.Design, before: np.ndarray, rng: np.random.Generator) -> Wave:
    """Draw the wave's two components independently (as :func:`.plan.make_plan` does) and mark the units no
    earlier wave (``before``) drew."""
    u_opt, u_uni = rng.random(dsg.pi.size), rng.random(dsg.pi.size)
    audit = u_uni < dsg.pi_uniform
    drawn = (u_opt < dsg.pi_opt) | audit
    return Wave(dsg, drawn, audit, drawn & ~np.asarray(before, bool))
