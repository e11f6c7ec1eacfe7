"""Exact per-question minimum and maximum of the difference M_A − M_B of two systems over every labelling of the
unknowns, for all ordered pairs of systems at once.

Labels of different questions are independent, so the bounds of the mean difference are the means of the
per-question bounds (exact). Within a question, with U the unknown entities, r_s(e) the position of e in
system s's top k and w_s(e) = w_{r_s(e)} (0 when e is not in s's top k):

**Linear metrics** (P@k, DCG@k, RBP@k): M_A − M_B = Σ_e (w_A(e) − w_B(e)) x_e, a sum of independent terms, so

    Δ_min = Σ_{e ∈ J} (w_A(e) − w_B(e)) x_e + Σ_{e ∈ U} min(0, w_A(e) − w_B(e)),  Δ_max likewise with max.

An unknown in both lists contributes w_A − w_B once; one only in B's list contributes −w_B to Δ_min.

**Max metrics** (Success@k: g_i = 1; RR@k: g_i = 1/i), M_s = max_{e} g(r_s(e)) x_e with g non-increasing.
Claim: some labelling that maximises M_A − M_B sets at most one unknown to 1. Take any maximiser X and let e*
be an entity attaining M_A(X) (the first relevant entity of A's list, or none). Let X' keep the judged labels,
set e* to 1 if it is unknown and every other unknown to 0. Then M_A(X') = M_A(X): e* is still relevant, and no
entity ranked above e* in A's list became relevant (those that are judged had label 0 under X already, since
e* was first); and M_B(X') ≤ M_B(X) because M_B is non-decreasing and X' ≤ X. So X' is a maximiser too. Hence,
with a_0 = M_A and b_0 = M_B at the all-zero labelling (the lower bounds),

    Δ_max = max(a_0 − b_0,  max_{e ∈ U, e in A's top k} [max(g(r_A(e)), a_0) − max(g_B(e), b_0)]),

g_B(e) = g(r_B(e)) if e is in B's top k, else 0; and Δ_min(A, B) = −Δ_max(B, A). An unknown only in B's list
never helps the maximum. This is the "small enumeration over the ≤ 2k unknowns" in closed form: k candidates
per ordered pair and question, vectorised. ``tests/test_bounds.py`` checks both shapes against brute force.

A pair is decided when Δ_lo > 0 or Δ_hi < 0 (sign +1 / −1), and decided *tied* when Δ_lo = Δ_hi = 0 (no
labelling separates the systems); otherwise undecided (sign 0).
"""

from __future__ import annotations

import numpy as np

from ..judgments.labels import UNKNOWN
from ..judgments.metrics import LINEAR, BoundedMetric, system_bounds

TOL = 1e-12  # floating sums of the same weights in another order; any real difference is far larger


def question_pair_bounds(code: np.ndarray, pos: np.ndarray, m: BoundedMetric) -> tuple[np.ndarray, np.ndarray]:
    """Per ordered pair (a, b) and question: min and max of M_a − M_b, arrays (S, S, Q).

    ``code``: (S, Q, k) codes; ``pos``: :func:`kgeval.judgments.labels.match_positions` of the same lists. Only the
    maximum is computed, for every ordered pair: Δ_min(a, b) = −Δ_max(b, a)."""
    lo0, _ = system_bounds(code, m)  # (S, Q)
    known = lo0[:, None, :] - lo0[None, :, :]
    unk = code == UNKNOWN
    w = m.weights
    w_other = np.append(w, 0.0)[pos]  # (S, S, Q, k): w_b of a's i-th entity, 0 where b lacks it (pos −1)
    if m.kind == LINEAR:
        # an unknown of a's list adds max(0, w_a − w_b); one only in b's list adds max(0, −w_b) = 0
        hi = known + np.einsum("abqi,aqi->abq", np.maximum(w - w_other, 0.0), unk.astype(float))
    else:
        gain = np.maximum(w, lo0[:, None, :, None]) - np.maximum(w_other, lo0[None, :, :, None])
        hi = np.maximum(known, np.where(unk[:, None], gain, -np.inf).max(-1))
    return -hi.transpose(1, 0, 2), hi


def pair_bounds(code: np.ndarray, pos: np.ndarray, m: BoundedMetric) -> tuple[np.ndarray, np.ndarray]:
    """Δ_lo and Δ_hi of mean_q M_a − mean_q M_b for every ordered pair, (S, S)."""
    lo, hi = question_pair_bounds(code, pos, m)
    if code.shape[1] == 0:
        return np.zeros(lo.shape[:2]), np.zeros(hi.shape[:2])
    return lo.mean(-1), hi.mean(-1)


def decisions(lo: np.ndarray, hi: np.ndarray, tol: float = TOL) -> tuple[np.ndarray, np.ndarray]:
    """(decided, sign) per pair from Δ bounds: sign +1 when Δ_lo > 0, −1 when Δ_hi < 0, 0 otherwise; decided
    also when both bounds are 0 (the systems tie under every labelling)."""
    sign = np.where(lo > tol, 1, np.where(hi < -tol, -1, 0)).astype(np.int8)
    tied = (np.abs(lo) <= tol) & (np.abs(hi) <= tol)
    return (sign != 0) | tied, sign
