# cython: language_level=3
"""The CORELS search's queue entries and its progress figures (issue 27).

``corels.Search`` queues prefixes in a paged heap (``paged_heap.h``) of ``QEntry``; here is what a
progress report reads off that queue. ``LiveFigures`` counts the entries as they enter and leave
the live queue (queued, not deleted): bound -> count, depth -> count, and per depth prefix error ->
count (Theorem 7's histogram needs ``f``, which moves with ``R^c``), so a report costs O(distinct
bounds), never O(queue); with the buckets on disk they give the lower bound (``queue_lower_bound``)
and the histograms (``queue_summary``) a progress report reads; ``queue_audit`` recomputes the same
figures from the heap (the tests' audit). The heap's sweeps are here too: the garbage collection (``queue_gc``) and the spill of its
worst part to bucket files (``queue_spill``, the files being ``corels_disk.pxd``'s), with the tests of
when a spill or a reload is due. Search keeps when entries come and go and when to sweep. A struct and inline functions, as
``corels_disk.pxd``: a cdef class shared between extension modules cannot be imported under its
installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint8_t
from libc.string cimport memcpy
from libc.errno cimport ENOMEM
from libc.stdlib cimport malloc, free
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.map cimport map as ordered_map
from cython.operator cimport dereference as deref, preincrement as inc

from bitops cimport splitmix64
from paged_heap cimport PagedHeap
from corels_bounds cimport Pruning, prunes, theorem7_f
from corels_disk cimport (
    DiskQueue, disk_first, disk_lb, disk_summary, disk_lengths, SPILL_SAMPLE, SPILL_RECORD, gw_spill_key, disk_encode, disk_abort, disk_begin, disk_stays, disk_write,
    disk_flush, disk_commit,
)
from corels_problem cimport P_LOWER_BOUND
from corels_threads cimport gw_live_inc
from corels_trie cimport (
    Node, PrefixTrie, F_DELETED, F_QUEUED, trie_node, trie_err, trie_lb, trie_dead, trie_release, trie_node_bytes,
)


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


cdef inline bint queue_push(PagedHeap[QEntry]* queue, LiveFigures* lv, PrefixTrie* trie, int policy, double key,
                            int32_t tie, int32_t node, int64_t* max_queue) noexcept nogil:
    """Queue ``node`` with ``key`` and ``tie``, counted in the live figures (``max_queue``: the
    heap's high-water mark); False when no memory."""
    cdef QEntry e
    if not queue.reserve_one():
        return False
    if not live_add(lv, trie, node, key if policy == P_LOWER_BOUND else trie_lb(trie, node)):
        # counted before it enters the heap: all or nothing
        return False
    e.key = key
    e.tie = tie
    e.node = node
    queue.push_reserved(e)
    if <int64_t>queue.size() > max_queue[0]:
        max_queue[0] = queue.size()
    return True


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


cdef inline double queue_lower_bound(LiveFigures* lv, const DiskQueue* disk, double lo, double lamW) noexcept nogil:
    """The smallest of ``lo`` and every queued prefix's bound plus lambda, in RAM and on disk:
    O(1) at any queue size (the live bounds are kept as entries come and go)."""
    if lv.lb.size() > 0:
        lo = min(lo, deref(lv.lb.begin()).first + lamW)
    if disk.buckets.size() > 0:      # the spilled part of the queue, bucket by bucket
        lo = min(lo, disk_lb(disk) + lamW)
    return lo


cdef inline dict pairs_add(unordered_map[int64_t, int64_t]& counts, dict pairs):
    """Add counts keyed ``length * 65536 + f`` into ``pairs``, keyed ``(length, f)``."""
    cdef unordered_map[int64_t, int64_t].iterator it = counts.begin()
    while it != counts.end():
        key = (int(deref(it).first // 65536), int(deref(it).first % 65536))
        pairs[key] = pairs.get(key, 0) + int(deref(it).second)
        inc(it)
    return pairs


cdef inline tuple queue_summary(LiveFigures* lv, const DiskQueue* disk, double best, double lamW, int M):
    """The queue's prefixes by length and Theorem 7's ``(length, f)`` histogram, the prefixes on
    disk included, from the live counts (O(distinct errors), not O(queue))."""
    cdef unordered_map[int64_t, int64_t] pairs
    with nogil:
        live_pairs(lv, pairs, best, lamW, M)
        disk_summary(disk, pairs, best, lamW, M)
    lengths = live_lengths(lv)
    disk_lengths(disk, lengths)
    return lengths, pairs_add(pairs, {})


cdef inline tuple queue_audit(PagedHeap[QEntry]* queue, int policy, const PrefixTrie* trie, const DiskQueue* disk,
                              double lo, double best, double lamW, int M):
    """The figures of ``queue_lower_bound`` and ``queue_summary`` recomputed by a full scan of the
    heap (an audit, O(queue)): ``(lower bound, lengths, pairs)``, the lower bound the smallest of
    ``lo`` and the heap's entries (the buckets' not included), the histograms with the buckets'."""
    cdef size_t i
    cdef int32_t idx
    cdef int L
    cdef unordered_map[int64_t, int64_t] on_disk
    lengths = {}
    pairs = {}
    for i in range(queue.size()):
        idx = queue.at(i).node
        if trie_node(trie, idx).flags & F_DELETED:
            continue
        lo = min(lo, entry_lb(policy, trie, queue.at(i)) + lamW)
        L = trie_node(trie, idx).depth
        lengths[L] = lengths.get(L, 0) + 1
        key = (L, theorem7_f(trie_err(trie, idx), L, best, lamW, M))
        pairs[key] = pairs.get(key, 0) + 1
    disk_lengths(disk, lengths)
    with nogil:
        disk_summary(disk, on_disk, best, lamW, M)
    return lo, lengths, pairs_add(on_disk, pairs)


cdef inline bint spill_due(PagedHeap[QEntry]* queue, const PrefixTrie* trie, const DiskQueue* disk,
                           size_t map_bytes) noexcept nogil:
    """The search's memory (the queue's part: its heap pages and the live nodes, queued prefixes
    and their ancestors, which a spill frees; the map's ``map_bytes``) passed the spill budget, and
    the queue is a part worth spilling (else spilling would only churn)."""
    cdef size_t q
    if disk.budget == 0 or queue.size() < disk.min_entries or queue.size() < 2:
        return False
    q = queue.bytes() + <size_t>trie.live * trie_node_bytes(trie)
    return q + map_bytes > disk.budget and 4 * q >= disk.budget


cdef inline bint reload_due(PagedHeap[QEntry]* queue, const DiskQueue* disk) noexcept nogil:
    """A bucket holds an entry the queue would pop before its top (or the queue is empty)."""
    if queue.size() == 0:
        return disk_first(disk, True, 0.0, 0)
    return disk_first(disk, False, queue.top().key, queue.top().tie)


cdef inline bint entry_drops(const PrefixTrie* trie, int policy, const Pruning* pr, double best,
                             QEntry* e) noexcept nogil:
    """An entry the queue would drop when popped: deleted by the map or hopeless."""
    return trie_dead(trie, e.node) or prunes(pr, entry_lb(policy, trie, e[0]), trie_node(trie, e.node).depth, best)


cdef inline size_t queue_gc(PagedHeap[QEntry]* queue, LiveFigures* live, PrefixTrie* trie, int policy,
                            const Pruning* pr, double best) noexcept nogil:
    """Drop queue entries that are deleted or can no longer lead to a better list; the entries
    kept."""
    cdef size_t i, j = 0, n = queue.size()
    cdef QEntry e
    cdef int32_t idx
    for i in range(n):
        e = queue.at(i)
        idx = e.node
        if trie_dead(trie, idx) or prunes(pr, entry_lb(policy, trie, e), trie_node(trie, idx).depth, best):
            live_remove(live, trie, idx, entry_lb(policy, trie, e))
            trie_release(trie, idx)
        else:
            queue.set(j, e)
            j += 1
    queue.truncate(j)
    queue.heapify()
    return j


cdef inline int queue_spill(PagedHeap[QEntry]* queue, LiveFigures* live, DiskQueue* disk, PrefixTrie* trie,
                            int policy, const Pruning* pr, double best, size_t keep,
                            int64_t* n_pruned) noexcept nogil:
    """Write the queue's worst entries to bucket files until about ``keep`` stay in RAM
    (``corels_disk.pxd``): each prefix goes out self-contained and its nodes are released (the
    entries the queue would drop are dropped, counted in ``n_pruned``). Everything is written and
    flushed before the heap changes, so a write error (a full disk) leaves the queue whole: 0, or
    the ``errno`` of the failure.
    """
    cdef size_t n = queue.size(), i, j, S
    cdef gw_spill_key* sample
    cdef uint8_t rec[SPILL_RECORD]
    cdef QEntry e
    cdef int err
    if n <= keep or n < 2:
        return 0
    S = min(n, <size_t>SPILL_SAMPLE)
    sample = <gw_spill_key*>malloc(S * sizeof(gw_spill_key))
    if sample == NULL:
        return ENOMEM
    for i in range(S):
        j = <size_t>(splitmix64(<uint64_t>i * <uint64_t>2654435761 + <uint64_t>disk.n_spills) % n)
        if S == n:
            j = i
        sample[i].key = queue.at(j).key
        sample[i].tie = queue.at(j).tie
    err = disk_begin(disk, sample, S, keep, n)
    free(sample)
    # pass 1: write (the heap is untouched until every byte is on disk)
    i = 0
    while err == 0 and i < n:
        e = queue.at(i)
        i += 1
        if (not disk_stays(disk, e.key, e.tie) and trie_node(trie, e.node).depth > 0
                and not entry_drops(trie, policy, pr, best, &e)):
            err = disk_write(disk, rec, disk_encode(trie, e.node, e.key, entry_lb(policy, trie, e), e.tie, rec),
                             trie_err(trie, e.node))
            if err != 0:
                disk_abort(disk)
    if err == 0:
        err = disk_flush(disk)
    if err != 0:
        return err
    # pass 2: the written entries (and the ones the queue would drop) leave RAM
    j = 0
    for i in range(n):
        e = queue.at(i)
        if entry_drops(trie, policy, pr, best, &e):
            n_pruned[0] += 1
        elif disk_stays(disk, e.key, e.tie) or trie_node(trie, e.node).depth == 0:
            queue.set(j, e)
            j += 1
            continue
        live_remove(live, trie, e.node, entry_lb(policy, trie, e))
        trie_release(trie, e.node)
    queue.truncate(j)
    queue.heapify()
    disk_commit(disk)
    return 0
