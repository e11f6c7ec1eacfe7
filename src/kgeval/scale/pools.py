"""Pools and bounds on a scale graph, for a seeded sample of its test questions (issue 53; as FB-Test-S samples
FB15k-237's test split), from the systems' top-k lists, judged by the planted truth.

A synthetic graph knows every true triple (train, valid, test and the hidden share), so a pooled (question,
entity) is judged relevant exactly when its triple is one of them: no annotation is needed and the bounds can be
checked against the truth. For each pool depth p (the union of every system's top p per question) and each
system, P@k (k the deepest depth) is bounded as the study bounds it: unjudged entities of the top k counted not
relevant (lower) or relevant (upper); the exact value is the truth's. A sampling plan of judgments for the adjacent pairs' P@k
differences (:func:`sampling_plan`) is drawn with the study's design over the pooled pairs and checked against
the truth. Everything is sorts and searches over int64 keys, linear-logarithmic in the pooled pairs, never in
the entities.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.kg import HEAD, keys_of, triple_keys
from ..data.questions import Questions
from ..errors import KgevalError


def truth_keys(graph: dict[str, np.ndarray], num_entities: int, num_relations: int) -> np.ndarray:
    """Sorted int64 keys (h R + r) E + t of every true triple of the graph (its four splits)."""
    t = np.concatenate([graph[s] for s in ("train", "valid", "test", "hidden")])
    return np.sort(triple_keys(t, num_entities, num_relations))


def is_true(questions: Questions, q: np.ndarray, entity: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Whether entity ``entity[i]`` answers question ``q[i]`` in the planted truth (``truth``: :func:`truth_keys`)."""
    E, R = questions.num_entities, questions.num_relations
    known, rel = questions.entity[q].astype(np.int64), questions.relation[q].astype(np.int64)
    head = questions.side[q] == HEAD  # the head is asked: the candidate is the head
    h = np.where(head, entity, known)
    t = np.where(head, known, entity)
    key = keys_of(h, rel, t, E, R)
    pos = np.minimum(np.searchsorted(truth, key), len(truth) - 1)
    return truth[pos] == key


def pool(run_entity: list[np.ndarray], depth: int, num_entities: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (question row, entity) pairs of every system's top ``depth`` (rows of ``run_entity[s]``)."""
    ents = np.concatenate([r[:, :depth].astype(np.int64) for r in run_entity], axis=1)
    q = np.repeat(np.arange(len(ents), dtype=np.int64), ents.shape[1])
    ents = ents.ravel()
    keys = np.unique(q[ents >= 0] * num_entities + ents[ents >= 0])
    return np.divmod(keys, num_entities)


def pool_bounds(questions: Questions, run_entity: list[np.ndarray], truth: np.ndarray,
                depths: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per pool depth: the pool's size and its relevant pairs; per pool depth and system: P@k (k = the deepest
    depth) bounded with the pool's judgments, and exact. ``run_entity``: per system, (Q, ≥ k) top lists of the
    questions ``questions``."""
    depths = sorted(set(int(d) for d in depths))
    k = depths[-1]
    if depths[0] < 1 or any(r.shape[1] < k for r in run_entity):
        raise KgevalError(f"scale pools: depths {depths} need top lists of at least {k} entities and depth >= 1")
    E, Q = questions.num_entities, len(run_entity[0])
    # every system's top k, judged once: the truth per cell and whether a pool of depth p holds it
    tops = [r[:, :k].astype(np.int64) for r in run_entity]
    q_cell = np.repeat(np.arange(Q, dtype=np.int64), k)
    rel_cell = [np.zeros(Q * k, bool) for _ in tops]
    for s, top in enumerate(tops):
        e = top.ravel()
        ok = e >= 0
        rel_cell[s][ok] = is_true(questions, q_cell[ok], e[ok], truth)
    pools, bounds = [], []
    for p in depths:
        pq, pe = pool(run_entity, p, E)
        relevant = is_true(questions, pq, pe, truth)
        pools.append({"depth": p, "questions": Q, "pooled": len(pq), "per_question": len(pq) / max(Q, 1),
                      "relevant": int(relevant.sum()), "relevant_share": float(relevant.mean()) if len(pq) else 0.0})
        pool_keys = pq * E + pe
        for s, top in enumerate(tops):
            e = top.ravel()
            judged = np.zeros(len(e), bool)
            if len(pool_keys):
                key = q_cell * E + np.maximum(e, 0)
                judged = (e >= 0) & (pool_keys[np.minimum(np.searchsorted(pool_keys, key), len(pool_keys) - 1)] == key)
            rel = rel_cell[s]
            lower = (judged & rel).reshape(Q, k).sum(1) / k
            upper = ((judged & rel) | ((e >= 0) & ~judged)).reshape(Q, k).sum(1) / k
            bounds.append({"depth": p, "system": s, "metric": f"P@{k}", "lower": float(lower.mean()),
                           "upper": float(upper.mean()), "exact": float(rel.reshape(Q, k).sum(1).mean() / k),
                           "unjudged_share": float(((e >= 0) & ~judged).mean())})
    return pd.DataFrame(pools), pd.DataFrame(bounds)


def sampling_plan(questions: Questions, run_entity: list[np.ndarray], truth: np.ndarray, k: int, budget: int,
                  seed: int = 0, reps: int = 200) -> pd.DataFrame:
    """A sampling plan of judgments for the adjacent pairs' P@k differences (:func:`kgeval.sampling.design.design`,
    the study's optimal design with its uniform floor, Poisson sampling): the units are the pooled (question,
    entity) pairs of the top k; a pair's unit weight d_e = (in a's top k − in b's top k) / (Q k); the prior of
    relevance is the share of systems listing the pair (their agreement, no judgment used). Per pair: the expected
    judgments and half-width under the prior, one seeded draw's Horvitz-Thompson estimate beside the exact
    difference under the planted truth, and the share of ``reps`` draws whose 95 % interval holds it."""
    from ..sampling.design import design, expected_variance, item_variances, poisson

    E, Q, S = questions.num_entities, len(run_entity[0]), len(run_entity)
    pq, pe = pool(run_entity, k, E)
    keys = pq * E + pe
    q_cell = np.repeat(np.arange(Q, dtype=np.int64), k)
    listed = np.zeros((len(keys), S))
    for s, top in enumerate(run_entity):
        e = top[:, :k].astype(np.int64).ravel()
        ok = e >= 0
        listed[np.searchsorted(keys, q_cell[ok] * E + e[ok]), s] = 1.0
    y = is_true(questions, pq, pe, truth).astype(np.float64)
    d = (listed[:, :-1] - listed[:, 1:]) / (Q * k)  # (U, S - 1): the adjacent pairs
    v = item_variances(d, listed.mean(1))
    plan = design(v, (d != 0).any(1), budget)
    rng = np.random.default_rng([seed, 53, 1])
    drawn = poisson(plan.pi, reps, rng).astype(np.float64)  # (reps, U)
    w = np.divide(1.0, plan.pi, out=np.zeros_like(plan.pi), where=plan.pi > 0)
    est = drawn @ (d * (y * w)[:, None])  # Horvitz-Thompson, (reps, S - 1)
    var = drawn @ (d ** 2 * (y * (1 - plan.pi) * w ** 2)[:, None])
    exact = y @ d
    covered = np.abs(est - exact) <= 1.96 * np.sqrt(var) + 1e-12  # π = 1 everywhere: equal but for float order
    half = 1.96 * np.sqrt(expected_variance(plan.pi, v))
    return pd.DataFrame({"a": range(S - 1), "b": range(1, S), "metric": f"P@{k}", "pooled": len(keys),
                         "budget": budget, "expected_judgments": plan.expected_judgments, "half_width_prior": half,
                         "estimate": est[0], "exact": exact, "coverage": covered.mean(0), "reps": reps})
