"""What sampled negatives do: the same metrics against k sampled negatives per answer (OGB's protocol) beside
full filtered ranking, per system the difference, and Kendall's τ between the systems' orders under the two.

OGB (ogbl-wikikg2) ranks each test triple's tail against the 500 fixed entities of its ``tail_neg`` row (its head
against ``head_neg``), unfiltered, with the realistic rank 1 + #(negatives above) + #(negatives tied) / 2 (its
evaluator's mean of the optimistic and pessimistic ranks). A graph read from OGB's folder keeps those arrays and
is ranked against them (:func:`given_negatives`); any other graph against k entities drawn uniformly per
question. τ's interval is a percentile bootstrap over the ranked answers (both protocols' values resampled
together, so the pairing is kept).
"""

from __future__ import annotations

import numpy as np
import torch

from ..data.kg import triple_keys
from ..data.questions import Questions
from ..scores.ranking import Judged


def given_negatives(test: np.ndarray, head_neg: np.ndarray, tail_neg: np.ndarray, questions: Questions,
                    judged: Judged, rows: np.ndarray):
    """OGB's fixed negatives of the judged rows ``rows`` (test answers): row i of ``head_neg`` / ``tail_neg``
    belongs to test triple i, so each answer is looked up by its triple. A function of (positions in ``rows``,
    side) to their negatives, the argument ``given`` of :func:`sampled_ranks`."""
    q = judged.q[rows]
    side, known, answer = questions.side[q], questions.entity[q], judged.entity[rows]
    E, R = questions.num_entities, questions.num_relations
    h, t = np.where(side == 0, answer, known), np.where(side == 0, known, answer)
    keys = triple_keys(test, E, R)
    want = triple_keys(np.stack([h, questions.relation[q], t], 1), E, R)
    order = np.argsort(keys, kind="stable")
    triple = order[np.minimum(np.searchsorted(keys, want, sorter=order), len(keys) - 1)]
    if not np.array_equal(keys[triple], want):  # the judged answers are the test triples: a broken caller
        raise ValueError("given_negatives: a judged answer is no test triple")
    return lambda pos, s: (head_neg if s == 0 else tail_neg)[triple[pos]]


def sampled_ranks(scorer, questions: Questions, judged: Judged, rows: np.ndarray, k: int, seed: int,
                  batch: int = 4096, given=None) -> np.ndarray:
    """Realistic rank of each judged row in ``rows`` among k uniform random negatives of its question (the
    same negatives for every system: they depend on the seed and the question only), or among the fixed
    negatives ``given`` (:func:`given_negatives`; ``k`` and ``seed`` then unused)."""
    if given is None:
        negs = np.random.default_rng(seed).integers(0, questions.num_entities, size=(len(questions), k))

        def given(pos, side):
            return negs[judged.q[rows[pos]]]
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
                neg = scorer.some(v, torch.as_tensor(given(b0 + m, side), device=device))
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
