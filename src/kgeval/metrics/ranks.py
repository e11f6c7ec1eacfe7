"""Micro and macro ranks from a score dump, for any choice of relevant entities.

The dump records, for every judged entity e of a question q, its score s_e and the numbers n_gt(e), n_eq(e)
of macro-filter candidates scoring strictly higher / equally. For a set P(q) of relevant entities (the test
set's answers at some pooling depth):

* **micro (per answer)**: the filter also removes every other relevant entity of q, so
  opt(e) = n_gt(e) − |{p ∈ P(q)∖{e}: s_p > s_e}| + 1,
  pess(e) = opt(e) + n_eq(e) − |{p ∈ P(q)∖{e}: s_p = s_e}|,
  realistic = (opt + pess) / 2, with N = n_candidates(q) − |P(q)| + 1 candidates;
* **macro (per question)**: candidates keep the other answers; the question's rank is that of its
  best-ranked answer: min over e ∈ P(q) of (n_gt(e) + 1 [+ n_eq(e) for pessimistic]), realistic = mean of the
  two, with N = n_candidates(q).

A judged entity that a run cut at depth K did not retrieve (``retrieved`` false; only external TREC runs have
any) has rank ∞, as in trec_eval: reciprocal rank 0, no hit at any k. It is ranked below every retrieved
candidate, so it never moves another answer's rank; a question none of whose answers was retrieved has macro
rank ∞. Ranks are then float arrays; without such entities they stay integer, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Ranks:
    """Ranks of a set of ranking tasks (answers for micro, questions for macro)."""

    optimistic: np.ndarray
    pessimistic: np.ndarray
    num_candidates: np.ndarray
    q: np.ndarray  # question index of each task
    rows: np.ndarray  # judged row of each task (micro) or of the question's best answer (macro)

    @property
    def realistic(self) -> np.ndarray:
        return (self.optimistic + self.pessimistic) / 2.0

    def get(self, kind: str = "realistic") -> np.ndarray:
        return {"realistic": self.realistic, "optimistic": self.optimistic.astype(float),
                "pessimistic": self.pessimistic.astype(float)}[kind]

    def __len__(self) -> int:
        return len(self.q)


def _others_above(q: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each item, the number of other items of the same group scoring strictly higher / equal."""
    if len(q) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    _, dense = np.unique(score, return_inverse=True)
    width = dense.max() + 2
    key = q.astype(np.int64) * width + dense
    srt = np.sort(key)
    upper = np.searchsorted(srt, key, side="right")
    lower = np.searchsorted(srt, key, side="left")
    group_end = np.searchsorted(srt, (q.astype(np.int64) + 1) * width, side="left")
    return group_end - upper, upper - lower - 1


def _unretrieved(rows: np.ndarray, retrieved: np.ndarray | None) -> np.ndarray | None:
    """Mask over ``rows``: not retrieved (None when every row was, the usual case)."""
    if retrieved is None:
        return None
    missing = ~np.asarray(retrieved, bool)[rows]
    return missing if missing.any() else None


def _beyond_depth(ranks: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    return ranks if missing is None else np.where(missing, np.inf, ranks)


def micro_ranks(q, score, n_gt, n_eq, n_candidates, relevant, retrieved=None) -> Ranks:
    """Ranks of every relevant judged entity under the micro (per-answer) filter (∞ where not retrieved)."""
    rows = np.flatnonzero(relevant)
    q_r = q[rows]
    missing = _unretrieved(rows, retrieved)
    s = score[rows]
    if missing is not None:  # below every retrieved answer: never counted above one (their score is NaN)
        s = np.where(missing, -np.inf, s)
    gt_other, eq_other = _others_above(q_r, s)
    opt = n_gt[rows] - gt_other + 1
    pess = opt + n_eq[rows] - eq_other
    n_rel = np.bincount(q_r, minlength=len(n_candidates))
    num = n_candidates[q_r] - n_rel[q_r] + 1
    return Ranks(_beyond_depth(opt.astype(np.int64), missing), _beyond_depth(pess.astype(np.int64), missing),
                 num.astype(np.int64), q_r, rows)


def macro_ranks(q, n_gt, n_eq, n_candidates, relevant, retrieved=None) -> Ranks:
    """Rank of the best-ranked relevant entity of every question with at least one relevant entity (∞ where
    none was retrieved)."""
    rows = np.flatnonzero(relevant)
    if len(rows) == 0:
        z = np.zeros(0, np.int64)
        return Ranks(z, z, z, z, z)
    missing = _unretrieved(rows, retrieved)
    q_r = q[rows]
    # within a question, the best answer first (an unretrieved one last)
    order = np.lexsort((_beyond_depth(n_gt[rows], missing), q_r))
    rows, q_r = rows[order], q_r[order]
    missing = missing[order] if missing is not None else None
    first = np.flatnonzero(np.r_[True, q_r[1:] != q_r[:-1]])
    opt = _beyond_depth(n_gt[rows] + 1, missing)
    pess = _beyond_depth(opt + n_eq[rows], missing)
    best_opt = np.minimum.reduceat(opt, first)
    best_pess = np.minimum.reduceat(pess, first)
    questions = q_r[first]
    return Ranks(best_opt, best_pess, n_candidates[questions].astype(np.int64), questions, rows[first])
