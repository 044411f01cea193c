# cython: language_level=3
"""The CORELS Rashomon set: every rule list whose objective is within a fixed threshold.

A branch-and-bound over prefixes like ``corels.Search``, but the goal is "every list with
``R(d) <= theta``", not "the optimum", so only bounds that compare a lower bound with ``theta`` are
applied (docs/maintainers/corels-proofs.md, "Which bounds stay", proves each): the hierarchical bound, the
lookahead with the equivalent points, the length bound and the cap, and the support bounds restated against
``theta`` and a lower bound ``floor`` on the optimum. No symmetry map, no dominance (Theorem 18):
they prune lists because another one is at least as good, and such lists may be members.

The queue holds two kinds of entries. A prefix's *model* entry stands for the rule list the
prefix defines (prefix + default), keyed by its objective; its *expand* entry stands for every
strict extension, with the lower bound ``b + b0 + lambda`` of all of them. With the ``lower_bound``
(or ``objective``) policy both are keyed by those bounds, so popping a model entry emits a member
in objective order (SORTD's idea) and, when a limit stops the run, the smallest key left bounds
every member not enumerated. The other policies (``bfs``, ``dfs``, ``curiosity``) only change the
order of the expansions: members are emitted as they are scored, the count is the same, and the
bound left is the smallest lower bound over the queue. Past ``queue_budget`` entries an ordered run goes on
depth first (``_go_depth_first``), so a large set costs time rather than all the memory.

The count is exact and never needs storing the members; the best ``max_models`` are kept (their
antecedents and objective) in C arrays. No Python object per node; ``run`` releases the GIL and
works for a slice, on one thread or several sharing the queue under one lock. The problem and
its scoring arithmetic (weighted count units, Theorem 18) are ``corels_problem.pxd``, the one code
``corels.Search`` runs too, so equal lists get bit-identical objectives.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint16_t, uint8_t
from libc.stdlib cimport malloc, free
from libc.math cimport INFINITY
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.unordered_set cimport unordered_set
from cython.operator cimport dereference as deref

from bitops cimport gw_popcount64, splitmix64
from monotonic_clock cimport now
from paged_heap cimport PagedHeap
from corels_counts cimport weighted_majority, weighted_sum
from corels_problem cimport (
    CorelsProblem, Theorem18, P_DFS, P_LOWER_BOUND, P_OBJECTIVE, MAX_CLASSES, SIM_WINDOW, LABELS, MINORITY,
    R_DONE, R_SLICE, R_STOPPED, R_NODE_LIMIT, R_OUT_OF_MEMORY, Tally, tally_merge, tally_counters, policy_code, problem_init, problem_counts,
    problem_root, problem_context, default_error, policy_key, theorem18_init, theorem18_setup, theorem18_prunes,
)
from corels_tailscan cimport (
    TailScan, tailscan_init, tailscan_build, tailscan_child, tailscan_key, gain_tops, one_rule_floor,
    tailscan_delta, tailscan_delta_clear, gain_orders, GAIN_HEAD, gw_ctz64,
)
from corels_tailtable cimport (
    TailTable, TT_BYTES, TT_MAX_K, TT_OPS_PER_EVALUATION, tail_table_start, tail_table_bytes, tail_table_ops,
    tail_costs, tail_raise,
)
from corels_threads cimport (
    gw_pool, gw_sync_new, gw_sync_free, gw_lock, gw_unlock, pool_run, pool_free, WorkerSlice, slice_start, slice_over, slice_wait,
    slice_notify,
)

cdef extern from *:
    """
    #include <cstdint>
    #include <mutex>
    #include <atomic>
    #include <memory>
    #include <vector>
    #include <unordered_map>
    #include <algorithm>
    /* Record an uncaptured set in the enumerator's map (no node yet); 0 when memory runs out
     * (then the map is left as it was: a record is indexed only once fully written). */
    static int gw_rs_store(std::vector<double>& errs, std::vector<int32_t>& nodes,
                           std::vector<int32_t>& reps, std::unordered_map<uint64_t, int64_t>& index,
                           uint64_t key, double err) {
        size_t n = errs.size();
        try {
            size_t room = 2 * n + 64;              /* geometric growth: amortised O(1) */
            if (errs.capacity() <= n) errs.reserve(room);
            if (nodes.capacity() <= n) nodes.reserve(room);
            if (reps.capacity() <= n) reps.reserve(room);
            errs.push_back(err);
            nodes.push_back(-1);
            reps.push_back(-1);
            index[key] = (int64_t)n;
        } catch (...) {
            errs.resize(n);
            nodes.resize(n);
            reps.resize(n);
            return 0;
        }
        return 1;
    }
    /* Make ``twin`` the first twin of ``rep``; ``next`` gets the previous first (-1: none).
     * 0 when memory runs out (nothing changed). */
    static int gw_rs_link(std::unordered_map<int32_t, int32_t>& heads, int32_t rep, int32_t twin,
                          int32_t* next) {
        try {
            auto it = heads.find(rep);
            *next = it == heads.end() ? -1 : it->second;
            heads[rep] = twin;
        } catch (...) {
            return 0;
        }
        return 1;
    }
    /* The tail table (TailCounter): a cell is (k rules, weighted errors e) with a multiplicity;
     * an entry is H(U) up to a budget and a length, keyed by a hash of U and verified by U. */
    struct gw_cell { double e; uint64_t n; int32_t k; };
    struct gw_tail_entry { std::vector<uint64_t> rows; double budget; int32_t klim; double seen; int32_t seen_klim;
                           std::vector<gw_cell> cells; };
    typedef std::unordered_map<uint64_t, gw_tail_entry> gw_tail_memo;
    static size_t gw_tail_entry_bytes(size_t W, size_t n) { return 96 + 8 * W + sizeof(gw_cell) * n; }
    /* The entry for U (NULL: none, or another set under the same hash). */
    static gw_tail_entry* gw_tail_find(gw_tail_memo& m, uint64_t key, const uint64_t* rows, int W) {
        auto it = m.find(key);
        if (it == m.end()) return NULL;
        for (int i = 0; i < W; i++) if (it->second.rows[i] != rows[i]) return NULL;
        return &it->second;
    }
    /* The entry for U, made (no cells yet: budget -1) when there is none; NULL on a hash
     * collision with another set or when memory runs out. ``made`` adds its bytes. */
    static gw_tail_entry* gw_tail_touch(gw_tail_memo& m, uint64_t key, const uint64_t* rows, int W, int64_t* made) {
        *made = 0;
        try {
            auto placed = m.try_emplace(key);      /* one lookup, found or made */
            gw_tail_entry& e = placed.first->second;
            if (!placed.second) {
                for (int i = 0; i < W; i++) if (e.rows[i] != rows[i]) return NULL;
                return &e;
            }
            e.rows.assign(rows, rows + W);
            e.budget = -1.0;
            e.klim = -1;
            e.seen = -1.0;
            e.seen_klim = -1;
            *made = (int64_t)gw_tail_entry_bytes(W, 0);
            return &e;
        } catch (...) {
            m.erase(key);
            return NULL;
        }
    }
    /* Store (or replace) H(U); returns the bytes it holds now minus before, or -1 when memory
     * runs out (the memo is left without the entry: recomputed when asked again). */
    static int64_t gw_tail_store(gw_tail_memo& m, uint64_t key, const uint64_t* rows, int W, double budget,
                                 int32_t klim, const gw_cell* cells, size_t n) {
        int64_t before = 0;
        try {
            auto placed = m.try_emplace(key);      /* one lookup, found or made */
            bool fresh = placed.second;
            gw_tail_entry& e = placed.first->second;
            if (!fresh) before = (int64_t)gw_tail_entry_bytes(W, e.cells.size());
            if (!fresh && e.budget >= budget && e.klim >= klim && e.rows.size() == (size_t)W
                    && std::equal(rows, rows + W, e.rows.begin()))
                return 0;  /* another thread stored as much or more meanwhile: keep it */
            if (fresh || e.rows.size() != (size_t)W || !std::equal(rows, rows + W, e.rows.begin())) {
                e.seen = -1.0;
                e.seen_klim = -1;
            }
            e.rows.assign(rows, rows + W);
            e.budget = budget;
            e.klim = klim;
            e.cells.assign(cells, cells + n);
            e.cells.shrink_to_fit();
        } catch (...) {
            m.erase(key);
            return -1 - before;
        }
        return (int64_t)gw_tail_entry_bytes(W, n) - before;
    }
    /* Drop about half the entries (those whose key has bit ``bit`` set); the bytes freed. */
    static int64_t gw_tail_evict(gw_tail_memo& m, int W, int bit) {
        int64_t freed = 0;
        for (auto it = m.begin(); it != m.end();) {
            if ((it->first >> bit) & 1) {
                freed += (int64_t)gw_tail_entry_bytes(W, it->second.cells.size());
                it = m.erase(it);
            } else ++it;
        }
        return freed;
    }
    /* The memo shared by the counters of one count, one per thread: shards by key, each with its
     * own lock and a share of the budget (a full shard drops half its entries), and the bytes
     * held over all shards. One counter alone uses a memo of one shard. */
    /* a cache line each (alignas): two threads locking neighbouring shards never write one line */
    struct alignas(64) gw_memo_shard { std::mutex mu; gw_tail_memo map; int64_t bytes = 0; int evict_bit = 0; };
    struct gw_shared_memo {
        std::vector<std::unique_ptr<gw_memo_shard>> shards;
        int64_t budget = 0, shard_budget = 0;
        alignas(64) std::atomic<int64_t> total{0};
        alignas(64) std::atomic<int64_t> peak{0};
    };
    static gw_shared_memo* gw_shared_new(int n, int64_t budget) {
        gw_shared_memo* m = new gw_shared_memo();
        for (int i = 0; i < n; i++) m->shards.emplace_back(new gw_memo_shard());
        m->budget = budget;
        m->shard_budget = budget / (n > 0 ? n : 1);
        return m;
    }
    static void gw_shared_free(gw_shared_memo* m) { delete m; }
    static gw_memo_shard* gw_shard_of(gw_shared_memo* m, uint64_t key) {
        return m->shards[(size_t)((key * 0x9E3779B97F4A7C15ULL) >> 40) % m->shards.size()].get();
    }
    static void gw_shard_lock(gw_memo_shard* s) { s->mu.lock(); }
    static void gw_shard_unlock(gw_memo_shard* s) { s->mu.unlock(); }
    static void gw_shared_add(gw_shared_memo* m, int64_t delta) {
        int64_t now_ = m->total.fetch_add(delta) + delta;
        int64_t p = m->peak.load();
        while (now_ > p && !m->peak.compare_exchange_weak(p, now_)) {}
    }
    static int64_t gw_shared_total(gw_shared_memo* m) { return m->total.load(); }
    static int64_t gw_shared_peak(gw_shared_memo* m) { return m->peak.load(); }
    static int64_t gw_shared_entries(gw_shared_memo* m) {
        int64_t n = 0;
        for (auto& s : m->shards) { std::lock_guard<std::mutex> g(s->mu); n += (int64_t)s->map.size(); }
        return n;
    }
    static void gw_shared_clear(gw_shared_memo* m) {
        for (auto& s : m->shards) {
            std::lock_guard<std::mutex> g(s->mu);
            gw_tail_memo().swap(s->map);
            m->total.fetch_sub(s->bytes);
            s->bytes = 0;
        }
    }
    /* Sort v[start:] by (k, e) and merge equal cells (multiplicities added); 0 on a uint64
     * overflow, -1 when memory runs out. */
    static int gw_cells_merge(std::vector<gw_cell>& v, size_t start) {
        std::sort(v.begin() + start, v.end(), [](const gw_cell& a, const gw_cell& b) {
            return a.k < b.k || (a.k == b.k && a.e < b.e);
        });
        size_t o = start;
        for (size_t i = start; i < v.size(); i++) {
            if (o > start && v[o - 1].k == v[i].k && v[o - 1].e == v[i].e) {
                if (__builtin_add_overflow(v[o - 1].n, v[i].n, &v[o - 1].n)) return 0;
            } else {
                v[o++] = v[i];
            }
        }
        v.resize(o);
        return 1;
    }
    static int gw_cells_push(std::vector<gw_cell>& v, double e, uint64_t n, int32_t k) {
        try { v.push_back(gw_cell{e, n, k}); } catch (...) { return 0; }
        return 1;
    }
    struct gw_tcand { double err; double rest; uint64_t vhash; int32_t ant; };
    static int gw_tcand_push(std::vector<gw_tcand>& v, gw_tcand c) {
        try { v.push_back(c); } catch (...) { return 0; }
        return 1;
    }
    static void gw_tcand_sort(std::vector<gw_tcand>& v) {
        std::sort(v.begin(), v.end(), [](const gw_tcand& a, const gw_tcand& b) {
            return a.rest > b.rest || (a.rest == b.rest && (a.vhash < b.vhash || (a.vhash == b.vhash && a.ant < b.ant)));
        });
    }
    static int gw_add_u64(uint64_t* a, uint64_t b) { return !__builtin_add_overflow(*a, b, a); }
    static int gw_mul_u64(uint64_t* a, uint64_t b) { return !__builtin_mul_overflow(*a, b, a); }
    """
    ctypedef struct gw_cell:
        double e
        uint64_t n
        int32_t k
    ctypedef struct gw_tail_entry:
        vector[uint64_t] rows
        double budget
        int32_t klim
        double seen
        int32_t seen_klim
        vector[gw_cell] cells
    cppclass gw_tail_memo:
        size_t size()
        void clear()
    gw_tail_entry* gw_tail_find(gw_tail_memo& m, uint64_t key, const uint64_t* rows, int W) noexcept nogil
    gw_tail_entry* gw_tail_touch(gw_tail_memo& m, uint64_t key, const uint64_t* rows, int W, int64_t* made) noexcept nogil
    int64_t gw_tail_store(gw_tail_memo& m, uint64_t key, const uint64_t* rows, int W, double budget,
                          int32_t klim, const gw_cell* cells, size_t n) noexcept nogil
    int64_t gw_tail_evict(gw_tail_memo& m, int W, int bit) noexcept nogil
    cppclass gw_memo_shard:
        gw_tail_memo map
        int64_t bytes
        int evict_bit
    cppclass gw_shared_memo:
        int64_t budget
        int64_t shard_budget
    gw_shared_memo* gw_shared_new(int n, int64_t budget) except +
    void gw_shared_free(gw_shared_memo* m) noexcept nogil
    gw_memo_shard* gw_shard_of(gw_shared_memo* m, uint64_t key) noexcept nogil
    void gw_shard_lock(gw_memo_shard* s) noexcept nogil
    void gw_shard_unlock(gw_memo_shard* s) noexcept nogil
    void gw_shared_add(gw_shared_memo* m, int64_t delta) noexcept nogil
    int64_t gw_shared_total(gw_shared_memo* m) noexcept nogil
    int64_t gw_shared_peak(gw_shared_memo* m) noexcept nogil
    int64_t gw_shared_entries(gw_shared_memo* m) noexcept nogil
    void gw_shared_clear(gw_shared_memo* m) noexcept nogil
    int gw_cells_merge(vector[gw_cell]& v, size_t start) noexcept nogil
    int gw_cells_push(vector[gw_cell]& v, double e, uint64_t n, int32_t k) noexcept nogil
    int gw_add_u64(uint64_t* a, uint64_t b) noexcept nogil
    int gw_mul_u64(uint64_t* a, uint64_t b) noexcept nogil
    ctypedef struct gw_tcand:
        double err
        double rest
        uint64_t vhash
        int32_t ant
    int gw_tcand_push(vector[gw_tcand]& v, gw_tcand c) noexcept nogil
    void gw_tcand_sort(vector[gw_tcand]& v) noexcept nogil
    int gw_rs_store(vector[double]& errs, vector[int32_t]& nodes, vector[int32_t]& reps,
                    unordered_map[uint64_t, int64_t]& index, uint64_t key, double err) noexcept nogil
    int gw_rs_link(unordered_map[int32_t, int32_t]& heads, int32_t rep, int32_t twin, int32_t* next) noexcept nogil

import numpy as np

cdef enum:
    K_MODEL = 0
    K_EXPAND = 1
    NODE_PAGE_BITS = 16
    NODE_PAGE_MASK = 65535
    MAX_NODE_PAGES = 32768

DONE = R_DONE
SLICE = R_SLICE
STOPPED = R_STOPPED
NODE_LIMIT = R_NODE_LIMIT
OUT_OF_MEMORY = R_OUT_OF_MEMORY


cdef struct RNode:          # 16 bytes; never freed (the count is taken over them at the end)
    double err              # weighted errors of the prefix rules (count units); for a twin, the
                            # node it mirrors and the next twin of that node (two int32)
    int32_t parent
    uint16_t ant
    uint8_t depth
    uint8_t flags           # F_OWN: its own list was emitted; F_TWIN: mirrors another node


cdef enum:
    F_OWN = 1
    F_TWIN = 2


cdef struct REntry:
    double key              # queue order (the policy's key)
    int64_t tie             # insertion order (negated for DFS)
    double lb               # lower bound (count units) on every list this entry stands for
    int32_t node
    int32_t kind            # K_MODEL: the prefix's own list; K_EXPAND: its strict extensions


cdef struct KEntry:         # a kept member in the bounded heap: the worst kept on top
    double key              # minus its objective
    int64_t tie
    int32_t slot


cdef struct Cand:           # a scored child, waiting for the lock
    double err
    double R
    double lbx
    double key
    uint64_t uhash          # hash of (rows it leaves uncaptured, length): the captured-set map key
    int32_t ant
    uint8_t member
    uint8_t expand


cdef struct RScratch:
    vector[uint64_t] u, v, f
    vector[uint16_t] path
    vector[uint8_t] in_prefix
    vector[Cand] cands
    vector[int64_t] acc
    int n_cands
    Tally tally         # counters of the scoring pass, added to the enumerator's under the lock
    Theorem18 sim       # Theorem 18's working memory (corels_problem.pxd)


cdef void _allowed(vector[uint8_t]& ok, ids, int M, str what) except *:
    """``ok[a]`` 1 for the antecedents in ``ids`` (every one when ``ids`` is None)."""
    ok.assign(max(M, 1), 1 if ids is None else 0)
    for r in (ids if ids is not None else ()):
        if not 0 <= int(r) < M:
            raise ValueError(f"{what} antecedent {r} is not in 0..{M - 1}")
        ok[int(r)] = 1


cdef void _worker_entry(void* ctx, int tid) noexcept nogil:
    (<Enumerator>ctx)._worker(tid)


cdef class Enumerator


cdef class SharedTailTable:
    """The search's tail table (corels_tailtable.pxd) over one enumerator's units, built once and
    then only read: by that enumerator, by the counters of its count and by the enumerators that
    list the same set again (``Enumerator.use_tail_table``). Its tails have as many rules as fit
    under the threshold from the root (at most ``TT_MAX_K``), within ``max_bytes``."""

    cdef TailTable t
    cdef int W, M, C
    cdef double total, lamW
    cdef public double seconds         # the build's

    def __init__(self, Enumerator enumerator, int threads=1, int64_t max_bytes=TT_BYTES):
        cdef Enumerator en = enumerator
        cdef gw_pool* pool = NULL
        cdef double t0 = now()
        self.W, self.M, self.C, self.total, self.lamW = en.pb.W, en.pb.M, en.pb.C, en.pb.total, en.pb.lamW
        self.t.n_blocks = 0
        if en.pb.lamW <= 0 or en.pb.M == 0:
            return
        try:
            # the margin: rounding never lifts a bound past a member (the floats are rounded down too)
            tail_table_start(&self.t, &en.pb, en.theta_prune, en.root_b0, max(max_bytes, 0),
                             1e-9 * max(1.0, en.pb.total), max(threads, 1), &pool)
        finally:
            pool_free(&pool)
        self.seconds = now() - t0

    cdef bint fits(self, const CorelsProblem* pb) noexcept:
        """Whether it was built over these units (the same data as the enumerator it was built for)."""
        return pb.W == self.W and pb.M == self.M and pb.C == self.C and pb.total == self.total \
            and pb.lamW == self.lamW

    @property
    def blocks(self) -> int:
        return self.t.n_blocks

    @property
    def rules(self) -> int:
        return self.t.K if self.t.n_blocks > 0 else 0

    @property
    def bytes(self) -> int:
        return tail_table_bytes(&self.t) if self.t.n_blocks > 0 else 0


cdef class Enumerator:
    """Enumerate every rule list with objective ``<= threshold`` (see the module docstring).

    Data are as ``corels.Search`` takes them (``engine.make_units``). ``threshold`` and ``floor``
    are objectives (fractions of the total weight): ``floor`` must be a lower bound on the optimum
    over the same class (the certified optimum, or a stopped search's lower bound; 0 disables the
    restated support bound). ``roots`` restricts the first rule to those antecedents (a subtree of
    the prefix space); ``include_empty`` counts the list with no rule; ``seconds`` restricts the
    second rule and ``include_short=False`` leaves out the one-rule lists (pieces of one first
    rule, split by its second: the counts add up). A list counts when its
    objective is at most ``threshold + tolerance``, ``tolerance = 1e-9 * max(1, threshold)``.
    """

    cdef CorelsProblem pb              # the data (corels_problem.pxd), as corels.Search holds them
    cdef int policy, max_len, n_threads, stride
    cdef bint ordered, do_support, do_lookahead, do_eqpts, do_similar, do_map, include_empty, collapse
    cdef bint do_tail_table           # the search's tail table raises bounds once built (or given)
    cdef SharedTailTable tails         # that table (None: not yet, or never)
    cdef const TailTable* tt           # its table, read by the workers (NULL: none)
    cdef int64_t tail_after            # build it once this many children are scored (-1: never)
    cdef bint running                  # a slice is running (its workers read the table)
    cdef double root_b0                # the empty prefix's equivalent-points bound (0 without them)
    # prefixes collapsed (twins): a node whose uncaptured rows, length and prefix error equal a
    # recorded node's is not expanded but mirrors it; set_node is that node per record, twin_head
    # its first twin
    cdef vector[int32_t] set_node
    cdef unordered_map[int32_t, int32_t] twin_head
    cdef vector[int32_t] kept_node
    # the captured-set map restated (against the threshold): per (uncaptured rows, length), the
    # smallest prefix error seen; the key is a hash of the rows, verified against a recorded node
    # with those rows (set_rep, recomputed from its path), so a collision never prunes
    cdef unordered_map[uint64_t, int64_t] set_index
    cdef vector[double] set_err
    cdef vector[int32_t] set_rep
    cdef double theta, theta_in, theta_prune, floorW
    cdef vector[uint8_t] root_ok
    cdef vector[uint8_t] second_ok     # the second rules allowed (a piece of a split first rule)
    cdef bint include_short            # count the one-rule lists (a split first rule's first piece)
    cdef unordered_set[uint32_t] skip_pairs   # (first << 16 | second): two-rule prefixes left out
    # state
    cdef RNode** pages
    cdef int n_pages
    cdef int64_t n_nodes
    cdef PagedHeap[REntry] queue
    cdef int64_t seq
    cdef vector[RScratch] scratch
    cdef vector[double] inflight       # per thread: the key of its expansion in flight (ordered)
    # members
    cdef public int64_t n_emitted
    cdef int64_t max_models
    cdef PagedHeap[KEntry] kept        # the kept members' slots, the worst on top
    cdef vector[uint16_t] kept_ants
    cdef vector[uint16_t] kept_len
    cdef vector[double] kept_obj
    cdef vector[int32_t] kept_log      # slots in the order they were kept (ordered mode)
    cdef double best_seen
    # threads and slices
    cdef WorkerSlice ws                # the workers' lock, pool, limits and rendezvous (corels_threads.pxd)
    cdef double start_time, oom_bound
    cdef bint out_of_memory, finished
    cdef Tally tally                   # the scoring's counters (corels_problem.pxd)
    cdef public int64_t n_inserted, n_pruned_map, max_queue
    cdef public int64_t n_twins, n_collapsed
    # best first while the queue holds at most queue_budget entries (-1: no budget), then depth
    # first on what is left: switched_at is the number of expansions then (-1: never switched)
    cdef int64_t queue_budget
    cdef public int64_t switched_at
    # stop once the kept members are provably the best max_models (a TailCounter counts the rest)
    cdef public bint stop_when_kept
    # after release_search: the queue, nodes and map are freed; what they answered is kept here
    cdef bint released
    cdef list released_members
    cdef int64_t released_count
    cdef double released_bound

    def __init__(self, const uint64_t[:, ::1] caps, const uint64_t[:, ::1] lplanes,
                 const int32_t[::1] lclass, const int32_t[::1] lshift,
                 const uint64_t[:, ::1] zplanes, const int32_t[::1] zclass,
                 const int32_t[::1] zshift, const double[::1] weights, int n_units,
                 double regularization, double threshold, double floor=0.0, str policy="lower_bound",
                 int max_prefix_length=255, int threads=1, int64_t max_models=1000,
                 roots=None, bint include_empty=True, bint support=True, bint lookahead=True,
                 bint equivalent_points=True, bint similar_support=True, bint symmetry_map=True,
                 bint collapse_orderings=True, int64_t queue_budget=-1, seconds=None,
                 bint include_short=True, skip_pairs=None, bint tail_table=True, int64_t tail_after=-1):
        cdef int k
        if threads < 1 or threads > 1024:
            raise ValueError(f"threads must be between 1 and 1024, got {threads}")
        self.policy = policy_code(policy)
        if not (threshold == threshold) or threshold < 0 or threshold == INFINITY:
            raise ValueError("the threshold must be a finite number >= 0")
        if max_models < 0:
            raise ValueError("max_models must be >= 0")
        problem_init(&self.pb, caps, lplanes, lclass, lshift, zplanes, zclass, zshift, weights, n_units,
                     regularization)
        self.n_threads = threads
        self.ordered = self.policy == P_LOWER_BOUND or self.policy == P_OBJECTIVE
        self.max_len = max(0, min(max_prefix_length, self.pb.M, 255))
        self.do_support = support
        self.do_lookahead = lookahead
        self.do_eqpts = equivalent_points and self.pb.Q > 0
        self.do_similar = similar_support
        self.do_map = symmetry_map
        self.do_tail_table = tail_table and regularization > 0
        self.tt = NULL
        # ski rental, as the search's (corels_tailtable.pxd): built once the children scored cost
        # about as much as the build, so a short enumeration never pays for it
        self.tail_after = -1 if not self.do_tail_table else (
            tail_after if tail_after >= 0 else tail_table_ops(&self.pb, TT_MAX_K) // TT_OPS_PER_EVALUATION)
        self.collapse = collapse_orderings and symmetry_map
        self.include_empty = include_empty
        self.queue_budget = queue_budget
        self.switched_at = -1
        self.theta = threshold
        self.max_models = max_models
        _allowed(self.root_ok, roots, self.pb.M, "root")
        self.include_short = include_short
        for a, b in (skip_pairs or ()):
            if not (0 <= int(a) < self.pb.M and 0 <= int(b) < self.pb.M):
                raise ValueError(f"pair ({a}, {b}) is not in 0..{self.pb.M - 1}")
            self.skip_pairs.insert((<uint32_t>int(a) << 16) | <uint32_t>int(b))
        _allowed(self.second_ok, seconds, self.pb.M, "second")
        self.scratch.resize(threads)
        for k in range(threads):
            self.scratch[k].u.assign(self.pb.W, 0)
            self.scratch[k].v.assign(self.pb.W, 0)
            self.scratch[k].f.assign(self.pb.W, 0)
            self.scratch[k].path.assign(256, 0)
            self.scratch[k].in_prefix.assign(max(self.pb.M, 1), 0)
            self.scratch[k].cands.resize(max(self.pb.M, 1))
            self.scratch[k].acc.assign(max(self.pb.P, self.pb.Q) + 1, 0)
            theorem18_init(&self.scratch[k].sim, self.pb.W)
        self.inflight.assign(threads, INFINITY)
        self.pages = <RNode**>malloc(MAX_NODE_PAGES * sizeof(RNode*))
        self.ws.sync = gw_sync_new()
        if self.pages == NULL or self.ws.sync == NULL or not self.queue.reserve(1 << 20):
            raise MemoryError("cannot allocate the enumeration's tables")
        self.n_pages = 0
        self._init()
        self.floorW = floor * self.pb.total

    def __dealloc__(self):
        cdef int i
        if self.pages != NULL:
            for i in range(self.n_pages):
                free(self.pages[i])
            free(self.pages)
            self.pages = NULL
        pool_free(&self.ws.pool)
        if self.ws.sync != NULL:
            gw_sync_free(self.ws.sync)
        self.ws.sync = NULL

    # ---------------------------------------------------------------------------- helpers

    cdef inline RNode* _node(self, int32_t i) noexcept nogil:
        return &self.pages[i >> NODE_PAGE_BITS][i & NODE_PAGE_MASK]

    cdef int32_t _new_node(self, int32_t parent, uint16_t ant, int depth, double err) noexcept nogil:
        """A node (under the lock); -1 when out of memory."""
        cdef int32_t i
        if (self.n_nodes >> NODE_PAGE_BITS) >= self.n_pages:
            if self.n_pages >= MAX_NODE_PAGES:
                return -1
            self.pages[self.n_pages] = <RNode*>malloc((1 << NODE_PAGE_BITS) * sizeof(RNode))
            if self.pages[self.n_pages] == NULL:
                return -1
            self.n_pages += 1
        i = <int32_t>self.n_nodes
        self.n_nodes += 1
        self._node(i).err = err
        self._node(i).parent = parent
        self._node(i).ant = ant
        self._node(i).depth = <uint8_t>depth
        self._node(i).flags = 0
        return i

    cdef bint _push(self, double key, double lb, int32_t node, int kind) noexcept nogil:
        cdef REntry e
        if not self.queue.reserve_one():
            return False
        e.key = key
        e.lb = lb
        e.node = node
        e.kind = kind
        self.seq += 1
        e.tie = -self.seq if self.policy == P_DFS else self.seq
        self.queue.push_reserved(e)
        self.n_inserted += 1
        if <int64_t>self.queue.size() > self.max_queue:
            self.max_queue = self.queue.size()
        return True

    cdef void _emit(self, double R, const uint16_t* path, int length, int32_t node) noexcept nogil:
        """Count a member, the list of ``node`` (under the lock), and keep it if it is among the
        best ``max_models``."""
        cdef int32_t slot
        cdef int k
        cdef KEntry ke
        self.n_emitted += 1
        self._node(node).flags |= F_OWN
        if R < self.best_seen:
            self.best_seen = R
        if self.max_models == 0:
            return
        if <int64_t>self.kept.size() < self.max_models:
            slot = <int32_t>self.kept.size()
            self.kept_obj.push_back(R)
            self.kept_len.push_back(length)
            self.kept_node.push_back(node)
            self.kept_ants.resize(<size_t>(slot + 1) * self.stride)
            if self.ordered:
                self.kept_log.push_back(slot)
        elif R < -self.kept.top().key:
            slot = self.kept.top().slot
            self.kept.pop()
            self.kept_obj[slot] = R
            self.kept_len[slot] = length
            self.kept_node[slot] = node
        else:
            return
        for k in range(length):
            self.kept_ants[<size_t>slot * self.stride + k] = path[k]
        ke.key = -R
        ke.tie = -slot       # among equal objectives the latest kept is evicted first
        ke.slot = slot
        if not self.kept.push(ke):
            self.out_of_memory = True

    cdef void _init(self):
        cdef double b0, R0, lbx
        cdef int32_t root
        cdef vector[int64_t] accv
        accv.assign(max(self.pb.P, self.pb.Q) + 1, 0)
        b0 = problem_root(&self.pb, self.do_eqpts, &R0, &accv[0])
        self.root_b0 = b0
        self.theta_in = self.theta + 1e-9 * max(1.0, self.theta)
        # pruning compares a bound in count units with the threshold: a margin above the
        # inclusion tolerance, so rounding in the conversion never prunes a member
        self.theta_prune = (self.theta + 2e-9 * max(1.0, self.theta)) * self.pb.total
        self.stride = self.max_len
        if self.pb.lamW > 0:
            self.stride = min(self.max_len, <int>(self.theta_prune / self.pb.lamW) + 1)
        self.stride = max(self.stride, 1)
        self.best_seen = INFINITY
        self.oom_bound = INFINITY
        self.start_time = now()
        root = self._new_node(-1, 0, 0, 0.0)
        if root < 0:
            raise MemoryError("cannot allocate the enumeration's nodes")
        if self.include_empty and (R0 / self.pb.total if self.pb.total > 0 else 0.0) <= self.theta_in:
            if self.ordered:
                if not self._push(R0, R0, root, K_MODEL):
                    raise MemoryError("cannot allocate the enumeration's queue")
            else:
                self._emit(R0 / self.pb.total if self.pb.total > 0 else 0.0, NULL, 0, root)
        if self._expandable(0.0, b0, 0):
            lbx = b0 + (self.pb.lamW if self.do_lookahead else 0.0)
            if not self._push(self._key(0, 0.0, lbx, 0.0), lbx, root, K_EXPAND):
                raise MemoryError("cannot allocate the enumeration's queue")
        self.finished = self.queue.size() == 0

    cdef inline bint _expandable(self, double b, double b0, int depth) noexcept nogil:
        """Can a strict extension of a prefix (bound ``b``, minority ``b0``, length ``depth``) be a
        member? Lookahead with the equivalent points, the length bound and the cap."""
        if depth >= self.max_len:
            return False
        if b + b0 + (self.pb.lamW if self.do_lookahead else 0.0) > self.theta_prune:
            return False
        return (depth + 1) * self.pb.lamW <= self.theta_prune

    cdef inline int _child_expands(self, double b, double* b0, int depth, const uint64_t* u,
                                   const uint64_t* capv) noexcept nogil:
        """Whether a child (bound ``b``, minority ``b0``, length ``depth``, leaving ``u & ~capv``) is
        expanded: 0 yes; 1 no, by ``_expandable``; 2 no, once the tail table raised ``b0`` by what
        every tail of what it leaves costs (``b0`` keeps the raise: its queue bound)."""
        if not self._expandable(b, b0[0], depth):
            return 1
        if self.tt != NULL:
            b0[0] += tail_raise(self.tt, u, capv, b0[0])
            if not self._expandable(b, b0[0], depth):
                return 2
        return 0

    cdef inline bint _beyond_tails(self, double b, const uint64_t* u, double b0) noexcept nogil:
        """Whether every list through a child of a prefix (bound ``b``, leaving ``u``, minority ``b0``)
        is beyond the threshold by the tail table: each is the prefix and a tail of one rule or more.
        It drops a node queued before the table was built, whose own bound did not have it."""
        cdef double t1, t2
        tail_costs(self.tt, u, NULL, b0, &t1, &t2)
        return b + t1 - self.tt.margin > self.theta_prune

    cdef inline double _key(self, int depth, double b, double lbx, double fw) noexcept nogil:
        """The queue key of an expand entry under the policy (model entries: their objective);
        both ordered policies key it by its bound."""
        return policy_key(P_LOWER_BOUND if self.ordered else self.policy, depth, lbx, lbx, b, self.pb.total, fw)

    cdef int _score(self, int32_t ni, RScratch* sc) noexcept nogil:
        """Score every child of node ``ni`` into ``sc.cands`` (no lock: writes only the scratch)."""
        cdef RNode* nd = self._node(ni)
        cdef int depth = nd.depth, k, i, s, label, n_cands = 0
        cdef int32_t cur = ni
        cdef double perr = nd.err
        cdef double ucnt[MAX_CLASSES]
        cdef double uz[MAX_CLASSES]
        cdef double cnt[MAX_CLASSES]
        cdef double zc[MAX_CLASSES]
        cdef double wv, correct, err, b, R, fw, b0, lbx, wuz = 0
        cdef uint64_t* u = &sc.u[0]
        cdef uint64_t* v = &sc.v[0]
        cdef const uint64_t* capv
        cdef int64_t* acc = &sc.acc[0]
        cdef uint16_t* path = &sc.path[0]
        cdef uint8_t* in_prefix = &sc.in_prefix[0]
        cdef bint any_bits, member, expand, dead
        cdef Cand* cand
        cdef int c, c2, n_sim, why
        cdef uint64_t h
        k = depth
        sc.sim.perr[0] = 0.0       # the errors of the first k rules, for Theorem 18
        while k > 0:
            sc.sim.perr[k] = self._node(cur).err
            k -= 1
            path[k] = self._node(cur).ant
            cur = self._node(cur).parent
        problem_context(&self.pb, path, depth, u, in_prefix)
        problem_counts(&self.pb, u, False, ucnt, acc)
        if self.do_eqpts:
            problem_counts(&self.pb, u, True, uz, acc)
            wuz = weighted_sum(self.pb.C, self.pb.weights, uz)
        dead = self.tt != NULL and self._beyond_tails(perr + depth * self.pb.lamW, u, wuz)
        sc.tally.tail += dead
        for s in range(0 if dead else self.pb.M):
            if in_prefix[s] or (depth == 0 and not self.root_ok[s]) or (depth == 1 and not self.second_ok[s]):
                continue
            if depth == 1 and self.skip_pairs.size() > 0 and self.skip_pairs.count((<uint32_t>path[0] << 16) | <uint32_t>s):
                continue
            sc.tally.evaluated += 1
            capv = &self.pb.caps[<size_t>s * self.pb.W]
            any_bits = False
            for i in range(self.pb.W):
                v[i] = u[i] & capv[i]
                if v[i] != 0:
                    any_bits = True
            if not any_bits:                       # captures nothing new: not a separate list
                sc.tally.dead += 1
                continue
            problem_counts(&self.pb, v, False, cnt, acc)
            wv = weighted_majority(self.pb.C, self.pb.weights, cnt, &correct, &label)
            # Theorems 10/11 restated: dropping this rule from any list through it gives a list of
            # objective >= floor, at most correct - lambda*W better
            if self.do_support and self.floorW + self.pb.lamW - correct > self.theta_prune:
                sc.tally.support += 1
                continue
            err = perr + (wv - correct)
            b = err + (depth + 1) * self.pb.lamW
            if b > self.theta_prune:                # Theorem 1 against the threshold
                sc.tally.bound += 1
                continue
            R = b + default_error(&self.pb, ucnt, cnt, &fw)
            member = R / self.pb.total <= self.theta_in and (depth > 0 or self.include_short)
            b0 = 0
            if self.do_eqpts:                         # Theorem 20
                problem_counts(&self.pb, v, True, zc, acc)
                for k in range(self.pb.C):
                    zc[k] = uz[k] - zc[k]
                b0 = weighted_sum(self.pb.C, self.pb.weights, zc)
                # the same on units (two classes): it is right on at most the minorities of the
                # units it takes (wuz - b0) more than a tail labelling them the other way
                if self.do_support and self.pb.C == 2 and \
                        self.floorW + self.pb.lamW - correct + (wuz - b0) > self.theta_prune:
                    sc.tally.support += 1
                    continue
            why = self._child_expands(b, &b0, depth + 1, u, capv)
            expand = why == 0
            sc.tally.lookahead += why == 1
            sc.tally.tail += why == 2
            if not expand and not member:
                continue
            lbx = b + b0 + (self.pb.lamW if self.do_lookahead else 0.0)
            cand = &sc.cands[n_cands]
            n_cands += 1
            cand.ant = s
            cand.err = err
            cand.R = R
            cand.lbx = lbx
            cand.key = self._key(depth + 1, b, lbx, fw)
            cand.member = member
            cand.expand = expand
            cand.uhash = 0
            if self.do_map:
                h = (<uint64_t>0x9E3779B9) * (<uint64_t>(depth + 2))
                for i in range(self.pb.W):
                    h = splitmix64(h ^ (u[i] & ~capv[i]))
                cand.uhash = h
        for k in range(depth):
            in_prefix[path[k]] = 0
        if self.do_similar and depth >= 1 and n_cands > 0:   # Theorem 18 against the threshold
            n_sim = theorem18_setup(&self.pb, &sc.sim, path, depth, acc)
            c2 = 0
            for c in range(n_cands):
                # against the threshold: every list through the child scores at least
                # floor + b(D) - b(d) - Omega (docs/maintainers/corels-proofs.md, "Which bounds stay, and why")
                if theorem18_prunes(&self.pb, &sc.sim, path, sc.cands[c].ant, depth, n_sim,
                                    sc.cands[c].err - perr, self.theta_prune - self.floorW, acc):
                    sc.tally.similar += 1
                else:
                    sc.cands[c2] = sc.cands[c]
                    c2 += 1
            n_cands = c2
        sc.n_cands = n_cands
        return 0

    cdef bint _same_uncaptured(self, int32_t rep, int n, int ant, RScratch* sc) noexcept nogil:
        """Does node ``rep`` have length ``n`` and leave uncaptured what the child ``ant`` of the
        node being expanded leaves (``sc.u`` without ``ant``'s rows)? Recomputed from its path."""
        cdef uint64_t* y = &sc.f[0]
        cdef const uint64_t* cv
        cdef int32_t cur = rep
        cdef int i
        if rep < 0 or self._node(rep).depth != n:
            return False
        for i in range(self.pb.W):
            y[i] = self.pb.mask[i]
        while cur >= 0 and self._node(cur).depth > 0:
            cv = &self.pb.caps[<size_t>self._node(cur).ant * self.pb.W]
            for i in range(self.pb.W):
                y[i] &= ~cv[i]
            cur = self._node(cur).parent
        cv = &self.pb.caps[<size_t>ant * self.pb.W]
        for i in range(self.pb.W):
            if y[i] != (sc.u[i] & ~cv[i]):
                return False
        return True

    cdef int _map_check(self, int depth, int ant, double err, uint64_t key, RScratch* sc,
                        int64_t* rec_out) noexcept nogil:
        """The captured-set map against the threshold (under the lock): D = the node being
        expanded + ``ant``, of length ``depth + 1`` and prefix error ``err``. A tail is valid after
        a prefix iff each of its rules captures a row the prefix leaves (the prefix's own rules
        capture none), so every prefix D' of the same length leaving the same rows has the same
        valid tails, and R(D+T) = R(D'+T) + err(D) - err(D') >= floor + err(D) - err(D') for each.
        True when that exceeds the threshold for the best such D' seen so far; otherwise D's
        error is recorded when it is the best of its rows. Any D' seen is a real prefix, so the
        test is valid whatever the order of the search (docs/maintainers/corels-proofs.md).

        Returns 1 (excluded), 2 (a twin: the same rows, length and error as the recorded node
        ``set_node[rec_out]``, whose lists it mirrors one for one) or 0; with 0, ``rec_out`` is the
        record whose node the caller sets to D's (-1: none to set)."""
        cdef int64_t rec
        cdef unordered_map[uint64_t, int64_t].iterator it
        rec_out[0] = -1
        it = self.set_index.find(key)
        if it != self.set_index.end():
            rec = deref(it).second
            if not self._same_uncaptured(self.set_rep[rec], depth + 1, ant, sc):
                return 0                           # a hash collision (or no node): never prune on it
            if self.floorW + err - self.set_err[rec] > self.theta_prune:
                return 1
            if err == self.set_err[rec]:
                self.n_twins += 1
                if self.set_node[rec] >= 0:
                    rec_out[0] = rec
                    return 2
                return 0
            if err < self.set_err[rec]:
                self.set_err[rec] = err
                rec_out[0] = rec
                self.set_node[rec] = -1
            return 0
        if gw_rs_store(self.set_err, self.set_node, self.set_rep, self.set_index, key, err):
            rec_out[0] = <int64_t>self.set_err.size() - 1
        return 0

    cdef void _admit(self, int32_t ni, RScratch* sc) noexcept nogil:
        """Second half of an expansion (under the lock): members and queue entries."""
        cdef int depth = self._node(ni).depth, c
        cdef Cand* cand
        cdef int32_t child, nxt
        cdef int verdict
        cdef int64_t rec = -1
        cdef uint16_t* path = &sc.path[0]
        cdef int32_t* link
        for c in range(sc.n_cands):
            cand = &sc.cands[c]
            if self.out_of_memory:
                self.oom_bound = min(self.oom_bound, cand.R if cand.member else cand.lbx)
                continue
            verdict = 0
            rec = -1
            if self.do_map:
                verdict = self._map_check(depth, cand.ant, cand.err, cand.uhash, sc, &rec)
                if verdict == 1:
                    self.n_pruned_map += 1
                    continue
            child = self._new_node(ni, cand.ant, depth + 1, cand.err)
            if child < 0:
                self.out_of_memory = True
                self.oom_bound = min(self.oom_bound, cand.R if cand.member else cand.lbx)
                continue
            if verdict == 2 and self.collapse:
                # a twin: same rows left, same objective for every tail as the recorded node, so
                # its lists are that node's, one for one; counted at the end, never expanded
                if gw_rs_link(self.twin_head, self.set_node[rec], child, &nxt):
                    link = <int32_t*>&self._node(child).err
                    link[0] = self.set_node[rec]
                    link[1] = nxt
                    self._node(child).flags = F_TWIN
                    self.n_collapsed += 1
                    continue
            if rec >= 0 and verdict == 0:
                self.set_node[rec] = child
                if self.set_rep[rec] < 0:
                    self.set_rep[rec] = child
            if cand.member and not self.ordered:
                path[depth] = cand.ant
                self._emit(cand.R / self.pb.total, path, depth + 1, child)
            if (cand.member and self.ordered) or cand.expand:
                if cand.member and self.ordered and not self._push(cand.R, cand.R, child, K_MODEL):
                    self.out_of_memory = True
                    self.oom_bound = min(self.oom_bound, cand.R)
                    continue
                if cand.expand and not self._push(cand.key, cand.lbx, child, K_EXPAND):
                    self.out_of_memory = True
                    self.oom_bound = min(self.oom_bound, cand.lbx)
        tally_merge(&self.tally, &sc.tally)
        self.tally.expanded += 1

    cdef void _emit_node(self, int32_t ni, double R, RScratch* sc) noexcept nogil:
        """Emit the list of node ``ni`` (a popped model entry), under the lock."""
        cdef int depth = self._node(ni).depth, k = depth
        cdef int32_t cur = ni
        while k > 0:
            k -= 1
            sc.path[k] = self._node(cur).ant
            cur = self._node(cur).parent
        self._emit(R / self.pb.total if self.pb.total > 0 else 0.0, &sc.path[0], depth, ni)

    cdef double _others_inflight(self, int tid) noexcept nogil:
        cdef double lo = INFINITY
        cdef int t
        for t in range(self.n_threads):
            if t != tid and self.inflight[t] < lo:
                lo = self.inflight[t]
        return lo

    cdef void _worker(self, int tid) noexcept nogil:
        """One thread's loop for a slice: take an entry under the lock, score without it, admit
        under it. In ordered mode a model entry is emitted only when no expansion in flight has a
        smaller key (its children could be better), so members come out in objective order."""
        cdef RScratch* sc = &self.scratch[tid]
        cdef REntry e
        gw_lock(self.ws.sync)
        while not self.ws.halt:
            if slice_over(&self.ws, self.tally.evaluated, self.out_of_memory):
                self.ws.halt = True
                break
            if self.stop_when_kept and self._kept_proven(tid):
                self.ws.halt = True
                break
            if self.queue.size() == 0:
                if self.ws.n_inflight == 0:
                    self.ws.halt = True
                    self.finished = True
                    break
                slice_wait(&self.ws)
                continue
            if self.ordered and self.queue_budget >= 0 and <int64_t>self.queue.size() > self.queue_budget:
                if self.ws.n_inflight > 0:         # switch once the expansions in flight are in
                    slice_wait(&self.ws)
                    continue
                self._go_depth_first()
            e = self.queue.top()
            if e.kind == K_MODEL:
                if self.ws.n_inflight > 0 and e.key > self._others_inflight(tid):
                    slice_wait(&self.ws)
                    continue
                self.queue.pop()
                self._emit_node(e.node, e.lb, sc)  # lb: its objective, whatever the key
                continue
            self.queue.pop()
            self.inflight[tid] = e.key if self.ordered else INFINITY
            self.ws.n_inflight += 1
            gw_unlock(self.ws.sync)
            self._score(e.node, sc)
            gw_lock(self.ws.sync)
            self._admit(e.node, sc)
            self.inflight[tid] = INFINITY
            self.ws.n_inflight -= 1
            slice_notify(&self.ws)
        slice_notify(&self.ws)
        gw_unlock(self.ws.sync)

    cdef bint _kept_proven(self, int tid) noexcept nogil:
        """Ordered mode (under the lock): are the kept members the best ``max_models``? True when
        the heap is full and nothing queued or in flight can hold a list better than its worst."""
        cdef double lo = self.oom_bound
        if self.max_models == 0:
            return True
        if not self.ordered or <int64_t>self.kept.size() < self.max_models:
            return False
        if self.queue.size() > 0 and self.queue.top().key < lo:
            lo = self.queue.top().key
        lo = min(lo, self._others_inflight(tid))
        if lo == INFINITY:
            return False                           # nothing left: the run finishes on its own
        return (lo / self.pb.total if self.pb.total > 0 else 0.0) >= -self.kept.top().key

    cdef void _go_depth_first(self) noexcept nogil:
        """The queue outgrew its budget (under the lock, nothing in flight): go on depth first.
        The queued members come out first (they are members: emitting them costs nothing), then
        the deepest prefix, latest first; from here members are emitted as they are scored, the
        bounded heap keeps the best ``max_models`` whatever the order, and the bound on the rest
        is the smallest lower bound over the queue, as with ``dfs`` from the start."""
        cdef size_t i
        cdef REntry* e
        self.ordered = False
        self.policy = P_DFS
        self.switched_at = self.tally.expanded
        for i in range(self.queue.size()):
            e = &self.queue.at(i)
            if e.kind == K_MODEL:
                e.key = -INFINITY
            else:
                e.key = -<double>self._node(e.node).depth
            e.tie = -e.tie
        self.queue.heapify()

    # ---------------------------------------------------------------------------- Python API

    def run(self, double seconds, const uint8_t[::1] stop_flag, int64_t max_evaluations=-1):
        """Enumerate for about ``seconds`` of wall time; returns DONE (everything enumerated),
        SLICE, STOPPED (the stop flag), NODE_LIMIT or OUT_OF_MEMORY."""
        if self.released:
            raise RuntimeError("this enumerator's search was released (release_search)")
        if self.finished:
            return R_DONE
        cdef const uint8_t* stop = &stop_flag[0]
        cdef int64_t cap = max_evaluations
        if self.tails is None and self.tail_after >= 0:
            if self.tally.evaluated >= self.tail_after:
                self.build_tail_table()
            elif cap < 0 or cap > self.tail_after:
                cap = self.tail_after          # the slice ends with the expansion that reaches it
        self.running = True
        with nogil:
            slice_start(&self.ws, seconds, stop, cap)
            if self.n_threads > 1:
                pool_run(&self.ws.pool, self.n_threads, _worker_entry, <void*>self)
            else:
                self._worker(0)
        self.running = False
        if cap != max_evaluations and self.tally.evaluated >= cap and not self.finished and not self.out_of_memory \
                and stop_flag[0] == 0:
            self.build_tail_table()
            if max_evaluations < 0 or self.tally.evaluated < max_evaluations:
                return R_SLICE                 # else NODE_LIMIT below, as without the table
        if self.finished and not self.out_of_memory:
            return R_DONE
        if self.out_of_memory:
            return R_OUT_OF_MEMORY
        if stop_flag[0] != 0:
            return R_STOPPED
        if max_evaluations >= 0 and self.tally.evaluated >= max_evaluations:
            return R_NODE_LIMIT
        return R_SLICE

    @property
    def n_evaluated(self):
        """Children scored so far."""
        return self.tally.evaluated

    def lower_bound(self):
        """A lower bound (objective) on every member not enumerated yet: the smallest bound over
        the queue and whatever an allocation failure dropped; ``inf`` when nothing is left."""
        cdef double lo = self.oom_bound
        cdef size_t i
        if self.released:
            return self.released_bound
        if self.ordered and self.queue.size() > 0:
            lo = min(lo, self.queue.top().key)
        else:
            for i in range(self.queue.size()):
                if self.queue.at(i).lb < lo:
                    lo = self.queue.at(i).lb
        if lo == INFINITY or self.pb.total <= 0:
            return lo if lo == INFINITY else 0.0
        return lo / self.pb.total

    def build_tail_table(self, threads=None) -> bool:
        """Build this enumerator's tail table now (on ``threads`` threads, its own by default), unless
        it has one or it is switched off; from the next slice on every child's bound is raised by
        it. Whether it has one."""
        if self.tails is None and self.do_tail_table:
            self.use_tail_table(SharedTailTable(self, self.n_threads if threads is None else int(threads)))
        self.tail_after = -1                   # decided: not again
        return self.tt != NULL

    def use_tail_table(self, SharedTailTable table) -> bool:
        """Read ``table`` (built for an enumerator of the same data: another threshold is fine, its
        tails bound every list) from the next slice on, in place of building one; between slices
        only. Nothing when the table is switched off here or has no blocks. Whether it is read."""
        if not table.fits(&self.pb):
            raise ValueError("this tail table was built over other data")
        if self.running:
            raise RuntimeError("a tail table is given between slices, not while the enumerator runs")
        if self.do_tail_table and table.t.n_blocks > 0:
            self.tails = table
            self.tt = &table.t
        self.tail_after = -1
        return self.tt != NULL

    @property
    def tail_table(self):
        """The tail table this enumerator reads (``SharedTailTable``), or None."""
        return self.tails if self.tt != NULL else None

    def set_floor(self, double floor):
        """The lower bound on the optimum the restated support bound uses (objective units)."""
        self.floorW = floor * self.pb.total

    @property
    def complete(self):
        return self.finished and not self.out_of_memory

    @property
    def kept_worst(self):
        """The worst kept member's objective once ``max_models`` are kept (``inf`` before): with
        ``lower_bound()`` at least this, the kept ones are the best ``max_models``."""
        if self.max_models == 0:
            return -INFINITY
        if <int64_t>self.kept.size() < self.max_models:
            return INFINITY
        return -self.kept.top().key

    @property
    def kept_best(self):
        """The best kept member's objective (``inf`` while none is kept), without reading the kept
        lists: the best list emitted is never pushed out (only the worst kept is, and only for a
        better one), so it is ``best_seen``. ``kept_members()[0]``'s objective, in O(1)."""
        if self.released:
            return self.released_members[0][0] if self.released_members else INFINITY
        if self.max_models == 0 or self.kept.size() == 0:
            return INFINITY
        return self.best_seen

    @property
    def ordered_order(self):
        return bool(self.ordered)

    @property
    def queue_size(self):
        return self.queue.size()

    @property
    def threads(self):
        return self.n_threads

    @property
    def elapsed(self):
        return now() - self.start_time

    def memory_bytes(self):
        return ((self.tails.bytes if self.tt != NULL else 0)
                + self.n_pages * (1 << NODE_PAGE_BITS) * sizeof(RNode) + self.queue.bytes()
                + self.set_err.capacity() * 16 + self.set_index.size() * 32
                + self.kept_ants.capacity() * 2 + self.kept_obj.capacity() * 8)

    @property
    def count(self):
        """Members enumerated: those emitted and, for each collapsed ordering, the lists of the
        node it mirrors (exact once complete; a stopped run's count covers what it reached)."""
        cdef int64_t total
        if self.released:
            return self.released_count
        with nogil:
            total = self._total_count()
        return total

    def release_search(self):
        """Free the queue, the nodes and the map once the listing is over (a ``TailCounter``
        counts the rest from the data, which stays): the kept members, the count and the bound
        are answered as they were. The enumerator cannot run again. At COMPAS epsilon 0.05 the
        listing held 2.1 GB beside the table."""
        cdef int i
        if self.released:
            return
        self.released_members = self.kept_members()
        self.released_count = self._total_count()
        self.released_bound = self.lower_bound()
        self.released = True
        if self.pages != NULL:
            for i in range(self.n_pages):
                free(self.pages[i])
            free(self.pages)
            self.pages = NULL
        self.n_pages = 0                   # n_nodes stays: the stats report how many there were
        self.queue.clear()
        unordered_map[uint64_t, int64_t]().swap(self.set_index)
        vector[double]().swap(self.set_err)
        vector[int32_t]().swap(self.set_rep)
        vector[int32_t]().swap(self.set_node)
        unordered_map[int32_t, int32_t]().swap(self.twin_head)

    cdef int64_t _total_count(self) noexcept nogil:
        """The lists through the root (see ``_settle``)."""
        cdef vector[int64_t] N
        if self.n_collapsed == 0:
            return self.n_emitted
        self._settle(N, 0)
        return N[0]

    cdef void _settle(self, vector[int64_t]& N, int down_to) noexcept nogil:
        """``N[i]``, the lists through node ``i``, for every node at depth ``>= down_to``:
        N(node) = its own list (if emitted) + N(children), N(twin) = N(the node it mirrors);
        a twin and its node have the same depth and every child is one deeper, so one pass per
        depth, deepest first, settles every node before it is read."""
        cdef int64_t i, n = self.n_nodes
        cdef int d, maxd = 0
        cdef RNode* nd
        N.assign(n, 0)
        for i in range(n):
            nd = self._node(<int32_t>i)
            if nd.flags & F_OWN:
                N[i] = 1
            if nd.depth > maxd:
                maxd = nd.depth
        for d in range(maxd, down_to - 1, -1):
            for i in range(n):
                nd = self._node(<int32_t>i)
                if nd.depth == d and nd.flags & F_TWIN:
                    N[i] = N[(<int32_t*>&nd.err)[0]]
            if d == down_to:
                break
            for i in range(n):
                nd = self._node(<int32_t>i)
                if nd.depth == d and nd.parent >= 0:
                    N[nd.parent] += N[i]

    def counts_through(self, pairs):
        """For each two-rule prefix ``(a, b)`` of ``pairs``: the lists through it this enumerator
        counted (its own and its tails', with the orderings collapsed onto them), 0 when it is not
        a node (pruned: no member starts with it). The driver adds these for the prefixes another
        subtree left out (``skip_pairs``) because they mirror these (docs/maintainers/corels-proofs.md)."""
        cdef vector[int64_t] N
        cdef int64_t i, n = self.n_nodes
        cdef RNode* nd
        if self.released:
            raise RuntimeError("this enumerator's search was released (release_search)")
        self._settle(N, 2)
        found = {}
        for i in range(n):
            nd = self._node(<int32_t>i)
            if nd.depth == 2:
                found[(int(self._node(nd.parent).ant), int(nd.ant))] = N[i]
        return [int(found.get((int(a), int(b)), 0)) for a, b in pairs]

    cdef list _path(self, int32_t node):
        cdef list out = []
        while node >= 0 and self._node(node).depth > 0:
            out.append(self._node(node).ant)
            node = self._node(node).parent
        out.reverse()
        return out

    cdef void _variants(self, int32_t node, list suffix, list out, Py_ssize_t cap):
        """Every list that mirrors ``node``'s path followed by ``suffix``: that list, and for each
        node A on the path with collapsed orderings T, T's variants followed by the rest of the
        path after A (a twin is as deep as A; its ancestors are shallower, so this ends)."""
        cdef list path = self._path(node)
        cdef int32_t a = node, t
        cdef int k
        cdef unordered_map[int32_t, int32_t].iterator it
        out.append(tuple(path + suffix))
        k = len(path)
        while a >= 0 and len(out) < cap:
            it = self.twin_head.find(a)
            t = deref(it).second if it != self.twin_head.end() else -1
            while t >= 0 and len(out) < cap:
                self._variants(t, path[k:] + suffix, out, cap)
                t = (<int32_t*>&self._node(t).err)[1]
            a = self._node(a).parent
            k -= 1

    def kept_members(self):
        """The kept members, best first: a list of (objective, antecedent tuple), each emitted
        list followed by the orderings collapsed onto it (the same objective), at most
        ``max_models``."""
        out = []
        cdef size_t slot
        cdef int k
        cdef list lists
        if self.released:
            return list(self.released_members)
        order = sorted(range(self.kept_obj.size()), key=lambda i: self.kept_obj[i])
        for slot in order:
            if self.n_collapsed == 0:
                lists = [tuple(self.kept_ants[slot * self.stride + k] for k in range(self.kept_len[slot]))]
            else:
                lists = []
                self._variants(self.kept_node[slot], [], lists, self.max_models - len(out))
            out.extend((self.kept_obj[slot], p) for p in lists)
            if len(out) >= self.max_models:
                break
        return out[: self.max_models]

    def kept_since(self, Py_ssize_t start):
        """Ordered mode: the members kept from the ``start``-th on, in the order they were
        emitted (objective order); the caller streams them as they come."""
        out = []
        cdef Py_ssize_t i
        cdef int32_t slot
        cdef int k
        for i in range(start, self.kept_log.size()):
            slot = self.kept_log[i]
            out.append((self.kept_obj[slot],
                        tuple(self.kept_ants[<size_t>slot * self.stride + k] for k in range(self.kept_len[slot]))))
        return out

    def counters(self):
        return tally_counters(&self.tally, self.n_inserted, {
            "dead_rules": self.tally.dead,
            "pruned_support": self.tally.support,
            "pruned_bound": self.tally.bound,
            "pruned_lookahead": self.tally.lookahead,
            "pruned_similar": self.tally.similar,
            "pruned_tail_table": self.tally.tail,
            "tail_table_blocks": self.tails.blocks if self.tt != NULL else 0,
            "tail_table_rules": self.tails.rules if self.tt != NULL else 0,
            "tail_table_seconds": self.tails.seconds if self.tt != NULL else 0.0,
            "pruned_map": self.n_pruned_map,
            "map_sets": self.set_index.size(),
            "orderings_with_equal_error": self.n_twins,
            "orderings_collapsed": self.n_collapsed,
            "emitted": self.n_emitted,
            "max_queue": self.max_queue,
            "nodes": self.n_nodes,
            "depth_first_from": self.switched_at,
        })


# -------------------------------------------------------------------------------- the tail table

cdef enum:
    T_DONE = 0
    T_STOPPED = 2
    T_NODE_LIMIT = 3
    T_OUT_OF_MEMORY = 4
    T_OVERFLOW = 5

OVERFLOW = T_OVERFLOW

cdef enum:
    SHARED_UNITS_SUBTRACTED = 16   # a head rule sharing at most this many units with a is scored
                                   # from its level figure (else on the planes)


cdef class TailMemo:
    """The tail tables of one count, shared by the counters given it (one per thread): a table
    computed by one is found by the others. ``memory_budget`` bytes over all of it; ``shards``
    locks (many: two threads rarely wait on one)."""

    cdef gw_shared_memo* m

    def __cinit__(self, int64_t memory_budget, int shards=64):
        self.m = gw_shared_new(max(shards, 1), max(memory_budget, 0))

    def __dealloc__(self):
        if self.m != NULL:
            gw_shared_free(self.m)

    @property
    def bytes(self) -> int:
        return gw_shared_total(self.m)

    @property
    def peak_bytes(self) -> int:
        return gw_shared_peak(self.m)

    @property
    def entries(self) -> int:
        return gw_shared_entries(self.m)

    def clear(self) -> None:
        """Drop every table (when the count is over: they may hold gigabytes)."""
        gw_shared_clear(self.m)


def nth_objective(cells, int64_t n):
    """The objective of the ``n``-th best of ``cells`` ((objective, how many) pairs, 1-based);
    ``None`` when they hold fewer."""
    if n < 1:
        return None
    for R, m in sorted(cells):
        n -= m
        if n <= 0:
            return R
    return None


cdef class TailCounter:
    """Count the Rashomon set of an ``Enumerator`` (same data, threshold, floor, roots, length cap
    and bounds) without listing it: the valid tails after a prefix depend only on the rows U it
    leaves uncaptured, and a tail's cost (``lambda W k + e``, count units) does not depend on the
    prefix, so H(U), the multiset of (k, e) over U's valid tails, is computed once per U:

        H(U) = {(0, default errors on U)}  +  sum over a capturing a row of U of
               shift(H(U minus a), k + 1, e + errors of a on U and a)

    and the set's size is the number of cells of H(all rows) (first rules among ``roots``, the
    empty list when ``include_empty``) with objective within the threshold and k within the cap.
    H(U) is only computed up to the budget a caller has left (the threshold minus its prefix's
    cost; cells above it are never members through that caller) and memoized with that budget
    and length: a caller with a larger budget recomputes it. The memo (keys: a hash of U,
    verified against U) is held to ``memory_budget`` bytes by dropping entries, which are
    recomputed when asked again: never a different count. docs/maintainers/corels-proofs.md,
    proves the recursion and each bound.

    One thread per counter. ``count_part`` counts the lists under some first rules and keeps the
    memo for the next part (tables do not depend on the first rule), so several counters, each on
    its own thread with its own memo, count a set by its first rules and their counts add up.
    """

    cdef Enumerator en
    cdef TailMemo memo
    cdef bint own_memo
    cdef int64_t memory_budget, max_evals
    cdef vector[vector[gw_cell]] level
    cdef vector[uint64_t] rows           # per level: U (W words)
    cdef vector[vector[gw_tcand]] cands
    cdef vector[int64_t] acc
    cdef double slack, b0_all
    cdef bint uncapped, do_seen
    cdef int budget_mode
    cdef const uint8_t* stop_ptr
    cdef double t_end
    cdef int status, failed
    cdef bint done
    cdef uint64_t total_count
    cdef int64_t parts
    cdef vector[uint8_t] top_ok          # the first rules of the part being counted
    cdef bint top_empty                  # whether the part holds the empty list
    cdef vector[gw_cell] found           # the members' cells counted so far, merged
    cdef TailScan scan                   # per level: what each antecedent captures of that level's U
    cdef vector[int32_t] removed_at      # per level: the rule whose capture the level above lost
    cdef vector[uint64_t] keys           # per level: the key of U (tailscan_key)
    cdef vector[uint64_t] scratch
    cdef bint do_one_rule
    cdef const TailTable* tt               # the enumerator's tail table, when it has one (NULL: none)
    cdef vector[vector[int32_t]] ord10     # per level: gain_orders
    cdef vector[vector[int32_t]] ord01
    cdef vector[vector[double]] pos10
    cdef vector[vector[double]] pos01
    cdef vector[uint8_t] orders_ready      # per level: whether gain_orders ran for its U
    cdef vector[uint32_t] stamp            # the rules a child scored already (this epoch)
    cdef uint32_t epoch
    cdef double tol
    cdef public int64_t n_pruned_one_rule, n_pruned_tail_table
    cdef public int64_t n_evaluated, n_hits, n_recomputed, n_evicted, n_stored, n_pruned_support
    cdef public int64_t n_pruned_bound, n_pruned_lookahead, n_pruned_map, n_grouped
    cdef public double seconds
    # a cache line after the counters above, which the counting thread writes at every rule: a
    # TableCount makes its counters one after another, and the next one's first fields (read at
    # every rule by another thread) would otherwise share a line with them
    cdef char _apart[64]

    def __init__(self, Enumerator enumerator, int64_t memory_budget=1 << 30, int budget_mode=0,
                 bint seen_bound=True, TailMemo memo=None, bint one_rule_bound=True, bint tail_table=False):
        """``budget_mode`` 0: a table is computed to the budget its caller has left (recomputed
        for a richer one); 1: to the most any prefix reaching its rows can leave (``theta -
        lambda W - b0`` of the rows captured: never recomputed, larger). ``seen_bound``: bound 6
        over the table. ``memo``: tables shared with other counters of the same enumerator (its
        budget replaces ``memory_budget``); none: a memo of its own. ``one_rule_bound``: a child
        whose budget allows one more rule at most is a leaf when no rule can gain enough on it
        (``one_rule_floor``; two classes and the equivalent points). ``tail_table``: build the
        enumerator's tail table now if it has none (``Enumerator.build_tail_table``); a counter
        reads the enumerator's table whenever it has one."""
        cdef int L, k
        self.en = enumerator
        self.own_memo = memo is None
        self.memo = TailMemo(memory_budget, 1) if memo is None else memo
        self.memory_budget = self.memo.m.budget
        self.budget_mode = budget_mode
        self.do_seen = seen_bound and enumerator.do_map
        # a table recomputed for a richer caller keeps the larger length it was stored with, so a
        # chain of tables can run deeper than the cap; each rule of a chain captures new rows, so
        # no chain is longer than the number of antecedents
        L = max(enumerator.max_len, enumerator.pb.M) + 2
        self.level.resize(L)
        self.cands.resize(L)
        self.slack = enumerator.theta_prune - enumerator.floorW
        self.uncapped = enumerator.max_len >= enumerator.pb.M
        self.b0_all = enumerator.root_b0
        self.acc.assign(max(enumerator.pb.P, enumerator.pb.Q) + 1, 0)
        self.rows.assign(<size_t>L * enumerator.pb.W, 0)
        tailscan_init(&self.scan, &enumerator.pb, L, enumerator.do_eqpts, &self.acc[0])
        self.removed_at.assign(L, -1)
        self.keys.assign(L, 0)
        self.scratch.assign(enumerator.pb.W, 0)
        self.do_one_rule = one_rule_bound and enumerator.do_eqpts and enumerator.pb.C == 2
        if tail_table:
            enumerator.build_tail_table()
        self.tt = NULL                         # the enumerator's, read when a count starts
        self.tol = 1e-9 * max(1.0, enumerator.pb.total)
        if self.do_one_rule:
            self.ord10.resize(L)
            self.ord01.resize(L)
            self.pos10.resize(L)
            self.pos01.resize(L)
            for k in range(L):
                self.ord10[k].reserve(enumerator.pb.M)
                self.ord01[k].reserve(enumerator.pb.M)
                self.pos10[k].assign(enumerator.pb.M, 0)
                self.pos01[k].assign(enumerator.pb.M, 0)
            self.stamp.assign(enumerator.pb.M, 0)
            self.orders_ready.assign(L, 0)
        self.status = -1
        self.failed = -1
        self.top_ok = enumerator.root_ok
        self.top_empty = enumerator.include_empty

    cdef inline bint _halt(self) noexcept nogil:
        if self.status >= 0:
            return True
        if (self.n_evaluated & 255) == 0:
            if self.stop_ptr[0] != 0 or now() >= self.t_end:
                self.status = T_STOPPED
                return True
        if self.max_evals >= 0 and self.n_evaluated >= self.max_evals:
            self.status = T_NODE_LIMIT
            return True
        return False

    cdef bint _same_capture(self, const uint64_t* U, int a, int b) noexcept nogil:
        cdef const uint64_t* ca = &self.en.pb.caps[<size_t>a * self.en.pb.W]
        cdef const uint64_t* cb = &self.en.pb.caps[<size_t>b * self.en.pb.W]
        cdef int i
        for i in range(self.en.pb.W):
            if (U[i] & ca[i]) != (U[i] & cb[i]):
                return False
        return True

    cdef uint64_t _key(self, const uint64_t* U) noexcept nogil:
        cdef uint64_t h = 0x51ED270B3A9F1C65ULL
        cdef int i
        for i in range(self.en.pb.W):
            h = splitmix64(h ^ U[i])
        return h

    cdef int _tails(self, int L, double budget, double real, int klim, bint top) noexcept nogil:
        """Write H(U) up to ``budget`` (count units) and ``klim`` rules to ``level[L]``, merged;
        U is ``rows[L]``, reached by a prefix that leaves ``real`` to the threshold (``budget``
        may be more: a table computed for a richer caller). 0 on success, else a status."""
        cdef int W = self.en.pb.W, k
        cdef const uint64_t* U = &self.rows[<size_t>L * W]
        cdef double uz[MAX_CLASSES]
        cdef double bU = 0, budget_c = budget
        cdef int klim_c = klim
        cdef uint64_t key = 0
        cdef vector[gw_cell]* out = &self.level[L]
        out.clear()
        if self.en.do_eqpts:
            problem_counts(&self.en.pb, U, True, uz, &self.acc[0])
            bU = weighted_sum(self.en.pb.C, self.en.pb.weights, uz)
        if not top and self.memory_budget > 0:
            key = self.keys[L]
            k = self._memo_read(U, key, budget, real, klim, out, &budget_c, &klim_c)
            if k >= 0:
                return k
            if self.budget_mode == 1:             # every prefix reaching U costs >= lambda W + b0(rows it captured)
                budget_c = max(budget_c, self.en.theta_prune - self.en.pb.lamW - (self.b0_all - bU))
        k = self._first_rules(L, bU, uz, budget_c, klim_c, top)
        if k != 0:
            return k
        k = self._follow(L, real, klim_c)
        if k != 0:
            return k
        k = gw_cells_merge(out[0], 0)
        if k == 0:
            return T_OVERFLOW
        if top:
            return 0
        if self.memory_budget > 0:
            self._memo_write(U, key, budget_c, klim_c, out)
        if budget_c > budget or klim_c > klim:     # this caller wants only its own part
            self._trim(out, budget, klim)
        return 0

    cdef int _memo_read(self, const uint64_t* U, uint64_t key, double budget, double real, int klim,
                        vector[gw_cell]* out, double* budget_c, int* klim_c) noexcept nogil:
        """The memo's answer for U: 0 when it settles the table (bound 6 prunes it, or a stored
        table covers ``budget`` and ``klim``: its cells copied to ``out``), a status on failure,
        -1 when the table must be computed, to ``budget_c``/``klim_c`` (raised to a stored
        table's: a caller with more budget recomputes it)."""
        cdef int W = self.en.pb.W
        cdef gw_tail_entry* hit
        cdef gw_cell* cp
        cdef size_t j, n
        cdef int64_t made = 0
        cdef gw_memo_shard* shard = gw_shard_of(self.memo.m, key)
        gw_shard_lock(shard)                   # held while the entry is read: another thread may replace it
        hit = gw_tail_touch(shard.map, key, U, W, &made)
        shard.bytes += made
        gw_shared_add(self.memo.m, made)
        if hit != NULL:
            # bound 6 over the table: a prefix P' reaching U left budget ``seen``, and every
            # list P' + T is >= floor, so each tail costs >= floor - (theta - seen)
            if self.do_seen and (self.uncapped or hit.seen_klim >= klim) and hit.seen - budget > self.slack:
                gw_shard_unlock(shard)
                self.n_pruned_map += 1
                return 0
            if real > hit.seen and (self.uncapped or klim >= hit.seen_klim):
                hit.seen = real
                hit.seen_klim = klim
            if hit.budget >= budget and hit.klim >= klim:
                self.n_hits += 1
                n = hit.cells.size()
                for j in range(n):
                    cp = &hit.cells[j]
                    if cp.k <= klim and cp.e + cp.k * self.en.pb.lamW <= budget:
                        if not gw_cells_push(out[0], cp.e, cp.n, cp.k):
                            gw_shard_unlock(shard)
                            return T_OUT_OF_MEMORY
                gw_shard_unlock(shard)
                return 0
            if hit.budget >= 0:
                self.n_recomputed += 1        # a caller with more budget: recompute it
            budget_c[0] = max(budget, hit.budget)
            klim_c[0] = max(klim, hit.klim)
        gw_shard_unlock(shard)
        return -1

    cdef int _first_rules(self, int L, double bU, const double* uz, double budget_c, int klim_c,
                          bint top) noexcept nogil:
        """H(U)'s cells of the default alone and of one rule then the default into ``level[L]``;
        the rules a longer tail may follow into ``cands[L]``, cheapest first (later callers of a
        set find it computed). ``uz``: U's minority counts (with the equivalent-points bound),
        ``bU`` their weight. 0, else a status."""
        cdef int W = self.en.pb.W, i, s, label, k
        cdef const uint64_t* U = &self.rows[<size_t>L * W]
        cdef uint64_t* V = &self.rows[<size_t>(L + 1) * W]
        cdef const uint64_t* capv
        cdef double ucnt[MAX_CLASSES]
        cdef double cnt[MAX_CLASSES]
        cdef double zc[MAX_CLASSES]
        cdef double correct, wv, err, dflt, b0, rest, fw, tail_err
        cdef const double* cntp
        cdef const double* lcnt
        cdef const double* lmz
        cdef const uint64_t* lzh
        cdef const int32_t* lnu
        cdef int C, built
        cdef double g10 = 0, g01 = 0, bmino, t1, t2
        cdef bint one_more
        cdef vector[gw_cell]* out = &self.level[L]
        cdef vector[gw_tcand]* cands = &self.cands[L]
        cdef gw_tcand tc
        problem_counts(&self.en.pb, U, False, ucnt, &self.acc[0])
        dflt = weighted_majority(self.en.pb.C, self.en.pb.weights, ucnt, &correct, &label)
        dflt = dflt - correct
        if (not top or self.top_empty) and dflt <= budget_c:
            if not gw_cells_push(out[0], dflt, 1, 0):
                return T_OUT_OF_MEMORY
        cands.clear()
        if klim_c <= 0 or self.en.pb.lamW + bU > budget_c:   # every nonempty tail costs lambda W + U's minority
            return 0
        if L == 0:
            built = tailscan_build(&self.scan, 0, U)
        else:
            capv = &self.en.pb.caps[<size_t>self.removed_at[L] * W]
            for i in range(W):
                self.scratch[i] = self.rows[<size_t>(L - 1) * W + i] & capv[i]
            built = tailscan_child(&self.scan, L, &self.scratch[0], U)
        if not built:
            return T_OUT_OF_MEMORY
        C = self.en.pb.C
        lcnt = self.scan.cnt[L].data()
        lmz = self.scan.mz[L].data()
        lzh = self.scan.zh[L].data()
        lnu = self.scan.nu[L].data()
        if self.do_one_rule:
            gain_tops(&self.scan, L, self.en.pb.weights, &g10, &g01)
            self.orders_ready[L] = 0           # gain_orders when a child first needs them
        for s in range(self.en.pb.M):
            if top and not self.top_ok[s]:
                continue
            if self._halt():
                return self.status
            self.n_evaluated += 1
            if lnu[s] == 0:                    # captures nothing of U: not a valid tail rule
                continue
            cntp = &lcnt[<size_t>s * C]
            wv = weighted_majority(C, self.en.pb.weights, cntp, &correct, &label)
            if self.en.do_support and self.en.floorW + self.en.pb.lamW - correct > self.en.theta_prune:
                self.n_pruned_support += 1     # bound 4: in no member, whatever the prefix
                continue
            err = wv - correct
            rest = budget_c - self.en.pb.lamW - err    # what the tail after a may cost
            if rest < 0:
                self.n_pruned_bound += 1
                continue
            b0 = 0
            if self.en.do_eqpts:               # every tail on U minus a errs its minority
                for k in range(C):
                    zc[k] = uz[k] - lmz[<size_t>s * C + k]
                b0 = weighted_sum(C, self.en.pb.weights, zc)
                if self.en.do_support and C == 2 and \
                        self.en.floorW + self.en.pb.lamW - correct + (bU - b0) > self.en.theta_prune:
                    self.n_pruned_support += 1     # bound 4 on units: a right only on minorities
                    continue
                if b0 > rest:
                    self.n_pruned_lookahead += 1
                    continue
            one_more = klim_c == 2 or 2 * self.en.pb.lamW + b0 > rest   # at most one rule can follow a
            if self.do_one_rule and klim_c > 1 and self.en.pb.lamW + b0 <= rest and one_more:
                # at most one rule can follow a: none does if none can gain enough on U minus a
                bmino = self.en.pb.weights[0] * lmz[2 * s] + self.en.pb.weights[1] * lmz[2 * s + 1]
                if self.en.pb.lamW + one_rule_floor(self.en.pb.weights, ucnt, cntp, bmino, g10, g01) \
                        > rest + self.tol:
                    self.n_pruned_one_rule += 1
                    b0 = rest + 1.0           # makes a a leaf below
            if self.tt != NULL and klim_c > 1 and self.en.pb.lamW + b0 <= rest:
                # a table of its own below, unless the tail table says what every tail of one rule
                # or more (of two or more) on U minus a costs is more than it may
                tail_costs(self.tt, U, &self.en.pb.caps[<size_t>s * W], b0, &t1, &t2)
                if t1 > rest + self.tol:
                    self.n_pruned_tail_table += 1
                    b0 = rest + 1.0           # makes a a leaf below
                elif not one_more and t2 > rest + self.tol:
                    self.n_pruned_tail_table += 1
                    one_more = True
            if klim_c == 1 or self.en.pb.lamW + b0 > rest:
                # no rule can follow a within the budget: a's tail is the default alone
                tail_err = default_error(&self.en.pb, ucnt, cntp, &fw)
                if tail_err <= rest:
                    if not gw_cells_push(out[0], tail_err + err, 1, 1):
                        return T_OUT_OF_MEMORY
                continue
            if one_more:
                # at most one rule can follow a: its tails are scored here, without a table
                k = self._one_rule_child(L, s, ucnt, cntp, err, rest)
                if k != 0:
                    return k
                continue
            tc.err = err
            tc.rest = rest
            tc.ant = s
            tc.vhash = lzh[s]
            if not gw_tcand_push(cands[0], tc):
                return T_OUT_OF_MEMORY
        gw_tcand_sort(cands[0])
        return 0

    cdef int _one_rule_child(self, int L, int a, const double* ucnt, const double* acnt, double err,
                             double rest) noexcept nogil:
        """The cells of rule ``a`` followed by a tail of at most one rule on U minus a, within
        ``rest`` (what a's tail may cost), into ``level[L]``: the default alone, and each rule t
        capturing a unit of U minus a, then the default. Its capture there is its level-``L``
        figure less what it captures of a's units (``tailscan_delta``). 0, else a status."""
        cdef int W = self.en.pb.W, C = self.en.pb.C, i, t, k, label
        cdef const uint64_t* U = &self.rows[<size_t>L * W]
        cdef const uint64_t* capv = &self.en.pb.caps[<size_t>a * W]
        cdef const double* lcnt = self.scan.cnt[L].data()
        cdef const int32_t* lnu = self.scan.nu[L].data()
        cdef double vcnt[MAX_CLASSES]
        cdef double tcnt[MAX_CLASSES]
        cdef double correct, wv, dflt, et, tail, fw
        cdef vector[gw_cell]* out = &self.level[L]
        cdef int code = 0
        for k in range(C):
            vcnt[k] = ucnt[k] - acnt[k]
        wv = weighted_majority(C, self.en.pb.weights, vcnt, &correct, &label)
        dflt = wv - correct
        if dflt <= rest and not gw_cells_push(out[0], dflt + err, 1, 1):
            return T_OUT_OF_MEMORY
        if self.do_one_rule and self.en.pb.lamW + dflt > rest:
            return self._one_rule_heads(L, a, vcnt, err, rest)
        for i in range(W):
            self.scratch[i] = U[i] & capv[i]
        tailscan_delta(&self.scan, &self.scratch[0])
        for t in range(self.en.pb.M):
            if t == a or lnu[t] == self.scan.dnu[t]:     # captures nothing of U minus a
                continue
            if self._halt():
                code = self.status
                break
            self.n_evaluated += 1
            for k in range(C):
                tcnt[k] = lcnt[<size_t>t * C + k] - self.scan.dcnt[<size_t>t * C + k]
            wv = weighted_majority(C, self.en.pb.weights, tcnt, &correct, &label)
            et = wv - correct
            if self.en.pb.lamW + et > rest:
                continue
            tail = default_error(&self.en.pb, vcnt, tcnt, &fw)
            if self.en.pb.lamW + et + tail <= rest:
                if not gw_cells_push(out[0], (et + tail) + err, 1, 2):   # the table's order
                    code = T_OUT_OF_MEMORY
                    break
        tailscan_delta_clear(&self.scan)
        return code

    cdef int _one_rule_heads(self, int L, int a, const double* vcnt, double err, double rest) noexcept nogil:
        """``_one_rule_child`` when the default alone does not fit (two classes): a rule t then
        the default must then gain over it at least ``need`` in one direction, and gains at most
        pos(t & U) (``gain_orders``, sorted when the table's first such child comes) and at most
        gain(t & U) + neg(a & U) (the one-rule bound, rule by rule), so only the heads of the two
        orders passing both are scored, each rule once. 0, else a status."""
        cdef int W = self.en.pb.W, i, t, k, label, d
        cdef const uint64_t* U = &self.rows[<size_t>L * W]
        cdef const uint64_t* capv = &self.en.pb.caps[<size_t>a * W]
        cdef double tcnt[MAX_CLASSES]
        cdef const uint64_t* tv
        cdef bint nonempty
        cdef double avail = rest - self.en.pb.lamW, correct, wv, et, tail, fw
        cdef double need10 = self.en.pb.weights[1] * vcnt[1] - avail - self.tol
        cdef double need01 = self.en.pb.weights[0] * vcnt[0] - avail - self.tol
        cdef vector[int32_t]* order
        cdef const double* pos
        cdef double need
        cdef size_t j
        cdef const double* lcnt = self.scan.cnt[L].data()
        cdef const double* lmz = self.scan.mz[L].data()
        cdef double w0 = self.en.pb.weights[0], w1 = self.en.pb.weights[1]
        cdef double amino = w0 * lmz[2 * a] + w1 * lmz[2 * a + 1]
        cdef double neg10 = w0 * lcnt[2 * a] - amino       # neg(a & U) for a rule -> 1, default 0
        cdef double neg01 = w1 * lcnt[2 * a + 1] - amino   # and the other way
        cdef double gain, neg
        cdef const double* ulab = self.scan.ulab.data()
        cdef uint64_t x
        cdef int n_shared, u
        cdef vector[gw_cell]* out = &self.level[L]
        cdef int code = 0
        if not self.orders_ready[L]:       # the first child of this table scored here
            if L > 0 and self.orders_ready[L - 1]:   # the table above, being computed: U's superset
                gain_orders(&self.scan, L, self.en.pb.weights, self.ord10[L], self.ord01[L], self.pos10[L],
                            self.pos01[L], &self.ord10[L - 1], &self.ord01[L - 1])
            else:
                gain_orders(&self.scan, L, self.en.pb.weights, self.ord10[L], self.ord01[L], self.pos10[L],
                            self.pos01[L], NULL, NULL)
            self.orders_ready[L] = 1
        self.epoch += 1
        if self.epoch == 0:                # wrapped: clear the stamps
            for t in range(self.en.pb.M):
                self.stamp[t] = 0
            self.epoch = 1
        for d in range(2):
            order = &self.ord10[L] if d == 0 else &self.ord01[L]
            pos = self.pos10[L].data() if d == 0 else self.pos01[L].data()
            need = need10 if d == 0 else need01
            neg = neg10 if d == 0 else neg01
            for j in range(order.size()):
                t = order[0][j]
                if pos[t] < need:
                    if j < GAIN_HEAD:      # sorted so far: none after gains enough
                        break
                    continue
                if t == a or self.stamp[t] == self.epoch:
                    continue
                # gain(t & V) <= gain(t & U) + neg(a & U) too (the one-rule bound, rule by rule)
                gain = w1 * lcnt[2 * t + 1] - w0 * lcnt[2 * t]
                if d == 1:
                    gain = -gain
                if gain + neg < need:
                    continue
                self.stamp[t] = self.epoch
                tv = &self.en.pb.caps[<size_t>t * W]
                nonempty = False
                n_shared = 0
                for i in range(W):         # what t captures of U minus a, and of U and a
                    x = U[i] & tv[i]
                    self.scratch[i] = x & ~capv[i]
                    nonempty = nonempty or self.scratch[i] != 0
                    n_shared += gw_popcount64(x & capv[i])
                if not nonempty:
                    continue
                if self._halt():
                    code = self.status
                    break
                self.n_evaluated += 1
                if n_shared <= SHARED_UNITS_SUBTRACTED:
                    # t's figure on U less the units a took from it: integers, so exactly the
                    # planes' counts of t & (U minus a) (corels_tailscan.pxd)
                    tcnt[0] = lcnt[2 * t]
                    tcnt[1] = lcnt[2 * t + 1]
                    for i in range(W):
                        x = U[i] & tv[i] & capv[i]
                        while x:
                            u = i * 64 + gw_ctz64(x)
                            x &= x - 1
                            tcnt[0] -= ulab[2 * u]
                            tcnt[1] -= ulab[2 * u + 1]
                else:
                    problem_counts(&self.en.pb, &self.scratch[0], False, tcnt, &self.acc[0])
                wv = weighted_majority(2, self.en.pb.weights, tcnt, &correct, &label)
                et = wv - correct
                if self.en.pb.lamW + et > rest:
                    continue
                tail = default_error(&self.en.pb, vcnt, tcnt, &fw)
                if self.en.pb.lamW + et + tail <= rest:
                    if not gw_cells_push(out[0], (et + tail) + err, 1, 2):
                        code = T_OUT_OF_MEMORY
                        break
            if code != 0:
                break
        return code

    cdef int _follow(self, int L, double real, int klim_c) noexcept nogil:
        """Each rule ``a`` of ``cands[L]`` followed by every tail of U minus a: H(U minus a)
        computed one level down, shifted by a's error and one rule, into ``level[L]``. Rules
        capturing the same rows of U lead to the same tails: one table, times their number.
        0, else a status."""
        cdef int W = self.en.pb.W, i, k, c, m
        cdef const uint64_t* U = &self.rows[<size_t>L * W]
        cdef uint64_t* V = &self.rows[<size_t>(L + 1) * W]
        cdef const uint64_t* capv
        cdef vector[gw_cell]* out = &self.level[L]
        cdef vector[gw_cell]* sub
        cdef vector[gw_tcand]* cands = &self.cands[L]
        cdef gw_tcand tc
        cdef gw_cell* cp
        cdef size_t j, n
        cdef uint64_t mult
        cdef int n_cands = cands.size()
        c = 0
        while c < n_cands:
            tc = cands[0][c]
            capv = &self.en.pb.caps[<size_t>tc.ant * W]
            m = 1
            while c + m < n_cands and cands[0][c + m].vhash == tc.vhash and cands[0][c + m].rest == tc.rest \
                    and self._same_capture(U, tc.ant, cands[0][c + m].ant):
                m += 1
            c += m
            self.n_grouped += m - 1
            for i in range(W):
                V[i] = U[i] & ~capv[i]
            self.keys[L + 1] = self.keys[L] ^ self.scan.zh[L][tc.ant]
            self.removed_at[L + 1] = tc.ant
            k = self._tails(L + 1, tc.rest, real - self.en.pb.lamW - tc.err, klim_c - 1, False)
            if k != 0:
                return k
            sub = &self.level[L + 1]
            n = sub.size()
            for j in range(n):
                cp = &sub[0][j]
                mult = cp.n
                if not gw_mul_u64(&mult, <uint64_t>m):
                    return T_OVERFLOW
                if not gw_cells_push(out[0], cp.e + tc.err, mult, cp.k + 1):
                    return T_OUT_OF_MEMORY
        return 0

    cdef void _memo_write(self, const uint64_t* U, uint64_t key, double budget_c, int klim_c,
                          vector[gw_cell]* out) noexcept nogil:
        """Store U's table (computed to ``budget_c``, ``klim_c``) in the memo, first dropping
        entries of a shard past its share of the budget."""
        cdef int W = self.en.pb.W
        cdef int64_t grew
        cdef gw_memo_shard* shard = gw_shard_of(self.memo.m, key)
        gw_shard_lock(shard)
        if shard.bytes > self.memo.m.shard_budget:
            self.n_evicted += 1
            grew = gw_tail_evict(shard.map, W, shard.evict_bit)
            shard.bytes -= grew
            gw_shared_add(self.memo.m, -grew)
            shard.evict_bit = (shard.evict_bit + 7) % 64
        grew = gw_tail_store(shard.map, key, U, W, budget_c, klim_c, out.data(), out.size())
        if grew < 0:
            grew = -(-1 - grew)                # the entry is gone (memory ran out)
        else:
            self.n_stored += 1
        shard.bytes += grew
        gw_shared_add(self.memo.m, grew)
        gw_shard_unlock(shard)

    cdef void _trim(self, vector[gw_cell]* out, double budget, int klim) noexcept nogil:
        """Keep the cells of ``out`` within ``budget`` and ``klim`` (a table computed richer)."""
        cdef size_t j, n = 0
        cdef gw_cell* cp
        for j in range(out.size()):
            cp = &out[0][j]
            if cp.k <= klim and cp.e + cp.k * self.en.pb.lamW <= budget:
                out[0][n] = cp[0]
                n += 1
        out.resize(n)

    cdef int _count(self, double seconds, const uint8_t[::1] stop_flag, int64_t max_evaluations):
        """Count the part ``top_ok``/``top_empty`` selects into ``found`` and ``total_count``."""
        cdef Enumerator en = self.en
        cdef int W = en.pb.W, i, code
        cdef double t0 = now(), R
        cdef size_t j
        cdef gw_cell* cp
        cdef uint64_t total = self.total_count
        cdef bint overflow = False
        if self.failed >= 0:
            return self.failed
        self.stop_ptr = &stop_flag[0]
        self.tt = self.en.tt
        self.max_evals = max_evaluations
        self.status = -1
        with nogil:
            self.t_end = t0 + seconds
            for i in range(W):
                self.rows[i] = en.pb.mask[i]
            self.keys[0] = tailscan_key(&self.scan, &self.rows[0])
            code = self._tails(0, en.theta_prune, en.theta_prune, en.max_len, True)
            if code == 0:
                for j in range(self.level[0].size()):
                    cp = &self.level[0][j]
                    R = (cp.e + cp.k * en.pb.lamW) / en.pb.total if en.pb.total > 0 else 0.0
                    if R <= en.theta_in:
                        if not gw_add_u64(&total, cp.n):
                            overflow = True
                            break
                        if not gw_cells_push(self.found, R, cp.n, 0):
                            code = T_OUT_OF_MEMORY
                            break
                if code == 0 and not overflow and gw_cells_merge(self.found, 0) == 0:
                    overflow = True
                if code == 0:
                    code = T_OVERFLOW if overflow else T_DONE
            self.seconds += now() - t0
        self.status = code
        if code == T_DONE:
            self.total_count = total
            self.parts += 1
        else:
            self.failed = code
            if self.own_memo:
                gw_shared_clear(self.memo.m)
        return code

    def count_part(self, roots, bint include_empty, double seconds, const uint8_t[::1] stop_flag,
                   int64_t max_evaluations=-1):
        """Add the lists whose first rule is one of ``roots`` (the empty list too when
        ``include_empty``) to the count, for at most ``seconds``; the memo stays for the next
        part. Parts must not overlap. Returns DONE or, as ``run``, why it stopped: a counter
        stopped in one part is spent (``count`` None)."""
        cdef int r
        if self.done:
            return self.status
        self.top_ok.assign(max(self.en.pb.M, 1), 0)
        for r in roots:
            if 0 <= r < self.en.pb.M and self.en.root_ok[r]:
                self.top_ok[r] = 1
        self.top_empty = include_empty and self.en.include_empty
        return self._count(seconds, stop_flag, max_evaluations)

    def run(self, double seconds, const uint8_t[::1] stop_flag, int64_t max_evaluations=-1):
        """Count the set, for at most ``seconds``; returns DONE, STOPPED (the stop flag or the
        time), NODE_LIMIT (``max_evaluations`` rules scored), OUT_OF_MEMORY or OVERFLOW (more
        members than 2^64). Not resumable: a stopped count is no count (``count`` is None)."""
        cdef int code
        if self.done:
            return self.status
        self.top_ok = self.en.root_ok
        self.top_empty = self.en.include_empty
        code = self._count(seconds, stop_flag, max_evaluations)
        self.done = True
        if self.own_memo:
            gw_shared_clear(self.memo.m)
        return code

    def root_order(self):
        """The enumerator's first rules, cheapest first (the most budget left, so the heaviest
        parts first: the order a pool of counters should take them in)."""
        cdef Enumerator en = self.en
        cdef int W = en.pb.W, s, i, label
        cdef double cnt[MAX_CLASSES]
        cdef double correct, wv
        cdef list order = []
        cdef vector[uint64_t] V
        V.resize(W)
        for s in range(en.pb.M):
            if not en.root_ok[s]:
                continue
            for i in range(W):
                V[i] = en.pb.mask[i] & en.pb.caps[<size_t>s * W + i]
            problem_counts(&en.pb, &V[0], False, cnt, &self.acc[0])
            wv = weighted_majority(en.pb.C, en.pb.weights, cnt, &correct, &label)
            order.append((wv - correct, s))
        order.sort()
        return [s for _, s in order]

    def cells(self):
        """The members counted so far as (objective, how many), best first."""
        return [(self.found[j].e, int(self.found[j].n)) for j in range(self.found.size())]

    def nth_objective(self, int64_t n):
        """The objective of the ``n``-th best member (1-based) once counted, from the table's
        cells of the whole set; ``None`` when the set has fewer members or no count."""
        return nth_objective(self.cells() if self.count is not None else [], n)

    @property
    def count(self):
        """The exact size of what was counted once ``run`` or every ``count_part`` returned DONE;
        otherwise None."""
        return int(self.total_count) if self.parts > 0 and self.failed < 0 else None

    def counters(self):
        return {
            "count_seconds": self.seconds,
            "count_evaluated": self.n_evaluated,
            "memo_entries_stored": self.n_stored,
            "memo_hits": self.n_hits,
            "memo_recomputed": self.n_recomputed,
            "memo_evictions": self.n_evicted,
            "memo_peak_bytes": self.memo.peak_bytes,
            "count_pruned_support": self.n_pruned_support,
            "count_pruned_bound": self.n_pruned_bound,
            "count_pruned_lookahead": self.n_pruned_lookahead,
            "count_pruned_map": self.n_pruned_map,
            "count_rules_grouped": self.n_grouped,
            "count_pruned_one_rule": self.n_pruned_one_rule,
            "count_pruned_tail_table": self.n_pruned_tail_table,
        }
