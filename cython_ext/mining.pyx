# cython: language_level=3
"""Conjunction mining over packed bit vectors: the hot loops of ``glasswork.data.rules``.

Items arrive grouped by attribute (group ``g`` owns rows ``start[g]:start[g+1]``). ``walk`` ANDs
one item per group, for strictly increasing groups, so no conjunction repeats an attribute. A
partial conjunction whose support is already below ``lo`` is not extended (support only shrinks
as items are added: the Apriori property); one above ``hi`` is not emitted but may still be
extended. ``walk`` keeps no vectors, only the item indices, the count and a hash of each
qualifying conjunction; ``conjunctions`` then builds the vectors of the ones finally kept, in
their final order, straight into the output array (one allocation, written once).
"""

import numpy as np
from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from bitops cimport popcount, and_into, mix64



cdef inline uint64_t _hash(const uint64_t* row, Py_ssize_t nw) noexcept nogil:
    cdef uint64_t h = <uint64_t>0x9e3779b97f4a7c15
    cdef Py_ssize_t i
    for i in range(nw):
        h = mix64(h ^ row[i]) + <uint64_t>i
    return h


cdef struct Walk:
    const uint64_t* items
    const int64_t* start
    Py_ssize_t n_groups
    Py_ssize_t nw
    int max_card
    int64_t lo
    int64_t hi
    int64_t limit
    uint64_t* scratch      # max_card rows of nw words: the running conjunction per depth
    int32_t* chosen        # max_card item indices


cdef int _walk(Walk* w, int depth, Py_ssize_t g0, vector[int32_t]* combos,
               vector[int64_t]* counts, vector[uint64_t]* hashes) noexcept nogil:
    cdef Py_ssize_t g, it, k
    cdef int64_t cnt
    cdef uint64_t* row = w.scratch + depth * w.nw
    for g in range(g0, w.n_groups):
        for it in range(w.start[g], w.start[g + 1]):
            if depth == 0:
                memcpy(row, w.items + it * w.nw, w.nw * sizeof(uint64_t))
            else:
                and_into(row, row - w.nw, w.items + it * w.nw, w.nw)
            cnt = popcount(row, w.nw)
            if cnt < w.lo:
                continue
            w.chosen[depth] = <int32_t>it
            if cnt <= w.hi:
                if <int64_t>counts.size() >= w.limit:
                    return -1
                for k in range(w.max_card):
                    combos.push_back(w.chosen[k] if k <= depth else -1)
                counts.push_back(cnt)
                hashes.push_back(_hash(row, w.nw))
            if depth + 1 < w.max_card:
                if _walk(w, depth + 1, g + 1, combos, counts, hashes) < 0:
                    return -1
    return 0


def walk(const uint64_t[:, ::1] items, const int64_t[::1] group_start, int max_card,
         int64_t lo, int64_t hi, int64_t limit):
    """All conjunctions of up to ``max_card`` items from distinct groups with ``lo <= count <= hi``.

    Returns ``(combos, counts, hashes)``: ``combos`` is ``(M, max_card)`` int32 item indices
    padded with -1, in walk order (not the final order); ``hashes`` identify equal vectors up to
    collisions. Raises ``OverflowError`` when more than ``limit`` conjunctions qualify.
    """
    cdef Py_ssize_t nw = items.shape[1], n_groups = group_start.shape[0] - 1
    if max_card < 1:
        raise ValueError("max_card must be >= 1")
    if n_groups < 0 or (n_groups > 0 and group_start[n_groups] != items.shape[0]):
        raise ValueError("group_start must end at the number of items")
    cdef vector[int32_t] combos
    cdef vector[int64_t] counts
    cdef vector[uint64_t] hashes
    scratch_arr = np.zeros((max_card, max(nw, 1)), dtype=np.uint64)
    chosen_arr = np.full(max_card, -1, dtype=np.int32)
    cdef uint64_t[:, ::1] scratch = scratch_arr
    cdef int32_t[::1] chosen = chosen_arr
    cdef Walk w
    cdef int rc = 0
    if n_groups > 0 and items.shape[0] > 0 and nw > 0:
        w = Walk(items=&items[0, 0], start=&group_start[0], n_groups=n_groups, nw=nw, max_card=max_card,
                 lo=lo, hi=hi, limit=limit, scratch=&scratch[0, 0], chosen=&chosen[0])
        with nogil:
            rc = _walk(&w, 0, 0, &combos, &counts, &hashes)
    if rc < 0:
        raise OverflowError(f"more than {limit} conjunctions qualify")
    cdef Py_ssize_t m = counts.size()
    combos_arr = np.empty((m, max_card), dtype=np.int32)
    counts_arr = np.empty(m, dtype=np.int64)
    hashes_arr = np.empty(m, dtype=np.uint64)
    cdef int32_t[:, ::1] cv = combos_arr
    cdef int64_t[::1] nv = counts_arr
    cdef uint64_t[::1] hv = hashes_arr
    if m > 0:
        memcpy(&cv[0, 0], combos.data(), m * max_card * sizeof(int32_t))
        memcpy(&nv[0], counts.data(), m * sizeof(int64_t))
        memcpy(&hv[0], hashes.data(), m * sizeof(uint64_t))
    return combos_arr, counts_arr, hashes_arr


def conjunctions(const uint64_t[:, ::1] items, const int32_t[:, ::1] combos):
    """The ``(M, nw)`` vectors of the conjunctions in ``combos`` (item indices, -1 padded)."""
    cdef Py_ssize_t m = combos.shape[0], card = combos.shape[1], nw = items.shape[1]
    cdef Py_ssize_t r, k, i, p = items.shape[0]
    for r in range(m):
        if combos[r, 0] < 0 or combos[r, 0] >= p:
            raise ValueError(f"row {r} of combos does not start with an item index")
        for k in range(1, card):
            if combos[r, k] >= p:
                raise ValueError(f"item index {combos[r, k]} out of range")
    out_arr = np.empty((m, nw), dtype=np.uint64)
    if m == 0 or nw == 0:
        return out_arr
    cdef uint64_t[:, ::1] out = out_arr
    with nogil:
        for r in range(m):
            memcpy(&out[r, 0], &items[combos[r, 0], 0], nw * sizeof(uint64_t))
            for k in range(1, card):
                i = combos[r, k]
                if i < 0:
                    break
                and_into(&out[r, 0], &out[r, 0], &items[i, 0], nw)
    return out_arr
