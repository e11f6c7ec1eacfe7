"""Exact filtered ranking over entity blocks, in memory bounded by the block and not by |E| × questions.

Today's engine (:mod:`kgeval.scores.ranking`) builds each batch's (batch × |E|) score matrix; at 4.6M entities
one question's row alone is 18 MB, and a batch useful for the matrix product would not fit. Here a batch of
questions of one side is scored against entities ``lo:hi`` block after block, and per block

* the macro filter's cells (train/valid answers but the question's own test answers) become -inf;
* every judged entity's ``n_gt`` / ``n_eq`` (candidates scoring strictly above / exactly equal to its score)
  grow by the block's counts, with the same helper as today's engine; the judged entity's own cell is taken
  out with the block's own value of it, so its score computed apart (``scorer.some``) never counts itself;
* a running top-k per question in trec_eval's order (score descending, then docno descending, the int64 keys of
  :func:`kgeval.scores.ranking.ordered_keys`): only cells at or above the question's current k-th score can
  enter, so after the first block few cells are ever sorted, and ties at the k-th score are kept exactly.

The output is the same :class:`kgeval.scores.ranking.Ranking` as today's engine (ranks with the study's tie
policy follow from ``n_gt``/``n_eq`` by :func:`kgeval.metrics.ranks.micro_ranks`), minus the full score matrix.
Runs on CPU and CUDA (the scorer's device). On CPU the three steps are one pass over each cache-sized tile of
scores on a worker thread per core (:mod:`.tiles`); on a device they are tensor operations over each block.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from ..data.kg import HEAD, TAIL
from ..data.questions import AnswerIndex, Questions
from ..errors import ScoreError
from ..progress import Progress
from ..scores.ranking import (
    _INT64_MIN,
    Judged,
    Ranking,
    _concat_ranges,
    _count_above,
    keys_to_scores,
    ordered_keys,
    question_ranges,
    ranking_outputs,
)
from . import tiles

#: bytes of score-sized temporaries per (question × entity) cell of a block: the scores, the comparison masks
_BYTES_PER_CELL = 12


def split_questions(test: np.ndarray, entities: int, relations: int) -> tuple[Questions, Judged]:
    """The questions and judged answers of a graph's test split: every test triple an answer, asked both ways
    (what the engine ranks; the workflow step, the benchmarks and the tests all start from it)."""
    from ..data.testsets import TestSet
    from ..scores.ranking import judged_entities

    ts = TestSet("test", test, np.ones(len(test), np.int8), np.zeros(len(test), np.int16))
    questions = Questions.from_triples(test, entities, relations)
    return questions, judged_entities(ts, questions)


def block_size_for(batch: int, memory_budget_mb: float) -> int:
    """Entities per block so that a block's temporaries stay within ``memory_budget_mb``."""
    return int(max(1024, memory_budget_mb * 2**20 // (_BYTES_PER_CELL * max(batch, 1))))


def rank_blocks(scorer, questions: Questions, judged: Judged, known: AnswerIndex, docno_rank: np.ndarray | None = None,
                k: int = 100, batch: int = 1024, memory_budget_mb: float = 512, block: int | None = None,
                model_name: str = "model", show_progress: bool = True, fused: bool | None = None,
                count: np.ndarray | None = None) -> Ranking:
    """Rank every question under the macro filter over entity blocks; see the module docstring.

    ``scorer``: a block scorer (:class:`.scorers.BilinearBlocks`); its device is the engine's. ``docno_rank``:
    each entity's rank among the entity id strings (trec_eval's tie order), the entity index where None.
    ``fused``: the CPU pass of :mod:`.tiles` (the default on CPU with a scorer that has ``block_t``; ``block``
    is then its tiles' width, else one of about 4 MiB of scores per worker), else the device pass below (the
    default elsewhere; on CPU for the tests). ``meta["timings"]``: with the fused pass, its steps' CPU seconds
    summed over the worker threads. ``count``: the judged rows (a bool per row) whose ``n_gt`` / ``n_eq`` are
    counted, every row where None; the others get -1 and only their score and candidate flag, which is all the
    micro filter needs of a question's other answers. A sampled estimate needs the counts of its sampled answers
    only, and at ogbl-wikikg2's shape a head question has up to 4,199 test answers (196 for the average sampled
    answer), each counted answer a comparison with every entity's score: counting them all took 97 % of the time.
    """
    device = scorer.device
    E, Q, J = questions.num_entities, len(questions), len(judged)
    if scorer.num_entities != E:
        raise ScoreError(f"model {model_name}: {scorer.num_entities} entity embeddings, the graph has {E} entities")
    k = int(min(k, E))
    fused = device.type == "cpu" and hasattr(scorer, "block_t") if fused is None else bool(fused)
    if fused and device.type != "cpu":
        raise ScoreError(f"model {model_name}: the fused pass runs on CPU, the scorer is on {device}")
    workers = tiles.workers_for(min(batch, Q)) if fused else 0
    blk = int(block or (tiles.tile_width(-(-min(batch, Q) // workers)) if fused
                        else block_size_for(batch, memory_budget_mb)))
    docno = np.arange(E, dtype=np.int64) if docno_rank is None else np.asarray(docno_rank, np.int64)
    docno_t = torch.as_tensor(docno, device=device)
    entity_of = np.empty(E, np.int64)
    entity_of[docno] = np.arange(E)

    score, n_gt, n_eq, candidate, run_entity, run_score = ranking_outputs(J, Q, k)
    j_start, j_stop, slot, f_rows, f_ents, f_start, f_stop, n_cand = question_ranges(questions, judged, known)
    if count is not None:
        count = np.asarray(count, bool)
        if count.shape != (J,):
            raise ValueError(f"count: {count.shape} flags for {J} judged rows")
    timings = {"score": 0.0, "count": 0.0, "topk": 0.0}
    t_all = time.perf_counter()
    n_batches = sum(-(-int((questions.side == s).sum()) // batch) for s in (HEAD, TAIL))
    threads = torch.get_num_threads()
    with Progress(n_batches * -(-E // blk), f"{model_name}: blocks", interval=30 if show_progress else 1e9) as bar:
        for side in (HEAD, TAIL):
            idx_side = np.flatnonzero(questions.side == side)
            for b0 in range(0, len(idx_side), batch):
                qi = idx_side[b0:b0 + batch]
                jr = _concat_ranges(j_start[qi], j_stop[qi])
                fr = _concat_ranges(f_start[qi], f_stop[qi])
                counted = None if count is None else count[jr]
                if counted is None:
                    first = slot[jr] == 0
                else:  # a question's first counted row is compared in place
                    q_c = judged.q[jr[counted]]
                    first = np.r_[True, q_c[1:] != q_c[:-1]] if len(q_c) else np.zeros(0, bool)
                try:
                    out = _rank_batch(scorer, questions, qi, side, judged, jr, first, f_rows[fr],
                                      f_ents[fr], k, blk, docno_t, timings, bar, model_name, workers, block,
                                      counted)
                finally:
                    torch.set_num_threads(threads)  # the fused pass's workers set one thread each
                gt, eq, s_j, cand, top = out
                n_gt[jr], n_eq[jr], score[jr], candidate[jr] = gt, eq, s_j, cand
                if k:
                    valid = top != _INT64_MIN
                    run_entity[qi] = np.where(valid, entity_of[top & 0xFFFFFFFF], -1)
                    run_score[qi] = np.where(valid, tiles.key_scores(top), np.float32(np.nan))
    timings["total"] = time.perf_counter() - t_all
    return Ranking(questions, n_cand, judged, score, n_gt, n_eq, candidate, run_entity, run_score, None,
                   meta={"model": model_name, "k": k, "batch_size": batch, "block": blk, "timings": timings,
                         "device": str(device), "engine": "blocks", "fused": fused, "workers": workers})


def _rank_batch(scorer, questions, qi, side, judged, jr, first, f_rows, f_ents, k, blk, docno_t, timings, bar,
                model_name, workers, width, counted=None):
    """A batch's counts, judged scores, candidate flags and top-k keys. ``counted`` (a flag per row of ``jr``):
    only those rows are counted (``first`` is over them); the others get -1 counts, their score and, for the
    flag the own cell would give, whether the filter holds them."""
    device = scorer.device
    E = questions.num_entities
    B = len(qi)
    t0 = time.perf_counter()
    with torch.no_grad():
        qv = scorer.query(torch.as_tensor(questions.entity[qi], device=device),
                          torch.as_tensor(questions.relation[qi], device=device), side)
        jloc = torch.as_tensor(np.searchsorted(qi, judged.q[jr]), device=device)  # qi is sorted
        jent_np = judged.entity[jr]
        jent = torch.as_tensor(jent_np, device=device)
        s_j = scorer.some(qv[jloc], jent).to(torch.float32)
    if not bool(torch.isfinite(s_j).all()):
        bad = int(torch.nonzero(~torch.isfinite(s_j))[0, 0])
        raise ScoreError(f"model {model_name}: non-finite score for question {questions.qid[qi[int(jloc[bad])]]}")
    timings["score"] += time.perf_counter() - t0
    s_all, expand = s_j, None
    if counted is not None:
        keep, n_rows = np.flatnonzero(counted), len(jr)
        flag = ~np.isin(judged.q[jr] * E + jent_np, f_rows.astype(np.int64) * E + f_ents)

        def expand(gt, eq, cand):
            full = np.full((2, n_rows), -1, np.int64)
            full[0, keep], full[1, keep] = gt, eq
            flag[keep] = cand
            return full[0], full[1], flag

        keep_t = torch.as_tensor(keep, device=device)
        jr, jloc, jent_np, jent, s_j = jr[keep], jloc[keep_t], jent_np[keep], jent[keep_t], s_j[keep_t]
    # the batch's filter cells by entity, so that each block takes its own slice
    f_order = np.argsort(f_ents, kind="stable")
    f_rows_l = np.searchsorted(qi, f_rows[f_order])
    f_ents_s = f_ents[f_order]
    if workers:
        gt, eq, cand, top = tiles.scan_batch(scorer, qv, E, s_j.numpy(), jloc.numpy(), first, jent_np, f_rows_l,
                                             f_ents_s, k, width, docno_t.numpy(), workers, timings)
        bar.update(-(-E // blk))
        if expand:
            gt, eq, cand = expand(gt, eq, cand)
        return gt, eq, s_all.numpy(), cand, top
    j_order = np.argsort(jent_np, kind="stable")
    jent_s = jent_np[j_order]
    gt = np.zeros(len(jr), np.int64)
    eq = np.zeros(len(jr), np.int64)
    cand = np.ones(len(jr), bool)
    top = torch.full((B, k), _INT64_MIN, dtype=torch.int64, device=device)
    thr = torch.full((B,), -math.inf, device=device)
    for lo in range(0, E, blk):
        hi = min(E, lo + blk)
        t0 = time.perf_counter()
        with torch.no_grad():
            S = scorer.block(qv, lo, hi).to(torch.float32)
        a, b = np.searchsorted(f_ents_s, [lo, hi])
        if b > a:
            S[torch.as_tensor(f_rows_l[a:b], device=device), torch.as_tensor(f_ents_s[a:b] - lo, device=device)] = \
                -math.inf
        timings["score"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        floor = _floor(S, k, thr) if k else None
        g, e, cand_rows, cand_cols = _scan(S, jloc, s_j, first, floor)
        gt += g
        eq += e
        # the judged entities of this block: their own cell is no other candidate
        a, b = np.searchsorted(jent_s, [lo, hi])
        if b > a:
            sel = j_order[a:b]
            sel_t = torch.as_tensor(sel, device=device)
            own = S[jloc[sel_t], jent[sel_t] - lo]
            own_np, s_np = own.cpu().numpy(), s_j[sel_t].cpu().numpy()
            finite = np.isfinite(own_np)
            cand[sel] = finite
            gt[sel] -= finite & (own_np > s_np)
            eq[sel] -= finite & (own_np == s_np)
        timings["count"] += time.perf_counter() - t0
        if k:
            t0 = time.perf_counter()
            top, thr = _merge_top(S, cand_rows, cand_cols, lo, k, top, thr, docno_t)
            timings["topk"] += time.perf_counter() - t0
        bar.update(1)
    if expand:
        gt, eq, cand = expand(gt, eq, cand)
    return gt, eq, s_all.cpu().numpy(), cand, top.cpu().numpy()


#: every _SAMPLE_STRIDE-th score of a block is a sample for a row's first floor
_SAMPLE_STRIDE = 8
_LOWEST = float(np.finfo(np.float32).min)  # a floor that keeps every finite score and drops the filter's -inf


def _floor(S: torch.Tensor, k: int, thr: torch.Tensor) -> torch.Tensor:
    """Each row's floor for top-k candidates in this block: its k-th score so far, or, for a row without k
    candidates yet, the k-th largest of a strided sample of the block's scores: k cells of the block reach that,
    so a cell below it can never be in the top k, and about k × stride cells are above it."""
    floor = torch.clamp(thr, min=_LOWEST)
    open_rows = thr == -math.inf
    sample = S[:, ::_SAMPLE_STRIDE]
    if bool(open_rows.any()) and sample.shape[1] >= k:
        kth = torch.topk(sample[open_rows], k, dim=1, sorted=False).values.min(dim=1).values
        floor[open_rows] = torch.clamp(kth, min=_LOWEST)
    return floor


def _scan(S: torch.Tensor, rows: torch.Tensor, thresholds: torch.Tensor, first: np.ndarray,
          floor: torch.Tensor | None):
    """One pass over a block on the device: n_gt / n_eq of the judged thresholds and the cells at or above each
    row's floor (on CPU only for the tests: the CPU runs :mod:`.tiles`)."""
    g, e = _count_above(S, rows, thresholds, first)
    if floor is None:
        return g, e, None, None
    r, c = torch.nonzero(S >= floor[:, None], as_tuple=True)
    return g, e, r, c


def _merge_top(S: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, lo: int, k: int, top: torch.Tensor,
               thr: torch.Tensor, docno_t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge a block's candidate cells into the running top-k keys of each row; ``thr`` is each row's k-th
    score so far (-inf while a row has fewer than k candidates)."""
    B = S.shape[0]
    if len(rows) == 0:
        return top, thr
    keys = ordered_keys(S[rows, cols], docno_t[cols + lo])
    counts = torch.bincount(rows, minlength=B)
    w = int(counts.max())
    first = torch.cumsum(counts, 0) - counts
    cell = torch.arange(len(rows), device=S.device) - first[rows] + rows * (k + w) + k
    padded = torch.full((B, k + w), _INT64_MIN, dtype=torch.int64, device=S.device)
    padded[:, :k] = top
    padded.view(-1)[cell] = keys
    top = torch.topk(padded, k, dim=1, sorted=True).values
    last = top[:, k - 1]
    thr = torch.where(last == _INT64_MIN, torch.full_like(thr, -math.inf), keys_to_scores(last))
    return top, thr
