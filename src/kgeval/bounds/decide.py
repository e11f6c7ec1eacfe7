"""Issue 30 §4 on a pooled test set: the relevance prior's fit, each pair's P(A > B), τ under the prior, the next
judgments (MTC selection) and the simulation on the published labels, from the systems' top-k lists.

The candidates are the distinct (question, entity) pairs of the systems' top k on the macro filter's questions
(:class:`kgeval.bounds.candidates.Candidates`); their state comes from the bounds stage's relevance codes. The prior is
trained on the pool's judgments (judged at depth ≥ 1), the depth-0 answers excluded: they are relevant by
construction and would teach the prior that the test answers are relevant. The simulation's prior is the
out-of-fold prediction by question (never a label of the item's own question) or refitted online on the labels
revealed so far, so no strategy sees a hidden label through its prior.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..cells import neutralise_text_columns
from ..data.kg import HEAD, KnowledgeGraph, infer_categories
from ..io import write_csv
from ..judgments.graph_features import item_graph_features
from ..pools.annotation.formats import EXPORT_HEADER, _write_sheet
from ..pools.annotation.templates import question
from .candidates import Candidates, system_pairs
from .greedy import Plan
from .labels import ABSENT, REL, UNKNOWN
from .prior import Features, cross_validate, triple_features

METRIC_NAMES = {"P": "P@k", "DCG": "DCG@k", "RBP": "RBP", "RR": "RR@k", "Success": "Success@k"}

# relation categories of kgeval.data.kg → the prior's names
_CATEGORY = {"one_to_one": "1-1", "one_to_many": "1-N", "many_to_one": "N-1", "many_to_many": "N-N"}


@dataclass
class Items:
    """The candidates and, per item, its question index in the dump (``q``) and its entity."""

    cand: Candidates
    q: np.ndarray
    entity: np.ndarray


def candidates(entity: np.ndarray, code: np.ndarray, qmask: np.ndarray, systems, k: int) -> Items:
    """Candidates of the top-k lists ``entity`` (S, Q, k) with relevance ``code`` on the questions of ``qmask``;
    an unknown (pooled or not) is −1, a judged pair keeps its label."""
    S, Q, _ = entity.shape
    width = int(entity.max(initial=0)) + 1
    s, q, i = np.nonzero((code != ABSENT) & (entity >= 0) & qmask[None, :, None])
    keys = q.astype(np.int64) * width + entity[s, q, i]
    uniq, inv = np.unique(keys, return_inverse=True)
    ranks = np.zeros((S, uniq.size), np.int64)
    ranks[s, inv] = i + 1
    c = code[s, q, i]
    state = np.empty(uniq.size, np.int8)
    state[inv] = np.where(c == UNKNOWN, -1, np.where(c == REL, 1, 0))
    newq = np.cumsum(qmask) - 1
    uq = uniq // width
    cand = Candidates(newq[uq], ranks, state, int(qmask.sum()), k, tuple(systems))
    return Items(cand, uq, uniq % width)


def item_features(items: Items, kg: KnowledgeGraph, questions) -> Features:
    """The prior's features: ranks over the systems, the question relation's category and side, and the
    relation's number of known triples (its answer count); as extra columns for the boosted prior, the training
    split's graph evidence and each system's reciprocal rank (:mod:`kgeval.judgments.graph_features`)."""
    rel, side = questions.relation[items.q], questions.side[items.q]
    cats = np.array([_CATEGORY[c] for c in kg.relation_category or infer_categories(kg)])
    count = np.bincount(kg.known()[:, 1], minlength=kg.num_relations)
    f = triple_features(items.cand.ranks, cats[rel], side, count[rel], items.cand.k)
    extra = item_graph_features(kg, rel, side, questions.entity[items.q], items.entity, items.cand.ranks,
                                items.cand.k)
    return replace(f, extra=extra)


def item_triples(items: Items, questions, idx: np.ndarray) -> np.ndarray:
    """(n, 3) id triples of the items ``idx``: a head question asks for the head of (?, r, known)."""
    q, e = items.q[idx], items.entity[idx]
    known, rel, side = questions.entity[q], questions.relation[q], questions.side[q]
    head = np.where(side == HEAD, e, known)
    tail = np.where(side == HEAD, known, e)
    return np.stack([head, rel, tail], 1).astype(np.int64)


def write_next_judgments(kg: KnowledgeGraph, templates, triples: np.ndarray, the_plan: Plan, bears_on: list[str],
                         batch: str, out_sheet: str, out_sidecar: str) -> pd.DataFrame:
    """The plan as an annotation sheet in ``kgeval annotate-export``'s strict format, items numbered 1, 2, … in
    priority order (the export's own order is by relation; this one is the order to judge in), and a sidecar CSV
    with each item's priority, p(e) and the pairs it bears on (the sheet's reader allows no extra columns)."""
    rows, side = [], []
    for i, (h, r, t) in enumerate(triples.tolist(), start=1):
        rows.append([batch, str(i), kg.entities[h], kg.relations[r], kg.entities[t], kg.display_name(h),
                     kg.display_name(t), question(kg, (h, r, t), templates), "", "", ""])
        side.append((i, kg.entities[h], kg.relations[r], kg.entities[t]))
    _write_sheet(out_sheet, EXPORT_HEADER, rows)
    table = pd.DataFrame(side, columns=["item", "head_id", "relation", "tail_id"])
    table["priority"] = the_plan.priority
    table["p"] = the_plan.p
    table["n_pairs"] = np.diff(the_plan.ptr)
    table["bears_on"] = bears_on
    write_csv(neutralise_text_columns(table), out_sidecar)
    return table


def pair_table(systems, metric: str, lo, hi, expected, prob) -> pd.DataFrame:
    a, b = system_pairs(len(systems))
    decided = (lo > 1e-12) | (hi < -1e-12)
    return pd.DataFrame({"Metric": metric, "A": np.asarray(systems)[a], "B": np.asarray(systems)[b],
                         "delta_lo": lo, "delta_hi": hi, "expected_delta": expected, "P_A_beats_B": prob,
                         "decided": decided})


def out_of_fold_prior(feats: Features, labels: np.ndarray, hidden: np.ndarray, item_q: np.ndarray, kind: str,
                      folds: int, seed: int) -> np.ndarray:
    """The simulation's prior: for each hidden item, the prediction of a prior fitted on the other folds'
    questions only (grouped cross-validation), so no item's prior saw its own question's labels; 0.5 for the
    rest (known items: their prior is never used) and everywhere when the prior is uniform or the hidden labels
    cannot be split into ``folds`` folds with both classes."""
    p = np.full(labels.size, 0.5)
    train = np.flatnonzero(hidden)
    y = labels[train].astype(np.int64)
    if kind != "uniform" and np.unique(item_q[train]).size >= folds and 0 < y.sum() < y.size:
        p[train] = cross_validate(feats.take(train), y, item_q[train], folds, seed, kind).predictions
    return p
