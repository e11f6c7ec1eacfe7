"""An anytime-valid confidence sequence for a campaign that looks after every judgment.

Design: draws with replacement, item e with probability q_e (the plan's π normalised); each draw gives
Y_t = K + Σ_U d_e p_e + d_e (x_e − p_e) / q_e, i.i.d. with mean Δ and bounded in [lo, hi], which the prior and
the design fix before the first judgment. On X_t = (Y_t − lo)/(hi − lo) ∈ [0, 1]: the predictable plug-in
empirical-Bernstein confidence sequence of Waudby-Smith and Ramdas (JRSS-B 2024, Theorem 2),

    C_t = Σλ_i X_i / Σλ_i ± (log(2/α) + Σ v_i ψ_E(λ_i)) / Σλ_i,   v_i = 4 (X_i − μ̂_{i−1})²,
    ψ_E(λ) = (−log(1 − λ) − λ) / 4,   λ_t = min(√(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), 1/2),

with μ̂_t = (1/2 + Σ_{i≤t} X_i)/(t + 1) and σ̂²_t = (1/4 + Σ_{i≤t} (X_i − μ̂_i)²)/(t + 1); P(Δ ∉ C_t for some
t) ≤ α, so a decision taken at any look, however chosen, keeps its error rate. The running intersection is
reported (still valid). Simpler than the betting sequences of the same paper, and wider.
"""

from __future__ import annotations

import numpy as np


def eb_sequence(y: np.ndarray, lo: float, hi: float, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper limits after every look, (…, T) for observations y (…, T) in [lo, hi]."""
    if hi <= lo:
        return np.full(y.shape, lo), np.full(y.shape, hi)
    x = np.clip((y - lo) / (hi - lo), 0.0, 1.0)
    T = x.shape[-1]
    t = np.arange(1, T + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, -1)) / (t + 1)
    sig2 = (0.25 + np.cumsum((x - mu) ** 2, -1)) / (t + 1)
    prev_mu = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mu[..., :-1]], -1)
    prev_sig2 = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sig2[..., :-1]], -1)
    log2a = np.log(2 / alpha)
    lam = np.minimum(np.sqrt(2 * log2a / (prev_sig2 * t * np.log1p(t))), 0.5)
    v = 4 * (x - prev_mu) ** 2
    psi = (-np.log1p(-lam) - lam) / 4
    s_lam = np.cumsum(lam, -1)
    center = np.cumsum(lam * x, -1) / s_lam
    margin = (log2a + np.cumsum(v * psi, -1)) / s_lam
    lower = np.maximum.accumulate(np.clip(center - margin, 0, 1), -1)
    upper = np.minimum.accumulate(np.clip(center + margin, 0, 1), -1)
    return lo + (hi - lo) * lower, lo + (hi - lo) * upper


def draws_range(base: float, d: np.ndarray, p: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """[lo, hi] of Y = base + d_e (x_e − p_e)/q_e over the items with q_e > 0 and x ∈ {0, 1}."""
    ok = q > 0
    t0, t1 = -d[ok] * p[ok] / q[ok], d[ok] * (1 - p[ok]) / q[ok]
    return base + float(np.minimum(t0, t1).min(initial=0.0)), base + float(np.maximum(t0, t1).max(initial=0.0))
