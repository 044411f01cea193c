# cython: language_level=3
"""CORELS branch-and-bound over pre-mined antecedents (Angelino et al., JMLR 2018).

The search state lives in fixed pages owned by one ``Search`` object, indexed by 32-bit integers:
a node pool (the prefix trie, parent pointers only, with reference counts for prune-up:
``corels_trie.pxd``), a paged 4-ary heap (the queue: ``paged_heap.h``; its entries, the counts of
the live queue that make a progress report cheap at any queue size, and its sweeps:
``corels_queue.pxd``), a symmetry-aware open-addressing map (its storage: ``corels_map.pxd``);
past a memory budget the queue's worst part goes to bucket files (``corels_disk.pxd``) and comes
back rebuilt (``corels_reload.pxd``). The problem, its counts and the scoring arithmetic it shares
with the Rashomon enumerator are ``corels_problem.pxd``, the thread pool and a slice's workers
``corels_threads.pxd``, the dense kernel ``corels_dense.pxd``, the symmetry map's admission
(Algorithm 6) ``corels_admit.pxd``, the reordering check ``corels_reorder.pxd``, a distributed
driver's prefixes ``corels_seed.pxd``, the tail table (a raise of every bound, and when it is
built) ``corels_tailtable.pxd``; this module keeps the expansion and decides when to sweep, spill
and reload (``SearchCore``), and what is called between slices (``Search``). No Python object is
created per node. ``Search.run`` releases the GIL and works for a slice of wall time, so the
caller can emit progress and check limits between slices.

Data are *units* rather than samples: the caller may merge samples with identical antecedent
signatures into one unit (an equivalence class of the equivalent-points bound) carrying per-class
counts. Counts are stored bit-sliced ("planes": plane j of a count holds bit j of every unit's
count), so a count over a set of units is ``sum_j 2^j * popcount(set & plane_j)``. With one unit per
sample every count is 0/1 and there is one plane per quantity.

All objective arithmetic is in weighted count units (objective * total weight); prefix errors are
accumulated separately from ``depth * lambda`` so equal prefixes give bit-identical bounds.
"""

from libc.stdint cimport uint64_t, int64_t, uint32_t, int32_t, uint16_t, uint8_t
from libc.math cimport floor, ldexp, INFINITY
from libc.string cimport memcpy, memset
from libc.errno cimport ENOMEM
from libc.stdlib cimport malloc, free
from libcpp.string cimport string
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.map cimport map as ordered_map
from cython.operator cimport dereference as deref, preincrement as inc

from bitops cimport gw_popcount64, splitmix64
from monotonic_clock cimport now
from paged_heap cimport PagedHeap
from corels_trie cimport (
    Node, PrefixTrie, F_DELETED, F_QUEUED, F_FREE, F_UNCHECKED, trie_init, trie_clear, trie_destroy, trie_bytes, trie_node,
    trie_new_counted, trie_release, trie_dead, trie_compact, trie_err, trie_lb, trie_node_bytes, trie_walk,
)
from corels_bounds cimport Pruning, hopeless, theorem7_f
from corels_counts cimport binary_counts, masked_counts, weighted_majority, weighted_sum
from corels_problem cimport (
    CorelsProblem, Theorem18, SIM_WINDOW, P_DFS, P_LOWER_BOUND, MAX_CLASSES, LABELS, MINORITY,
    R_DONE, R_SLICE, R_STOPPED, R_NODE_LIMIT, R_OUT_OF_MEMORY, Tally, tally_merge, tally_counters, policy_code, problem_init, problem_counts,
    problem_error, problem_rule, problem_root, problem_context, problem_exact_errors, problem_integral, default_error, policy_key,
    theorem18_init, theorem18_setup,
    theorem18_prunes, accurate_on_units,
)
from corels_disk cimport (
    DiskQueue, SpillBucket, SPILL_SAMPLE, SPILL_RECORD, gw_spill_key, gw_spill_id, gw_spill_len, gw_spill_unchecked,
    key_less, disk_best, disk_first, disk_lb, disk_close, disk_encode, disk_abort, disk_begin, disk_stays,
    disk_write, disk_flush, disk_commit, disk_read, disk_take, disk_summary, disk_lengths, disk_configure,
    disk_error_text, disk_counters,
)
from corels_admit cimport (
    MAP_NONE, MAP_PREFIX, MAP_CAPTURED, SymmetryMap, MapChild, map_probe, map_recorded, map_write,
    map_constrain, map_key, map_admit_child, map_replaced, map_child_init, map_prefetch_record,
)
from corels_fairness cimport (
    FairProblem, FairScratch, fair_init, fair_scratch_init, fair_prefix, fair_list_meets, fair_child_hopeless,
    fair_redundant, fair_probe,
)
from corels_dense cimport DenseKernel, dense_init, dense_context
from corels_queue cimport (
    QEntry, LiveFigures, entry_lb, live_clear, live_add, live_remove, queue_lower_bound, queue_summary, queue_audit,
    queue_gc, queue_spill, spill_due, reload_due, queue_push,
)
from corels_reorder cimport ReorderCheck, reorder_setup, reorder_better
from corels_tailtable cimport (
    TailSchedule, TS_BUILD, TS_DUE, tail_schedule_init, tail_schedule_slice, tail_schedule_counters, tail_table_start,
    tail_table_bytes, tail_raise_child, tail_extension_bound, tail_rules_for, TT_BYTES, TT_OPS_PER_EVALUATION,
)
from corels_reload cimport ReloadPath, reload_start, reload_root, reload_records, reload_finish
from corels_seed cimport (
    PrefixWalk, seed_check, seed_path, node_prefix, walk_default, walk_objective, walk_evaluate, walk_start, walk_rule, walk_b0,
)
from corels_threads cimport (
    gw_sync_new, gw_sync_free, gw_lock, gw_unlock, gw_inc_lock, gw_inc_unlock, pool_run, pool_free, WorkerTimes,
    WorkerSlice, times_add, times_dict, slice_start, slice_over, slice_wait, slice_notify,
)
from corels_map cimport (
    MapEntry, MapRecord, SymmetryTable, table_init, table_clear, table_destroy, table_bytes,
    table_ids, table_put, table_grow, table_record, table_set_record, table_compact, table_len, table_id,
    table_set_ids, table_put_bytes, table_breakdown,
)

cdef extern from "corels_kernels.h" nogil:
    void gw_masked_sum3(const int32_t* mask, const int32_t* a, const int32_t* b, const int32_t* c,
                        int n, int64_t* out)

import numpy as np

MAPS = {"none": MAP_NONE, "prefix": MAP_PREFIX, "captured": MAP_CAPTURED}

cdef enum:
    R_SPILL_ERROR = 5       # Search.run's codes past corels_problem's

def tail_table_rules_for(int n_units, int n_classes, long long max_bytes=TT_BYTES):
    """The rules a search's tail table over ``n_units`` units of ``n_classes`` classes holds within
    ``max_bytes`` (0: it is not built): what the size estimate reads before any search exists."""
    return tail_rules_for((n_units + 15) // 16, n_classes, (n_units + 63) // 64, max(max_bytes, 0))


# return codes of Search.run
DONE = R_DONE
SLICE = R_SLICE
STOPPED = R_STOPPED
NODE_LIMIT = R_NODE_LIMIT
OUT_OF_MEMORY = R_OUT_OF_MEMORY
SPILL_ERROR = R_SPILL_ERROR


cdef struct Candidate:  # a child that passed every bound, waiting for the map and the queue
    double err
    double lb
    double b0           # its equivalent-points bound (the map recomputes bounds from errors)
    double floss        # under a fairness constraint: its fair_loss (the bound's raise)
    double key          # its queue key
    uint64_t map_key
    int32_t ant


cdef struct Scratch:    # one thread's working memory for an expansion (see Search._score)
    vector[uint64_t] u, v, f, tmp
    vector[uint16_t] path, child_ids
    vector[uint8_t] in_prefix
    vector[Candidate] cands
    vector[int64_t] acc
    vector[int32_t] wt, w1, wz    # dense kernel: per-unit counts masked by the uncaptured set
    int n_cands
    uint64_t phash
    double node_lb      # the bound of the node being expanded (nodes keep no bound: Search._qlb)
    Tally tally         # counters of the scoring pass, added to the Search's under the lock
    Theorem18 sim       # Theorem 18's working memory (Search._similar_setup); sim.x is lent to
                        # the reordering check
    ReorderCheck perm   # Theorem 15 within the child (corels_reorder.pxd)
    # threaded runs: seconds this thread spent scoring (no lock), waiting for the queue lock,
    # holding it, and idle (queue empty while others were in flight)
    WorkerTimes times   # threaded runs: where this thread's slice went (corels_threads.pxd)
    FairScratch fair    # a fairness constraint's working memory (corels_fairness.pxd)
    MapChild mc         # the child being admitted as the map reads it (over the vectors above)


cdef void _worker_entry(void* ctx, int tid) noexcept nogil:
    (<SearchCore>ctx)._worker(tid)


cdef class SearchCore:
    """A CORELS search's state and its expansion: everything a slice runs without the GIL (the
    scoring, the admission, the workers, the sweeps, the spill and the reload). ``Search`` adds
    what is called between slices: the slices themselves, the figures, a driver's handles, the
    tail table's schedule, the queue on disk's set-up. See the module docstring for the data layout.

    Parameters are arrays over ``n_units`` bits packed in ``W`` words:
    ``caps`` (M, W) antecedent vectors; ``lplanes`` (P, W) label count planes with
    ``lclass``/``lshift`` (class -1 = total count, k >= 1 = class k; class 0 is the rest);
    ``zplanes`` (Q, W) planes of the equivalent-points minority counts, same convention;
    ``weights`` per class; ``lam`` the regularisation per rule (as a fraction of total weight).
    """

    cdef CorelsProblem pb          # the data (corels_problem.pxd), shared with the enumerator
    cdef FairProblem fair          # a fairness constraint (corels_fairness.pxd); fair.G == 0: none
    cdef int policy, max_len
    cdef bint do_support, do_accurate, do_lookahead, do_eqpts, do_length, do_gc
    cdef bint do_similar
    cdef DenseKernel dk            # binary, few units: masked sums (corels_dense.pxd)
    # search state
    cdef PrefixTrie trie           # the node pool (corels_trie.pxd)
    cdef PagedHeap[QEntry] queue   # the queue: the smallest (key, tie) first (paged_heap.h)
    cdef SymmetryMap smap          # the symmetry map and its admission (corels_admit.pxd)
    cdef LiveFigures live          # the live queue's progress figures (corels_queue.pxd)
    cdef vector[uint64_t] ant_hash
    cdef int64_t seq
    # per-thread expansion scratch (index = worker id); acc also serves the serial callers
    cdef vector[Scratch] scratch
    cdef vector[int64_t] acc
    # threads: see _run_threads
    cdef int n_threads
    cdef WorkerSlice ws            # the workers' lock, pool, limits and rendezvous (corels_threads.pxd)
    cdef WorkerTimes times         # the workers' times summed (thread_times)
    cdef double t_join
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
    cdef Tally tally               # the scoring's counters (corels_problem.pxd)
    cdef public int64_t n_inserted, n_popped_pruned, n_gc_runs
    cdef public int64_t n_pruned_map, n_map_replaced, n_map_collisions
    cdef public int64_t max_queue, max_trie, max_depth_evaluated, n_improvements
    # Theorem 18 (issue 13 item 5, on by default), a child against itself without one of its
    # last rules: the tolerance of its strict test (its scratch is per thread, in Scratch)
    cdef double sim_eps
    # the external-memory queue (issue 27): the queue's worst buckets in files (corels_disk.pxd)
    cdef DiskQueue disk
    cdef TailSchedule tails        # the tail table, and when it is built (corels_tailtable.pxd)
    cdef list seeds                # what the search covers: [[]] (the root) or a driver's prefixes
    cdef bint do_reorder, may_reorder   # the reordering check: in a seeded search; once the map is full

    def __init__(self, const uint64_t[:, ::1] caps, const uint64_t[:, ::1] lplanes,
                 const int32_t[::1] lclass, const int32_t[::1] lshift,
                 const uint64_t[:, ::1] zplanes, const int32_t[::1] zclass,
                 const int32_t[::1] zshift, const double[::1] weights, int n_units,
                 double regularization, str policy="lower_bound", str symmetry_map="prefix",
                 int max_prefix_length=255, bint support=True, bint accurate_support=True,
                 bint lookahead=True, bint equivalent_points=True, bint length_bound=True,
                 bint garbage_collection=True, str kernel="auto", int threads=1,
                 bint similar_support=True, bint reorder=True, bint tail_table=True, groups=None,
                 str fairness_metric="statistical_parity", double fairness_at_most=0.0, long long tail_after=-1,
                 long long tail_bytes=TT_BYTES):
        cdef int k
        if threads < 1 or threads > 1024:
            raise ValueError(f"threads must be between 1 and 1024, got {threads}")
        self.n_threads = threads
        self.ws.sync = gw_sync_new()
        if not trie_init(&self.trie) or not table_init(&self.smap.table) or self.ws.sync == NULL:
            raise MemoryError("cannot allocate the search's page table")
        problem_init(&self.pb, caps, lplanes, lclass, lshift, zplanes, zclass, zshift, weights, n_units,
                     regularization)
        self.policy = policy_code(policy)
        if symmetry_map not in MAPS:
            raise ValueError(f"unknown symmetry map {symmetry_map!r}; choose one of {sorted(MAPS)}")
        self.smap.kind = MAPS[symmetry_map]
        self.max_len = max(0, min(max_prefix_length, self.pb.M, 255))
        self.smap.length_capped = self.max_len < self.pb.M
        self.do_support = support
        self.do_accurate = accurate_support
        self.do_lookahead = lookahead
        self.do_eqpts = equivalent_points and self.pb.Q > 0
        self.do_length = length_bound
        self.do_gc = garbage_collection
        self.do_similar, self.may_reorder = similar_support, reorder
        self.seeds = [[]]
        fair_init(&self.fair, &self.pb, groups, fairness_metric, fairness_at_most, n_units)
        if self.fair.G > 0:   # the bounds a constraint breaks (docs/maintainers/corels-fairness.md)
            self.do_support = self.do_accurate = self.do_similar = False
        map_constrain(&self.smap, &self.fair, &self.pb)
        self.acc.assign(max(self.pb.P, self.pb.Q) + 1, 0)
        for k in range(self.pb.M):
            self.ant_hash.push_back(splitmix64(<uint64_t>k * 7919 + 12345))
        self.oom_bound = INFINITY
        dense_init(&self.dk, &self.pb, kernel, n_units)
        self._init_scratch()
        # the page tables' full capacity up front (pointers only, untouched until used), so the
        # search's noexcept code never grows a vector that could throw std::bad_alloc
        if not self.queue.reserve(<size_t>1 << 31):
            raise MemoryError()
        self.best_path.reserve(256)
        self._init_search()
        # the tail table pays on long searches only: built (and the search started again under
        # it) once the search has scored about as many children as the build's work would score
        tail_schedule_init(&self.tails, &self.pb, tail_table and self.fair.G == 0 and self.pb.lamW > 0, tail_after,
                           tail_bytes, TT_OPS_PER_EVALUATION)

    cdef void _init_scratch(self) except *:
        """One scratch per thread, sized once (their addresses never change during a run)."""
        cdef int t
        cdef Scratch* sc
        self.scratch.resize(self.n_threads)
        for t in range(self.n_threads):
            sc = &self.scratch[t]
            sc.u.assign(self.pb.W, 0)
            sc.v.assign(self.pb.W, 0)
            sc.f.assign(self.pb.W, 0)
            sc.tmp.assign(self.pb.W, 0)
            sc.in_prefix.assign(max(self.pb.M, 1), 0)
            sc.cands.resize(max(self.pb.M, 1))
            sc.path.assign(256, 0)
            sc.child_ids.assign(257, 0)
            sc.acc.assign(max(self.pb.P, self.pb.Q) + 1, 0)
            theorem18_init(&sc.sim, self.pb.W)
            fair_scratch_init(&sc.fair, self.pb.W, self.fair.U if self.fair.G > 0 else 0)
            map_child_init(&sc.mc, sc.child_ids.data(), sc.in_prefix.data(), sc.f.data(), sc.tmp.data(), &sc.fair,
                           sc.acc.data())
            sc.perm.ctx.assign(<size_t>256 * self.pb.W, 0)
            if self.dk.on:
                sc.wt.assign(self.dk.UP, 0)
                sc.w1.assign(self.dk.UP, 0)
                sc.wz.assign(self.dk.UP, 0)

    @property
    def kernel(self):
        return "dense" if self.dk.on else "bitsliced"

    # ---------------------------------------------------------------------------- nodes, heap

    def __dealloc__(self):
        disk_close(&self.disk)
        trie_destroy(&self.trie)
        pool_free(&self.ws.pool)
        gw_sync_free(self.ws.sync)
        self.ws.sync = NULL
        table_destroy(&self.smap.table)

    cdef int32_t _new_node(self, int32_t parent, uint16_t ant, uint8_t depth, double err,
                           double lb) noexcept nogil:
        """A node in the trie (-1 when out of memory), counted in ``max_trie``."""
        return trie_new_counted(&self.trie, parent, ant, depth, err, lb, &self.max_trie)

    cdef inline double _qlb(self, QEntry e) noexcept nogil:
        """A queued node's bound (``entry_lb``)."""
        return entry_lb(self.policy, &self.trie, e)

    cdef bint _push(self, double key, int32_t node) noexcept nogil:
        """Queue ``node`` as a new entry (the next tie; newest first under dfs); False when out of memory."""
        cdef int32_t tie = <int32_t>((self.seq + 1) & 0x7FFFFFFF)
        if not queue_push(&self.queue, &self.live, &self.trie, self.policy, key, -tie if self.policy == P_DFS else tie,
                          node, &self.max_queue):
            return False
        self.seq += 1
        self.n_inserted += 1
        return True

    cdef QEntry _pop(self) noexcept nogil:
        """Take the best entry off the queue and out of the live figures."""
        cdef QEntry top = self.queue.pop()
        live_remove(&self.live, &self.trie, top.node, self._qlb(top))
        return top

    cdef inline bint _drop_popped(self, int32_t idx, double lb, bint live=False, bint dead=False) noexcept nogil:
        """Release a popped node the map deleted or that is hopeless (or, with ``dead``, under a
        deleted one), uncounted from the live figures when ``live`` (a worker's pop keeps it
        counted); True when it was dropped."""
        cdef Node* nd = trie_node(&self.trie, idx)
        if not ((nd.flags & F_DELETED) or self._hopeless(lb, nd.depth) or dead and trie_dead(&self.trie, idx)):
            return False
        self.n_popped_pruned += 1
        if live:
            live_remove(&self.live, &self.trie, idx, lb)
        trie_release(&self.trie, idx)
        return True

    cdef inline bint _hopeless(self, double lb, int depth) noexcept nogil:
        """The search's pruning policy over ``hopeless`` (corels_bounds.pxd)."""
        return hopeless(lb, depth, self.best, self.pb.lamW, self.max_len, self.do_lookahead, self.do_length)

    cdef inline Pruning _pruning(self) noexcept nogil:
        """The switches ``_hopeless`` prunes by, for the queue's sweeps (corels_queue.pxd)."""
        return Pruning(lamW=self.pb.lamW, max_len=self.max_len, lookahead=self.do_lookahead,
                       length_bound=self.do_length)

    cdef void _gc(self) noexcept nogil:
        """Drop queue entries that are deleted or can no longer lead to a better list."""
        cdef Pruning pr = self._pruning()
        cdef size_t j = queue_gc(&self.queue, &self.live, &self.trie, self.policy, &pr, self.best)
        self.gc_threshold = max(<size_t>65536, 2 * j)
        self.n_gc_runs += 1

    # ---------------------------------------------------------------- external-memory queue

    cdef bint _spill_due(self) noexcept nogil:
        """Over the spill budget, with a queue worth spilling (``spill_due``)."""
        return spill_due(&self.queue, &self.trie, &self.disk, table_bytes(&self.smap.table))

    cdef bint _reload_due(self) noexcept nogil:
        """A bucket comes before the queue's top (``reload_due``)."""
        return reload_due(&self.queue, &self.disk)

    cdef int _spill(self, size_t keep) noexcept nogil:
        """Write the queue's worst entries to bucket files until about ``keep`` stay in RAM
        (``queue_spill``): 0, or the ``errno`` of the failure (the queue then stays whole)."""
        cdef Pruning pr = self._pruning()
        return queue_spill(&self.queue, &self.live, &self.disk, &self.trie, self.policy, &pr, self.best, keep,
                           &self.n_popped_pruned)

    cdef int _reload(self) noexcept nogil:
        """Bring back the bucket that holds the smallest (key, tie): read it whole, sort its
        prefixes by their ids and rebuild their trie paths with shared ancestors (errors
        recomputed by ``_seed_one``'s arithmetic, equal bits: ``corels_reload.pxd``), queue each with its
        own key and tie.

        The rebuilt nodes are flagged unchecked: the symmetry map never names them, so it never
        deletes them (sound; a dominated one is searched). A hopeless prefix is dropped. 0, or
        the ``errno`` of a failed read (the bucket then stays, and still bounds the search).
        """
        cdef int bi = disk_best(&self.disk), err
        cdef SpillBucket bk = self.disk.buckets[bi]
        cdef uint8_t* buf
        cdef uint64_t* offs
        cdef ReloadPath rp
        cdef Scratch* sc = &self.scratch[0]
        cdef Pruning pr = self._pruning()
        if not reload_start(&rp, &self.pb, &self.trie, &self.smap, self.ant_hash.data(), &self.acc[0],
                            &self.max_trie, sc.child_ids.data(), sc.in_prefix.data(), sc.f.data(), sc.tmp.data()):
            return ENOMEM
        err = disk_read(&self.disk, bi, &buf, &offs)
        if err != 0:
            free(rp.ust)
            return err
        disk_take(&self.disk, bi)
        if reload_root(&rp) < 0 or reload_records(&rp, buf, offs, bk.count, &self.queue, &self.live, self.policy, &pr,
                                                  self.best, &self.max_queue, &self.n_popped_pruned) < 0:
            # no memory: what is left of the bucket is bounded by its smallest bound
            self.out_of_memory = True
            self.oom_bound = min(self.oom_bound, bk.min_lb + self.pb.lamW)
        reload_finish(&rp)
        free(buf)
        free(offs)
        return 0

    cdef int _spill_and_reload(self) noexcept nogil:
        """Between expansions: spill when over budget, then reload while a bucket comes first.
        0, or an ``errno`` (kept in ``disk.error``)."""
        cdef int rc = 0
        if self._spill_due():
            rc = self._spill(self.queue.size() // 2)
        while rc == 0 and not self.out_of_memory and self._reload_due():
            rc = self._reload()
        if rc != 0:
            self.disk.error = rc
        return rc

    # ---------------------------------------------------------------------------- map

    cdef bint _map_store(self, MapEntry* e, int verdict, const MapChild* c, double err, double b0, double floss,
                         int32_t node) noexcept nogil:
        """Record ``node`` (prefix error ``err``, equivalent-points bound ``b0``, ``fair_loss``
        ``floss`` under a constraint) in the entry ``map_admit`` returned; False when out of
        memory. The node a replaced record still names leaves the queue with the bound it was
        queued with (``map_replaced``)."""
        cdef double lb
        cdef int32_t old = map_replaced(&self.smap, &self.pb, &self.trie, e, verdict, node, c, b0, floss, &lb)
        if old >= 0:
            live_remove(&self.live, &self.trie, old, lb)
            trie_node(&self.trie, old).flags |= F_DELETED
        self.n_map_replaced += verdict == 2
        return map_write(&self.smap, e, verdict, c, err, node)

    # ---------------------------------------------------------------------------- search

    cdef void _init_search(self):
        cdef double b0
        cdef int32_t root
        cdef bint integral
        trie_clear(&self.trie)
        self.queue.clear()
        table_clear(&self.smap.table)
        live_clear(&self.live)
        self.seq = 0
        self.best_path.clear()
        self.gc_threshold = 65536
        b0 = problem_root(&self.pb, self.do_eqpts, &self.best, &self.acc[0])   # best: the empty list
        self.tails.root_b0 = b0
        if not fair_list_meets(&self.fair, &self.pb, NULL, 0, -1, &self.scratch[0].fair, &self.acc[0]):
            self.best = INFINITY      # a fairness constraint the empty list breaks: no feasible list yet
        self.sim_eps = 1e-9 * max(self.pb.total, 1.0)
        self.best_time = now()
        self.start_time = self.best_time
        self.best_evals = 0
        # compact nodes (issue 27): under the lower-bound policy a queued node's bound is its key;
        # with integral class weights every prefix error is an integer no larger than the total
        integral = problem_integral(&self.pb)
        self.smap.exact_ties = problem_exact_errors(&self.pb)
        trie_compact(&self.trie, self.policy != P_LOWER_BOUND, integral)
        table_compact(&self.smap.table, self.pb.M <= 256, integral, self.pb.total)
        root = self._new_node(-1, 0, 0, 0.0, b0)
        if root < 0:
            raise MemoryError("cannot allocate the search's node pool")
        if self._hopeless(b0, 0):
            trie_release(&self.trie, root)
        else:
            if not self._push(b0 if self.policy == P_LOWER_BOUND else 0.0, root):
                raise MemoryError("cannot allocate the search's queue")

    cdef int _expand(self, int32_t ni, Scratch* sc) noexcept nogil:
        """Algorithm 5 on one thread: score every child of the prefix at ``ni``, then insert the
        promising ones. -1 when the prefix lies under a node deleted by the symmetry map."""
        if self._score(ni, sc) < 0:
            return -1
        self._admit(ni, sc)
        self._merge(sc)
        return 0

    cdef void _merge(self, Scratch* sc) noexcept nogil:
        """Add a scratch's counters to the search's (under the queue lock when threaded)."""
        tally_merge(&self.tally, &sc.tally)

    cdef void _improve(self, double R, int s, int depth, Scratch* sc) noexcept nogil:
        """A child beat the incumbent when scored: record it under the incumbent's lock (another
        thread may have found a better one since; a stale ``best`` elsewhere only prunes less)."""
        gw_inc_lock(self.ws.sync)
        if R < self.best:
            self.best = R
            self.best_path.assign(sc.child_ids.begin(), sc.child_ids.begin() + depth)
            self.best_path.push_back(s)
            self.best_time = now()
            self.best_evals = self.tally.evaluated + sc.tally.evaluated
            self.improved = True
            self.n_improvements += 1
        gw_inc_unlock(self.ws.sync)

    cdef int _score(self, int32_t ni, Scratch* sc) noexcept nogil:
        """First pass of an expansion: score every child of ``ni``; survivors go to ``sc.cands``.

        Writes only the thread's scratch (and the incumbent, under its lock), so threads run it
        without the queue lock; the node and its ancestors stay allocated while it is in flight.
        """
        cdef int depth = trie_node(&self.trie, ni).depth, k, i, s, label
        cdef double perr = trie_err(&self.trie, ni)
        cdef double ucnt[MAX_CLASSES]
        cdef double uz[MAX_CLASSES]
        cdef double cnt[MAX_CLASSES]
        cdef double zc[MAX_CLASSES]
        cdef double wv, correct, err, b, R, fw, b0, lb
        cdef uint64_t phash = 0, key_h
        cdef uint64_t* u = &sc.u[0]
        cdef uint64_t* v = &sc.v[0]
        cdef uint64_t* f = &sc.f[0]
        cdef const uint64_t* capv
        cdef const uint64_t* lp = &self.pb.lplanes[0]
        cdef int64_t* acc = &sc.acc[0]
        cdef uint16_t* path = &sc.path[0]
        cdef uint16_t* child_ids = &sc.child_ids[0]
        cdef uint8_t* in_prefix = &sc.in_prefix[0]
        cdef int P = self.pb.P, W = self.pb.W
        cdef bint any_bits
        cdef int64_t sums[3]
        cdef int n_cands = 0
        if trie_walk(&self.trie, ni, depth, path, sc.sim.perr) < 0:
            return -1
        problem_context(&self.pb, path, depth, u, in_prefix)
        for k in range(depth):
            phash += self.ant_hash[path[k]]
            child_ids[k] = path[k]
        problem_counts(&self.pb, u, LABELS, ucnt, acc)
        if self.do_eqpts:
            problem_counts(&self.pb, u, MINORITY, uz, acc)
        if self.dk.on:
            dense_context(&self.dk, &self.pb, u, &sc.wt[0], &sc.w1[0], &sc.wz[0])
        if self.fair.G > 0:
            fair_prefix(&self.fair, &self.pb, path, depth, &sc.fair, sc.fair.prefix, acc, True)
        sc.tally.expanded += 1
        for s in range(self.pb.M):
            if in_prefix[s]:
                continue
            sc.tally.evaluated += 1
            capv = &self.pb.caps[<size_t>s * W]
            if self.dk.on:
                gw_masked_sum3(&self.dk.dmask[<size_t>s * self.dk.UP], &sc.wt[0], &sc.w1[0],
                               &sc.wz[0], self.dk.UP, sums)
                cnt[0] = <double>(sums[0] - sums[1])
                cnt[1] = <double>sums[1]
                any_bits = sums[0] > 0
            elif self.pb.C == 2:
                any_bits = binary_counts(self.pb.W, u, capv, v, lp, P, self.pb.PT, &self.pb.lshift[0], cnt)
            else:
                any_bits = masked_counts(self.pb.C, W, u, capv, v, lp, P, &self.pb.lclass[0], &self.pb.lshift[0],
                                         acc, cnt)
            wv = weighted_majority(self.pb.C, self.pb.weights, cnt, &correct, &label)
            if self.fair.G > 0 and fair_redundant(&self.pb, &sc.fair, path, depth, s, u, capv, cnt, label, acc):
                sc.tally.twin += 1
                continue
            if self.do_support and wv < self.pb.lamW:            # Theorem 10
                sc.tally.support += 1
                continue
            if self.do_accurate and correct < self.pb.lamW:      # Theorem 11
                sc.tally.accurate += 1
                continue
            err = perr + (wv - correct)
            b = err + (depth + 1) * self.pb.lamW
            if b >= self.best:                                # Theorem 1
                sc.tally.bound += 1
                continue
            R = b + default_error(&self.pb, ucnt, cnt, &fw)
            if R < self.best and fair_list_meets(&self.fair, &self.pb, path, depth, s, &sc.fair, acc):
                self._improve(R, s, depth, sc)                # score before any lookahead
            b0 = 0
            if self.do_eqpts:                                 # Theorem 20
                if self.dk.on:
                    zc[0] = uz[0] - <double>sums[2]
                    zc[1] = uz[1]
                    b0 = weighted_sum(self.pb.C, self.pb.weights, zc)
                elif any_bits:
                    problem_counts(&self.pb, v, MINORITY, zc, acc)
                    for k in range(self.pb.C):
                        zc[k] = uz[k] - zc[k]
                    b0 = weighted_sum(self.pb.C, self.pb.weights, zc)
                else:
                    b0 = weighted_sum(self.pb.C, self.pb.weights, uz)
            if self.do_accurate and self.do_eqpts and accurate_on_units(&self.pb, correct, uz, b0):  # Theorem 11
                sc.tally.accurate += 1
                continue
            lb = b + b0
            if lb + (self.pb.lamW if self.do_lookahead else 0.0) >= self.best:   # Lemma 2 + Thm 20
                sc.tally.lookahead += 1
                continue
            if depth + 1 >= self.max_len or (
                    self.do_length and (depth + 2) * self.pb.lamW >= self.best):  # Theorem 6
                sc.tally.length += 1
                continue
            if self.fair.G > 0 and fair_child_hopeless(&self.fair, &self.pb, &sc.fair, u, capv, cnt, label, b, &lb,
                                                       acc, self.pb.lamW if self.do_lookahead else 0.0, self.best):
                sc.tally.fairness += 1
                continue
            if self.tails.table.n_blocks > 0:   # off under a constraint: its raise and that one do not add
                tail_raise_child(&self.tails.table, u, capv, b, &b0, &lb)
                if lb + (self.pb.lamW if self.do_lookahead else 0.0) >= self.best:
                    sc.tally.tail += 1
                    continue
            # a survivor: queue it in the second pass, once its map slot (and the record there)
            # have been prefetched, so the probes' cache misses overlap the scoring
            key_h = map_key(&self.smap, &self.pb, phash + self.ant_hash[s], u, capv, f, sc.fair.child)
            sc.cands[n_cands] = Candidate(err=err, lb=lb, b0=b0, floss=sc.fair.child_loss, map_key=key_h, ant=s,
                                          key=policy_key(self.policy, depth + 1, lb, R, b, self.pb.total, fw))
            n_cands += 1
        sc.n_cands = n_cands
        if n_cands > 0 and depth >= 1 and (self.do_similar or self.do_reorder or self.smap.unseen_orderings):
            self._filter(ni, depth, perr, sc)
        return 0

    cdef void _filter(self, int32_t ni, int depth, double perr, Scratch* sc) noexcept nogil:
        """Drop the survivors Theorem 18 (dominated by the prefix without one of its last rules) or,
        seeded or once the map is full, Theorem 15 (an earlier place of the last rule comes first)
        rules out: strict, so composed with the map and every bound (maintainers/corels-proofs.md)."""
        cdef int c, c2 = 0, n_sim = 0
        cdef Candidate* cand
        cdef bint reorder = self.do_reorder or (self.may_reorder and self.smap.unseen_orderings)
        if self.do_similar:          # the errors along the path are in sc.sim.perr (trie_walk)
            n_sim = theorem18_setup(&self.pb, &sc.sim, &sc.path[0], depth, &sc.acc[0])
        if reorder:
            reorder_setup(&sc.perm, &self.pb, &self.trie, ni, depth, &sc.path[0])
        for c in range(sc.n_cands):
            cand = &sc.cands[c]
            if self.do_similar and theorem18_prunes(&self.pb, &sc.sim, &sc.path[0], cand.ant, depth, n_sim,
                                                    cand.err - perr, self.sim_eps, &sc.acc[0]):
                sc.tally.similar += 1
            elif reorder and reorder_better(&sc.perm, &self.pb, cand.ant, depth, cand.err, &sc.path[0],
                                            &sc.sim.x[0], &sc.acc[0], self.smap.exact_ties, self.sim_eps):
                sc.tally.reorder += 1
            else:
                sc.cands[c2] = cand[0]
                c2 += 1
        sc.n_cands = c2

    cdef void _admit(self, int32_t ni, Scratch* sc) noexcept nogil:
        """Second pass of an expansion (under the queue lock when threaded): re-check the
        survivors in ``sc.cands`` against ``R^c``, pass them through the symmetry map, queue them."""
        cdef int depth = trie_node(&self.trie, ni).depth, k, s, verdict, c
        cdef int n_cands = sc.n_cands
        cdef int32_t child
        cdef double lb
        cdef MapEntry* me
        cdef Candidate* cand
        self.max_depth_evaluated = max(self.max_depth_evaluated, depth + 1)
        for c in range(n_cands):
            map_prefetch_record(&self.smap, sc.cands[c].map_key)
        for c in range(n_cands):
            cand = &sc.cands[c]
            s = cand.ant
            lb = cand.lb
            # R^c may have improved since this child was scored: the same tests as on pop
            if lb + (self.pb.lamW if self.do_lookahead else 0.0) >= self.best:
                self.tally.lookahead += 1
                continue
            if self.do_length and (depth + 2) * self.pb.lamW >= self.best:
                self.tally.length += 1
                continue
            sc.child_ids[depth] = s
            verdict = 1
            me = NULL
            if self.smap.kind != MAP_NONE:
                sc.mc.n_ids = depth + 1
                me = map_admit_child(&self.smap, &self.pb, self.disk.map_budget, cand.map_key, &sc.mc, &sc.f[0],
                                     &sc.u[0], lb, cand.err, cand.b0, &verdict)
                if verdict == 0:
                    self.n_pruned_map += 1
                    continue
                if verdict == 3:
                    self.n_map_collisions += 1
            child = self._new_node(ni, <uint16_t>s, <uint8_t>(depth + 1), cand.err, lb)
            if child < 0:          # out of memory: the search can no longer certify
                self.out_of_memory = True
                # the rest of this parent's children stay unexplored: bound them by the parent
                self.oom_bound = min(self.oom_bound, sc.node_lb + self.pb.lamW)
                break             # (a new map slot stays empty until _map_store fills it)
            # no arena memory: the child goes in unrecorded, which is sound; a child no record
            # names (unrecorded or unverifiable) must never be deleted by the map (map_recorded)
            if (me != NULL and not self._map_store(me, verdict, &sc.mc, cand.err, cand.b0, cand.floss, child)
                    or verdict == 3):
                trie_node(&self.trie, child).flags |= F_UNCHECKED
            if not self._push(cand.key, child):   # out of memory: as above
                self.out_of_memory = True
                self.oom_bound = min(self.oom_bound, sc.node_lb + self.pb.lamW)
                trie_release(&self.trie, child)
                break
        for k in range(depth):
            sc.in_prefix[sc.path[k]] = 0

    cdef inline int _limit(self, const uint8_t* stop, int64_t max_evals) noexcept nogil:
        """The limit a slice stops at (the caller's stop flag, the evaluations, the memory), or
        R_SLICE when none is reached."""
        if stop[0] != 0:
            return R_STOPPED
        if max_evals >= 0 and self.tally.evaluated >= max_evals:
            return R_NODE_LIMIT
        if self.out_of_memory:
            return R_OUT_OF_MEMORY
        return R_SLICE

    cdef int _run(self, double seconds, const uint8_t* stop, int64_t max_evals) noexcept nogil:
        cdef double t_end = now() + seconds
        cdef QEntry e
        cdef int32_t idx
        cdef int rc
        while True:
            if self.disk.buckets.size() > 0 and self._reload_due():
                if self._spill_and_reload() != 0:
                    return R_SPILL_ERROR
            if self.queue.size() == 0:
                break
            rc = self._limit(stop, max_evals)
            if rc != R_SLICE:
                return rc
            e = self._pop()
            idx = e.node
            self.scratch[0].node_lb = self._qlb(e)
            if self._drop_popped(idx, self.scratch[0].node_lb):
                continue
            self.improved = False
            if self._expand(idx, &self.scratch[0]) < 0:
                self.n_popped_pruned += 1
            trie_release(&self.trie, idx)
            if self.improved:
                if self.do_gc:
                    self._gc()
            elif self.queue.size() > self.gc_threshold and self.do_gc:
                self._gc()
            if self.disk.budget > 0 and self._spill_due() and self._spill_and_reload() != 0:
                return R_SPILL_ERROR
            if now() >= t_end:
                return R_SLICE
        return R_OUT_OF_MEMORY if self.out_of_memory else R_DONE

    # Threads. A worker holds the queue lock only to take a node and, after scoring its children
    # alone (``_score``, the costly bit-vector work), to admit and queue the survivors
    # (``_admit``). The node stays counted in the live figures while in flight, so the lower bound
    # is valid whenever the lock is free; the search is done when the queue is empty and no
    # expansion is in flight. Workers live for one slice: the caller joins them, then runs the
    # garbage collection with no worker around, exactly as the single-threaded path would.

    cdef int _run_threads(self, double seconds, const uint8_t* stop, int64_t max_evals) noexcept nogil:
        slice_start(&self.ws, seconds, stop, max_evals)
        self.improved = False
        cdef int t
        cdef double t0
        if self.disk.buckets.size() > 0 and self._reload_due() and self._spill_and_reload() != 0:
            return R_SPILL_ERROR
        if self.queue.size() > 0 and self._limit(stop, max_evals) == R_SLICE:
            t0 = now()
            pool_run(&self.ws.pool, self.n_threads, _worker_entry, <void*>self)
            self.t_join += now() - t0
            for t in range(self.n_threads):   # the workers' times, added up
                times_add(&self.times, &self.scratch[t].times)
        if self.do_gc and (self.improved or self.queue.size() > self.gc_threshold):
            self._gc()
        if (self._spill_due() or self._reload_due()) and self._spill_and_reload() != 0:
            return R_SPILL_ERROR
        if self.queue.size() == 0:
            return R_OUT_OF_MEMORY if self.out_of_memory else R_DONE
        return self._limit(stop, max_evals)

    cdef void _worker(self, int tid) noexcept nogil:
        """One thread's loop for a slice; see the comment above ``_run_threads``."""
        cdef Scratch* sc = &self.scratch[tid]
        cdef QEntry e
        cdef int32_t idx
        cdef bint dead
        cdef int k
        cdef double t0 = now(), t1, t2
        gw_lock(self.ws.sync)
        t1 = now()                               # t1: when this thread last took the lock
        sc.times.wait += t1 - t0
        while not self.ws.halt:
            if slice_over(&self.ws, self.tally.evaluated, self.out_of_memory):
                self.ws.halt = True
                break
            if self.disk.buckets.size() > 0 and self._reload_due():
                self.ws.halt = True              # a bucket comes first: reloaded after the slice
                break
            if self.queue.size() == 0:
                if self.ws.n_inflight == 0:
                    self.ws.halt = True          # certified: nothing queued, nothing in flight
                    break
                t0 = now()                       # another worker's children may come
                sc.times.locked += t0 - t1
                slice_wait(&self.ws)
                t1 = now()
                sc.times.idle += t1 - t0
                continue
            t2 = now()
            e = self.queue.pop()     # stays counted live while its expansion is in flight
            idx = e.node
            sc.node_lb = self._qlb(e)
            if self._drop_popped(idx, sc.node_lb, True):
                sc.times.take += now() - t2
                continue
            self.ws.n_inflight += 1
            t0 = now()
            sc.times.take += t0 - t2
            sc.times.locked += t0 - t1
            gw_unlock(self.ws.sync)
            dead = self._score(idx, sc) < 0
            t1 = now()
            sc.times.score += t1 - t0
            gw_lock(self.ws.sync)
            t0 = now()
            sc.times.wait += t0 - t1
            t1 = t0
            if dead:
                self.n_popped_pruned += 1
            elif self.out_of_memory:
                # another worker could not allocate: queue nothing more (the containers' next
                # allocation may fail), and bound this node's children by the node, as _admit does
                self.oom_bound = min(self.oom_bound, sc.node_lb + self.pb.lamW)
                for k in range(trie_node(&self.trie, idx).depth):
                    sc.in_prefix[sc.path[k]] = 0
            else:
                self._admit(idx, sc)
                sc.times.admit += now() - t1
            self._merge(sc)
            live_remove(&self.live, &self.trie, idx, sc.node_lb)
            trie_release(&self.trie, idx)
            self.ws.n_inflight -= 1
            slice_notify(&self.ws)
        slice_notify(&self.ws)
        sc.times.locked += now() - t1
        gw_unlock(self.ws.sync)



cdef class Search(SearchCore):
    """One CORELS search (``SearchCore`` takes its parameters): run in slices of wall time, read
    between them."""

    def run(self, double seconds, const uint8_t[::1] stop_flag, int64_t max_evaluations=-1):
        """Search for about ``seconds`` of wall time.

        Returns DONE (queue exhausted: certified), SLICE (time slice over), STOPPED (stop flag),
        NODE_LIMIT or OUT_OF_MEMORY (a node could not be allocated; the run cannot certify).
        """
        cdef int code, tail
        cdef const uint8_t* stop = &stop_flag[0]
        cdef int64_t cap
        cdef double t_end = now() + seconds
        while True:
            cap = max_evaluations      # the slice stops where the tail table is due (deterministic)
            tail = tail_schedule_slice(&self.tails, self.tally.evaluated, &cap)
            if tail == TS_BUILD and not self.done:
                self._start_tail_table()
            seconds = max(t_end - now(), 0.0)
            with nogil:
                if self.n_threads > 1:
                    code = self._run_threads(seconds, stop, cap)
                else:
                    code = self._run(seconds, stop, cap)
            if not (tail == TS_DUE and code == R_NODE_LIMIT):
                return code
            self._start_tail_table()   # then the rest of the slice, under the table
            if now() >= t_end:
                return R_SLICE

    @property
    def n_evaluated(self):
        """Children scored so far (prefixes evaluated)."""
        return self.tally.evaluated

    @property
    def threads(self):
        """Worker threads one ``run`` slice uses (1: the single-threaded path)."""
        return self.n_threads

    def thread_times(self):
        """Where threaded slices spent their time, in thread-seconds summed over the workers:
        scoring children without a lock, waiting for the queue lock, holding it (taking nodes,
        admitting and queueing children, merging counters), idle (queue empty while another
        expansion was in flight); ``slices`` is the wall time inside the workers' slices. Two
        parts of ``locked``: ``locked_take`` (taking nodes off the heap, dropping dead or hopeless
        ones) and ``locked_admit`` (the map, node allocation and heap pushes of ``_admit``). All zero
        on the single-threaded path."""
        return times_dict(&self.times, self.t_join)

    @property
    def total_weight(self):
        return self.pb.total

    @property
    def objective(self):
        """Best objective found, as a fraction of the total weight (+ lambda per rule)."""
        return self.best / self.pb.total if self.pb.total > 0 else 0.0

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
        return self.queue.size()

    @property
    def trie_size(self):
        return self.trie.live

    @property
    def map_size(self):
        return self.smap.table.count

    @property
    def done(self):
        """True when the queue is exhausted by the search (the optimum is certified)."""
        return self.queue.size() == 0 and self.disk.buckets.size() == 0 and not self.out_of_memory

    def memory_bytes(self):
        """Bytes held by the search containers (capacity, an estimate for the hash map) and the
        tail table."""
        return int(trie_bytes(&self.trie) + self.queue.bytes() + table_bytes(&self.smap.table)
                   + tail_table_bytes(&self.tails.table))

    cdef void _start_tail_table(self) except *:
        """Build the tail table (corels_tailtable.pxd) and search again from the seeds under it,
        keeping the incumbent and, as a floor, the lower bound proven so far: every queued bound
        must be raised alike, or the symmetry map would compare a raised bound with an unraised
        one (maintainers/corels-proofs.md, "The tail table")."""
        cdef double t0 = now()
        self.tails.decided = True
        if tail_table_start(&self.tails.table, &self.pb, self.best, self.tails.root_b0, self.tails.max_bytes,
                            self.sim_eps, self.n_threads, &self.ws.pool) != 0:
            return
        self.tails.seconds = now() - t0
        if self.tally.expanded > 0:
            self.tails.floor = max(self.tails.floor, queue_lower_bound(&self.live, &self.disk,
                                                                       min(self.best, self.oom_bound), self.pb.lamW))
            self.tails.discarded = self.tally.evaluated
            self._requeue(self.seeds, self.do_reorder)

    def memory_breakdown(self):
        """Where ``memory_bytes`` goes (issue 27): the trie's pages and the bytes each node slot
        takes (node and side entries), the queue's pages, the map's slot table and record arena,
        and the bytes one record's tail takes (score, node, generation; the ids come before it)."""
        return {"trie": int(trie_bytes(&self.trie)), "node_bytes": int(trie_node_bytes(&self.trie)),
                "queue": int(self.queue.bytes()), **table_breakdown(&self.smap.table)}

    def lower_bound(self):
        """Proven lower bound on the optimum: R^c, or less while live prefixes remain queued.

        Every list not yet scored strictly extends a queued prefix, so its objective is at least
        that prefix's bound plus lambda (Lemma 2 with Theorem 20). The smallest live bound is kept
        as entries come and go, so this costs O(1) at any queue size.
        """
        cdef double lo = queue_lower_bound(&self.live, &self.disk, min(self.best, self.oom_bound), self.pb.lamW)
        lo = max(lo, self.tails.floor)   # proven before the search started again under the tail table
        return lo / self.pb.total if self.pb.total > 0 else 0.0

    def queue_summary(self):
        """Histogram of queue prefix lengths, and Theorem 7's ``(length, f)`` histogram, the
        prefixes on disk included (their ``f`` bounded from above: ``_disk_summary``).

        ``f = min(floor((R^c - b) / lambda), M - length)`` bounds how many more rules a queued
        prefix may still receive (Theorem 6). Built from the live counts by (length, prefix
        error), so the cost grows with the number of distinct errors, not with the queue.
        """
        return queue_summary(&self.live, &self.disk, self.best, self.pb.lamW, self.pb.M)

    def scan_queue(self):
        """The progress figures recomputed by a full scan of the heap (an audit, O(queue)).

        Returns ``(lower_bound, lengths, pairs)`` as ``lower_bound()`` and ``queue_summary()``
        give them; the tests check that the incremental figures always equal these. The lower
        bound is the heap's alone; the histograms add the buckets' as ``queue_summary`` does.
        """
        lo, lengths, pairs = queue_audit(&self.queue, self.policy, &self.trie, &self.disk, min(self.best, self.oom_bound),
                                         self.best, self.pb.lamW, self.pb.M)
        return (lo / self.pb.total if self.pb.total > 0 else 0.0), lengths, pairs

    def evaluate(self, prefix):
        """Score one prefix from scratch with the search's own kernels (for checks and tests).

        Returns objective, b (prefix errors + lambda * K), b0 (equivalent-points bound on the
        default's errors), the rule labels and the default label, as fractions of total weight.
        """
        return walk_evaluate(&self.pb, prefix, &self.acc[0])

    def extension_bound(self, prefix):
        """The bound the expansion gives every strict extension of ``prefix`` (the tail table's
        raise included once it is built), as a fraction of the total weight: for tests."""
        return tail_extension_bound(&self.tails.table, &self.pb, prefix, self.do_eqpts, &self.acc[0]) / self.pb.total

    # ------------------------------------------------ a distributed driver's handles (issue 27)

    cdef void _seed_one(self, list ids) except *:
        """Queue one prefix with its trie path, each node's error and bound as ``_score`` gives them."""
        cdef double correct, wv, lb, b
        cdef int label
        cdef PrefixWalk w
        cdef int32_t node = seed_path(&self.pb, &self.trie, ids, self.do_eqpts, &self.acc[0], &w, &lb, &self.max_trie)
        if self._hopeless(lb, w.depth):
            trie_release(&self.trie, node)
            return
        wv = walk_default(&self.pb, &w, &self.acc[0], &correct, &label)
        b = w.err + w.depth * self.pb.lamW
        if not self._push(policy_key(self.policy, w.depth, lb, b + (wv - correct), b, self.pb.total, wv), node):
            trie_release(&self.trie, node)
            raise MemoryError("cannot allocate the search's queue")

    def seed(self, prefixes):
        """Search the subtrees under ``prefixes`` instead of the whole tree (a driver's split).

        The queue and the symmetry map are emptied (the incumbent stays) and each prefix is
        queued as its parent's expansion would have queued it; ``[]`` is the root. The prefixes
        themselves are taken as scored (whoever queued them did), so ``objective`` covers only
        what this search finds or is offered. Call between ``run`` slices.

        With the prefix map, a seeded search also runs the reordering check (``reorder_better``):
        the better orderings of its children may lie in other tasks' subtrees, where its own map
        never meets them. One unseeded process meets them all in its map, and there the check cost
        more CPU (about 15 % at lambda 0.005 on COMPAS) than the 0.5 % of evaluations it saved.
        """
        checked = [seed_check(p, self.pb.M, self.max_len) for p in prefixes]
        self.seeds = checked
        self._requeue(checked, self.may_reorder and self.smap.kind == MAP_PREFIX and self.smap.fair == NULL)  # (cells)

    cdef void _requeue(self, list prefixes, bint reorder) except *:
        """Empty the queue, the disk's buckets and the symmetry map (the incumbent stays) and
        queue ``prefixes``, checked, as their parents' expansions would have queued them."""
        cdef int32_t idx
        while self.queue.size() > 0:
            idx = self._pop().node
            trie_release(&self.trie, idx)
        table_clear(&self.smap.table)
        self.smap.unseen_orderings = False
        disk_close(&self.disk)
        self.oom_bound = INFINITY
        self.out_of_memory = False
        self.do_reorder = reorder
        for ids in prefixes:
            self._seed_one(ids)

    def offer_incumbent(self, prefix):
        """Take ``prefix`` (found elsewhere) as the incumbent if it scores better here; True when
        it did. Its objective is recomputed by this search's own arithmetic, so the prune is as
        exact as with a list found here. Call between ``run`` slices."""
        ids = seed_check(prefix, self.pb.M, self.max_len)
        cdef double R = walk_objective(&self.pb, ids, &self.acc[0])
        if R >= self.best or not self.meets_constraint(ids):
            return False
        self.best = R
        self.best_path.clear()
        for a in ids:
            self.best_path.push_back(a)
        self.best_time = now()
        self.best_evals = self.tally.evaluated
        self.n_improvements += 1
        if self.do_gc:
            self._gc()
        return True

    def meets_constraint(self, prefix):
        """The list ``prefix`` (then its default rule) meets the fairness constraint (True
        without one), decided by the search's own test (``corels_fairness.pxd``)."""
        return fair_probe(&self.fair, &self.pb, &self.scratch[0].fair, &self.acc[0], prefix, False)

    def constraint_bound(self, prefix):
        """The search's lower bound on the objective of every list through ``prefix`` that meets
        the fairness constraint (``inf``: none does; ``fair_prefix_bound``), for tests; None without one."""
        return fair_probe(&self.fair, &self.pb, &self.scratch[0].fair, &self.acc[0], prefix, True)

    @property
    def constrained(self):
        """A fairness constraint is on (the support bounds and Theorem 18 are then off; the maps key
        their classes on the fixed cells too)."""
        return self.fair.G > 0

    @property
    def feasible(self):
        """An incumbent exists (always without a constraint: the empty list)."""
        return self.best < INFINITY

    def take(self, int k):
        """Take up to ``k`` open prefixes off the queue, best key first, to search elsewhere.

        Returns ``(prefix, bound)`` pairs: every list under the prefix not yet scored scores at
        least ``bound`` (its lower bound plus lambda, as ``lower_bound`` counts it). Dead or
        hopeless entries met on the way are dropped. Call between ``run`` slices. With part of the
        queue on disk, a bucket comes back whenever it holds the next key, so the order is the same.
        """
        cdef QEntry e
        cdef int32_t idx
        cdef int rc
        cdef double lb
        out = []
        self.tails.decided = True     # the search never starts again once it gave prefixes away
        while len(out) < k and (self.queue.size() > 0 or self.disk.buckets.size() > 0):
            if self.disk.buckets.size() > 0 and self._reload_due():
                with nogil:
                    rc = self._reload()
                if rc != 0:
                    self.disk.error = rc
                    raise OSError(rc, self.spill_error)
                if self.out_of_memory:
                    raise MemoryError("cannot bring the queue's prefixes back from disk")
                continue
            e = self._pop()
            idx = e.node
            lb = self._qlb(e)
            if self._drop_popped(idx, lb, False, True):
                continue
            bound = (lb + self.pb.lamW) / self.pb.total if self.pb.total > 0 else 0.0
            out.append((node_prefix(&self.trie, idx), bound))
            trie_release(&self.trie, idx)
        return out

    def counters(self):
        return tally_counters(&self.tally, self.n_inserted, {
            "popped_pruned": self.n_popped_pruned,
            "pruned_support": self.tally.support,
            "pruned_accurate_support": self.tally.accurate,
            "pruned_bound": self.tally.bound,
            "pruned_lookahead": self.tally.lookahead,
            "pruned_length": self.tally.length,
            "pruned_map": self.n_pruned_map,
            "map_replaced": self.n_map_replaced,
            "map_bypassed": self.n_map_collisions,   # hash collisions and length-capped pairs
            "gc_runs": self.n_gc_runs,
            "improvements": self.n_improvements,
            "max_queue": self.max_queue,
            "max_trie": self.max_trie,
            "max_depth_evaluated": self.max_depth_evaluated,
            "queue": self.queue.size(),
            "trie": self.trie.live,
            "map": self.smap.table.count,
            "pruned_similar_support": self.tally.similar,
            **disk_counters(&self.disk),
            "pruned_reorder": self.tally.reorder,
            "pruned_tail_table": self.tally.tail,
            **tail_schedule_counters(&self.tails),
            **({"pruned_fairness": self.tally.fairness, "pruned_twin": self.tally.twin} if self.fair.G > 0 else {}),
        })

    # ------------------------------------------------ the external-memory queue (issue 27)

    def set_spill(self, directory, long long budget_bytes, long long min_entries=65536, long long map_budget=0):
        """Let the queue spill to bucket files in ``directory`` once the search's memory (the
        queue's pages, its live nodes, the symmetry map) passes ``budget_bytes`` and the queue
        holds at least ``min_entries``; ``budget_bytes`` 0 turns spilling off. The files are
        unlinked as soon as they are opened (POSIX), so nothing is left whatever ends the process.
        ``map_budget`` (bytes, 0: none) stops the symmetry map from taking new classes once it
        holds that much: a child of a new class is then queued unchecked (sound, it only prunes
        less), so with the queue on disk the search's RAM stays bounded."""
        disk_configure(&self.disk, directory, budget_bytes, min_entries, map_budget)

    def spill(self, long long keep):
        """Spill the queue now until about ``keep`` entries stay in RAM (needs ``set_spill``'s
        directory); raises ``OSError`` when the files cannot be written (the queue is unchanged)."""
        cdef int rc
        if self.disk.dir.size() == 0:
            raise ValueError("set_spill() first: no spill directory")
        with nogil:
            rc = self._spill(<size_t>max(keep, 0))
        if rc != 0:
            self.disk.error = rc
            raise OSError(rc, self.spill_error)

    @property
    def spill_error(self):
        """Why the last spill or reload failed (``run`` returned SPILL_ERROR), else None."""
        return disk_error_text(&self.disk)

    @property
    def spilled_size(self):
        """Queue entries in bucket files now."""
        return self.disk.spilled_now

    @property
    def spill_bytes(self):
        """Bytes of the bucket files now."""
        return self.disk.bytes_now
