"""The fused CPU pass's compiled tile step (numba, the ``fast`` extra): one read of each score of a tile counts
``n_gt`` / ``n_eq`` and finds the top-k candidates, where the numpy path of :mod:`.tiles` makes a pass per
comparison and per group maximum, each paying numpy's fixed cost per call and a turn at the GIL.

The tile is entities × questions (C order); for each group of ``GROUP`` entities a loop over the contiguous
questions, which LLVM vectorises, compares each question's ``GROUP`` cells with its first judged score into
int32 counters and takes their maximum. Only a question whose group maximum reaches its floor (its k-th key's
score; until it has k keys, a bound from a histogram of the first tile's column) has that group's cells keyed
into its running top-k, a min-heap of int64 keys (:func:`kgeval.scores.ranking.ordered_keys`). After the first
tiles that is a few groups in a thousand. The keys are unique (the docno ranks are), so the heap keeps exactly
the k largest keys, the same set as the numpy path's merges. ``nogil``: the workers run it in parallel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: entities per group of the candidate search's maxima: 1/16 of the cells adds a floor comparison
GROUP = 16


@njit(nogil=True, cache=True)
def tile_pass(S, w, lo, t_q, counts_q, rest_q, t_rest, counts_rest, heap, filled, floor, docno):  # pragma: no cover
    """Count and search a tile ``S`` (wp × nq float32, its first ``w`` rows entities ``lo``…, the rest -inf; wp a
    multiple of GROUP) in place of the numpy passes: ``counts_q`` (2, nq) += the cells > and == ``t_q`` per
    column (NaN: none), ``counts_rest`` (2, n_rest) likewise for columns ``rest_q`` against ``t_rest``; ``heap``
    (nq, k) each question's min-heap of its ``filled`` largest keys, ``floor`` the score a cell must reach."""
    wp, nq = S.shape
    n_rest = rest_q.shape[0]
    k = heap.shape[1]
    bits = np.empty(1, np.float32)  # a float32's bits as int32 and back (numba has no scalar view)
    bits_i = bits.view(np.int32)
    if k and w >= k:
        _first_floors(S, w, k, filled, floor, bits, bits_i)
    gt = np.zeros(nq, np.int32)  # a tile's counts fit int32; narrower lanes vectorise twice as wide as int64
    eq = np.zeros(nq, np.int32)
    gmax = np.empty(nq, np.float32)
    rows = min(wp, -(-w // GROUP) * GROUP)  # the rows past that are -inf: they count and reach nothing
    for g0 in range(0, rows, GROUP):
        # per question, a group's GROUP cells in registers (a loop of known length, unrolled): one store of
        # each sum per group instead of one per cell, and LLVM vectorises over the contiguous questions
        for c in range(nq):
            t = t_q[c]
            n_gt = np.int32(0)
            n_eq = np.int32(0)
            m = np.float32(-np.inf)
            for e in range(g0, g0 + GROUP):
                v = S[e, c]
                n_gt += 1 if v > t else 0
                n_eq += 1 if v == t else 0
                m = v if v > m else m
            gt[c] += n_gt
            eq[c] += n_eq
            gmax[c] = m
        for j in range(n_rest):  # the other judged entities of a question: few, a gathered column each
            c = rest_q[j]
            t = t_rest[j]
            for e in range(g0, g0 + GROUP):
                v = S[e, c]
                counts_rest[0, j] += 1 if v > t else 0
                counts_rest[1, j] += 1 if v == t else 0
        if k == 0:
            continue
        for c in range(nq):
            if gmax[c] >= floor[c]:
                for e in range(g0, min(g0 + GROUP, w)):
                    v = S[e, c]
                    if v >= floor[c]:
                        bits[0] = v + np.float32(0.0)  # -0.0 keys as +0.0
                        b = np.int64(bits_i[0])
                        key = ((b ^ ((b >> 31) & 0x7FFFFFFF)) << 32) | docno[lo + e]
                        _push(heap[c], filled, c, key, k, floor, bits, bits_i)
    for c in range(nq):
        counts_q[0, c] += gt[c]
        counts_q[1, c] += eq[c]


#: leading bits of a score's order-preserving 32-bit key that bucket a tile's column for its first floor: sign,
#: exponent and 3 bits of mantissa, buckets 1/8 of an octave wide
_BUCKET_BITS = 12


@njit(nogil=True, cache=True)
def _first_floors(S, w, k, filled, floor, bits, bits_i):  # pragma: no cover
    """A question without k keys yet takes as its floor the lowest score of the highest bucket of the tile's
    column (buckets by leading key bits) that has at least k cells at or above it: k cells reach it, and only a
    bucket's width more than k do, so its heap takes about k cells of this tile, not every cell that beats a
    rising root in entity order (a k-th-score selection took as long as that)."""
    shift = 32 - _BUCKET_BITS
    hist = np.empty(1 << _BUCKET_BITS, np.int32)
    for c in range(S.shape[1]):
        if filled[c] >= k or floor[c] == np.inf:
            continue
        hist[:] = 0
        top = 0
        for e in range(w):
            v = S[e, c]
            if v == v:  # NaN reaches no floor
                bits[0] = v + np.float32(0.0)
                b = np.int64(bits_i[0])
                u = ((b ^ ((b >> 31) & 0x7FFFFFFF)) + 0x80000000) >> shift  # unsigned order of the key's bits
                hist[u] += 1
                top = max(top, u)
        n = 0
        for u in range(top, -1, -1):
            n += hist[u]
            if n >= k:
                key32 = (np.int64(u) << shift) - 0x80000000
                bits_i[0] = key32 ^ ((key32 >> 31) & 0x7FFFFFFF)
                if bits[0] > floor[c]:  # False for the filter's -inf
                    floor[c] = bits[0]
                break


@njit(nogil=True, cache=True, inline="always")
def _push(h, filled, c, key, k, floor, bits, bits_i):  # pragma: no cover
    """Put ``key`` into question c's min-heap ``h`` of its k largest keys; once full, its floor is the score of
    the smallest (a cell scoring less cannot enter; one scoring the same enters by a larger docno)."""
    n = filled[c]
    if n < k:
        i = n
        while i > 0:  # sift up
            p = (i - 1) >> 1
            if h[p] <= key:
                break
            h[i] = h[p]
            i = p
        h[i] = key
        filled[c] = n + 1
        if n + 1 < k:
            return
    elif key > h[0]:
        i = 0
        while True:  # sift down from the root
            ch = 2 * i + 1
            if ch >= k:
                break
            if ch + 1 < k and h[ch + 1] < h[ch]:
                ch += 1
            if h[ch] >= key:
                break
            h[i] = h[ch]
            i = ch
        h[i] = key
    else:
        return
    hi = np.int32(h[0] >> 32)
    bits_i[0] = hi ^ ((hi >> 31) & 0x7FFFFFFF)
    floor[c] = bits[0]
