"""The filtered ranking engine.

Given a scorer that scores every entity for a batch of questions, the engine ranks each aggregated question
once, under the **macro filter** (every entity that answers the question in train ∪ valid is removed, except
the question's own test answers), and records

* for every judged entity of the question (its test answers and, where the test set has them, its judged
  negatives): the entity's score ``s``, ``n_gt`` = the number of candidates scoring strictly higher and
  ``n_eq`` = the number of other candidates scoring exactly the same. From these, the optimistic
  (``n_gt + 1``), pessimistic (``n_gt + n_eq + 1``) and realistic (their mean) ranks follow under the macro
  filter, and under the **micro filter** (all other known answers removed as well) by subtracting the other
  test answers that score above or equal to the entity — exactly, for any subset of the answers (a pooling
  depth, a rebuilt qrels) without scoring again (``kgeval.metrics.ranks``);
* the top-K candidates of the question in **trec_eval's order** (score descending, then document id
  descending), as a TREC run. The order is exact: each score's float32 bits are mapped to an order-preserving
  int32, multiplied by 2^32 and offset by the rank of the entity's id string, so one ``topk`` over int64 keys
  gives trec_eval's ranking;
* optionally the full score matrix (float16), for the questions pools are built from.

Ties: KGC ranks use the realistic rank, the mean of the optimistic and the pessimistic rank (PyKEEN's
"realistic", Berrendorf et al. 2020); IR measures use trec_eval's order above. Scores must be finite: a NaN or
infinite score is an error naming the model and the question. Work is batched so that no more than about
``memory_budget_mb`` of score-sized temporaries exist at once; the scorer itself must never build a
(batch × |E| × d) tensor.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..data.judged import Judged, judged_entities  # noqa: F401 (judged_entities: its old home, re-exported)
from ..data.kg import HEAD, SIDE_NAMES, TAIL
from ..data.questions import AnswerIndex, Questions
from ..errors import ScoreError

log = logging.getLogger(__name__)

# scorer(queries, side): queries is a (B, 2) long tensor of (known entity, relation); returns (B, |E|) scores,
# higher = more plausible, for the missing head (side HEAD) or tail (side TAIL).
Scorer = Callable[[torch.Tensor, int], torch.Tensor]

_INT64_MIN = torch.iinfo(torch.int64).min
_BYTES_PER_CELL = 40  # score, int64 key, topk scratch, comparison scratch, judged gather


@dataclass
class Ranking:
    """What the engine produces for one model and one test set (the content of a score dump)."""

    questions: Questions
    n_candidates: np.ndarray  # (Q,) candidates under the macro filter
    judged: Judged
    score: np.ndarray  # (J,) float32 score of each judged entity
    n_gt: np.ndarray  # (J,) candidates scoring strictly higher
    n_eq: np.ndarray  # (J,) other candidates scoring the same
    candidate: np.ndarray  # (J,) False where the macro filter removed the entity (a train/valid fact)
    run_entity: np.ndarray  # (Q, K) int32 entity ids in trec_eval order, -1 past the last candidate
    run_score: np.ndarray  # (Q, K) float32 scores, NaN past the last candidate
    scores: np.ndarray | None = None  # (Q, |E|) float16 raw scores, if kept
    meta: dict = field(default_factory=dict)
    # (J,) False where a judged entity is beyond the run's depth (a TREC run cut at K): its rank is unknown, so it
    # counts as not retrieved. None (every model kgeval scores itself): every judged entity was ranked.
    retrieved: np.ndarray | None = None


def docno_ranks(entity_ids: list[str]) -> np.ndarray:
    """Rank of each entity's id string in ascending byte order (trec_eval compares docnos with strcmp)."""
    order = sorted(range(len(entity_ids)), key=lambda i: entity_ids[i].encode("utf-8"))
    ranks = np.empty(len(entity_ids), dtype=np.int64)
    ranks[order] = np.arange(len(entity_ids))
    return ranks


def ordered_keys(scores: torch.Tensor, docno_rank: torch.Tensor) -> torch.Tensor:
    """int64 keys whose descending order is trec_eval's: score descending, then docno descending."""
    bits = (scores + 0.0).contiguous().view(torch.int32)  # + 0.0 maps -0.0 to +0.0
    key32 = bits ^ ((bits >> 31) & 0x7FFFFFFF)  # order-preserving for negative floats too
    return (key32.to(torch.int64) << 32) | docno_rank


def keys_to_scores(keys: torch.Tensor) -> torch.Tensor:
    key32 = (keys >> 32).to(torch.int32)
    bits = key32 ^ ((key32 >> 31) & 0x7FFFFFFF)
    return bits.view(torch.float32)


def top_k_trec(S: torch.Tensor, k: int, docno_rank: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The top-k entities of each row of S (filtered cells = -inf) in trec_eval's order, and their scores;
    entity -1 / score NaN past the row's last candidate. On CPU :func:`_top_k_trec_threshold`, elsewhere
    :func:`_top_k_trec_topk`; both give the same result."""
    if S.device.type == "cpu":
        ent, sc = _top_k_trec_threshold(S.numpy(), k, docno_rank.numpy())
        return torch.from_numpy(ent), torch.from_numpy(sc)
    return _top_k_trec_topk(S, k, docno_rank)


def _top_k_trec_topk(S: torch.Tensor, k: int, docno_rank: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`top_k_trec` by a float ``topk`` of k entries, which are then sorted by the exact int64 key (score,
    docno). That is exact unless a tie crosses the k-th position (more entries equal the k-th score than fit):
    such rows, rare with float scores, are redone with the full int64 keys."""
    v, i = torch.topk(S, k, dim=1, sorted=False)
    keys = ordered_keys(v, docno_rank[i]).masked_fill(v == -math.inf, _INT64_MIN)
    keys, order = torch.sort(keys, dim=1, descending=True)
    idx = torch.gather(i, 1, order)
    kth = v.min(dim=1).values
    n_ge = _compare_ge(S, kth[:, None])
    redo = torch.as_tensor((n_ge > k), device=S.device) & torch.isfinite(kth)
    if bool(redo.any()):
        rows = torch.nonzero(redo)[:, 0]
        full = ordered_keys(S[rows], docno_rank).masked_fill(S[rows] == -math.inf, _INT64_MIN)
        keys[rows], idx[rows] = torch.topk(full, k, dim=1, sorted=True)
    valid = keys != _INT64_MIN
    return idx.masked_fill(~valid, -1), keys_to_scores(keys).masked_fill(~valid, math.nan)


# CPU top-k by threshold: every _SAMPLE_STRIDE-th score of a row is a sample
_SAMPLE_STRIDE = 8


def _keys_np(scores: np.ndarray, docno_rank: np.ndarray) -> np.ndarray:
    """numpy twin of :func:`ordered_keys`."""
    bits = (scores + np.float32(0.0)).view(np.int32)
    key32 = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    return (key32.astype(np.int64) << 32) | docno_rank


def _top_k_trec_threshold(S: np.ndarray, k: int, docno_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_k_trec` on CPU without a ``topk`` over whole rows (which cost as much as the scores' product).

    Each row's threshold is the r-th largest of a strided sample of its scores (every s-th), r = (sqrt(k/s) +
    3)^2: about r s scores reach it, and the sample's r-th largest misses the row's k-th largest by the
    sampling error, a relative sd of about 1/sqrt(r), so fewer than k reach it only beyond 3 sd (for k = 1000,
    about 1,600 candidates). Every score at or above the threshold is a candidate, so when a row has at least k
    candidates its top k are among them, ties with the k-th score included: sorting the candidates' exact
    int64 keys (score, docno) gives trec_eval's order with no tie correction. Rows with fewer than k candidates
    (an unlucky sample, a row of few finite scores) sort their full row of keys instead. A key's low 32 bits
    are the docno rank, a permutation of the entities, so the keys alone give the entities.
    """
    B, E = S.shape
    k = min(k, E)
    entity_of = np.empty(E, np.int64)
    entity_of[docno_rank] = np.arange(E)
    top = np.full((B, k), _INT64_MIN, np.int64)
    full_rows = np.arange(B)
    r = int(math.ceil((math.sqrt(k / _SAMPLE_STRIDE) + 3) ** 2))
    if B and E > 2 * r * _SAMPLE_STRIDE:
        sample = S[:, ::_SAMPLE_STRIDE]
        m = sample.shape[1]
        tau = np.partition(sample, m - r, axis=1)[:, m - r]
        tau[tau == -np.inf] = np.inf  # too few finite scores: no candidate, the full row instead
        # flat indices (numpy's 2-D nonzero is several times slower), in row order: a row's come together
        above = S >= tau[:, None]
        counts = np.count_nonzero(above, axis=1)
        ok = counts >= k
        if not ok.all():
            above[~ok] = False
            counts[~ok] = 0
        flat = np.flatnonzero(above)
        if len(flat):
            rows = np.repeat(np.arange(B), counts)
            width = int(counts.max())
            first = np.cumsum(counts) - counts
            # each candidate's cell in a (B, width) matrix: its row, then its place among the row's candidates
            cell = np.arange(len(flat)) + (rows * width - first[rows])
            padded = np.full((B, width), _INT64_MIN, np.int64)
            padded.reshape(-1)[cell] = _keys_np(S.reshape(-1)[flat], docno_rank[flat - rows * E])
            padded.sort(axis=1)
            top[ok] = padded[ok][:, : width - k - 1 : -1] if width > k else padded[ok][:, ::-1]
        full_rows = np.flatnonzero(~ok)
    if len(full_rows):
        sub = S[full_rows]
        keys = np.where(sub == -np.inf, _INT64_MIN, _keys_np(sub, docno_rank))
        keys.sort(axis=1)
        top[full_rows] = keys[:, : E - k - 1 : -1] if E > k else keys[:, ::-1]
    key32 = (top >> 32).astype(np.int32)
    scores = (key32 ^ ((key32 >> 31) & 0x7FFFFFFF)).view(np.float32)
    valid = (top != _INT64_MIN) & (scores != -np.inf)
    return (np.where(valid, entity_of[top & 0xFFFFFFFF], -1),
            np.where(valid, scores, np.float32(np.nan)).astype(np.float32))


def _compare_ge(S: torch.Tensor, t: torch.Tensor) -> np.ndarray:
    if S.device.type == "cpu":
        return np.count_nonzero(S.numpy() >= t.numpy(), axis=1)
    return (S >= t).sum(1).cpu().numpy()


def macro_filter(questions: Questions, judged: Judged, known: AnswerIndex) -> tuple[np.ndarray, np.ndarray]:
    """The macro filter of every question, as (question row, entity) pairs sorted by row: its train/valid
    answers minus its own test answers (an entity both known and a test answer stays a candidate)."""
    E = questions.num_entities
    f_rows, f_ents = known.lookup(questions.keys)
    positive_codes = judged.q[judged.label == 1] * E + judged.entity[judged.label == 1]
    keep = ~np.isin(f_rows * E + f_ents, positive_codes)
    return f_rows[keep], f_ents[keep]


def ranking_outputs(J: int, Q: int, k: int) -> tuple[np.ndarray, ...]:
    """A :class:`Ranking`'s arrays before any batch is ranked: (score, n_gt, n_eq, candidate) per judged row, the
    top-k (run_entity, run_score) per question, entity −1 and score NaN where a list is shorter than k."""
    return (np.zeros(J, np.float32), np.zeros(J, np.int64), np.zeros(J, np.int64), np.ones(J, bool),
            np.full((Q, k), -1, np.int32), np.full((Q, k), np.nan, np.float32))


def question_ranges(questions: Questions, judged: Judged, known: AnswerIndex) -> tuple[np.ndarray, ...]:
    """Each question's judged rows (``judged.q`` is sorted), each row's slot within its question and its macro
    filter's rows: (j_start, j_stop, slot, f_rows, f_ents, f_start, f_stop, n_candidates), the layout both
    engines (this one and :mod:`kgeval.scale.engine`'s block engine) rank a batch of questions from."""
    Q, J = len(questions), len(judged)
    j_start = np.searchsorted(judged.q, np.arange(Q))
    j_stop = np.searchsorted(judged.q, np.arange(Q), side="right")
    slot = np.arange(J) - j_start[judged.q] if J else np.zeros(0, np.int64)
    f_rows, f_ents = macro_filter(questions, judged, known)
    f_start = np.searchsorted(f_rows, np.arange(Q))
    f_stop = np.searchsorted(f_rows, np.arange(Q), side="right")
    return j_start, j_stop, slot, f_rows, f_ents, f_start, f_stop, questions.num_entities - (f_stop - f_start)


def batch_size_for(num_entities: int, memory_budget_mb: float, k: int) -> int:
    cells = memory_budget_mb * 2**20 / _BYTES_PER_CELL
    return int(max(1, min(8192, cells // max(num_entities, 1))))


def rank_questions(scorer: Scorer, questions: Questions, judged: Judged, known: AnswerIndex,
                   docno_rank: np.ndarray, k: int = 1000, keep_scores: bool = False,
                   memory_budget_mb: float = 1024, device: str | torch.device | None = None,
                   model_name: str = "model", batch_size: int | None = None) -> Ranking:
    """Rank every question under the macro filter; see the module docstring for what is recorded."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    E = questions.num_entities
    Q = len(questions)
    k = int(min(k, E))
    bs = batch_size or batch_size_for(E, memory_budget_mb, k)
    J = len(judged)
    score, n_gt, n_eq, candidate, run_entity, run_score = ranking_outputs(J, Q, k)
    full = np.zeros((Q, E), np.float16) if keep_scores else None
    docno_t = torch.as_tensor(docno_rank, dtype=torch.int64, device=device)
    j_start, j_stop, slot, f_rows, f_ents, f_start, f_stop, n_cand = question_ranges(questions, judged, known)
    timings = {"score": 0.0, "filter": 0.0, "count": 0.0, "topk": 0.0}
    start_all = time.perf_counter()

    for side in (HEAD, TAIL):
        idx_side = np.flatnonzero(questions.side == side)
        for b0 in range(0, len(idx_side), bs):
            qi = idx_side[b0:b0 + bs]
            t0 = time.perf_counter()
            queries = torch.as_tensor(np.stack([questions.entity[qi], questions.relation[qi]], axis=1),
                                      dtype=torch.long, device=device)
            with torch.no_grad():
                S = scorer(queries, side).to(torch.float32)
            if S.shape != (len(qi), E):
                raise ScoreError(f"model {model_name}: scorer returned shape {tuple(S.shape)}, "
                                 f"expected {(len(qi), E)}")
            # one reduction instead of a boolean matrix: the sum is finite when every score is (NaN and ±inf
            # propagate); only a sum that overflows or a real non-finite score pays for the exact check
            if not bool(torch.isfinite(S.sum())) and not bool((finite := torch.isfinite(S)).all()):
                bad = int(torch.nonzero(~finite.all(dim=1))[0, 0])
                col = int(torch.nonzero(~finite[bad])[0, 0])
                q = int(qi[bad])
                raise ScoreError(f"model {model_name}: non-finite score {float(S[bad, col])} for question "
                                 f"{questions.qid[q]} ({SIDE_NAMES[side]}, entity {questions.entity[q]}, "
                                 f"relation {questions.relation[q]}) at candidate {col}")
            if full is not None:
                full[qi] = S.to(torch.float16).cpu().numpy()
            timings["score"] += time.perf_counter() - t0

            t0 = time.perf_counter()
            fr = _concat_ranges(f_start[qi], f_stop[qi])
            rows_t = torch.as_tensor(np.searchsorted(qi, f_rows[fr]), device=device)  # qi is sorted
            ents_t = torch.as_tensor(f_ents[fr], device=device)
            jr = _concat_ranges(j_start[qi], j_stop[qi])
            local = np.searchsorted(qi, judged.q[jr])
            jent_t = torch.as_tensor(judged.entity[jr], device=device)
            jloc_t = torch.as_tensor(local, device=device)
            s_j = S[jloc_t, jent_t]
            S[rows_t, ents_t] = -math.inf
            is_cand = torch.isfinite(S[jloc_t, jent_t])
            timings["filter"] += time.perf_counter() - t0

            t0 = time.perf_counter()
            gt, eq = _count_above(S, jloc_t, s_j, slot[jr] == 0)
            candidate[jr] = is_cand.cpu().numpy()
            score[jr] = s_j.cpu().numpy()
            n_gt[jr] = gt
            n_eq[jr] = eq - candidate[jr].astype(np.int64)  # do not count the entity itself
            timings["count"] += time.perf_counter() - t0

            if k > 0:
                t0 = time.perf_counter()
                ent, sc = top_k_trec(S, k, docno_t)
                run_entity[qi] = ent.to(torch.int32).cpu().numpy()
                run_score[qi] = sc.cpu().numpy()
                timings["topk"] += time.perf_counter() - t0
    timings["total"] = time.perf_counter() - start_all
    log.info("%s: ranked %d questions (%d judged entities) in %.2f s (batch %d): %s", model_name, Q, J,
             timings["total"], bs, {k_: round(v, 2) for k_, v in timings.items()})
    return Ranking(questions, n_cand, judged, score, n_gt, n_eq, candidate, run_entity, run_score, full,
                   meta={"model": model_name, "k": k, "batch_size": bs, "timings": timings,
                         "device": str(device)})


def _concat_ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Concatenation of arange(start[i], stop[i]) without a Python loop."""
    lengths = stop - start
    if lengths.sum() == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(start - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return offsets + np.arange(lengths.sum())


def _count_above(S: torch.Tensor, rows: torch.Tensor, thresholds: torch.Tensor,
                 first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (row, threshold): candidates of S[row] strictly above and equal to the threshold.

    Filtered cells hold -inf and never count (thresholds are finite). ``first`` marks each question's first
    judged entity: every row of S has exactly one, so those are compared against S in place; the others
    against gathered copies of their rows. ``rows`` is sorted.
    """
    n = len(rows)
    gt = np.zeros(n, np.int64)
    eq = np.zeros(n, np.int64)
    if n == 0:
        return gt, eq
    first_t = torch.as_tensor(first, device=S.device)
    order = rows[first_t]  # row of each first judged entity: one per row of S, in row order
    in_place = len(order) == S.shape[0] and bool((order == torch.arange(S.shape[0], device=S.device)).all())
    first_idx = np.flatnonzero(first) if in_place else np.zeros(0, np.int64)
    rest_idx = np.flatnonzero(~first) if in_place else np.arange(n)
    if S.device.type != "cpu":
        if in_place:
            gt[first_idx], eq[first_idx] = _compare(S, thresholds[first_t][:, None])
        if len(rest_idx):
            rest_t = torch.as_tensor(rest_idx, device=S.device)
            gt[rest_idx], eq[rest_idx] = _compare(S[rows[rest_t]], thresholds[rest_t][:, None])
        return gt, eq
    # CPU: numpy's count_nonzero is several times faster than torch's comparison-and-sum, and working through S
    # in blocks of rows that fit the cache reads each score from memory once for both comparisons (and the
    # gathered rows of questions with several answers never exist as one large copy)
    Sn, tn = S.numpy(), thresholds.numpy()
    rest_rows = rows.numpy()[rest_idx]
    step = max(1, _COUNT_BLOCK_CELLS // max(S.shape[1], 1))
    for r0 in range(0, S.shape[0], step):
        block = Sn[r0:r0 + step]
        if in_place:
            i = first_idx[r0:r0 + step]
            gt[i], eq[i] = _compare_np(block, tn[i][:, None])
        lo, hi = np.searchsorted(rest_rows, [r0, r0 + step])
        if hi > lo:
            i = rest_idx[lo:hi]
            gt[i], eq[i] = _compare_np(block[rest_rows[lo:hi] - r0], tn[i][:, None])
    return gt, eq


# cells of S per block of _count_above on CPU (1 MiB of float32 scores: a block and its comparisons stay in
# a core's L2 cache)
_COUNT_BLOCK_CELLS = 1 << 18


def _compare_np(M: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.count_nonzero(M > t, axis=1), np.count_nonzero(M == t, axis=1)


def _compare(M: torch.Tensor, t: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    return (M > t).sum(1).cpu().numpy(), (M == t).sum(1).cpu().numpy()
