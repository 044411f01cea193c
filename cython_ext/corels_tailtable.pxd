# cython: language_level=3
"""The tail table of the CORELS search: a lower bound on what a prefix's tail must still cost,
read from exact answers on blocks of 16 units (maintainers/corels-proofs.md, "The tail table").

Whatever a prefix leaves uncaptured (``U``), a tail of ``k`` more rules and a default labelled ``y``
costs ``k * lambda`` plus its errors on ``U``. Cut the units into blocks (the 16-bit lanes of the
unit vectors); on one block the tail is a rule list of at most ``k`` rules, so its errors there are
at least ``E_j(U ∩ block, k, y)``, the fewest errors any list of at most ``k`` rules with default
``y`` makes on those units (each rule labelled as best suits the block). Summed over the blocks,
with ``k`` and ``y`` shared, that bounds every tail: ``T(U) = min over 1 <= k <= K, y of
k * lambda + sum_j E_j``, and a tail of more than ``K`` rules costs at least ``(K + 1) * lambda +
b0(U)`` (``E_j`` at ``K`` in place of ``b0`` on a block that one more rule no longer changes). The expansion's own bound charges ``lambda + b0(U)`` (the lookahead and the equivalent
points), so the table raises a prefix's bound by ``T(U) - lambda - b0(U) >= 0``.

``E_j`` is exact per block and found once, by dynamic programming over the block's 65,536 subsets:
the first rule takes ``S ∩ r`` (labelled by its majority there) and leaves ``S \\ r`` to at most
``k - 1`` rules. The raise is a function of ``U`` alone, so two prefixes the symmetry map compares
(same antecedent set, or same uncaptured units) get the same raise to the bit.

``TailSchedule`` decides when a search builds its table: once it has scored about as many
children as the build costs (ski rental), after which the search starts again under the table.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint8_t
from libc.math cimport INFINITY, nextafterf
from libcpp.vector cimport vector
from libcpp.algorithm cimport sort, unique

from corels_problem cimport CorelsProblem, MAX_CLASSES, LABELS, problem_counts
from corels_seed cimport PrefixWalk, seed_check, walk_start, walk_rule, walk_b0
from corels_threads cimport gw_pool, pool_run

cdef enum:
    TT_LANE = 16           # units per block: a 16-bit lane of a unit vector's word
    TT_SUBSETS = 65536     # subsets of a block
    TT_MAX_K = 8           # tails of up to this many rules are tabled
    TT_BYTES = 64 << 20    # the most a table holds unless told otherwise
    TT_OPS_PER_EVALUATION = 64   # table-building steps that cost as much as scoring one child


cdef struct TailTable:
    int n_blocks           # blocks tabled (0: the table is off)
    int K, C, stride       # rules tabled, classes, floats per subset (K * C)
    double lamW            # lambda in weighted count units
    double margin          # taken off every raise, so float rounding never lifts a bound past a tie
    vector[int32_t] lane   # block j is lane lane[j]: word lane >> 2, bits 16 * (lane & 3) and up
    vector[float] E        # [j][S][k - 1][y]: E_j(S, k, y), rounded down
    vector[float] b0up     # [j][S]: the block's equivalent-points errors on S, rounded up
    vector[uint8_t] settled   # [j]: on block j no list gains from a rule past the K-th: E_j at K is final


cdef struct TailSchedule:   # a search's table and when it builds it (ski rental: tail_schedule_init)
    TailTable table
    bint decided           # built, or never will be (switched off, or too many units)
    int64_t after          # build once this many children are scored
    int64_t discarded      # the evaluations scored before it (the search then started again)
    double seconds         # the build's
    double root_b0         # the root's equivalent-points bound
    double floor           # a lower bound proven before the search started again (-inf: none)
    size_t max_bytes       # the most the table may hold

cdef enum:
    TS_GO_ON = 0           # tail_schedule_slice: nothing to do
    TS_BUILD = 1           # build it now
    TS_DUE = 2             # the slice's evaluations are capped where it is due


cdef inline float _down(double x) noexcept nogil:
    """``x`` as a float no larger than ``x``."""
    cdef float f = <float>x
    if f > x:
        f = nextafterf(f, -INFINITY)
    return f


cdef inline float _up(double x) noexcept nogil:
    """``x`` as a float no smaller than ``x``."""
    cdef float f = <float>x
    if f < x:
        f = nextafterf(f, INFINITY)
    return f


cdef inline size_t tail_table_bytes(const TailTable* tt) noexcept nogil:
    """What the table holds (``Search.memory_bytes`` counts it)."""
    return (tt.E.capacity() * sizeof(float) + tt.b0up.capacity() * sizeof(float) + tt.lane.capacity() * 4
            + tt.settled.capacity())


cdef inline Py_ssize_t _lane_masks(const CorelsProblem* pb, int lane, vector[uint64_t]& masks) noexcept nogil:
    """The distinct non-empty traces of the antecedents on the lane's units, into ``masks``."""
    cdef int w = lane >> 2, sh = 16 * (lane & 3)
    cdef Py_ssize_t r
    cdef uint64_t m
    masks.clear()
    for r in range(pb.M):
        m = (pb.caps[<size_t>r * pb.W + w] >> sh) & 0xFFFF
        if m != 0:
            masks.push_back(m)
    sort(masks.begin(), masks.end())
    masks.erase(unique(masks.begin(), masks.end()), masks.end())
    return <Py_ssize_t>masks.size()


cdef inline int _lanes_with_units(const CorelsProblem* pb) noexcept nogil:
    """The blocks a table of every unit needs."""
    cdef int l, n = 0
    for l in range((pb.W * 64 + TT_LANE - 1) // TT_LANE):
        n += ((pb.mask[l >> 2] >> (16 * (l & 3))) & 0xFFFF) != 0
    return n


cdef inline int tail_rules_for(int lanes, int C, int W, size_t max_bytes) noexcept nogil:
    """The most rules a table of ``lanes`` blocks of ``C`` classes holds within ``max_bytes`` (0:
    not even one), for unit vectors of ``W`` words."""
    cdef size_t per = <size_t>lanes * TT_SUBSETS * sizeof(float)
    cdef size_t k
    if per == 0 or W > 512:
        return 0
    k = (max_bytes // per - 1) // C if max_bytes // per >= 1 else 0
    return <int>k if k < TT_MAX_K else TT_MAX_K


cdef inline int tail_rules_that_fit(const CorelsProblem* pb, size_t max_bytes) noexcept nogil:
    """The most rules a table of every block can hold within ``max_bytes`` (0: not even one)."""
    return tail_rules_for(_lanes_with_units(pb), pb.C, pb.W, max_bytes)


cdef inline int64_t tail_table_ops(const CorelsProblem* pb, int K) except -1:
    """The steps a table of ``K`` rules over every lane takes to build (subsets x traces x rules x
    classes), as ``_build_blocks`` takes them; what the search weighs it against."""
    cdef int lanes = (pb.W * 64 + TT_LANE - 1) // TT_LANE, l
    cdef int64_t ops = 0
    cdef vector[uint64_t] masks
    if pb.W > 512:
        return 0
    for l in range(lanes):
        ops += <int64_t>_lane_masks(pb, l, masks) * TT_SUBSETS * K * pb.C
    return ops


cdef inline int _lane_units(const CorelsProblem* pb, int lane, double* wcnt) noexcept nogil:
    """The weighted class counts of the lane's units into ``wcnt`` [i * C + c]; how many units
    of the lane exist."""
    cdef vector[uint64_t] one
    cdef vector[int64_t] acc
    cdef double cnt[MAX_CLASSES]
    cdef int i, c, w = lane >> 2, n = 0, bit
    one.assign(pb.W, 0)
    acc.assign(max(pb.P, pb.Q) + 1, 0)
    for i in range(TT_LANE):
        for c in range(pb.C):
            wcnt[i * pb.C + c] = 0
        bit = 16 * (lane & 3) + i
        if not (pb.mask[w] >> bit) & 1:
            continue
        one[w] = (<uint64_t>1) << bit
        problem_counts(pb, &one[0], LABELS, cnt, &acc[0])
        one[w] = 0
        for c in range(pb.C):
            wcnt[i * pb.C + c] = pb.weights[c] * cnt[c]
        n += 1
    return n


cdef struct TailWork:       # one thread's working memory while it fills blocks
    vector[double] tot, minerr, prev, cur
    vector[uint64_t] masks


cdef struct TailBuild:      # one build, shared by the threads that fill its blocks
    TailTable* tt
    const CorelsProblem* pb
    TailWork* work          # one per thread
    int n_threads


cdef inline bint _table_block(const CorelsProblem* pb, int lane, int K, float* E, float* b0up,
                              TailWork* tw) noexcept nogil:
    """Fill one block's ``E`` [S][k - 1][y] and ``b0up`` [S] (see the module's docstring); True
    when more than ``K`` rules gain nothing on the block (its ``E`` at ``K`` is the best of any
    length)."""
    cdef int C = pb.C, c, y, k, i
    cdef double wcnt[TT_LANE * MAX_CLASSES]
    cdef double s, mx, v, c0, c1
    cdef Py_ssize_t S, low, r, nm
    cdef uint64_t m
    cdef const uint64_t* ms
    cdef bint changed
    cdef double* tot = &tw.tot[0]
    cdef double* minerr = &tw.minerr[0]
    cdef double* prev = &tw.prev[0]
    cdef double* cur = &tw.cur[0]
    cdef double* t
    _lane_units(pb, lane, wcnt)
    # the weighted class totals of every subset, from the subset without its lowest unit
    for c in range(C):
        tot[c] = 0
    for S in range(1, TT_SUBSETS):
        low = 0
        while not (S >> low) & 1:
            low += 1
        for c in range(C):
            tot[S * C + c] = tot[(S & (S - 1)) * C + c] + wcnt[low * C + c]
    for S in range(TT_SUBSETS):
        s = 0
        mx = 0
        for c in range(C):
            s += tot[S * C + c]
            if tot[S * C + c] > mx:
                mx = tot[S * C + c]
        minerr[S] = s - mx
        for y in range(C):
            prev[S * C + y] = s - tot[S * C + y]       # k = 0: the default alone
    # b0 on S: each unit errs on its minority whatever the list does
    for S in range(TT_SUBSETS):
        s = 0
        for i in range(TT_LANE):
            if (S >> i) & 1:
                s += minerr[1 << i]
        b0up[S] = _up(s)
    nm = _lane_masks(pb, lane, tw.masks)
    ms = &tw.masks[0] if nm > 0 else NULL
    for k in range(1, K + 1):
        changed = False
        for S in range(TT_SUBSETS):
            for y in range(C):
                cur[S * C + y] = prev[S * C + y]         # at most k - 1 rules
            if C == 2:
                c0 = cur[2 * S]
                c1 = cur[2 * S + 1]
                for r in range(nm):                      # or a first rule taking S & m
                    m = ms[r]
                    if S & m == 0:
                        continue
                    s = minerr[S & m]
                    low = (S & ~m) * 2
                    c0 = min(c0, s + prev[low])
                    c1 = min(c1, s + prev[low + 1])
                changed = changed or c0 < cur[2 * S] or c1 < cur[2 * S + 1]
                cur[2 * S] = c0
                cur[2 * S + 1] = c1
            else:
                for r in range(nm):
                    m = ms[r]
                    if S & m == 0:
                        continue
                    s = minerr[S & m]
                    low = (S & ~m) * C
                    for y in range(C):
                        v = s + prev[low + y]
                        if v < cur[S * C + y]:
                            cur[S * C + y] = v
                            changed = True
            for y in range(C):
                E[(<size_t>S * K + (k - 1)) * C + y] = _down(cur[S * C + y])
        t = prev
        prev = cur
        cur = t
        if not changed:          # no list gains from one more rule: nor from any later one
            for S in range(TT_SUBSETS):
                for i in range(k, K):
                    for y in range(C):
                        E[(<size_t>S * K + i) * C + y] = E[(<size_t>S * K + (k - 1)) * C + y]
            return True
    return False


cdef inline void _build_blocks(void* ctx, int tid) noexcept nogil:
    """A thread's share of the blocks: every ``n_threads``-th, from its own."""
    cdef TailBuild* tb = <TailBuild*>ctx
    cdef TailTable* tt = tb.tt
    cdef int j = tid
    while j < tt.n_blocks:
        tt.settled[j] = _table_block(tb.pb, tt.lane[j], tt.K, &tt.E[<size_t>j * TT_SUBSETS * tt.stride],
                                     &tt.b0up[<size_t>j * TT_SUBSETS], &tb.work[tid])
        j += tb.n_threads


cdef inline int tail_table_plan(TailTable* tt, const CorelsProblem* pb, int K, size_t max_bytes,
                                double margin, vector[TailWork]& work) except -1:
    """Lay out a table of every block that holds units, for tails of up to ``K`` rules, and
    allocate it and each thread's ``work`` (MemoryError when they do not fit); the blocks are then
    filled by ``_build_blocks``. 0, or 1 when it would pass ``max_bytes`` (the table stays off: a
    table of some blocks charges the rest only their equivalent points, and on the one table of
    many units tried, 15 of 108 blocks, it raised no bound at all)."""
    cdef int lanes = (pb.W * 64 + TT_LANE - 1) // TT_LANE, j, l
    cdef size_t n
    cdef vector[int32_t] order
    tt.n_blocks = 0
    if K < 1 or pb.W > 512 or pb.M == 0:
        return 1
    if K > TT_MAX_K:
        K = TT_MAX_K
    for l in range(lanes):         # the lanes that hold units
        if ((pb.mask[l >> 2] >> (16 * (l & 3))) & 0xFFFF) != 0:
            order.push_back(l)
    n = order.size()
    if n == 0 or n * TT_SUBSETS * (<size_t>K * pb.C + 1) * sizeof(float) > max_bytes:
        return 1
    tt.K, tt.C, tt.stride = K, pb.C, K * pb.C
    tt.lamW = pb.lamW
    tt.margin = margin
    tt.lane = order
    tt.E.resize(n * TT_SUBSETS * <size_t>tt.stride)
    tt.b0up.resize(n * TT_SUBSETS)
    tt.settled.assign(n, 0)
    for j in range(<int>work.size()):
        work[j].tot.resize(<size_t>TT_SUBSETS * pb.C)
        work[j].minerr.resize(TT_SUBSETS)
        work[j].prev.resize(<size_t>TT_SUBSETS * pb.C)
        work[j].cur.resize(<size_t>TT_SUBSETS * pb.C)
        work[j].masks.reserve(pb.M)
    tt.n_blocks = <int>n
    return 0


cdef inline void tail_costs(const TailTable* tt, const uint64_t* u, const uint64_t* capv, double b0,
                            double* from1, double* from2) noexcept nogil:
    """The least any tail of at least one rule (``from1``) and of at least two (``from2``) can cost
    on ``U = u & ~capv`` (``capv`` NULL: ``U = u``), penalties included, in weighted count units;
    ``b0`` is U's equivalent-points bound (0 when it is off: still a lower bound). No margin: a
    caller compares with its own tolerance.

    A tail of ``k <= K`` rules costs at least ``k * lambda + sum_j E_j``; one of more than ``K``
    rules at least ``(K + 1) * lambda`` plus ``b0`` off the settled blocks and ``E_j`` at ``K`` on
    them."""
    cdef double acc[TT_MAX_K * MAX_CLASSES]
    cdef double settled[MAX_CLASSES]
    cdef double t1, t2, v, least
    cdef const float* row
    cdef int j, l, i, k, y, last = (tt.K - 1) * tt.C
    cdef uint64_t bits
    cdef size_t S
    for i in range(tt.stride):
        acc[i] = 0
    for y in range(tt.C):
        settled[y] = 0
    for j in range(tt.n_blocks):
        l = tt.lane[j]
        bits = u[l >> 2]
        if capv != NULL:
            bits &= ~capv[l >> 2]
        S = (bits >> (16 * (l & 3))) & 0xFFFF
        row = &tt.E[(<size_t>j * TT_SUBSETS + S) * tt.stride]
        for i in range(tt.stride):
            acc[i] += row[i]
        if tt.settled[j]:
            for y in range(tt.C):
                settled[y] += row[last + y] - tt.b0up[<size_t>j * TT_SUBSETS + S]
    least = INFINITY
    for y in range(tt.C):
        if settled[y] < least:
            least = settled[y]
    t1 = (tt.K + 1) * tt.lamW + b0 + (least if least > 0 else 0.0)    # more than K rules
    t2 = t1
    for k in range(1, tt.K + 1):
        for y in range(tt.C):
            v = k * tt.lamW + acc[(k - 1) * tt.C + y]
            if v < t1:
                t1 = v
            if k >= 2 and v < t2:
                t2 = v
    from1[0] = t1
    from2[0] = t2


cdef inline double tail_raise(const TailTable* tt, const uint64_t* u, const uint64_t* capv,
                              double b0) noexcept nogil:
    """How far the table lifts the bound of a prefix leaving ``U = u & ~capv`` (``capv`` NULL:
    ``U = u``) whose equivalent-points bound is ``b0``: ``max(0, T(U) - lambda - b0 - margin)``,
    ``T(U)`` the least a tail of at least one rule costs (``tail_costs``)."""
    cdef double t, t2
    if tt.n_blocks == 0:
        return 0.0
    tail_costs(tt, u, capv, b0, &t, &t2)
    t -= tt.lamW + b0 + tt.margin
    return t if t > 0 else 0.0


cdef inline void tail_raise_child(const TailTable* tt, const uint64_t* u, const uint64_t* capv, double b,
                                  double* b0, double* lb) noexcept nogil:
    """Raise a child's ``b0`` and its bound ``lb = b + b0`` by ``tail_raise``: the raised ``b0`` is a
    function of what the child leaves, as ``b0`` is, so the symmetry map compares one class's raised
    bounds exactly."""
    cdef double r = tail_raise(tt, u, capv, b0[0])
    if r > 0:
        b0[0] = b0[0] + r
        lb[0] = b + b0[0]


cdef inline int tail_table_start(TailTable* tt, const CorelsProblem* pb, double best, double root_b0,
                                 size_t max_bytes, double margin, int n_threads, gw_pool** pool) except -1:
    """Build the table for the tails that can still beat the incumbent ``best`` from the root
    (``k * lambda`` below ``best - b0(root)``, at most ``TT_MAX_K``), its blocks filled by
    ``n_threads`` threads of ``pool``. 0, or 1 when it is not built (nothing to table, or no
    memory for it: the search then goes on without it)."""
    cdef int rc, rules
    cdef vector[TailWork] work
    cdef TailBuild tb
    rules = <int>((best - root_b0) / pb.lamW) if best < INFINITY else TT_MAX_K
    rules = max(1, min(rules, tail_rules_that_fit(pb, max_bytes)))
    try:
        work.resize(n_threads)
        rc = tail_table_plan(tt, pb, rules, max_bytes, margin, work)
    except MemoryError:
        rc = 1
    if rc != 0:
        tt.n_blocks = 0
        tt.E.clear()
        tt.E.shrink_to_fit()
        return 1
    tb.tt = tt
    tb.pb = pb
    tb.work = &work[0]
    tb.n_threads = n_threads
    with nogil:
        if n_threads > 1:
            pool_run(pool, n_threads, _build_blocks, <void*>&tb)
        else:
            _build_blocks(<void*>&tb, 0)
    return 0


cdef inline double tail_extension_bound(const TailTable* tt, const CorelsProblem* pb, prefix, bint eqpts,
                                        int64_t* acc) except? -1:
    """What the expansion bounds every strict extension of ``prefix`` by (``Search.extension_bound``),
    in weighted count units: its errors and penalty, ``b0``, lambda and the table's raise."""
    cdef PrefixWalk w
    cdef double b0 = 0, b
    cdef int s
    walk_start(pb, &w)
    for s in seed_check(prefix, pb.M, 255):
        walk_rule(pb, &w, s, acc)
    if eqpts:
        b0 = walk_b0(pb, &w, acc)
    b = w.err + w.depth * pb.lamW
    return b + b0 + tail_raise(tt, &w.u[0], NULL, b0) + pb.lamW


cdef inline int tail_schedule_init(TailSchedule* ts, const CorelsProblem* pb, bint on, int64_t after,
                                   int64_t max_bytes, int64_t ops_per_evaluation) except -1:
    """Switch the table on (or not: also when a table of every block would not fit ``max_bytes``
    with tails of even one rule) for a search over ``pb``. With ``after`` < 0 it is built once the
    search has scored as many children as the build costs (its steps over ``ops_per_evaluation``):
    a short search never pays for it, a long one pays at most about twice."""
    ts.max_bytes = max_bytes if max_bytes > 0 else 0
    ts.decided = not on or tail_rules_that_fit(pb, ts.max_bytes) < 1    # too many units: no table, no restart
    ts.after = after if after >= 0 else tail_table_ops(pb, TT_MAX_K) // ops_per_evaluation
    ts.floor = -INFINITY
    return 0


cdef inline int tail_schedule_slice(const TailSchedule* ts, int64_t evaluated, int64_t* cap) noexcept nogil:
    """What a slice does about the table, after ``evaluated`` children; it may lower ``cap`` (the
    slice's evaluations, -1: none) so the slice stops exactly where the table is due."""
    if ts.decided:
        return TS_GO_ON
    if evaluated >= ts.after:
        return TS_BUILD
    if cap[0] < 0 or cap[0] > ts.after:
        cap[0] = ts.after
        return TS_DUE
    return TS_GO_ON


cdef inline dict tail_schedule_counters(const TailSchedule* ts):
    """The table's part of ``Search.counters()``."""
    return {"tail_table_blocks": ts.table.n_blocks, "tail_table_rules": ts.table.K if ts.table.n_blocks > 0 else 0,
            "tail_table_seconds": ts.seconds, "evaluated_before_tail_table": ts.discarded}
