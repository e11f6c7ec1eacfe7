"""What sampled negatives do: the same metrics against k random negatives per question (OGB's protocol) beside
full filtered ranking, per system the difference, and Kendall's τ between the systems' orders under the two.

OGB (ogbl-wikikg2) ranks each test answer against k = 500 entities drawn at random per question, unfiltered,
with the realistic rank 1 + #(negatives above) + #(negatives tied) / 2. τ's interval is a percentile bootstrap
over the ranked answers (both protocols' values resampled together, so the pairing is kept).
"""

from __future__ import annotations

import numpy as np
import torch

from ..data.questions import Questions
from ..scores.ranking import Judged


def sampled_ranks(scorer, questions: Questions, judged: Judged, rows: np.ndarray, k: int, seed: int,
                  batch: int = 4096) -> np.ndarray:
    """Realistic rank of each judged row in ``rows`` among k uniform random negatives of its question (the
    same negatives for every system: they depend on the seed and the question only)."""
    rng = np.random.default_rng(seed)
    negs = rng.integers(0, questions.num_entities, size=(len(questions), k))
    out = np.empty(len(rows), np.float64)
    device = scorer.device
    for b0 in range(0, len(rows), batch):
        sel = rows[b0:b0 + batch]
        q = judged.q[sel]
        for side in (0, 1):
            m = np.flatnonzero(questions.side[q] == side)
            if not len(m):
                continue
            with torch.no_grad():
                v = scorer.query(torch.as_tensor(questions.entity[q[m]], device=device),
                                 torch.as_tensor(questions.relation[q[m]], device=device), side)
                pos = scorer.some(v, torch.as_tensor(judged.entity[sel[m]], device=device))
                neg = scorer.some(v, torch.as_tensor(negs[q[m]], device=device))
            gt = (neg > pos[:, None]).sum(1).cpu().numpy()
            eq = (neg == pos[:, None]).sum(1).cpu().numpy()
            out[b0 + m] = 1.0 + gt + eq / 2.0
    return out


def kendall_tau(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's τ-b between rows of ``a`` and ``b`` (…, S) (the systems' values under two protocols)."""
    i, j = np.triu_indices(a.shape[-1], 1)
    da = np.sign(a[..., i] - a[..., j])
    db = np.sign(b[..., i] - b[..., j])
    num = (da * db).sum(-1)
    den = np.sqrt((da != 0).sum(-1) * (db != 0).sum(-1))
    return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def compare(full: np.ndarray, sampled: np.ndarray, reps: int = 1000, seed: int = 0, level: float = 0.95,
            chunk: int = 50) -> dict:
    """``full`` and ``sampled``: (S, N) per-answer values (e.g. reciprocal ranks) of S systems under both
    protocols. Per system both means and the difference; τ between the systems' orders with its bootstrap
    interval."""
    S, N = full.shape
    rng = np.random.default_rng(seed)
    taus = []
    for r0 in range(0, reps, chunk):
        m = min(chunk, reps - r0)
        idx = rng.integers(0, N, size=(m, N))
        taus.append(kendall_tau(full[:, idx].mean(-1).T, sampled[:, idx].mean(-1).T))
    taus = np.concatenate(taus)
    # τ needs two systems with different values (one model alone, or tied ones: no order to compare)
    lo, hi = np.nanquantile(taus, [(1 - level) / 2, (1 + level) / 2]) if np.isfinite(taus).any() else (np.nan,) * 2
    mf, ms = full.mean(1), sampled.mean(1)
    return {"full": mf.tolist(), "sampled": ms.tolist(), "difference": (ms - mf).tolist(),
            "tau": float(kendall_tau(mf, ms)), "tau_interval": [float(lo), float(hi)], "bootstrap": reps}
