"""Exact ranking split into question shards (separate jobs, one machine each) and gathered into one Ranking.

Questions are ranked independently of each other (the filter of a question holds only its own train/valid
answers), so a shard is a subset of the questions with their judged answers, and the gather puts each shard's
arrays back at its questions' and answers' places. Shard i of n takes every n-th question from i, so head and
tail questions spread evenly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.questions import Questions
from ..errors import KgevalError
from ..scores.ranking import Judged, Ranking


@dataclass
class Shard:
    index: int
    count: int
    q_idx: np.ndarray  # the shard's questions (rows of the full Questions)
    rows: np.ndarray  # the shard's judged answers (rows of the full Judged)
    questions: Questions
    judged: Judged


def shard(questions: Questions, judged: Judged, index: int, count: int) -> Shard:
    if not 0 <= index < count:
        raise KgevalError(f"shard {index} of {count}: need 0 <= index < count")
    return subset(questions, judged, np.arange(index, len(questions), count), index, count)


def subset(questions: Questions, judged: Judged, q_idx: np.ndarray, index: int = 0, count: int = 1) -> Shard:
    """The questions ``q_idx`` (sorted rows of ``questions``) with all their judged answers."""
    rows = np.flatnonzero(np.isin(judged.q, q_idx))
    sub_q = Questions(questions.side[q_idx], questions.entity[q_idx], questions.relation[q_idx],
                      [questions.qid[i] for i in q_idx.tolist()], questions.num_entities, questions.num_relations)
    sub_j = Judged(np.searchsorted(q_idx, judged.q[rows]), judged.entity[rows], judged.label[rows],
                   judged.depth[rows])
    return Shard(index, count, q_idx, rows, sub_q, sub_j)


def gather(questions: Questions, judged: Judged, parts: list[tuple[Shard, Ranking]]) -> Ranking:
    """One Ranking of every question from the shards' Rankings (every shard of one split exactly once)."""
    counts = {s.count for s, _ in parts}
    if len(counts) != 1 or sorted(s.index for s, _ in parts) != list(range(counts.pop())):
        raise KgevalError(f"gather: shards {sorted((s.index, s.count) for s, _ in parts)} are not one full split")
    Q, J = len(questions), len(judged)
    k = parts[0][1].run_entity.shape[1]
    n_cand = np.zeros(Q, np.int64)
    score, n_gt, n_eq = np.zeros(J, np.float32), np.zeros(J, np.int64), np.zeros(J, np.int64)
    candidate = np.ones(J, bool)
    run_entity, run_score = np.full((Q, k), -1, np.int32), np.full((Q, k), np.nan, np.float32)
    for s, r in parts:
        n_cand[s.q_idx] = r.n_candidates
        run_entity[s.q_idx], run_score[s.q_idx] = r.run_entity, r.run_score
        score[s.rows], n_gt[s.rows], n_eq[s.rows], candidate[s.rows] = r.score, r.n_gt, r.n_eq, r.candidate
    return Ranking(questions, n_cand, judged, score, n_gt, n_eq, candidate, run_entity, run_score, None,
                   meta={"shards": len(parts), **{k_: v for k_, v in parts[0][1].meta.items() if k_ != "timings"}})


#: a shard file's per-question and per-answer arrays (rows of the plan's questions and their judged answers)
QUESTION_FIELDS = ("n_candidates", "run_entity", "run_score")
ANSWER_FIELDS = ("score", "n_gt", "n_eq", "candidate")


def shard_arrays(part: Shard, ranking: Ranking) -> dict[str, np.ndarray]:
    """What a shard job writes: its questions' and answers' rows of the full split and its Ranking's arrays."""
    return {"index": np.array(part.index), "count": np.array(part.count), "q_idx": part.q_idx.astype(np.int64),
            "rows": part.rows.astype(np.int64), **{f: getattr(ranking, f) for f in QUESTION_FIELDS + ANSWER_FIELDS}}


def gather_arrays(parts: list[dict[str, np.ndarray]], where: str = "gather") -> dict[str, np.ndarray]:
    """The shards' arrays (:func:`shard_arrays`) as one ranking of their questions, in question order and answer
    order: the same arrays, to the byte, whatever the number of shards (each question is ranked alone)."""
    counts = {int(p["count"]) for p in parts}
    if len(counts) != 1 or sorted(int(p["index"]) for p in parts) != list(range(counts.pop())):
        got = sorted((int(p["index"]), int(p["count"])) for p in parts)
        raise KgevalError(f"{where}: shards (index, count) {got} are not one full split")
    q_idx = np.concatenate([p["q_idx"] for p in parts])
    rows = np.concatenate([p["rows"] for p in parts])
    q_order, j_order = np.argsort(q_idx, kind="stable"), np.argsort(rows, kind="stable")
    out = {"q_idx": q_idx[q_order], "rows": rows[j_order]}
    out.update({f: np.concatenate([p[f] for p in parts])[q_order] for f in QUESTION_FIELDS})
    out.update({f: np.concatenate([p[f] for p in parts])[j_order] for f in ANSWER_FIELDS})
    return out
