"""The sampling stage's inputs: the study systems' top-k lists on a pooled test set with its published
judgments, as candidates (:class:`kgeval.judgments.candidates.Candidates`) in two states.

* ``published``: what a campaign starts from. Every judged (question, entity) keeps its label, the unjudged ones
  in any system's top k are unknown: the plan's universe.
* ``hidden``: the simulation's universe (issue 42 §3, as :func:`kgeval.bounds.steps.simulation_step` builds it).
  Every label the published pool gives beyond depth 0 is hidden, its true value known to the evaluator; depth-0
  answers stay relevant, never-pooled items stay not relevant, as in the official evaluation.

The prior is fitted on the pool's labels (depth ≥ 1) for the plan, and out of fold by question for the
simulation, so that no hidden item's prior saw its own question's labels.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..data.judged import Judged  # not scores.ranking: it imports torch, seconds of every bounds job
from ..data.kg import KnowledgeGraph
from ..data.questions import Questions
from ..metrics.evaluate import Qrels
from ..metrics.trec import pair_lookup
from .candidates import Candidates
from .items import Items, candidates, item_features, item_triples, out_of_fold_prior
from .labels import state
from .lists import load_runs
from .prior import Features, fit_prior


@dataclass
class Universe:
    """Systems, the candidate items (``items.cand``) and per item: ``truth`` (the published label, 0 where none),
    ``hidden`` (simulation: the labels to hide), ``pooled`` (judged at depth ≥ 1), the prior's features. Set once
    from these: ``cand`` (``items.cand``) and ``triples`` (n, 3), every item's id triple (:func:`.items.item_triples`),
    plain values the sampling stage reads without calling back down for them."""

    systems: list[str]
    items: Items
    truth: np.ndarray
    hidden: np.ndarray
    pooled: np.ndarray
    features: Features
    questions: Questions
    depth: np.ndarray | None = None  # per item the pool depth that judged it (max_depth + 1: never judged)
    zero: np.ndarray | None = None  # per item its state under the depth-0 judgments (the test answers) alone
    cand: Candidates = field(init=False, repr=False)
    triples: np.ndarray | None = field(init=False, repr=False)

    def __post_init__(self):
        self.cand = self.items.cand
        self.triples = (None if self.questions is None
                        else item_triples(self.items, self.questions, np.arange(self.cand.n_items)))

    def hidden_state(self):
        """Candidates with the hidden labels unknown and every other item known (never judged: not relevant)."""
        s = self.cand.state
        return self.cand.with_state(np.where(self.hidden, -1, np.maximum(s, 0)))

    def pooled_prior(self, kind: str = "logistic") -> np.ndarray:
        """p(e) for every item, fitted on the pool's labels (the plan's prior); 0.5 where the pool labels
        nothing beyond the test answers (``max_depth`` 0) or only one class."""
        y = self.truth[self.pooled]
        if kind == "uniform" or y.size == 0 or y.min() == y.max():  # nothing to fit: no label, or one class
            return np.full(self.truth.size, 0.5)
        return fit_prior(self.features.take(np.flatnonzero(self.pooled)), y, kind).predict(self.features)

    def prior(self, kind: str = "logistic") -> tuple[np.ndarray, str]:
        """:meth:`pooled_prior` and :meth:`prior_fit` of ``kind`` in one call: what a plan draws with and records."""
        return self.pooled_prior(kind), self.prior_fit(kind)

    def prior_fit(self, kind: str) -> str:
        """What identifies :meth:`pooled_prior`'s fit, recorded in a plan's sidecar: 12 hex digits of a SHA-256 of
        the kind and of the labelled items it learns from (question, entity, label, in item order). Integers
        only: the same inputs give the same digits on any machine, where the fitted floats may differ in the
        last bit."""
        idx = np.flatnonzero(self.pooled)
        h = hashlib.sha256(f"kgeval prior {kind}, {idx.size} labelled items".encode())
        for column in (self.items.q[idx], self.items.entity[idx], self.truth[idx]):
            h.update(np.ascontiguousarray(column, dtype="<i8").tobytes())
        return h.hexdigest()[:12]

    def out_of_fold_prior(self, kind: str = "logistic", folds: int = 5, seed: int = 0) -> np.ndarray:
        return out_of_fold_prior(self.features, self.truth, self.hidden, self.cand.item_q, kind, folds, seed)


def build(systems: list[str], entity: np.ndarray, judged: Judged, questions: Questions, kg: KnowledgeGraph,
          k: int, max_depth: int) -> Universe:
    """The universe of the lists ``entity`` (S, Q, k) of ``systems`` on ``questions``, judged by ``judged``."""
    E = questions.num_entities
    keep = judged.depth <= max_depth
    code_d, qmask = state(entity, Qrels(judged.q[keep], judged.entity[keep], judged.label[keep].astype(np.int8)), E)
    deep = candidates(entity, code_d, qmask, systems, k)
    depth = pair_lookup(deep.q, deep.entity, judged.q, judged.entity,
                        np.where(keep, judged.depth, max_depth + 1), E, max_depth + 1)
    # the depth-0 judgments (the test answers) alone: the same items, known only where judged at depth 0
    s_deep = deep.cand.state
    s_zero = np.where(depth <= 0, s_deep, -1).astype(np.int8)
    hidden = (s_zero == -1) & (s_deep >= 0)
    pooled = (s_deep >= 0) & (depth >= 1) & (depth <= max_depth)
    truth = np.maximum(s_deep, 0).astype(np.int8)
    return Universe(list(systems), deep, truth, hidden, pooled, item_features(deep, kg, questions), questions,
                    depth, s_zero)


def from_dumps(dumps: dict[str, str], kg: KnowledgeGraph, k: int, max_depth: int) -> Universe:
    systems, first, entity = load_runs(dumps, k)
    return build(systems, entity, first.judged, first.questions, kg, k, max_depth)
