"""The block engine's pass on CPU: each tile of scores is counted and searched for top-k candidates while it is in
cache, instead of in passes over a block larger than the caches.

A batch's questions are split among one worker thread per torch thread. A worker walks the entity tiles and, per
tile, has one single-threaded product write the tile's scores, entities × its questions (about 4 MiB: in the
core's L2 and the shared L3 cache), into one reused buffer; then

* the macro filter's cells become -inf;
* each question's first judged score is compared with its column of the tile (the other judged entities of a
  question with a gathered copy of it) into a reused mask, for ``n_gt`` and again for ``n_eq``. The mask is
  counted by summing its rows as uint64 words, eight questions' bytes of 0 or 1 at a time (numpy's
  ``count_nonzero(axis=…)`` casts every bool to int64 and costs more than the comparison);
* a question's floor is its k-th key so far (or, until it has k, a tile's k-th score: k cells reach it); the
  maxima of groups of 16 entities (one pass, 1/16 of the output) find the few groups at or above it, which are
  copied aside until some question has ``_MERGE_FACTOR × k`` of them; then their cells at or above the floor
  are keyed and merged into the running top-k, whose k-th key gives the next floor.

With numba installed (the ``fast`` extra: ``pip install "kgeval[fast]"``) the counting and the candidate search
are one compiled pass over the tile instead (:mod:`.tilepass`, the same outputs to the bit; its time is
counted as ``count``); ``KGEVAL_NO_NUMBA=1`` keeps the numpy passes, which run wherever numba does not import.
The path is chosen once, at import (:func:`tile_path`).

Entities are the tile's rows and questions its columns: every comparison and reduction then runs along rows of
hundreds of questions (numpy's fast contiguous loops), not along one question's row with a threshold per row.
The products give the same bits as the block engine's ``query @ entities.T`` (a cell's value does not depend on
the shape or layout it is computed in; tests/test_scale_tiles.py checks the counts and lists against a
brute-force reference, and the benchmark's data against the previous engine).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from ..scores.ranking import _INT64_MIN, _keys_np

#: scores per tile: 4 MiB of float32, twice a core's L2 cache, but the fewer numpy calls per score (each pays a
#: fixed cost, and with two workers a turn at the GIL) save more than the cache misses cost: at 1M entities on 2
#: loaded cores, 1 MiB tiles took 13.7 / 14.5 CPU seconds, 4 MiB 10.8 / 11.4, 8 MiB 10.1 / 11.2
TILE_CELLS = 1 << 20
#: pending candidates of a question (in units of k) that trigger a merge into the running top-k
_MERGE_FACTOR = 1
#: entities per group of the candidate search's maxima
_GROUP = 16
_LOWEST = np.float32(np.finfo(np.float32).min)  # a floor that keeps every finite score and drops the filter's -inf

_POOL: ThreadPoolExecutor | None = None


def _compiled():
    """The compiled tile step of :mod:`.tilepass`, or None: numba is not installed (the ``fast`` extra) or
    ``KGEVAL_NO_NUMBA`` is set to anything but 0 (the numpy path for the tests and the benchmarks)."""
    if os.environ.get("KGEVAL_NO_NUMBA", "0") not in ("", "0"):
        return None
    try:
        from .tilepass import tile_pass
    except ImportError:
        return None
    return tile_pass


#: the compiled tile step where available (chosen once, here)
_TILE_PASS = _compiled()


def tile_path() -> str:
    """Which tile step the fused pass runs: ``"numba"`` (compiled) or ``"numpy"``."""
    return "numpy" if _TILE_PASS is None else "numba"


def _pool(workers: int) -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL._max_workers < workers:
        _POOL = ThreadPoolExecutor(max_workers=workers)
    return _POOL


def workers_for(questions: int) -> int:
    """Worker threads for a batch: one per torch thread, each with at least 64 questions."""
    return max(1, min(torch.get_num_threads(), questions // 64))


def tile_width(questions: int, cells: int = TILE_CELLS) -> int:
    """Entities per tile for a worker with ``questions`` questions: a multiple of 128 (:func:`_counts`)."""
    return max(128, cells // max(_round8(questions), 1) // 128 * 128)


def _round8(n: int) -> int:
    return -(-n // 8) * 8


def _counts(mask: np.ndarray) -> np.ndarray:
    """True cells per column of each C-contiguous (entities, questions) bool mask of a stack (masks, entities,
    questions), entities a multiple of 128 and questions of 8. Each uint64 word holds 8 questions' bytes of 0 or
    1: summing 128 rows of words adds every byte lane without a carry into the next."""
    m, n, q = mask.shape
    words = mask.view(np.uint64).reshape(m, n // 128, 128, q // 8).sum(axis=2, dtype=np.uint64)
    return words.view(np.uint8).sum(axis=1, dtype=np.int64)


def scan_batch(scorer, qv: torch.Tensor, E: int, s_j: np.ndarray, jloc: np.ndarray, first: np.ndarray,
               jent: np.ndarray, f_rows: np.ndarray, f_ents: np.ndarray, k: int, width: int | None,
               docno: np.ndarray, workers: int, timings: dict) -> tuple:
    """n_gt, n_eq, candidate flags of a batch's judged entities (``jloc`` sorted: each one's row of ``qv``) and
    the batch's top-k keys (B, k), largest first. ``f_rows`` / ``f_ents``: the filter's cells."""
    B = qv.shape[0]
    J = len(jloc)
    gt, eq, cand = np.zeros(J, np.int64), np.zeros(J, np.int64), np.ones(J, bool)
    top = np.full((B, k), _INT64_MIN, np.int64)
    bounds = np.linspace(0, B, workers + 1).astype(np.int64)

    def part(i):
        torch.set_num_threads(1)  # this thread's products on one thread (OpenMP keeps the setting per thread)
        r0, r1 = int(bounds[i]), int(bounds[i + 1])
        a, b = np.searchsorted(jloc, [r0, r1])
        sel = (f_rows >= r0) & (f_rows < r1)
        out = _scan(scorer, qv[r0:r1], E, width or tile_width(r1 - r0), s_j[a:b], jloc[a:b] - r0, first[a:b],
                    jent[a:b], f_rows[sel] - r0, f_ents[sel], k, docno)
        gt[a:b], eq[a:b], cand[a:b], top[r0:r1] = out[:4]
        return out[4]

    for t in _pool(workers).map(part, range(workers)):
        for name, v in t.items():
            timings[name] = timings.get(name, 0.0) + v
    return gt, eq, cand, top


def _scan(scorer, q, E, w, s, jl, first, jent, fr, fe, k, docno):
    """One worker's questions ``q`` (jl: each judged entity's question among them; fr/fe: the filter's cells)."""
    n = q.shape[0]
    nq = _round8(n)  # questions padded to whole uint64 words of the mask; the padding's thresholds are NaN
    qt = torch.zeros(q.shape[1], nq, dtype=q.dtype)
    qt[:, :n] = q.T
    edges = np.append(np.arange(0, E, w), E)
    f_order = np.argsort(fe, kind="stable")
    fr, fe = fr[f_order], fe[f_order]
    f_pos = np.searchsorted(fe, edges)
    j_order = np.argsort(jent, kind="stable")
    j_pos = np.searchsorted(jent[j_order], edges)
    # each question's first judged entity compares in place (a question without one has NaN: no cell counts),
    # the others against gathered copies of their questions' columns
    t_q = np.full(nq, np.nan, np.float32)
    t_q[jl[first]] = s[first]
    rest = np.flatnonzero(~first)
    n_rest = _round8(len(rest)) if len(rest) else 0
    rest_q = np.zeros(n_rest, np.int64)
    rest_q[:len(rest)] = jl[rest]
    t_rest = np.full(n_rest, np.nan, np.float32)
    t_rest[:len(rest)] = s[rest]
    counts_q, counts_rest = np.zeros((2, nq), np.int64), np.zeros((2, n_rest), np.int64)  # n_gt, n_eq
    own_gt, own_eq, cand = np.zeros(len(jl), np.int64), np.zeros(len(jl), np.int64), np.ones(len(jl), bool)
    wp = -(-w // 128) * 128  # the tile's rows past its entities hold -inf: they count nothing
    buf = torch.full((wp, nq), -np.inf, dtype=torch.float32)
    S = buf.numpy()
    step = _TILE_PASS
    if step is None:
        mask = np.zeros((2, wp, nq), bool)
        mask_rest = np.zeros((2, wp, n_rest), bool)
        top = _RunningTop(nq, k, docno)
        top.floor[n:] = np.inf  # the padding has no candidates
    else:  # the compiled step's running top-k: a min-heap of keys per question and its floor
        heap = np.full((nq, k), _INT64_MIN, np.int64)
        filled = np.zeros(nq, np.int64)
        floor = np.full(nq, _LOWEST, np.float32)
        floor[n:] = np.inf
    t_score = t_count = t_top = 0.0
    for i in range(len(edges) - 1):
        lo, hi = int(edges[i]), int(edges[i + 1])
        t0 = time.thread_time()
        with torch.no_grad():
            scorer.block_t(qt, lo, hi, out=buf[:hi - lo])
        if hi - lo < w:  # the last, narrower tile
            S[hi - lo:] = -np.inf
        a, b = f_pos[i], f_pos[i + 1]
        if b > a:
            S[fe[a:b] - lo, fr[a:b]] = -np.inf
        t1 = time.thread_time()
        if step is not None:  # counts and top-k in one read of the tile (its time is counting's)
            step(S, hi - lo, lo, t_q, counts_q, rest_q, t_rest, counts_rest, heap, filled, floor, docno)
        else:
            np.greater(S, t_q, out=mask[0])
            np.equal(S, t_q, out=mask[1])
            counts_q += _counts(mask)
            if n_rest:
                G = np.take(S, rest_q, axis=1)
                np.greater(G, t_rest, out=mask_rest[0])
                np.equal(G, t_rest, out=mask_rest[1])
                counts_rest += _counts(mask_rest)
        # the judged entities of this tile: their own cell is no other candidate
        a, b = j_pos[i], j_pos[i + 1]
        if b > a:
            js = j_order[a:b]
            own = S[jent[js] - lo, jl[js]]
            finite = np.isfinite(own)
            cand[js] = finite
            own_gt[js] = finite & (own > s[js])
            own_eq[js] = finite & (own == s[js])
        t2 = time.thread_time()
        if k and step is None:
            top.add(S, hi - lo, lo, hi == E)
        t_score += t1 - t0
        t_count += t2 - t1
        t_top += time.thread_time() - t2
    t2 = time.thread_time()
    keys = top.keys() if step is None else np.sort(heap, axis=1)[:, ::-1]
    t_top += time.thread_time() - t2
    gt = np.where(first, counts_q[0, jl], 0) - own_gt
    eq = np.where(first, counts_q[1, jl], 0) - own_eq
    gt[rest] += counts_rest[0, :len(rest)]
    eq[rest] += counts_rest[1, :len(rest)]
    return gt, eq, cand, np.ascontiguousarray(keys[:n]), {"score": t_score, "count": t_count, "topk": t_top}


class _RunningTop:
    """Each question's k largest keys so far, and the floor that a cell must reach to be a candidate: the k-th
    largest key's score, or, for a question without k keys yet, the largest k-th score of a tile seen (k cells
    reach it). A tile's groups of ``_GROUP`` entities whose maximum reaches the floor are copied aside until
    some question has ``_MERGE_FACTOR × k`` of them; then their cells at or above the (by then higher) floors
    are keyed and merged."""

    def __init__(self, nq: int, k: int, docno: np.ndarray):
        self.k, self.docno = k, docno
        self.top = np.full((nq, k), _INT64_MIN, np.int64)  # unordered but for the k-th largest, first
        self.floor = np.full(nq, _LOWEST, np.float32)
        self.full = np.zeros(nq, bool)
        self.pending = []  # (question, first entity, scores (groups, _GROUP)) of the groups reaching the floor
        self.n = np.zeros(nq, np.int64)  # pending groups per question

    def add(self, S: np.ndarray, w: int, lo: int, last: bool) -> None:
        """Take the candidates of a tile S (entities × questions, its first ``w`` rows entities ``lo``…; the rest
        -inf, a multiple of ``_GROUP`` rows in all)."""
        k = self.k
        merge = last
        if w >= k and not self.full.all():
            cols = np.flatnonzero(~self.full & (self.floor < np.inf))
            sub = S[:w, cols]  # a copy: NaN (a model's overflow) reaches no floor, as on the compiled path,
            sub[np.isnan(sub)] = -np.inf  # where partition would sort it above every score
            kth = np.partition(sub, w - k, axis=0)[w - k]
            self.floor[cols] = np.maximum(self.floor[cols], np.maximum(kth, _LOWEST))
            merge = True  # a merge makes these questions' floors their k-th keys, usually far higher
        wp, nq = S.shape
        groups = S.reshape(wp // _GROUP, _GROUP, nq)
        hit = np.flatnonzero(np.fmax.reduce(groups, axis=1) >= self.floor)  # a NaN cell hides no other
        if len(hit):
            g, col = np.divmod(hit, nq)
            self.pending.append((col, g * _GROUP + lo, groups[g, :, col]))
            self.n += np.bincount(col, minlength=nq)
        if merge or self.n.max() >= _MERGE_FACTOR * k:
            self._merge()

    def _merge(self) -> None:
        if not self.pending:
            return
        col, ent, cells = (np.concatenate(x) for x in zip(*self.pending))
        h, j = np.divmod(np.flatnonzero(cells >= self.floor[col][:, None]), _GROUP)
        col, scores, ent = col[h], cells[h, j], ent[h] + j
        order = np.argsort(col, kind="stable")
        col, keys = col[order], _keys_np(scores[order], self.docno[ent[order]])
        nq, k = self.top.shape
        n = np.bincount(col, minlength=nq)
        m = int(n.max(initial=0))
        padded = np.full((nq, k + m), _INT64_MIN, np.int64)
        padded[:, :k] = self.top
        padded.reshape(-1)[col * (k + m) + k + np.arange(len(col)) - (np.cumsum(n) - n)[col]] = keys
        # the k largest of each question, its k-th largest first
        self.top = np.ascontiguousarray(np.partition(padded, m, axis=1)[:, m:])
        kth = self.top[:, 0]
        self.full = kth != _INT64_MIN
        self.floor = np.where(self.full, key_scores(kth), self.floor).astype(np.float32)
        self.pending, self.n[:] = [], 0

    def keys(self) -> np.ndarray:
        """The top-k keys of each question, largest first."""
        self._merge()
        return np.ascontiguousarray(np.sort(self.top, axis=1)[:, ::-1])


def key_scores(keys: np.ndarray) -> np.ndarray:
    """The float32 scores of int64 keys (:func:`kgeval.scores.ranking.ordered_keys`)."""
    key32 = (keys >> 32).astype(np.int32)
    return (key32 ^ ((key32 >> 31) & 0x7FFFFFFF)).view(np.float32)
