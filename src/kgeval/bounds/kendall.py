"""Kendall's τ between a fixed reference ranking of S systems and the ranking under unknown labels.

The reference (here FB-Test-S, the seed set, evaluated as the paper does) gives each pair a sign s_ab ∈ {−1, 0,
+1}; the other ranking's sign is that of Δ_ab, which the labels move. τ here is τ-a,
Σ_{a<b} s_ab · sign(Δ_ab) / P with P = S(S − 1)/2 (equal to scipy's τ-b when neither ranking has ties).

* **Outer interval** (any labelling): with c decided concordant, d decided discordant and u undecided pairs
  (pairs the reference ties count 0), τ ∈ [(c − d − u)/P, (c − d + u)/P]. Pairs share labels, so the ends
  may not be attained. Pair by pair it tightens at no cost: an undecided pair that can tie but never be
  discordant (Δ ∈ [0, x] against a reference A > B) counts 0 at the lower end, not −1.
* **Exact** min and max over labellings for linear metrics (P@k, DCG@k, RBP@k): a 0–1 integer program, solved
  with scipy's ``milp`` (HiGHS) under a node limit (and a time limit). Variables: x_e ∈ {0, 1} for every unknown (question,
  entity) that some undecided pair depends on, and per undecided pair (a, b) with s_ab ≠ 0 two indicators
  y⁺ (strictly concordant) and y⁻ (strictly discordant). With t = s_ab · Q · Δ_ab(x) (linear in x) and
  M = −min t (from the pair's Δ bounds): t ≥ ε − (M + ε)(1 − y⁺) and t ≥ −M · y⁻; maximise Σ (y⁺ − y⁻).
  ε is a lower bound on any positive t: 1/k for P@k (Q · Δ is a multiple of 1/k, so ε is exact); 1e-5 for the
  real-valued weights (above the solver's feasibility tolerance; a mean difference below 1e-5/Q counts as a
  tie there, the one approximation of the program). The minimum is the maximum with every s_ab negated. The solver's status is reported; on a
  time limit the interval is the solver's proven bound intersected with the outer interval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from ..judgments.labels import UNKNOWN
from ..judgments.metrics import LINEAR, BoundedMetric
from .pairs import TOL

OPTIMAL = "optimal"
# HiGHS accepts constraint violations up to about 1e-6, so a smaller ε would let it count a tie as concordant
REAL_EPS = 1e-5


def tau_a(reference: np.ndarray, values: np.ndarray) -> float:
    """τ-a of two score vectors (higher = better in both)."""
    a, b = np.triu_indices(len(reference), 1)
    if len(a) == 0:
        return float("nan")
    return float((np.sign(reference[a] - reference[b]) * np.sign(values[a] - values[b])).sum() / len(a))


def reference_signs(reference: np.ndarray, tol: float = TOL) -> np.ndarray:
    d = reference[:, None] - reference[None, :]
    return np.where(d > tol, 1, np.where(d < -tol, -1, 0)).astype(np.int8)


@dataclass
class TauInterval:
    pairs: int
    concordant: int
    discordant: int
    undecided: int
    outer_lo: float
    outer_hi: float
    lo: float  # tightest proven ends: exact when status_lo / status_hi are optimal
    hi: float
    status_lo: str
    status_hi: str
    seconds: float = 0.0


def outer_interval(s_ref: np.ndarray, decided: np.ndarray, sign: np.ndarray, lo: np.ndarray | None = None,
                   hi: np.ndarray | None = None, tol: float = TOL) -> TauInterval:
    """Outer τ interval from the decisions (all arrays (S, S), upper triangle used). With the Δ bounds ``lo`` and
    ``hi`` the proven ends (``lo``/``hi`` of the result) are also tightened pair by pair: an undecided pair whose
    difference can reach 0 but not the discordant side (e.g. Δ ∈ [0, x] against a reference saying A > B)
    contributes 0 or +1, not −1."""
    a, b = np.triu_indices(len(s_ref), 1)
    s, dec, sg = s_ref[a, b], decided[a, b], sign[a, b]
    counted = s != 0
    c = int((counted & dec & (sg == s)).sum())
    d = int((counted & dec & (sg == -s)).sum())
    undecided = counted & ~dec
    u = int(undecided.sum())
    P = max(len(a), 1)
    out_lo, out_hi = (c - d - u) / P, (c - d + u) / P
    tight_lo, tight_hi = out_lo, out_hi
    if lo is not None and hi is not None and u:
        # s·Δ can be positive (concordant) / negative (discordant) under some labelling
        up = np.where(s > 0, hi[a, b] > tol, lo[a, b] < -tol)
        down = np.where(s > 0, lo[a, b] < -tol, hi[a, b] > tol)
        tight_hi = (c - d + int((undecided & up).sum())) / P
        tight_lo = (c - d - int((undecided & down).sum())) / P
    status = "no undecided pairs" if u == 0 else "outer bound only"
    return TauInterval(len(a), c, d, u, out_lo, out_hi, tight_lo, tight_hi, status, status)


def pair_rows(code: np.ndarray, pos: np.ndarray, m: BoundedMetric, ids: np.ndarray, n_unknown: int,
              a: np.ndarray, b: np.ndarray) -> sparse.csr_matrix:
    """Rows Q · (Δ_ab(x) − Δ_ab(0)) as a sparse matrix over the unknown pairs (linear metrics only)."""
    w = m.weights
    unk = code == UNKNOWN
    k = code.shape[2]
    rows, cols, vals = [], [], []
    for r, (i, j) in enumerate(zip(a.tolist(), b.tolist())):
        # a's unknowns: w_a − w_b; b's unknowns that a's list lacks: −w_b (see kgeval.bounds.pairs)
        p_ab = pos[i, j]
        c_a = w[None, :] - np.where(p_ab >= 0, w[np.maximum(p_ab, 0)], 0.0)
        mb = unk[j] & (pos[j, i] < 0)
        for sys_, mask, coef in ((i, unk[i], c_a), (j, mb, -np.broadcast_to(w, (code.shape[1], k)))):
            rows.append(np.full(int(mask.sum()), r))
            cols.append(ids[sys_][mask])
            vals.append(coef[mask])
    if not rows:
        return sparse.csr_matrix((len(a), n_unknown))
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(len(a), n_unknown))


def _max_concordance(C: sparse.csr_matrix, base: np.ndarray, s: np.ndarray, t_min: np.ndarray, eps: float,
                     time_limit: float, node_limit: int | None = None) -> tuple[float, str]:
    """max Σ_r sign(s_r (base_r + C_r x)) · s_r over binary x; returns (proven upper bound, status).

    The node limit makes the answer reproducible: HiGHS's branch and bound is deterministic, so the bound proven
    after a fixed number of nodes is the same on every run, whereas the bound at a time limit depends on the
    machine's speed. A solve stopped by the time limit therefore reports only the trivial bound (all pairs
    concordant), which leaves the outer interval in place, with status "time limit"."""
    m, n = C.shape
    used = np.unique(C.indices)
    C = C[:, used].tocsr() if len(used) < n else C
    n = C.shape[1]
    M = np.maximum(-t_min, 0.0)
    SC = sparse.diags(s.astype(float)) @ C
    zero = sparse.csr_matrix((m, m))
    A = sparse.vstack([sparse.hstack([SC, -sparse.diags(M + eps), zero]),
                       sparse.hstack([SC, zero, sparse.diags(M)])]).tocsr()
    sb = s * base
    lb = np.concatenate([eps - (M + eps) - sb, -sb])
    cost = np.concatenate([np.zeros(n), -np.ones(m), np.ones(m)])
    options = {"time_limit": max(float(time_limit), 0.01), "disp": False}
    if node_limit is not None:
        options["node_limit"] = int(node_limit)
    res = milp(cost, constraints=LinearConstraint(A, lb, np.full(2 * m, np.inf)),
               integrality=np.ones(n + 2 * m), bounds=Bounds(0, 1), options=options)
    if res.status == 0:
        return float(-res.fun), OPTIMAL
    # scipy reports HiGHS's node limit as an unrecognised status (HiGHS's "solution limit"): tell it by the count
    nodes = getattr(res, "mip_node_count", None)
    dual = getattr(res, "mip_dual_bound", None)
    if node_limit is not None and nodes is not None and nodes >= node_limit and dual is not None \
            and np.isfinite(dual):
        return float(-dual), "node limit"
    if res.status == 1:
        return float(m), "time limit"
    return float(m), f"solver status {res.status}: {res.message.strip()}"


def exact_interval(outer: TauInterval, s_ref: np.ndarray, decided: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                   today: np.ndarray, code: np.ndarray, pos: np.ndarray, ids: np.ndarray, n_unknown: int,
                   m: BoundedMetric, time_limit: float, node_limit: int | None = None) -> TauInterval:
    """The outer interval tightened by the 0–1 program (linear metrics), with the solver's status per end.
    ``lo``/``hi``: Δ bounds (S, S); ``today``: Δ at the all-zero labelling (S, S); ``ids``/``n_unknown``:
    :meth:`kgeval.judgments.labels.Instance.unknown_ids`."""
    if outer.undecided == 0 or m.kind != LINEAR:
        return outer
    start = time.perf_counter()
    a, b = np.triu_indices(len(s_ref), 1)
    keep = (s_ref[a, b] != 0) & ~decided[a, b]
    a, b = a[keep], b[keep]
    Q = code.shape[1]
    C = pair_rows(code, pos, m, ids, n_unknown, a, b)
    base = Q * today[a, b]
    s = s_ref[a, b].astype(float)
    fixed = outer.concordant - outer.discordant
    eps = (1.0 / m.weights.size) * 0.999 if m.base == "P" else REAL_EPS
    out = {}
    for end, sgn in (("hi", 1.0), ("lo", -1.0)):
        ss = sgn * s
        t_min = Q * np.where(ss > 0, lo[a, b], -hi[a, b])
        # half the limit for the maximum, the rest for the minimum
        share = 0.5 * time_limit if end == "hi" else time_limit - (time.perf_counter() - start)
        remaining = max(share, 0.01)
        best, status = _max_concordance(C, base, ss, t_min, eps, remaining, node_limit)
        out[end] = (sgn * (fixed * sgn + best) / outer.pairs, status)
    tau_hi = min(out["hi"][0], outer.hi)
    tau_lo = max(out["lo"][0], outer.lo)
    return TauInterval(outer.pairs, outer.concordant, outer.discordant, outer.undecided, outer.outer_lo,
                       outer.outer_hi, tau_lo, tau_hi, out["lo"][1], out["hi"][1], time.perf_counter() - start)
