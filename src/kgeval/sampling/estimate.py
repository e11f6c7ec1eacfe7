"""The difference estimator with the prior as control variate, its variance and the 95 % interval.

Items (linear metrics): Δ = K + Σ_U d_e x_e over the unknown items U. With a Poisson sample S drawn with π_e,

    Δ̂ = K + Σ_U d_e p_e + Σ_{e∈S} d_e (x_e − p_e) / π_e,

unbiased for any p (E[1_S(e)] = π_e), with variance Σ_U (1/π_e − 1) d_e² (x_e − p_e)², estimated without bias by
V̂ = Σ_{e∈S} (1 − π_e) d_e² (x_e − p_e)² / π_e² (Särndal, Swensson and Wretman, Model Assisted Survey Sampling,
1992, the difference estimator). Questions (RR@k, Success@k): the same with the question as unit, its true
difference D_q (each compared list judged down to its first relevant item) and the prior's expected difference μ_q = E_p[D_q],
all divided by Q. The interval is Δ̂ ± t √V̂ with Student's t quantile on m − 1 degrees of freedom, m the sampled
units whose term is not 0 for the pair (no interval below two): with many units it is the normal interval, with
a handful it is wider, where the normal one undercovers. A pair is decided when its interval excludes 0.
Arrays broadcast over a leading axis of repetitions, so a simulation estimates every repetition at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design import quantile

ROUNDING = 1e-12  # below this a difference of metric means is rounding, not a difference


@dataclass
class Estimate:
    """Per (repetition,) pair: ``delta``, ``var`` (V̂), ``units`` (sampled units with a non-zero term),
    ``lo``/``hi`` of the interval, ``decided``."""

    delta: np.ndarray
    var: np.ndarray
    units: np.ndarray
    level: float = 0.95

    @property
    def half_width(self) -> np.ndarray:
        df = np.asarray(self.units, dtype=float) - 1
        return np.where(df >= 1, quantile(self.level, self.units) * np.sqrt(np.maximum(self.var, 0.0)), np.inf)

    @property
    def lo(self) -> np.ndarray:
        return self.delta - self.half_width

    @property
    def hi(self) -> np.ndarray:
        return self.delta + self.half_width

    @property
    def decided(self) -> np.ndarray:
        # a census (every unit judged) has a zero-width interval: a Δ̂ that is 0 but for rounding decides nothing
        return (self.lo > ROUNDING) | (self.hi < -ROUNDING)


def _scaled(incl: np.ndarray, resid: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x − p)/π and (1 − π)(x − p)²/π² on the sampled units, 0 elsewhere."""
    inv = np.divide(1.0, pi, out=np.zeros_like(pi, dtype=float), where=pi > 0)
    r = np.where(incl, resid * inv, 0.0)
    return r, r * r * (1.0 - pi)


def difference(known: np.ndarray, d: np.ndarray, p: np.ndarray, x: np.ndarray, pi: np.ndarray, incl: np.ndarray,
               level: float = 0.95) -> Estimate:
    """Item sampling over the unknown items (rows of ``d`` (U, P)): ``known`` K per pair, prior p, labels x
    (read only where ``incl`` (…, U) is true), inclusion probabilities π."""
    resid = np.where(incl, np.asarray(x, dtype=float) - p, 0.0)
    r, r2 = _scaled(incl, resid, pi)
    units = (r != 0).astype(float) @ (d != 0)
    return Estimate(known + p @ d + r @ d, r2 @ (d * d), units, level)


def question_difference(mu: np.ndarray, dq: np.ndarray, pi: np.ndarray, incl: np.ndarray, n_questions: int,
                        level: float = 0.95) -> Estimate:
    """Question sampling: μ_q and the observed D_q (Q, P) (read only on sampled questions), π_q, indicators
    (…, Q); Δ̂ = (Σ_q μ_q + Σ_{q∈S} (D_q − μ_q)/π_q) / Q."""
    Q = float(n_questions)
    r, r2 = _scaled(incl, np.ones(incl.shape), pi)  # 1/π and (1 − π)/π² on sampled questions
    resid = np.nan_to_num(dq - mu)  # an unsampled question's D_q is never read
    units = (r != 0).astype(float) @ (resid != 0)
    return Estimate((mu.sum(0) + r @ resid) / Q, (r2 @ (resid * resid)) / Q ** 2, units, level)
