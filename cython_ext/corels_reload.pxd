# cython: language_level=3
"""The CORELS search's reload rebuild (issue 27): a spilled bucket's prefixes back in the trie.

``corels.Search._reload`` reads a bucket back whole (``corels_disk.pxd``), sorted by the prefixes'
ids, and queues each prefix again; rebuilding its trie path is here. ``ReloadPath`` holds the path
of the last prefix rebuilt, so consecutive prefixes share their common ancestors, and what the
rebuild reads and writes (the problem, the trie, the symmetry map, a thread's scratch). Errors are
recomputed rule by rule by the expansion's arithmetic (``problem_rule``: equal bits). A node the map
recorded before the spill is named again by its rebuilt node, or reused when it is still in RAM; a
prefix the map replaced while on disk is dropped, as it would have been in RAM; every other
rebuilt node is flagged unchecked (the map never deletes it: sound, it is only searched). A struct
and inline ``nogil`` functions, as ``corels_disk.pxd``: a cdef class shared between extension
modules cannot be imported under its installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint16_t, uint8_t
from libc.stdlib cimport malloc, free

from corels_problem cimport CorelsProblem, problem_context, problem_rule
from corels_trie cimport Node, PrefixTrie, F_FREE, F_UNCHECKED, trie_node, trie_new_counted, trie_release
from corels_disk cimport gw_spill_id, gw_spill_unchecked, disk_record
from corels_bounds cimport Pruning, prunes
from corels_queue cimport QEntry, LiveFigures, queue_push
from paged_heap cimport PagedHeap
from corels_map cimport MapEntry, MapRecord, vector_hash, table_record, table_set_record, table_len, table_id
from corels_admit cimport MAP_NONE, MAP_PREFIX, SymmetryMap, MapChild, map_probe


cdef struct ReloadPath:   # the trie path of the last prefix a reload rebuilt, and what it rebuilds on
    int32_t nodes[257]
    double errs[257]
    bint hold[257]      # a reference held on the node (released once a child holds it)
    uint16_t ids_prev[256]
    int depth
    uint64_t* ust       # per length k, what the first k rules leave uncaptured (258 rows of W
                        # words; the last one is scratch)
    const CorelsProblem* pb
    PrefixTrie* trie
    SymmetryMap* smap
    const uint64_t* ant_hash   # the prefix map's hash of each antecedent
    int64_t* acc        # counting scratch
    int64_t* max_trie   # the trie's high-water mark (the search's counter)
    uint16_t* ids       # a thread's scratch for the map's probe: ids (257), in_prefix (M), f, tmp (W)
    uint8_t* in_prefix
    uint64_t* f
    uint64_t* tmp


cdef inline bint reload_start(ReloadPath* rp, const CorelsProblem* pb, PrefixTrie* trie, SymmetryMap* smap,
                              const uint64_t* ant_hash, int64_t* acc, int64_t* max_trie, uint16_t* ids,
                              uint8_t* in_prefix, uint64_t* f, uint64_t* tmp) noexcept nogil:
    """What the rebuild works on, and its rows of uncaptured units; False when out of memory."""
    rp.pb = pb
    rp.trie = trie
    rp.smap = smap
    rp.ant_hash = ant_hash
    rp.acc = acc
    rp.max_trie = max_trie
    rp.ids = ids
    rp.in_prefix = in_prefix
    rp.f = f
    rp.tmp = tmp
    rp.ust = <uint64_t*>malloc((<size_t>258 * pb.W) * sizeof(uint64_t))
    return rp.ust != NULL


cdef inline int32_t reload_root(ReloadPath* rp) noexcept nogil:
    """The path starts at a root of its own (unchecked, held); -1 when out of memory."""
    problem_context(rp.pb, NULL, 0, rp.ust, NULL)
    rp.depth = 0
    rp.errs[0] = 0.0
    rp.nodes[0] = trie_new_counted(rp.trie, -1, 0, 0, 0.0, 0.0, rp.max_trie)
    rp.hold[0] = True
    if rp.nodes[0] >= 0:
        trie_node(rp.trie, rp.nodes[0]).flags |= F_UNCHECKED
    return rp.nodes[0]


cdef inline void reload_finish(ReloadPath* rp) noexcept nogil:
    """Release the references the path still holds; free its rows."""
    cdef int k
    if rp.nodes[0] >= 0:
        for k in range(rp.depth + 1):
            if rp.hold[k]:
                trie_release(rp.trie, rp.nodes[k])
    free(rp.ust)


cdef inline bint names_prefix(const SymmetryMap* smap, uint32_t off, const uint8_t* rec, int k) noexcept nogil:
    """The map's representative at ``off`` is the spilled prefix's first ``k`` rules, in order:
    the record still names the node it had before the spill (a node is admitted once)."""
    cdef int i
    if table_len(&smap.table, off) != k:
        return False
    for i in range(k):
        if table_id(&smap.table, off, i) != gw_spill_id(rec, i):
            return False
    return True


cdef inline bint holds_prefix(const PrefixTrie* trie, int32_t x, const uint8_t* rec, int k) noexcept nogil:
    """Slot ``x`` holds a live node whose path is the spilled prefix's first ``k`` rules."""
    cdef Node* nd
    cdef int i
    if x < 0 or x >= trie.n_slots:
        return False
    nd = trie_node(trie, x)
    if nd.flags & (F_FREE | F_UNCHECKED) or nd.depth != k:
        return False
    for i in range(k - 1, -1, -1):
        if nd.ant != gw_spill_id(rec, i):
            return False
        nd = trie_node(trie, nd.parent)
    return True


cdef inline MapEntry* reload_entry(ReloadPath* rp, const uint8_t* rec, int k, const uint64_t* f) noexcept nogil:
    """The map's entry for the class of the spilled prefix's first ``k`` rules (``f``: the
    samples they leave uncaptured), NULL when the map holds no such class."""
    cdef int i
    cdef uint64_t key_h = 0
    cdef MapEntry* e = NULL
    cdef MapEntry* found = NULL
    cdef MapChild c
    if rp.smap.table.cap == 0:
        return NULL
    for i in range(k):
        rp.ids[i] = gw_spill_id(rec, i)
        if i < k - 1:
            rp.in_prefix[rp.ids[i]] = 1
    if rp.smap.kind == MAP_PREFIX:
        for i in range(k):
            key_h += rp.ant_hash[rp.ids[i]]
    else:
        for i in range(rp.pb.W):
            rp.f[i] = f[i]
        key_h = vector_hash(f, rp.pb.W)
    c.ids = rp.ids
    c.in_prefix = rp.in_prefix
    c.f = rp.f
    c.tmp = rp.tmp
    c.n_ids = k
    e = map_probe(rp.smap, rp.pb, <uint32_t>(key_h >> 32), &c)
    if e.off != 0:
        found = e
    for i in range(k - 1):
        rp.in_prefix[rp.ids[i]] = 0
    return found


cdef inline int32_t reload_path(ReloadPath* rp, const uint8_t* rec, int d, double lb) noexcept nogil:
    """Rebuild the trie path of a reloaded prefix of length ``d`` on the part it shares with
    the last one (``rp``); its last node, -1 when out of memory, -2 when the map replaced the
    prefix while it was on disk (it is deleted, as in RAM)."""
    cdef int c = 0, k, label, W = rp.pb.W
    cdef int32_t node = 0
    cdef uint16_t a
    cdef MapEntry* me
    cdef MapRecord mrec
    while c < rp.depth and c < d and rp.ids_prev[c] == gw_spill_id(rec, c):
        c += 1
    if c == d:          # the same prefix twice: a node of its own
        c = d - 1
    if rp.depth > c:
        # the last path's childless nodes go (a dropped prefix, a recorded node taken from
        # RAM leave some), but the shared part must outlive them: hold its end first
        if not rp.hold[c]:
            trie_node(rp.trie, rp.nodes[c]).refs += 1
            rp.hold[c] = True
        for k in range(c + 1, rp.depth + 1):
            if rp.hold[k]:
                trie_release(rp.trie, rp.nodes[k])
                rp.hold[k] = False
    rp.depth = c
    for k in range(c + 1, d + 1):
        a = gw_spill_id(rec, k - 1)
        rp.errs[k] = rp.errs[k - 1] + problem_rule(rp.pb, &rp.ust[<size_t>(k - 1) * W], &rp.ust[<size_t>k * W],
                                                   &rp.ust[<size_t>257 * W], a, rp.acc, &label)
        me = NULL
        # under a fairness constraint a class also fixes cells the spill does not keep: the
        # rebuilt nodes go unchecked (sound: the map never deletes them)
        if rp.smap.kind != MAP_NONE and rp.smap.fair == NULL and not gw_spill_unchecked(rec, k - 1):
            me = reload_entry(rp, rec, k, &rp.ust[<size_t>k * W])
            if me != NULL and not names_prefix(rp.smap, me.off, rec, k):
                return -2
        if me != NULL and k < d:
            table_record(&rp.smap.table, me.off, &mrec)
            if holds_prefix(rp.trie, mrec.node, rec, k):   # the recorded node is in RAM
                rp.nodes[k] = mrec.node
                rp.hold[k] = False
                rp.ids_prev[k - 1] = a
                rp.depth = k
                continue
        node = trie_new_counted(rp.trie, rp.nodes[k - 1], a, <uint8_t>k, rp.errs[k], lb if k == d else 0.0,
                                rp.max_trie)
        if node < 0:
            return -1
        if me != NULL:
            table_record(&rp.smap.table, me.off, &mrec)
            if k == d and holds_prefix(rp.trie, mrec.node, rec, k):
                me = NULL       # the same prefix twice: the copy goes unchecked
        if me == NULL:
            trie_node(rp.trie, node).flags |= F_UNCHECKED
        else:                   # the map's record names the rebuilt node from here on
            mrec.node = node
            table_set_record(&rp.smap.table, me.off, &mrec)
        if rp.hold[k - 1]:
            trie_release(rp.trie, rp.nodes[k - 1])   # its child holds it from here on
            rp.hold[k - 1] = False
        rp.nodes[k] = node
        rp.hold[k] = k < d
        rp.ids_prev[k - 1] = a
        rp.depth = k
    return node


cdef inline int reload_records(ReloadPath* rp, const uint8_t* buf, const uint64_t* offs, int64_t count,
                               PagedHeap[QEntry]* queue, LiveFigures* lv, int policy, const Pruning* pr,
                               double best, int64_t* max_queue, int64_t* dropped) noexcept nogil:
    """Queue a bucket's ``count`` records (``buf`` at ``offs``, sorted by their ids) again, each
    with its own key and tie, on paths rebuilt from ``rp``'s root. A hopeless prefix (``pr``
    against ``best``), or one the map replaced while on disk, is dropped and counted in
    ``dropped``. 0, or -1 when out of memory (the rest is bounded by the bucket's smallest bound)."""
    cdef int64_t r = 0
    cdef const uint8_t* rec
    cdef double key, lb
    cdef int32_t tie, node
    cdef int d
    while r < count:
        rec = buf + offs[r]
        r += 1
        d = disk_record(rec, &key, &lb, &tie)
        if prunes(pr, lb, d, best):
            dropped[0] += 1
            continue
        node = reload_path(rp, rec, d, lb)
        if node == -2:
            dropped[0] += 1
            continue
        if node < 0 or not queue_push(queue, lv, rp.trie, policy, key, tie, rp.nodes[d], max_queue):
            if node >= 0:
                trie_release(rp.trie, rp.nodes[d])
                rp.depth = d - 1
            return -1
    return 0
