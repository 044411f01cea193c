# cython: language_level=3
"""CORELS branch-and-bound over pre-mined antecedents (Angelino et al., JMLR 2018).

The search state lives in fixed pages owned by one ``Search`` object, indexed by 32-bit integers:
a node pool (the prefix trie, parent pointers only, with reference counts for prune-up), a 4-ary
heap (the queue), a symmetry-aware open-addressing map, and counts of the live queue that make a
progress report cheap at any queue size. No Python object is created per node. ``Search.run``
releases the GIL and works for a slice of wall time, so the caller can emit progress and check
limits between slices.

Data are *units* rather than samples: the caller may merge samples with identical antecedent
signatures into one unit (an equivalence class of the equivalent-points bound) carrying per-class
counts. Counts are stored bit-sliced ("planes": plane j of a count holds bit j of every unit's
count), so a count over a set of units is ``sum_j 2^j * popcount(set & plane_j)``. With one unit per
sample every count is 0/1 and there is one plane per quantity.

All objective arithmetic is in weighted count units (objective * total weight); prefix errors are
accumulated separately from ``depth * lambda`` so equal prefixes give bit-identical bounds.
"""

from libc.stdint cimport uint64_t, int64_t, uint32_t, int32_t, uint16_t, uint8_t
from libc.math cimport floor, INFINITY
from libc.stdlib cimport malloc, calloc, free
from posix.stdlib cimport posix_memalign
from libc.string cimport memcpy
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.map cimport map as ordered_map
from cython.operator cimport dereference as deref, preincrement as inc
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from bitops cimport gw_popcount64

cdef extern from "corels_kernels.h" nogil:
    void gw_masked_sum3(const int32_t* mask, const int32_t* a, const int32_t* b, const int32_t* c,
                        int n, int64_t* out)
    void* gw_big_alloc(size_t nbytes)
    void gw_big_free(void* p, size_t nbytes)
    void gw_prefetch(const void* p)

import numpy as np

cdef enum:
    P_BFS = 0
    P_DFS = 1
    P_CURIOSITY = 2
    P_LOWER_BOUND = 3
    P_OBJECTIVE = 4
    MAP_NONE = 0
    MAP_PREFIX = 1
    MAP_CAPTURED = 2
    F_DELETED = 1
    F_QUEUED = 2
    F_REJECTS = 4       # the node has a Theorem 12 rejected set (see _rej_store)
    MAX_CLASSES = 64
    PAGE_BITS = 16
    PAGE_MASK = 65535
    CHUNK_PAGES = 32
    ARENA_BITS = 16
    HEAP_BITS = 14
    HEAP_MASK = 16383
    SIM_WINDOW = 8      # Theorem 18 tries dropping each of the last SIM_WINDOW rules

POLICIES = {"bfs": P_BFS, "dfs": P_DFS, "curiosity": P_CURIOSITY,
            "lower_bound": P_LOWER_BOUND, "objective": P_OBJECTIVE}
MAPS = {"none": MAP_NONE, "prefix": MAP_PREFIX, "captured": MAP_CAPTURED}

cdef enum:
    R_DONE = 0
    R_SLICE = 1
    R_STOPPED = 2
    R_NODE_LIMIT = 3
    R_OUT_OF_MEMORY = 4

# return codes of Search.run
DONE = R_DONE
SLICE = R_SLICE
STOPPED = R_STOPPED
NODE_LIMIT = R_NODE_LIMIT
OUT_OF_MEMORY = R_OUT_OF_MEMORY


cdef struct Node:       # 32 bytes, no padding
    double err          # weighted errors of the prefix rules (count units)
    double lb           # err + depth * lam + b0  (hierarchical + equivalent-points bound)
    int32_t parent      # while the slot is free: the next free slot (an intrusive free list)
    uint32_t refs       # 1 while queued + number of live children
    uint32_t gen        # incarnation of the slot; map entries compare it to detect slot reuse
    uint16_t ant        # last antecedent
    uint8_t depth
    uint8_t flags


cdef struct QEntry:
    double key
    int32_t tie         # insertion order (FIFO ties; DFS negates it); wraps harmlessly after 2^31
    int32_t node


cdef struct MapEntry:   # one slot of the open-addressing map, 8 bytes
    uint32_t tag        # high half of the 64-bit key; its low bits pick the home slot
    uint32_t off        # the entry's record in the arena (see _map_store); 0 = empty slot


cdef struct Candidate:  # a child that passed every bound, waiting for the map and the queue
    double err
    double lb
    double key          # its queue key
    uint64_t map_key
    int32_t ant


cdef struct MapRecord:  # stored after the representative's ids in the arena (unaligned)
    double lb
    int32_t node
    uint32_t gen        # the node's incarnation when stored


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + 1e-9 * <double>ts.tv_nsec


cdef inline uint64_t splitmix(uint64_t x) noexcept nogil:
    x += <uint64_t>0x9E3779B97F4A7C15
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)


cdef inline bint q_less(const QEntry& a, const QEntry& b) noexcept nogil:
    if a.key < b.key:
        return True
    if a.key > b.key:
        return False
    return a.tie < b.tie


cdef class Search:
    """One CORELS search; see the module docstring for the data layout.

    Parameters are arrays over ``n_units`` bits packed in ``W`` words:
    ``caps`` (M, W) antecedent vectors; ``lplanes`` (P, W) label count planes with
    ``lclass``/``lshift`` (class -1 = total count, k >= 1 = class k; class 0 is the rest);
    ``zplanes`` (Q, W) planes of the equivalent-points minority counts, same convention;
    ``weights`` per class; ``lam`` the regularisation per rule (as a fraction of total weight).
    """

    cdef int M, W, C, P, Q, PT, QT, policy, map_kind, max_len
    cdef bint length_capped
    cdef bint do_support, do_accurate, do_lookahead, do_eqpts, do_length, do_gc
    cdef bint do_similar, do_propagate
    cdef double lam, total, lamW
    cdef vector[uint64_t] caps, lplanes, zplanes, mask
    cdef vector[int32_t] lclass, lshift, zclass, zshift
    cdef double weights[MAX_CLASSES]
    cdef bint uniform
    # dense kernel (binary, few units): 0/-1 masks per antecedent and per-unit counts
    cdef bint dense
    cdef int UP
    cdef vector[int32_t] dmask, ut, u1, uzt, wt, w1, wz
    # search state
    cdef vector[Node*] pages       # node pool in fixed pages: no reallocation, no doubling
    cdef vector[char*] chunks      # the pages come CHUNK_PAGES at a time (huge-page friendly)
    cdef int64_t n_slots
    cdef int32_t free_head         # first free slot, -1 when none
    cdef int64_t n_free
    cdef vector[QEntry*] hpages    # the queue: see _hq
    cdef size_t hn
    # symmetry map: linear probing over 8-byte slots (no allocation per entry); the records
    # (representative prefix, bound, node) in a paged arena (never straddling a page, never moved)
    cdef MapEntry* mtab
    cdef size_t mcap, mcount
    cdef vector[uint16_t*] apages
    cdef uint32_t atop
    # progress figures kept as entries enter and leave the live queue (queued, not deleted), so a
    # report costs O(distinct bounds), never O(queue): bound -> count, depth -> count, and per
    # depth prefix error -> count (Theorem 7's histogram needs f, which moves with R^c)
    cdef ordered_map[double, int64_t] live_lb
    cdef vector[int64_t] live_depth
    cdef vector[unordered_map[uint64_t, int64_t]] live_err
    cdef vector[uint64_t] ant_hash
    cdef int64_t seq
    cdef int64_t live_nodes
    # per-expansion scratch
    cdef vector[uint64_t] u, v, f, tmp
    cdef vector[uint16_t] path, child_ids
    cdef vector[uint8_t] in_prefix
    cdef vector[Candidate] cands
    cdef vector[int64_t] acc
    # incumbent
    cdef double best
    cdef vector[uint16_t] best_path
    cdef double best_time
    cdef int64_t best_evals
    cdef bint improved
    cdef public bint out_of_memory
    cdef double oom_bound
    cdef double start_time
    cdef size_t gc_threshold
    # counters
    cdef public int64_t n_evaluated, n_expanded, n_inserted, n_popped_pruned, n_gc_runs
    cdef public int64_t n_pruned_support, n_pruned_accurate, n_pruned_bound, n_pruned_lookahead
    cdef public int64_t n_pruned_length, n_pruned_map, n_map_replaced, n_map_collisions
    cdef public int64_t max_queue, max_trie, max_depth_evaluated, n_improvements
    # ---- the bounds of issue 13 item 5 (docs/corels.md) ----
    # Theorem 18 (on by default), a child against itself without one of its last rules:
    # per-expansion scratch (per thread once the search is threaded)
    cdef vector[uint64_t] sim_tmp, sim_x, sim_ctx
    cdef double sim_gain[SIM_WINDOW]
    cdef double sim_perr[256]
    cdef double sim_eps
    # Theorem 12 (off by default), rejection propagation: the antecedents rejected by Theorems 10/11 at an expanded
    # node or any of its ancestors, kept while the node lives (it has live children). Shared
    # search state: a threaded search must guard rej_slot / rej_pool / rej_free with a lock.
    cdef unordered_map[int32_t, uint32_t] rej_slot
    cdef vector[uint64_t] rej_pool
    cdef vector[uint32_t] rej_free
    cdef vector[uint64_t] rej_cur
    cdef int RW
    cdef public int64_t n_pruned_similar, n_skipped_rejected, max_reject_sets

    def __init__(self, const uint64_t[:, ::1] caps, const uint64_t[:, ::1] lplanes,
                 const int32_t[::1] lclass, const int32_t[::1] lshift,
                 const uint64_t[:, ::1] zplanes, const int32_t[::1] zclass,
                 const int32_t[::1] zshift, const double[::1] weights, int n_units,
                 double regularization, str policy="lower_bound", str symmetry_map="prefix",
                 int max_prefix_length=255, bint support=True, bint accurate_support=True,
                 bint lookahead=True, bint equivalent_points=True, bint length_bound=True,
                 bint garbage_collection=True, str kernel="auto", bint similar_support=True,
                 bint rejection_propagation=False):
        cdef int i, k
        self.M = caps.shape[0]
        self.W = caps.shape[1] if self.M > 0 else (n_units + 63) // 64
        if self.W == 0:
            self.W = 1
        self.C = weights.shape[0]
        if self.C < 2 or self.C > MAX_CLASSES:
            raise ValueError(f"between 2 and {MAX_CLASSES} classes are supported, got {self.C}")
        if self.M > 65535:
            raise ValueError("at most 65535 antecedents are supported")
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; choose one of {sorted(POLICIES)}")
        if symmetry_map not in MAPS:
            raise ValueError(f"unknown symmetry map {symmetry_map!r}; choose one of {sorted(MAPS)}")
        if regularization < 0:
            raise ValueError("regularization must be >= 0")
        if lplanes.shape[1] != self.W or zplanes.shape[1] != self.W and zplanes.shape[0] > 0:
            raise ValueError("planes must have the same number of words as the antecedents")
        self.P = lplanes.shape[0]
        self.Q = zplanes.shape[0]
        self.policy = POLICIES[policy]
        self.map_kind = MAPS[symmetry_map]
        self.max_len = max(0, min(max_prefix_length, self.M, 255))
        self.length_capped = self.max_len < self.M
        self.do_support = support
        self.do_accurate = accurate_support
        self.do_lookahead = lookahead
        self.do_eqpts = equivalent_points and self.Q > 0
        self.do_length = length_bound
        self.do_gc = garbage_collection
        self.do_similar = similar_support
        self.do_propagate = rejection_propagation and (support or accurate_support)
        self.uniform = True
        for k in range(self.C):
            self.weights[k] = weights[k]
            if weights[k] < 0:
                raise ValueError("class weights must be >= 0")
            if weights[k] != 1.0:
                self.uniform = False
        # copy data, planes interleaved word-major: plane p of word i at [i * P + p]; planes are
        # ordered by class (total first) so the binary kernel sums them with two accumulators
        cdef Py_ssize_t[::1] lorder = np.argsort(np.asarray(lclass), kind="stable").astype(np.intp)
        cdef Py_ssize_t[::1] zorder = np.argsort(np.asarray(zclass), kind="stable").astype(np.intp)
        self.caps.resize(<size_t>self.M * self.W)
        for k in range(self.M):
            for i in range(self.W):
                self.caps[<size_t>k * self.W + i] = caps[k, i]
        self.lplanes.resize(<size_t>self.W * max(self.P, 1))
        for i in range(self.W):
            for k in range(self.P):
                self.lplanes[<size_t>i * self.P + k] = lplanes[lorder[k], i]
        self.zplanes.resize(<size_t>self.W * max(self.Q, 1))
        for i in range(self.W):
            for k in range(self.Q):
                self.zplanes[<size_t>i * self.Q + k] = zplanes[zorder[k], i]
        for k in range(self.P):
            if lclass[k] < -1 or lclass[k] == 0 or lclass[k] >= self.C:
                raise ValueError("label plane classes must be -1 (total) or 1..C-1")
            self.lclass.push_back(lclass[lorder[k]])
            self.lshift.push_back(lshift[lorder[k]])
        for k in range(self.Q):
            if zclass[k] < -1 or zclass[k] == 0 or zclass[k] >= self.C:
                raise ValueError("minority plane classes must be -1 (total) or 1..C-1")
            self.zclass.push_back(zclass[zorder[k]])
            self.zshift.push_back(zshift[zorder[k]])
        self.PT = 0
        while self.PT < self.P and self.lclass[self.PT] < 0:
            self.PT += 1
        self.QT = 0
        while self.QT < self.Q and self.zclass[self.QT] < 0:
            self.QT += 1
        self.mask.assign(self.W, 0)
        for i in range(n_units):
            self.mask[i >> 6] |= (<uint64_t>1) << (i & 63)
        self.u.assign(self.W, 0)
        self.v.assign(self.W, 0)
        self.f.assign(self.W, 0)
        self.tmp.assign(self.W, 0)
        self.in_prefix.assign(max(self.M, 1), 0)
        self.cands.resize(max(self.M, 1))
        self.path.assign(256, 0)
        self.child_ids.assign(257, 0)
        self.acc.assign(max(self.P, self.Q) + 1, 0)
        for k in range(self.M):
            self.ant_hash.push_back(splitmix(<uint64_t>k * 7919 + 12345))
        self.sim_tmp.assign(self.W, 0)
        self.sim_x.assign(self.W, 0)
        self.sim_ctx.assign(<size_t>SIM_WINDOW * self.W, 0)
        self.RW = (self.M + 63) // 64 if self.M > 0 else 1
        self.rej_cur.assign(self.RW, 0)
        self.lam = regularization
        self.oom_bound = INFINITY
        self._init_dense(kernel, n_units)
        self._init_search()

    cdef void _init_dense(self, str kernel, int n_units) except *:
        """Choose the kernel: dense masks for two classes and few units, else bit-sliced."""
        cdef int i, p, s
        cdef int64_t big = 0
        if kernel not in ("auto", "dense", "bitsliced"):
            raise ValueError(f"unknown kernel {kernel!r}; choose auto, dense or bitsliced")
        self.UP = ((n_units + 15) // 16) * 16
        eligible = (self.C == 2 and self.QT == self.Q
                    and <int64_t>self.M * self.UP <= 16 * 1024 * 1024)
        self.dense = eligible and (kernel == "dense" or (kernel == "auto" and n_units <= 4096))
        if not self.dense:
            return
        self.ut.assign(self.UP, 0)
        self.u1.assign(self.UP, 0)
        self.uzt.assign(self.UP, 0)
        for i in range(n_units):
            for p in range(self.P):
                if (self.lplanes[<size_t>(i >> 6) * self.P + p] >> (i & 63)) & 1:
                    if self.lclass[p] < 0:
                        self.ut[i] += 1 << self.lshift[p]
                    else:
                        self.u1[i] += 1 << self.lshift[p]
            for p in range(self.Q):
                if (self.zplanes[<size_t>(i >> 6) * self.Q + p] >> (i & 63)) & 1:
                    self.uzt[i] += 1 << self.zshift[p]
            big += self.ut[i]
        if big >= (<int64_t>1 << 31):
            self.dense = False
            return
        self.dmask.assign(<size_t>self.M * self.UP, 0)
        for s in range(self.M):
            for i in range(n_units):
                if (self.caps[<size_t>s * self.W + (i >> 6)] >> (i & 63)) & 1:
                    self.dmask[<size_t>s * self.UP + i] = -1
        self.wt.assign(self.UP, 0)
        self.w1.assign(self.UP, 0)
        self.wz.assign(self.UP, 0)

    @property
    def kernel(self):
        return "dense" if self.dense else "bitsliced"

    # ---------------------------------------------------------------------------- counting

    cdef void _class_counts(self, const uint64_t* vec, double* cnt) noexcept nogil:
        """Per-class counts (unweighted, exact integers in doubles) of the units in ``vec``."""
        cdef int i, p, k
        cdef int64_t* acc = &self.acc[0]
        cdef uint64_t t
        cdef const uint64_t* lp = &self.lplanes[0]
        if self.C == 2:
            self._binary_counts(vec, NULL, NULL, lp, self.P, self.PT, &self.lshift[0], cnt)
            return
        for p in range(self.P):
            acc[p] = 0
        for i in range(self.W):
            t = vec[i]
            if t == 0:
                continue
            for p in range(self.P):
                acc[p] += gw_popcount64(t & lp[i * self.P + p])
        self._fold(acc, self.P, &self.lclass[0], &self.lshift[0], cnt)

    cdef void _minority_counts(self, const uint64_t* vec, double* cnt) noexcept nogil:
        cdef int i, p
        cdef int64_t* acc = &self.acc[0]
        cdef uint64_t t
        cdef const uint64_t* zp = &self.zplanes[0]
        if self.C == 2:
            self._binary_counts(vec, NULL, NULL, zp, self.Q, self.QT, &self.zshift[0], cnt)
            return
        for p in range(self.Q):
            acc[p] = 0
        for i in range(self.W):
            t = vec[i]
            if t == 0:
                continue
            for p in range(self.Q):
                acc[p] += gw_popcount64(t & zp[i * self.Q + p])
        self._fold(acc, self.Q, &self.zclass[0], &self.zshift[0], cnt)

    cdef inline bint _binary_counts(self, const uint64_t* u, const uint64_t* cap, uint64_t* v,
                                    const uint64_t* planes, int P, int PT, const int32_t* sh,
                                    double* cnt) noexcept nogil:
        """Two-class counts of ``v = u & cap`` (``cap`` NULL: of ``u``), written to ``v``.

        Planes ``[0, PT)`` hold the total count, ``[PT, P)`` class 1; two register accumulators.
        """
        cdef int i, p
        cdef uint64_t t
        cdef int64_t tot = 0, c1 = 0
        cdef const uint64_t* base
        cdef bint any_bits = False
        for i in range(self.W):
            t = u[i] & cap[i] if cap != NULL else u[i]
            if v != NULL:
                v[i] = t
            if t == 0:
                continue
            any_bits = True
            base = planes + i * P
            for p in range(PT):
                tot += (<int64_t>gw_popcount64(t & base[p])) << sh[p]
            for p in range(PT, P):
                c1 += (<int64_t>gw_popcount64(t & base[p])) << sh[p]
        cnt[0] = <double>(tot - c1)
        cnt[1] = <double>c1
        return any_bits

    cdef inline void _fold(self, const int64_t* acc, int n, const int32_t* cls, const int32_t* sh,
                           double* cnt) noexcept nogil:
        cdef int p, k
        cdef double total = 0
        for k in range(self.C):
            cnt[k] = 0
        for p in range(n):
            if cls[p] < 0:
                total += <double>(acc[p] << sh[p])
            else:
                cnt[cls[p]] += <double>(acc[p] << sh[p])
        cnt[0] = total
        for k in range(1, self.C):
            cnt[0] -= cnt[k]

    cdef inline double _weighted(self, const double* cnt, double* correct, int* label) noexcept nogil:
        """Total weight of ``cnt`` and, in ``correct``, the weight of its majority class."""
        cdef int k
        cdef double tot = 0, best = -1, w
        label[0] = 0
        for k in range(self.C):
            w = self.weights[k] * cnt[k]
            tot += w
            if w >= best:      # ties go to the higher class (1 for binary), as Algorithm 5
                best = w
                label[0] = k
        correct[0] = best
        return tot

    cdef inline double _weighted_sum(self, const double* cnt) noexcept nogil:
        cdef int k
        cdef double tot = 0
        for k in range(self.C):
            tot += self.weights[k] * cnt[k]
        return tot

    # ---------------------------------------------------------------------------- nodes, heap

    cdef inline Node* _nd(self, int32_t idx) noexcept nogil:
        return &self.pages[idx >> PAGE_BITS][idx & PAGE_MASK]

    cdef void _free_pages(self) noexcept:
        cdef size_t i
        for i in range(self.chunks.size()):
            gw_big_free(self.chunks[i], CHUNK_PAGES * (sizeof(Node) << PAGE_BITS))
        self.chunks.clear()
        self.pages.clear()
        self.n_slots = 0

    def __dealloc__(self):
        self._free_pages()
        self._map_free()
        self._hresize(0)
        while self.hpages.size() > 0:
            free(self.hpages.back())
            self.hpages.pop_back()

    cdef int32_t _new_node(self, int32_t parent, uint16_t ant, uint8_t depth, double err,
                           double lb) noexcept nogil:
        cdef int32_t idx
        cdef Node nd
        cdef char* chunk
        nd.err = err
        nd.lb = lb
        nd.parent = parent
        nd.refs = 1
        nd.ant = ant
        nd.depth = depth
        nd.flags = 0
        if self.free_head >= 0:
            idx = self.free_head
            self.free_head = self._nd(idx).parent
            self.n_free -= 1
            nd.gen = self._nd(idx).gen
        else:
            nd.gen = 0
            if (self.n_slots & PAGE_MASK) == 0:
                if self.pages.size() % CHUNK_PAGES == 0:
                    chunk = <char*>gw_big_alloc(CHUNK_PAGES * (sizeof(Node) << PAGE_BITS))
                    if chunk == NULL:
                        return -1
                    self.chunks.push_back(chunk)
                self.pages.push_back(<Node*>(self.chunks.back() + (self.pages.size() % CHUNK_PAGES)
                                              * (sizeof(Node) << PAGE_BITS)))
            idx = <int32_t>self.n_slots
            self.n_slots += 1
        self._nd(idx)[0] = nd
        if parent >= 0:
            self._nd(parent).refs += 1
        self.live_nodes += 1
        if self.live_nodes > self.max_trie:
            self.max_trie = self.live_nodes
        return idx

    cdef void _release(self, int32_t idx) noexcept nogil:
        """Drop one reference; free the node and prune up through childless ancestors."""
        cdef int32_t parent
        while idx >= 0:
            self._nd(idx).refs -= 1
            if self._nd(idx).refs > 0:
                return
            parent = self._nd(idx).parent
            self.live_nodes -= 1
            if self._nd(idx).flags & F_REJECTS:      # Theorem 12 (issue 13.5): drop its set
                self._rej_forget(idx)
            # a new incarnation; a slot whose counter would wrap is retired, so a map entry's
            # (node, gen) can never match a later occupant of its slot
            if self._nd(idx).gen == <uint32_t>0xFFFFFFFF:
                idx = parent
                continue
            self._nd(idx).gen += 1
            self._nd(idx).parent = self.free_head
            self.free_head = idx
            self.n_free += 1
            idx = parent

    cdef bint _dead(self, int32_t idx) noexcept nogil:
        """True when the node or an ancestor was deleted by the symmetry map."""
        while idx >= 0:
            if self._nd(idx).flags & F_DELETED:
                return True
            idx = self._nd(idx).parent
        return False

    cdef void _live_add(self, int32_t idx) noexcept nogil:
        """Count a node entering the live queue in the progress figures."""
        cdef Node* nd = self._nd(idx)
        cdef uint64_t ebits
        memcpy(&ebits, &nd.err, 8)
        nd.flags |= F_QUEUED
        self.live_lb[nd.lb] += 1
        self.live_depth[nd.depth] += 1
        self.live_err[nd.depth][ebits] += 1

    cdef void _live_remove(self, int32_t idx) noexcept nogil:
        """Leaving the queue (or deleted while queued): uncount a node once."""
        cdef Node* nd = self._nd(idx)
        cdef uint64_t ebits
        cdef ordered_map[double, int64_t].iterator it
        cdef unordered_map[uint64_t, int64_t].iterator jt
        cdef int64_t* count
        if (nd.flags & F_QUEUED) == 0:
            return
        nd.flags &= ~F_QUEUED
        if nd.flags & F_DELETED:
            return                      # uncounted when it was deleted
        it = self.live_lb.find(nd.lb)
        count = &deref(it).second       # (deref(it).second -= 1 would change a copy)
        count[0] -= 1
        if count[0] == 0:
            self.live_lb.erase(it)
        self.live_depth[nd.depth] -= 1
        memcpy(&ebits, &nd.err, 8)
        jt = self.live_err[nd.depth].find(ebits)
        count = &deref(jt).second
        count[0] -= 1
        if count[0] == 0:
            self.live_err[nd.depth].erase(jt)

    # The queue is a 4-ary heap in fixed pages of 64-byte-aligned entries. Entry i sits at slot
    # i + 3, so the four children of an entry (4i+1 .. 4i+4, slots 4(i+1) .. 4(i+1)+3) share one
    # cache line: a sift-down touches one line per level, and the height is half a binary heap's.
    # Pages never move (no doubling, no copy spike) and are returned as the queue shrinks.

    cdef inline QEntry* _hq(self, size_t i) noexcept nogil:
        i += 3
        return &self.hpages[i >> HEAP_BITS][i & HEAP_MASK]

    cdef void _hresize(self, size_t n) noexcept nogil:
        """Shrink to ``n`` entries, keeping one spare page."""
        self.hn = n
        while self.hpages.size() > ((n + 3) >> HEAP_BITS) + 2:
            free(self.hpages.back())
            self.hpages.pop_back()

    cdef bint _push(self, double key, int32_t node) noexcept nogil:
        """Queue ``node``; False when no memory is left for the queue."""
        cdef QEntry e
        cdef size_t i, parent
        cdef void* page
        if ((self.hn + 3) >> HEAP_BITS) >= self.hpages.size():
            if posix_memalign(&page, 64, sizeof(QEntry) << HEAP_BITS) != 0:
                return False
            self.hpages.push_back(<QEntry*>page)
        e.key = key
        e.node = node
        self.seq += 1
        e.tie = <int32_t>(self.seq & 0x7FFFFFFF)
        if self.policy == P_DFS:
            e.tie = -e.tie
        i = self.hn
        self.hn += 1
        while i > 0:
            parent = (i - 1) >> 2
            if not q_less(e, self._hq(parent)[0]):
                break
            self._hq(i)[0] = self._hq(parent)[0]
            i = parent
        self._hq(i)[0] = e
        self._live_add(node)
        self.n_inserted += 1
        if <int64_t>self.hn > self.max_queue:
            self.max_queue = self.hn
        return True

    cdef void _sift_down(self, size_t i) noexcept nogil:
        cdef size_t n = self.hn, c, k, j, last
        cdef QEntry e = self._hq(i)[0]
        cdef QEntry* kids
        while True:
            c = 4 * i + 1
            if c >= n:
                break
            kids = self._hq(c)          # the four children are contiguous (one cache line)
            last = min(<size_t>4, n - c)
            k = 0
            for j in range(1, last):
                if q_less(kids[j], kids[k]):
                    k = j
            if not q_less(kids[k], e):
                break
            self._hq(i)[0] = kids[k]
            i = c + k
        self._hq(i)[0] = e

    cdef QEntry _pop(self) noexcept nogil:
        cdef QEntry top = self._hq(0)[0]
        self._live_remove(top.node)
        self._hq(0)[0] = self._hq(self.hn - 1)[0]
        self._hresize(self.hn - 1)
        if self.hn > 1:
            self._sift_down(0)
        return top

    cdef inline bint _hopeless(self, double lb, int depth) noexcept nogil:
        """True when no strict extension of a prefix with this bound and length can beat R^c."""
        if self.do_lookahead:
            if lb + self.lamW >= self.best:
                return True
        elif lb >= self.best:
            return True
        if self.do_length and (depth + 1) * self.lamW >= self.best:
            return True
        return depth >= self.max_len

    cdef void _gc(self) noexcept nogil:
        """Drop queue entries that are deleted or can no longer lead to a better list."""
        cdef size_t i, j = 0, n = self.hn
        cdef QEntry e
        cdef int32_t idx
        for i in range(n):
            e = self._hq(i)[0]
            idx = e.node
            if self._dead(idx) or self._hopeless(self._nd(idx).lb, self._nd(idx).depth):
                self._live_remove(idx)
                self._release(idx)
            else:
                self._hq(j)[0] = e
                j += 1
        self._hresize(j)
        if j > 1:
            i = (j - 2) // 4 + 1
            while i > 0:
                i -= 1
                self._sift_down(i)
        self.gc_threshold = max(<size_t>65536, 2 * j)
        self.n_gc_runs += 1

    # ---------------------------------------------------------------------------- map

    cdef uint64_t _vector_hash(self, const uint64_t* vec) noexcept nogil:
        cdef uint64_t h = <uint64_t>0x243F6A8885A308D3
        cdef int i
        for i in range(self.W):
            h = splitmix(h ^ vec[i])
        return h

    cdef inline uint16_t* _ar(self, uint32_t off) noexcept nogil:
        return &self.apages[off >> ARENA_BITS][off & PAGE_MASK]

    cdef uint32_t _arena_put(self, int n_ids) noexcept nogil:
        """Room for a record of ``n_ids`` ids; 0 when out of memory (or past 2^32 - 2^16)."""
        cdef uint64_t off = self.atop
        cdef uint16_t* page
        cdef uint64_t need = n_ids + 1 + sizeof(MapRecord) // 2
        if (off & PAGE_MASK) + need > PAGE_MASK + 1:
            off = ((off >> ARENA_BITS) + 1) << ARENA_BITS
        if (off >> ARENA_BITS) >= 65535:
            return 0
        if (off >> ARENA_BITS) >= self.apages.size():
            page = <uint16_t*>malloc(2 << ARENA_BITS)
            if page == NULL:
                return 0
            self.apages.push_back(page)
        self.atop = <uint32_t>(off + need)
        return <uint32_t>off

    cdef void _map_free(self) noexcept nogil:
        gw_big_free(self.mtab, self.mcap * sizeof(MapEntry))
        self.mtab = NULL
        self.mcap = 0
        self.mcount = 0
        while self.apages.size() > 0:
            free(self.apages.back())
            self.apages.pop_back()
        self.atop = 1        # offset 0 marks an empty slot

    cdef bint _map_grow(self) noexcept nogil:
        """Double the table (or create it); False when out of memory. The home slot comes from
        the tag, so moving entries reads nothing but the table."""
        cdef size_t cap = 1024 if self.mcap == 0 else 2 * self.mcap, i, pos
        cdef MapEntry* t = <MapEntry*>gw_big_alloc(cap * sizeof(MapEntry))
        cdef MapEntry* old = self.mtab
        if t == NULL:
            return False
        for i in range(self.mcap):
            if old[i].off == 0:
                continue
            pos = old[i].tag & (cap - 1)
            while t[pos].off != 0:
                pos = (pos + 1) & (cap - 1)
            t[pos] = old[i]
        gw_big_free(old, self.mcap * sizeof(MapEntry))
        self.mtab = t
        self.mcap = cap
        return True

    cdef inline void _record(self, uint32_t off, MapRecord* rec) noexcept nogil:
        cdef uint16_t* ids = self._ar(off)
        memcpy(rec, ids + 1 + ids[0], sizeof(MapRecord))

    cdef inline void _set_record(self, uint32_t off, const MapRecord* rec) noexcept nogil:
        cdef uint16_t* ids = self._ar(off)
        memcpy(ids + 1 + ids[0], rec, sizeof(MapRecord))

    cdef bint _same_class(self, const MapEntry* e, int n_ids) noexcept nogil:
        """True when the entry's representative has the child's antecedent set (prefix map) or
        leaves the same samples uncaptured (captured map); ``f`` holds the child's uncaptured."""
        cdef uint16_t* ids = self._ar(e.off)
        cdef int length = ids[0], i, j
        cdef uint16_t a
        if self.map_kind == MAP_PREFIX:
            if length != n_ids:
                return False
            for i in range(n_ids):   # every stored id must be in the child prefix
                a = ids[1 + i]
                if a >= self.M or (self.in_prefix[a] == 0 and a != self.child_ids[n_ids - 1]):
                    return False
            return True
        for i in range(self.W):
            self.tmp[i] = self.mask[i]
        for i in range(length):
            a = ids[1 + i]
            for j in range(self.W):
                self.tmp[j] &= ~self.caps[<size_t>a * self.W + j]
        for i in range(self.W):
            if self.tmp[i] != self.f[i]:
                return False
        return True

    cdef MapEntry* _map_admit(self, uint64_t key, int n_ids, double lb, int* verdict) noexcept nogil:
        """Algorithm 6. verdict: 0 reject, 1 new entry, 2 better than the entry, 3 unverifiable.

        ``child_ids[:n_ids]`` holds the child prefix (in order). For the prefix map the entry
        stores the sorted set; for the captured map any representative prefix. Keys that share a
        tag are told apart by the representative, so a hash collision never prunes. A new entry
        is an empty slot, filled only by ``_map_store``.
        """
        cdef MapEntry* e
        cdef size_t pos
        cdef uint32_t tag = <uint32_t>(key >> 32)
        cdef int length
        cdef MapRecord rec
        if (self.mcap >> 32) == 0 and 4 * (self.mcount + 1) > 3 * self.mcap and not self._map_grow():
            verdict[0] = 3               # no memory for the map: insert unchecked (sound)
            return NULL
        if 8 * (self.mcount + 1) > 7 * self.mcap:
            verdict[0] = 3               # a full table of 2^32 slots: insert unchecked (sound)
            return NULL
        pos = tag & (self.mcap - 1)
        while True:
            e = &self.mtab[pos]
            if e.off == 0:
                verdict[0] = 1
                e.tag = tag
                return e
            if e.tag == tag and self._same_class(e, n_ids):
                break
            pos = (pos + 1) & (self.mcap - 1)
        length = self._ar(e.off)[0]
        self._record(e.off, &rec)
        # Theorem 15 maps each extension of one prefix to an extension of the other of the same
        # added length; under a length cap below M that needs the kept prefix to be no longer
        if lb < rec.lb:
            if self.length_capped and n_ids > length:
                verdict[0] = 3
                return NULL
            verdict[0] = 2
            return e
        if self.length_capped and length > n_ids:
            verdict[0] = 3
            return NULL
        verdict[0] = 0
        return NULL

    cdef bint _map_store(self, MapEntry* e, int verdict, int n_ids, double lb, int32_t node) noexcept nogil:
        """Record ``node`` in the entry ``_map_admit`` returned; False when out of memory.

        A record is the length, the ids (sorted for the prefix map), then a ``MapRecord``.
        """
        cdef int i, j
        cdef uint16_t* ids
        cdef uint16_t tmp
        cdef uint32_t off
        cdef MapRecord rec
        if verdict == 2:
            self._record(e.off, &rec)
            if rec.node >= 0 and rec.node < self.n_slots and self._nd(rec.node).gen == rec.gen:
                self._live_remove(rec.node)
                self._nd(rec.node).flags |= F_DELETED
            self.n_map_replaced += 1
        rec.lb = lb
        rec.node = node
        rec.gen = self._nd(node).gen
        if verdict == 2 and (self.map_kind == MAP_PREFIX or self._ar(e.off)[0] >= n_ids):
            off = e.off       # same set, or a representative no shorter: rewrite in place
        else:
            off = self._arena_put(n_ids)
            if off == 0:
                return False
            if verdict == 1:
                self.mcount += 1
        if self.map_kind == MAP_PREFIX and verdict == 2:
            self._set_record(off, &rec)   # same set: the stored sorted ids are still right
            return True
        e.off = off
        ids = self._ar(off)
        ids[0] = <uint16_t>n_ids
        for i in range(n_ids):
            ids[1 + i] = self.child_ids[i]
        if self.map_kind == MAP_PREFIX:   # keep the stored set sorted (insertion sort, tiny)
            for i in range(1, n_ids):
                j = i
                while j > 0 and ids[j] > ids[j + 1]:
                    tmp = ids[j + 1]
                    ids[j + 1] = ids[j]
                    ids[j] = tmp
                    j -= 1
        self._set_record(off, &rec)
        return True

    # ---------------------------------------------------------------------------- search

    cdef void _init_search(self):
        cdef double cnt[MAX_CLASSES]
        cdef double zc[MAX_CLASSES]
        cdef double correct, b0 = 0
        cdef int label
        cdef int32_t root
        self._free_pages()
        self.free_head = -1
        self.n_free = 0
        self._hresize(0)
        self._map_free()
        self.live_lb.clear()
        self.live_depth.assign(256, 0)
        self.live_err.clear()
        self.live_err.resize(256)
        self.rej_slot.clear()
        self.rej_pool.clear()
        self.rej_free.clear()
        self.seq = 0
        self.live_nodes = 0
        self.best_path.clear()
        self.gc_threshold = 65536
        self._class_counts(&self.mask[0], cnt)
        self.total = self._weighted(cnt, &correct, &label)
        self.lamW = self.lam * self.total
        self.sim_eps = 1e-9 * max(self.total, 1.0)
        self.best = self.total - correct      # the empty list: default = majority
        self.best_time = now()
        self.start_time = self.best_time
        self.best_evals = 0
        if self.do_eqpts:
            self._minority_counts(&self.mask[0], zc)
            b0 = self._weighted_sum(zc)
        root = self._new_node(-1, 0, 0, 0.0, b0)
        if root < 0:
            raise MemoryError("cannot allocate the search's node pool")
        if self._hopeless(b0, 0):
            self._release(root)
        else:
            if not self._push(0.0, root):
                raise MemoryError("cannot allocate the search's queue")

    # ------------------------------------------------ optional bounds (issue 13 item 5)

    cdef int _similar_setup(self, int32_t ni, int depth) noexcept nogil:
        """Prepare Theorem 18 for the children of ``ni`` = (p_0 .. p_{K-1}), K = ``depth``.

        For each of the last ``SIM_WINDOW`` rules p_j, d_j is the prefix without p_j. Stores, per
        j, what d_j leaves uncaptured (``sim_ctx``) and the part of b(D) - b(d_j + t) that does
        not depend on the child t: lam + sum_{i>=j} err(p_i | D) - sum_{i>j} err(p_i | d_j)
        (``sim_gain``). Returns how many rules are tried.
        """
        cdef int i, j, k, label, n = min(depth, SIM_WINDOW), j0 = depth - n
        cdef int32_t cur = ni
        cdef uint64_t* x
        cdef const uint64_t* cv
        cdef uint64_t* up = &self.sim_tmp[0]
        cdef double cnt[MAX_CLASSES]
        cdef double correct, wv, ej
        # errors of the rules p_j .. p_{K-1} in D's context, from the node errors on the path
        for k in range(depth, j0, -1):
            self.sim_perr[k] = self._nd(cur).err
            cur = self._nd(cur).parent
        self.sim_perr[j0] = self._nd(cur).err
        for i in range(self.W):          # what p_0 .. p_{j0-1} leave uncaptured
            up[i] = self.mask[i]
        for k in range(j0):
            cv = &self.caps[<size_t>self.path[k] * self.W]
            for i in range(self.W):
                up[i] &= ~cv[i]
        for j in range(j0, depth):
            x = &self.sim_ctx[<size_t>(j - j0) * self.W]
            for i in range(self.W):
                x[i] = up[i]
            ej = self.lamW + self.sim_perr[depth] - self.sim_perr[j]
            for k in range(j + 1, depth):   # the later rules again, without p_j before them
                cv = &self.caps[<size_t>self.path[k] * self.W]
                for i in range(self.W):
                    self.sim_x[i] = x[i] & cv[i]
                    x[i] &= ~cv[i]
                self._class_counts(&self.sim_x[0], cnt)
                wv = self._weighted(cnt, &correct, &label)
                ej -= wv - correct
            self.sim_gain[j - j0] = ej
            cv = &self.caps[<size_t>self.path[j] * self.W]
            for i in range(self.W):
                up[i] &= ~cv[i]
        return n

    cdef bint _similar_dominated(self, int t, int depth, int n, double et) noexcept nogil:
        """Theorem 18 between D = (p_0 .. p_{K-1}, t), a child about to be queued, and d = D
        without one of its last ``n`` rules p_j (docs/corels.md).

        With Omega the weight of the units d leaves uncaptured and D does not (those p_j takes
        first), every list D+T scores at least R(d+T) + b(D) - b(d) - Omega: the tail T,
        labelled as best for D's uncaptured data, makes at most Omega more errors on d's. So
        when b(D) - b(d) > Omega no optimal list lies below D, and it need not be queued. The
        test is strict, so it never removes an optimum: it composes with the map and every other
        bound; d is shorter, so it holds under a length cap. (Between two siblings the bound is
        vacuous: err(s|P) - err(a|P) <= Omega always.) ``et`` = err(t | D's prefix). Reads
        this expansion's scratch only (``sim_*``): per thread once the search is threaded.
        """
        cdef double cnt[MAX_CLASSES]
        cdef double correct, wv, gain
        cdef int label, i, j, j0 = depth - n
        cdef const uint64_t* tv = &self.caps[<size_t>t * self.W]
        cdef const uint64_t* pv
        cdef const uint64_t* x
        cdef uint64_t* y = &self.sim_x[0]
        for j in range(depth - 1, j0 - 1, -1):
            x = &self.sim_ctx[<size_t>(j - j0) * self.W]
            for i in range(self.W):
                y[i] = x[i] & tv[i]
            self._class_counts(y, cnt)
            wv = self._weighted(cnt, &correct, &label)
            gain = self.sim_gain[j - j0] + et - (wv - correct)
            if gain <= self.sim_eps:               # Omega >= 0
                continue
            pv = &self.caps[<size_t>self.path[j] * self.W]
            for i in range(self.W):
                y[i] = x[i] & pv[i] & ~tv[i]
            self._class_counts(y, cnt)
            if gain - self._weighted_sum(cnt) > self.sim_eps:
                return True
        return False

    cdef void _rej_load(self, int32_t parent) noexcept nogil:
        """Theorem 12: start an expansion with the set rejected at its parent (or none)."""
        cdef int i
        cdef size_t base
        if parent >= 0 and (self._nd(parent).flags & F_REJECTS):
            base = <size_t>self.rej_slot[parent] * self.RW
            for i in range(self.RW):
                self.rej_cur[i] = self.rej_pool[base + i]
        else:
            for i in range(self.RW):
                self.rej_cur[i] = 0

    cdef void _rej_store(self, int32_t idx) noexcept nogil:
        """Keep ``rej_cur`` for the children of ``idx`` (only when it rejects something)."""
        cdef int i
        cdef uint32_t slot
        cdef bint any_bits = False
        for i in range(self.RW):
            if self.rej_cur[i] != 0:
                any_bits = True
        if not any_bits:
            return
        if self.rej_free.size() > 0:
            slot = self.rej_free.back()
            self.rej_free.pop_back()
        else:
            slot = <uint32_t>(self.rej_pool.size() // self.RW)
            self.rej_pool.resize(self.rej_pool.size() + self.RW)   # (a failed growth aborts)
        for i in range(self.RW):
            self.rej_pool[<size_t>slot * self.RW + i] = self.rej_cur[i]
        self.rej_slot[idx] = slot
        self._nd(idx).flags |= F_REJECTS
        if <int64_t>self.rej_slot.size() > self.max_reject_sets:
            self.max_reject_sets = self.rej_slot.size()

    cdef void _rej_forget(self, int32_t idx) noexcept nogil:
        cdef unordered_map[int32_t, uint32_t].iterator it = self.rej_slot.find(idx)
        self._nd(idx).flags &= ~F_REJECTS
        if it != self.rej_slot.end():
            self.rej_free.push_back(deref(it).second)
            self.rej_slot.erase(it)

    cdef int _expand(self, int32_t ni) noexcept nogil:
        """Algorithm 5: score every child of the prefix at ``ni``; insert the promising ones."""
        cdef int depth = self._nd(ni).depth, k, i, p, s, label, flabel, verdict
        cdef int32_t cur = ni, child
        cdef double perr = self._nd(ni).err
        cdef double ucnt[MAX_CLASSES]
        cdef double uz[MAX_CLASSES]
        cdef double cnt[MAX_CLASSES]
        cdef double fc[MAX_CLASSES]
        cdef double zc[MAX_CLASSES]
        cdef double wv, correct, err, b, R, fw, fcorrect, b0, lb, key, ucap
        cdef uint64_t t, phash = 0, key_h
        cdef uint64_t* u = &self.u[0]
        cdef uint64_t* v = &self.v[0]
        cdef uint64_t* f = &self.f[0]
        cdef const uint64_t* capv
        cdef const uint64_t* lp = &self.lplanes[0]
        cdef int64_t* acc = &self.acc[0]
        cdef int P = self.P, W = self.W
        cdef MapEntry* me
        cdef bint any_bits
        cdef int64_t sums[3]
        cdef int32_t m
        cdef int c, n_cands = 0, n_children = 0
        cdef int n_sim = 0
        cdef Candidate* cand
        cdef uint64_t* rej = &self.rej_cur[0]
        # the prefix, leaf to root; a deleted ancestor kills the whole subtree
        k = depth
        while cur >= 0 and k > 0:
            if self._nd(cur).flags & F_DELETED:
                return -1
            k -= 1
            self.path[k] = self._nd(cur).ant
            cur = self._nd(cur).parent
        if cur >= 0 and self._nd(cur).flags & F_DELETED:
            return -1
        for i in range(W):
            u[i] = self.mask[i]
        for k in range(depth):
            s = self.path[k]
            self.in_prefix[s] = 1
            phash += self.ant_hash[s]
            self.child_ids[k] = s
            for i in range(W):
                u[i] &= ~self.caps[<size_t>s * W + i]
        self._class_counts(u, ucnt)
        if self.do_eqpts:
            self._minority_counts(u, uz)
        if self.dense:
            for i in range(self.UP):
                m = -<int32_t>((u[i >> 6] >> (i & 63)) & 1) if i < W * 64 else 0
                self.wt[i] = self.ut[i] & m
                self.w1[i] = self.u1[i] & m
                self.wz[i] = self.uzt[i] & m
        self.n_expanded += 1
        if depth + 1 > self.max_depth_evaluated:
            self.max_depth_evaluated = depth + 1
        if self.do_propagate:                                 # Theorem 12 (issue 13.5)
            self._rej_load(self._nd(ni).parent)
        for s in range(self.M):
            if self.in_prefix[s]:
                continue
            if self.do_propagate and (rej[s >> 6] >> (s & 63)) & 1:   # Theorem 12 (issue 13.5)
                self.n_skipped_rejected += 1
                continue
            self.n_evaluated += 1
            capv = &self.caps[<size_t>s * W]
            if self.dense:
                gw_masked_sum3(&self.dmask[<size_t>s * self.UP], &self.wt[0], &self.w1[0],
                               &self.wz[0], self.UP, sums)
                cnt[0] = <double>(sums[0] - sums[1])
                cnt[1] = <double>sums[1]
                any_bits = sums[0] > 0
            elif self.C == 2:
                any_bits = self._binary_counts(u, capv, v, lp, P, self.PT, &self.lshift[0], cnt)
            else:
                for p in range(P):
                    acc[p] = 0
                any_bits = False
                for i in range(W):
                    t = u[i] & capv[i]
                    v[i] = t
                    if t == 0:
                        continue
                    any_bits = True
                    for p in range(P):
                        acc[p] += gw_popcount64(t & lp[i * P + p])
                if any_bits:
                    self._fold(acc, P, &self.lclass[0], &self.lshift[0], cnt)
                else:
                    for k in range(self.C):
                        cnt[k] = 0
            wv = self._weighted(cnt, &correct, &label)
            if self.do_support and wv < self.lamW:            # Theorem 10
                self.n_pruned_support += 1
                if self.do_propagate:
                    rej[s >> 6] |= (<uint64_t>1) << (s & 63)
                continue
            if self.do_accurate and correct < self.lamW:      # Theorem 11
                self.n_pruned_accurate += 1
                if self.do_propagate:
                    rej[s >> 6] |= (<uint64_t>1) << (s & 63)
                continue
            err = perr + (wv - correct)
            b = err + (depth + 1) * self.lamW
            if b >= self.best:                                # Theorem 1
                self.n_pruned_bound += 1
                continue
            for k in range(self.C):
                fc[k] = ucnt[k] - cnt[k]
            fw = self._weighted(fc, &fcorrect, &flabel)
            R = b + (fw - fcorrect)
            if R < self.best:                                 # score before any lookahead
                self.best = R
                self.best_path.assign(self.child_ids.begin(), self.child_ids.begin() + depth)
                self.best_path.push_back(s)
                self.best_time = now()
                self.best_evals = self.n_evaluated
                self.improved = True
                self.n_improvements += 1
            b0 = 0
            if self.do_eqpts:                                 # Theorem 20
                if self.dense:
                    zc[0] = uz[0] - <double>sums[2]
                    zc[1] = uz[1]
                    b0 = self._weighted_sum(zc)
                elif any_bits:
                    self._minority_counts(v, zc)
                    for k in range(self.C):
                        zc[k] = uz[k] - zc[k]
                    b0 = self._weighted_sum(zc)
                else:
                    b0 = self._weighted_sum(uz)
            lb = b + b0
            if lb + (self.lamW if self.do_lookahead else 0.0) >= self.best:   # Lemma 2 + Thm 20
                self.n_pruned_lookahead += 1
                continue
            if depth + 1 >= self.max_len or (
                    self.do_length and (depth + 2) * self.lamW >= self.best):  # Theorem 6
                self.n_pruned_length += 1
                continue
            # a survivor: queue it in the second pass, once its map slot (and the record there)
            # have been prefetched, so the probes' cache misses overlap the scoring
            if self.policy == P_LOWER_BOUND:
                key = lb
            elif self.policy == P_OBJECTIVE:
                key = R
            elif self.policy == P_BFS:
                key = depth + 1
            elif self.policy == P_DFS:
                key = -(depth + 1)
            else:
                ucap = self.total - fw
                key = b * self.total / ucap if ucap > 0 else INFINITY
            key_h = 0
            if self.map_kind == MAP_PREFIX:
                key_h = phash + self.ant_hash[s]
            elif self.map_kind == MAP_CAPTURED:
                for i in range(W):
                    f[i] = u[i] & ~capv[i]
                key_h = self._vector_hash(f)
            if self.mcap > 0:
                gw_prefetch(&self.mtab[(key_h >> 32) & (self.mcap - 1)])
            cand = &self.cands[n_cands]
            n_cands += 1
            cand.ant = s
            cand.err = err
            cand.lb = lb
            cand.key = key
            cand.map_key = key_h
        if self.mcap > 0:
            for c in range(n_cands):
                me = &self.mtab[(self.cands[c].map_key >> 32) & (self.mcap - 1)]
                if me.off != 0 and me.tag == <uint32_t>(self.cands[c].map_key >> 32):
                    gw_prefetch(self._ar(me.off))
        if self.do_similar and depth >= 1 and n_cands > 0:   # Theorem 18 (issue 13.5)
            n_sim = self._similar_setup(ni, depth)
        for c in range(n_cands):
            cand = &self.cands[c]
            s = cand.ant
            lb = cand.lb
            # R^c may have improved since this child was scored: the same tests as on pop
            if lb + (self.lamW if self.do_lookahead else 0.0) >= self.best:
                self.n_pruned_lookahead += 1
                continue
            if self.do_length and (depth + 2) * self.lamW >= self.best:
                self.n_pruned_length += 1
                continue
            if n_sim > 0 and self._similar_dominated(s, depth, n_sim, cand.err - perr):  # Thm 18
                self.n_pruned_similar += 1
                continue
            self.child_ids[depth] = s
            verdict = 1
            me = NULL
            if self.map_kind != MAP_NONE:
                if self.map_kind == MAP_CAPTURED:
                    capv = &self.caps[<size_t>s * W]
                    for i in range(W):
                        f[i] = u[i] & ~capv[i]
                me = self._map_admit(cand.map_key, depth + 1, lb, &verdict)
                if verdict == 0:
                    self.n_pruned_map += 1
                    continue
                if verdict == 3:
                    self.n_map_collisions += 1
            child = self._new_node(ni, <uint16_t>s, <uint8_t>(depth + 1), cand.err, lb)
            if child < 0:          # out of memory: the search can no longer certify
                self.out_of_memory = True
                # the rest of this parent's children stay unexplored: bound them by the parent
                self.oom_bound = min(self.oom_bound, self._nd(ni).lb + self.lamW)
                break             # (a new map slot stays empty until _map_store fills it)
            if me != NULL:        # no arena memory: the child goes in unrecorded, which is sound
                self._map_store(me, verdict, depth + 1, lb, child)
            if not self._push(cand.key, child):   # out of memory: as above
                self.out_of_memory = True
                self.oom_bound = min(self.oom_bound, self._nd(ni).lb + self.lamW)
                self._release(child)
                break
            n_children += 1
        if self.do_propagate and n_children > 0:             # Theorem 12 (issue 13.5)
            self._rej_store(ni)
        for k in range(depth):
            self.in_prefix[self.path[k]] = 0
        return 0

    cdef int _run(self, double seconds, const uint8_t* stop, int64_t max_evals) noexcept nogil:
        cdef double t_end = now() + seconds
        cdef QEntry e
        cdef int32_t idx
        while self.hn > 0:
            if stop[0] != 0:
                return R_STOPPED
            if max_evals >= 0 and self.n_evaluated >= max_evals:
                return R_NODE_LIMIT
            if self.out_of_memory:
                return R_OUT_OF_MEMORY
            e = self._pop()
            idx = e.node
            if (self._nd(idx).flags & F_DELETED) or self._hopeless(self._nd(idx).lb,
                                                                   self._nd(idx).depth):
                self.n_popped_pruned += 1
                self._release(idx)
                continue
            self.improved = False
            if self._expand(idx) < 0:
                self.n_popped_pruned += 1
            self._release(idx)
            if self.improved:
                if self.do_gc:
                    self._gc()
            elif self.hn > self.gc_threshold and self.do_gc:
                self._gc()
            if now() >= t_end:
                return R_SLICE
        return R_OUT_OF_MEMORY if self.out_of_memory else R_DONE

    # ---------------------------------------------------------------------------- Python API

    def run(self, double seconds, const uint8_t[::1] stop_flag, int64_t max_evaluations=-1):
        """Search for about ``seconds`` of wall time.

        Returns DONE (queue exhausted: certified), SLICE (time slice over), STOPPED (stop flag),
        NODE_LIMIT or OUT_OF_MEMORY (a node could not be allocated; the run cannot certify).
        """
        cdef int code
        cdef const uint8_t* stop = &stop_flag[0]
        with nogil:
            code = self._run(seconds, stop, max_evaluations)
        return code

    @property
    def total_weight(self):
        return self.total

    @property
    def objective(self):
        """Best objective found, as a fraction of the total weight (+ lambda per rule)."""
        return self.best / self.total if self.total > 0 else 0.0

    @property
    def best_prefix(self):
        return [int(self.best_path[i]) for i in range(self.best_path.size())]

    @property
    def time_to_best(self):
        return self.best_time - self.start_time

    @property
    def evaluations_to_best(self):
        return self.best_evals

    @property
    def queue_size(self):
        return self.hn

    @property
    def trie_size(self):
        return self.live_nodes

    @property
    def map_size(self):
        return self.mcount

    @property
    def done(self):
        """True when the queue is exhausted by the search (the optimum is certified)."""
        return self.hn == 0 and not self.out_of_memory

    def memory_bytes(self):
        """Bytes held by the search containers (capacity, an estimate for the hash map)."""
        return int(self.pages.size() * (sizeof(Node) << PAGE_BITS) + self.hpages.size() * (sizeof(QEntry) << HEAP_BITS)
                   + self.apages.size() * (2 << ARENA_BITS) + self.mcap * sizeof(MapEntry))

    def lower_bound(self):
        """Proven lower bound on the optimum: R^c, or less while live prefixes remain queued.

        Every list not yet scored strictly extends a queued prefix, so its objective is at least
        that prefix's bound plus lambda (Lemma 2 with Theorem 20). The smallest live bound is kept
        as entries come and go, so this costs O(1) at any queue size.
        """
        cdef double lo = min(self.best, self.oom_bound)
        if self.live_lb.size() > 0:
            lo = min(lo, deref(self.live_lb.begin()).first + self.lamW)
        return lo / self.total if self.total > 0 else 0.0

    def queue_summary(self):
        """Histogram of live queue prefix lengths, and Theorem 7's ``(length, f)`` histogram.

        ``f = min(floor((R^c - b) / lambda), M - length)`` bounds how many more rules a queued
        prefix may still receive (Theorem 6). Built from the live counts by (length, prefix
        error), so the cost grows with the number of distinct errors, not with the queue.
        """
        cdef int L
        cdef double err
        cdef int64_t cnt
        cdef unordered_map[int64_t, int64_t] pairs
        cdef unordered_map[uint64_t, int64_t].iterator it
        cdef unordered_map[int64_t, int64_t].iterator pt
        with nogil:
            for L in range(256):
                if self.live_depth[L] == 0:
                    continue
                it = self.live_err[L].begin()
                while it != self.live_err[L].end():
                    memcpy(&err, &deref(it).first, 8)
                    pairs[<int64_t>L * 65536 + self._theorem7_f(err, L)] += deref(it).second
                    inc(it)
        lengths = {L: int(self.live_depth[L]) for L in range(256) if self.live_depth[L] > 0}
        out = {}
        pt = pairs.begin()
        while pt != pairs.end():
            out[(int(deref(pt).first // 65536), int(deref(pt).first % 65536))] = int(deref(pt).second)
            inc(pt)
        return lengths, out

    cdef inline int _theorem7_f(self, double err, int L) noexcept nogil:
        cdef double x
        if self.lamW <= 0:
            return self.M - L
        x = floor((self.best - (err + L * self.lamW)) / self.lamW)
        if x < 0:
            x = 0
        if x > self.M - L:
            x = self.M - L
        return <int>x

    def scan_queue(self):
        """The progress figures recomputed by a full scan of the heap (an audit, O(queue)).

        Returns ``(lower_bound, lengths, pairs)`` as ``lower_bound()`` and ``queue_summary()``
        give them; the tests check that the incremental figures always equal these.
        """
        cdef double lo = min(self.best, self.oom_bound)
        cdef size_t i
        cdef int32_t idx
        cdef int L
        lengths = {}
        pairs = {}
        for i in range(self.hn):
            idx = self._hq(i).node
            if self._nd(idx).flags & F_DELETED:
                continue
            lo = min(lo, self._nd(idx).lb + self.lamW)
            L = self._nd(idx).depth
            lengths[L] = lengths.get(L, 0) + 1
            key = (L, self._theorem7_f(self._nd(idx).err, L))
            pairs[key] = pairs.get(key, 0) + 1
        return (lo / self.total if self.total > 0 else 0.0), lengths, pairs

    def evaluate(self, prefix):
        """Score one prefix from scratch with the search's own kernels (for checks and tests).

        Returns objective, b (prefix errors + lambda * K), b0 (equivalent-points bound on the
        default's errors), the rule labels and the default label, as fractions of total weight.
        """
        cdef double cnt[MAX_CLASSES]
        cdef double correct, err = 0, wv, b0 = 0
        cdef int label, i, s
        cdef vector[uint64_t] uu = self.mask
        cdef vector[uint64_t] vv
        vv.assign(self.W, 0)
        labels = []
        seen = set()
        for s in prefix:
            if s < 0 or s >= self.M or s in seen:
                raise ValueError(f"bad or repeated antecedent {s}")
            seen.add(s)
            for i in range(self.W):
                vv[i] = uu[i] & self.caps[<size_t>s * self.W + i]
                uu[i] &= ~self.caps[<size_t>s * self.W + i]
            self._class_counts(&vv[0], cnt)
            wv = self._weighted(cnt, &correct, &label)
            err += wv - correct
            labels.append(label)
        self._class_counts(&uu[0], cnt)
        wv = self._weighted(cnt, &correct, &label)
        if self.Q > 0:
            self._minority_counts(&uu[0], cnt)
            b0 = self._weighted_sum(cnt)
        b = err + len(labels) * self.lamW
        return {"objective": (b + wv - correct) / self.total, "b": b / self.total,
                "b0": b0 / self.total, "rule_labels": labels, "default": label,
                "captured": (self.total - wv) / self.total}

    def counters(self):
        return {
            "evaluated": self.n_evaluated,
            "expanded": self.n_expanded,
            "inserted": self.n_inserted,
            "popped_pruned": self.n_popped_pruned,
            "pruned_support": self.n_pruned_support,
            "pruned_accurate_support": self.n_pruned_accurate,
            "pruned_bound": self.n_pruned_bound,
            "pruned_lookahead": self.n_pruned_lookahead,
            "pruned_length": self.n_pruned_length,
            "pruned_map": self.n_pruned_map,
            "map_replaced": self.n_map_replaced,
            "map_bypassed": self.n_map_collisions,   # hash collisions and length-capped pairs
            "gc_runs": self.n_gc_runs,
            "improvements": self.n_improvements,
            "max_queue": self.max_queue,
            "max_trie": self.max_trie,
            "max_depth_evaluated": self.max_depth_evaluated,
            "queue": self.hn,
            "trie": self.live_nodes,
            "map": self.mcount,
            "pruned_similar_support": self.n_pruned_similar,
            "skipped_rejected": self.n_skipped_rejected,
            "max_reject_sets": self.max_reject_sets,
        }
