# cython: language_level=3
"""The CORELS search's queue entries and its progress figures (issue 27).

``corels.Search`` queues prefixes in a paged heap (``paged_heap.h``) of ``QEntry``; here is what a
progress report reads off that queue. ``LiveFigures`` counts the entries as they enter and leave
the live queue (queued, not deleted): bound -> count, depth -> count, and per depth prefix error ->
count (Theorem 7's histogram needs ``f``, which moves with ``R^c``), so a report costs O(distinct
bounds), never O(queue); ``queue_scan`` recomputes the same figures from the heap (the tests'
audit). Search keeps when entries come and go. A struct and inline functions, as
``corels_disk.pxd``: a cdef class shared between extension modules cannot be imported under its
installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.string cimport memcpy
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.map cimport map as ordered_map
from cython.operator cimport dereference as deref, preincrement as inc

from paged_heap cimport PagedHeap
from corels_bounds cimport theorem7_f
from corels_problem cimport P_LOWER_BOUND
from corels_threads cimport gw_live_inc
from corels_trie cimport Node, PrefixTrie, F_DELETED, F_QUEUED, trie_node, trie_err, trie_lb


cdef struct QEntry:      # 16 bytes: four children of a heap entry share one cache line
    double key
    int32_t tie         # insertion order (FIFO ties; DFS negates it); wraps harmlessly after 2^31
    int32_t node


cdef struct LiveFigures:    # the live queue, counted as entries come and go
    ordered_map[double, int64_t] lb                     # bound -> count
    vector[int64_t] depth                               # depth -> count
    vector[unordered_map[uint64_t, int64_t]] err        # per depth, prefix error (bits) -> count


cdef inline double entry_lb(int policy, const PrefixTrie* trie, QEntry e) noexcept nogil:
    """A queued node's bound: its key under the lower-bound policy (the trie keeps no bound
    then), else the trie's side array."""
    return e.key if policy == P_LOWER_BOUND else trie_lb(trie, e.node)


cdef inline void live_clear(LiveFigures* lv) noexcept nogil:
    """No entry counted (an empty queue)."""
    lv.lb.clear()
    lv.depth.assign(256, 0)
    lv.err.clear()
    lv.err.resize(256)


cdef inline bint live_add(LiveFigures* lv, PrefixTrie* trie, int32_t idx, double lb) noexcept nogil:
    """Count a node (bound ``lb``) entering the live queue in the progress figures; False
    (nothing counted) when the counts cannot allocate."""
    cdef Node* nd = trie_node(trie, idx)
    cdef uint64_t ebits
    cdef double err = trie_err(trie, idx)
    memcpy(&ebits, &err, 8)
    if not gw_live_inc(lv.lb, lb, lv.err[nd.depth], ebits):
        return False
    nd.flags |= F_QUEUED
    lv.depth[nd.depth] += 1
    return True


cdef inline void live_remove(LiveFigures* lv, PrefixTrie* trie, int32_t idx, double lb) noexcept nogil:
    """Leaving the queue (or deleted while queued): uncount a node (bound ``lb``) once."""
    cdef Node* nd = trie_node(trie, idx)
    cdef double err
    cdef uint64_t ebits
    cdef ordered_map[double, int64_t].iterator it
    cdef unordered_map[uint64_t, int64_t].iterator jt
    cdef int64_t* count
    if (nd.flags & F_QUEUED) == 0:
        return
    nd.flags &= ~F_QUEUED
    if nd.flags & F_DELETED:
        return                      # uncounted when it was deleted
    it = lv.lb.find(lb)
    count = &deref(it).second       # (deref(it).second -= 1 would change a copy)
    count[0] -= 1
    if count[0] == 0:
        lv.lb.erase(it)
    lv.depth[nd.depth] -= 1
    err = trie_err(trie, idx)
    memcpy(&ebits, &err, 8)
    jt = lv.err[nd.depth].find(ebits)
    count = &deref(jt).second
    count[0] -= 1
    if count[0] == 0:
        lv.err[nd.depth].erase(jt)


cdef inline void live_pairs(LiveFigures* lv, unordered_map[int64_t, int64_t]& pairs, double best, double lamW,
                            int M) noexcept nogil:
    """Theorem 7's ``(length, f)`` histogram of the live queue into ``pairs`` (key ``length * 65536
    + f``), from the counts by (length, prefix error)."""
    cdef int L
    cdef double err
    cdef unordered_map[uint64_t, int64_t].iterator it
    for L in range(256):
        if lv.depth[L] == 0:
            continue
        it = lv.err[L].begin()
        while it != lv.err[L].end():
            memcpy(&err, &deref(it).first, 8)
            pairs[<int64_t>L * 65536 + theorem7_f(err, L, best, lamW, M)] += deref(it).second
            inc(it)


cdef inline dict live_lengths(LiveFigures* lv):
    """The live queue's prefixes by length."""
    return {L: int(lv.depth[L]) for L in range(256) if lv.depth[L] > 0}


cdef inline double queue_scan(PagedHeap[QEntry]* queue, int policy, const PrefixTrie* trie, double lo, double best,
                              double lamW, int M, dict lengths, dict pairs):
    """The live figures recomputed by a full scan of the heap (an audit, O(queue)) into ``lengths``
    and ``pairs`` (keys ``(length, f)``); the smallest of ``lo`` and the entries' bounds + lambda."""
    cdef size_t i
    cdef int32_t idx
    cdef int L
    for i in range(queue.size()):
        idx = queue.at(i).node
        if trie_node(trie, idx).flags & F_DELETED:
            continue
        lo = min(lo, entry_lb(policy, trie, queue.at(i)) + lamW)
        L = trie_node(trie, idx).depth
        lengths[L] = lengths.get(L, 0) + 1
        key = (L, theorem7_f(trie_err(trie, idx), L, best, lamW, M))
        pairs[key] = pairs.get(key, 0) + 1
    return lo
