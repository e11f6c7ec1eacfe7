"""Filtered ranks of every triple of one split, both sides: the standard link-prediction protocol (Bordes et
al. 2013) for small graphs that have no test-set machinery of their own (Nations, Kinship in Hoyt et al.'s case
study). Each triple (h, r, t) asks (h, r, ?) and (?, r, t); every other entity that completes the question in
train ∪ valid ∪ test is removed from the candidates, so N_i = |E| − (number of other known answers). The rank
is the realistic rank n_gt + n_eq/2 + 1 (PyKEEN's, as in :mod:`kgeval.scores.ranking`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..data.kg import HEAD, SIDE_NAMES, TAIL, KnowledgeGraph
from ..errors import ScoreError


def _known_mask(queries: np.ndarray, side: int, known: np.ndarray, num_entities: int,
                num_relations: int) -> np.ndarray:
    """(B, |E|) boolean: entity e answers question b (known entity, relation) in the known triples. The
    questions come sorted and unique from ``np.unique(axis=0)``, so their keys are sorted for searchsorted."""
    ent_col, ans_col = (0, 2) if side == TAIL else (2, 0)
    k_known = known[:, ent_col] * num_relations + known[:, 1]
    k_q = queries[:, 0] * num_relations + queries[:, 1]
    pos = np.clip(np.searchsorted(k_q, k_known), 0, len(k_q) - 1)
    hit = k_q[pos] == k_known
    mask = np.zeros((len(queries), num_entities), dtype=bool)
    mask[pos[hit], known[hit, ans_col]] = True
    return mask


def split_ranks(model, kg: KnowledgeGraph, split: str = "test", batch_size: int = 1024) -> pd.DataFrame:
    """One row per triple and side: side, head, relation, tail, rank (realistic, filtered), num_candidates."""
    triples = kg.splits[split]
    known = kg.known()
    frames = []
    for side in (HEAD, TAIL):
        cols = (2, 1) if side == HEAD else (0, 1)
        answers = triples[:, 0] if side == HEAD else triples[:, 2]
        qs, inverse = np.unique(triples[:, cols], axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        rank = np.empty(len(triples))
        cands = np.empty(len(triples), dtype=np.int64)
        for start in range(0, len(qs), batch_size):
            q = qs[start:start + batch_size]
            with torch.no_grad():
                scores = model.score_questions(torch.as_tensor(q, dtype=torch.long), side).float().cpu().numpy()
            if not np.isfinite(scores).all():
                raise ScoreError(f"{type(model).__name__} gave a non-finite score on {kg.name} {split}")
            other = _known_mask(q, side, known, kg.num_entities, kg.num_relations)
            rows = np.nonzero((inverse >= start) & (inverse < start + len(q)))[0]
            b = inverse[rows] - start
            target = scores[b, answers[rows]]
            keep = ~other[b]
            keep[np.arange(len(rows)), answers[rows]] = True
            s = np.where(keep, scores[b], -np.inf)
            gt = (s > target[:, None]).sum(1)
            eq = (s == target[:, None]).sum(1) - 1
            rank[rows] = gt + eq / 2.0 + 1.0
            cands[rows] = keep.sum(1)
        frames.append(pd.DataFrame({"side": SIDE_NAMES[side], "head": triples[:, 0], "relation": triples[:, 1],
                                    "tail": triples[:, 2], "rank": rank, "num_candidates": cands}))
    return pd.concat(frames, ignore_index=True)
