"""How each unknown label enters a comparison.

A linear metric (P@k, DCG@k, RBP) is a sum over items: the mean over Q questions of system s is
Σ_e w_s(e) x_e / Q, so the difference of a pair (A, B) is Σ_e d_e x_e with d_e = (w_A(e) − w_B(e)) / Q, split
into the known part K = Σ_known d_e x_e and the unknown part. RR@k and Success@k are a maximum over a question's
list (``max_i g_i x_i``), not a sum: they are handled per question, with the prior's exact expectation
E_p[max_i g_i x_i] = Σ_i g_i p_i Π_{j<i} (1 − p_j) (g non-increasing, labels independent under the prior).
"""

from __future__ import annotations

import numpy as np

from ..judgments.candidates import Candidates, metric_weights, system_pairs
from ..judgments.metrics import MAX, bounded_metric

LINEAR_NAMES = ("P@k", "DCG@k", "RBP")
MAX_NAMES = ("RR@k", "Success@k")


def is_linear(metric: str) -> bool:
    return metric in LINEAR_NAMES


def rank_gains(metric: str, k: int, rbp_p: float = 0.8) -> np.ndarray:
    """g_i (or w_i) of ranks 1..k."""
    return bounded_metric(metric.split("@")[0], k, rbp_p).weights


def pair_weights(cand: Candidates, metric: str, rbp_p: float = 0.8) -> np.ndarray:
    """d_e per item and pair, (N, P) in :func:`system_pairs` order: (w_A(e) − w_B(e)) / Q of a linear metric."""
    m, w = metric_weights(cand, metric, rbp_p)
    if m.kind == MAX:
        raise ValueError(f"{metric} is not linear in the labels: use question sampling")
    return pair_differences(cand, w)


def pair_differences(cand: Candidates, w: np.ndarray) -> np.ndarray:
    """:func:`pair_weights` from the item weights ``w`` (S, N) of :func:`kgeval.judgments.candidates.metric_weights`."""
    w = w / cand.n_questions
    a, b = cand.pairs
    return (w[a] - w[b]).T


def position_items(cand: Candidates) -> np.ndarray:
    """(S, Q, k): the item at each position of each system's top k, −1 where the list is shorter."""
    S, k = cand.n_systems, cand.k
    pos = np.full((S, cand.n_questions, k), -1, np.int64)
    s, e = np.nonzero((cand.ranks >= 1) & (cand.ranks <= k))
    pos[s, cand.item_q[e], cand.ranks[s, e] - 1] = e
    return pos


def max_metric(pos: np.ndarray, gains: np.ndarray, x: np.ndarray) -> np.ndarray:
    """max_i g_i x_i per system and question, (..., S, Q) for labels x (..., N) in {0, 1}."""
    lab = np.where(pos >= 0, np.take(x, np.maximum(pos, 0), axis=-1), 0)
    return (lab * gains).max(-1)


def expected_max_metric(pos: np.ndarray, gains: np.ndarray, p: np.ndarray) -> np.ndarray:
    """E_p[max_i g_i x_i] (S, Q) for independent labels with P(x_e = 1) = p_e (known items: p = their label);
    ``(..., N)`` probabilities give ``(..., S, Q)``, as :func:`max_metric` does with labellings."""
    q = np.where(pos >= 0, np.take(p, np.maximum(pos, 0), axis=-1), 0.0)
    none_before = np.cumprod(np.concatenate([np.ones(q.shape[:-1] + (1,)), 1 - q[..., :-1]], -1), -1)
    return (gains * q * none_before).sum(-1)


def open_positions(pos: np.ndarray, unknown: np.ndarray, relevant: np.ndarray, judged: bool = False) -> np.ndarray:
    """(S, Q, k): the positions holding an unknown item above the list's first known relevant item. Only those
    can move the list's RR@k or Success@k (max_i g_i x_i with g non-increasing): below a known relevant item the
    maximum is already reached, whatever the labels. ``judged``: ``relevant`` holds every item's label, the
    unknowns' too (``(..., N)``, a leading axis of labellings allowed), and an unknown item found relevant closes
    its list as well: the positions a judge working down each list in rank order reaches (the first relevant
    item included, as it must be judged to be found)."""
    item = np.maximum(pos, 0)
    rel = np.take(relevant, item, axis=-1) > 0
    known_rel = (pos >= 0) & rel & (True if judged else ~unknown[item])
    before = np.cumsum(known_rel, -1) - known_rel  # known relevant items strictly above each position
    return (pos >= 0) & unknown[item] & (before == 0)


def inert_questions(pos: np.ndarray, unknown: np.ndarray, relevant: np.ndarray, a: np.ndarray,
                    b: np.ndarray) -> np.ndarray:
    """(Q, P): True where pair (a, b)'s D_q is the same under every labelling: the two lists hold the same item at
    every rank down to the first known relevant one (or to k), or neither list holds an open position."""
    same = np.cumprod(pos[a] == pos[b], -1).astype(bool)  # (P, Q, k): the lists agree down to this rank
    item = np.maximum(pos[a], 0)
    known_rel = (pos[a] >= 0) & ~unknown[item] & (relevant[item] > 0)
    agree = (same & known_rel).any(-1) | same[..., -1]
    op = open_positions(pos, unknown, relevant).any(-1)  # (S, Q)
    return (agree | ~(op[a] | op[b])).T


def question_costs(pos: np.ndarray, unknown: np.ndarray, systems: np.ndarray | None = None,
                   relevant: np.ndarray | None = None, judged: bool = False) -> np.ndarray:
    """Per question, the distinct unknown items in the top k of ``systems`` (all by default): the judgments a
    sampled question costs. With ``relevant`` (per item, 1 where a known item is relevant), only the unknowns
    above a list's first known relevant item count (:func:`open_positions`): the others cannot move it. With
    ``judged`` and every item's label in ``relevant`` (``(..., N)``: one row per labelling), the judgments of
    the rank-order design, which stops each list at its first relevant item (``(..., Q)``)."""
    sub = pos if systems is None else pos[systems]
    S, Q, k = sub.shape
    items = np.moveaxis(sub, 0, 1).reshape(Q, S * k)
    if relevant is None:
        ok = (items >= 0) & unknown[np.maximum(items, 0)]
    else:
        mask = open_positions(sub, unknown, relevant, judged)  # (..., S, Q, k)
        ok = np.moveaxis(mask, -3, -2).reshape(mask.shape[:-3] + (Q, S * k))
    srt = np.sort(np.where(ok, items, -1), -1)
    first = np.concatenate([np.ones(srt.shape[:-1] + (1,), bool), srt[..., 1:] != srt[..., :-1]], -1)
    return ((srt >= 0) & first).sum(-1)


def pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    return system_pairs(n_systems)
