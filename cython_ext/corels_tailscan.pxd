# cython: language_level=3
"""What every antecedent captures of a shrinking set of units, kept per level of the tail count.

The tail table (``TailCounter`` in ``corels_rashomon.pyx``) scores every antecedent on each row
set ``U`` it computes a table for: what the antecedent captures of ``U``, per class, its
equivalent-points minority, and a hash of the captured units. Scored word by word that is an AND
and a pass over the count planes per antecedent per table (about 75 ns each on COMPAS, 11.1 G of
them at epsilon 0.05). Here the same figures are kept *per level* instead: the table of
``U \\ b`` is one level below the table of ``U``, and what an antecedent ``a`` captures of
``U \\ b`` is what it captured of ``U`` less what it captured of the units ``b`` removed. So a
level is the level above, copied, less the contribution of each removed unit to each antecedent
that covers it (a unit's antecedents are a short list: 28 of 155 on COMPAS), or built from the
units left when those are fewer. Counts are integers held in doubles, so the subtractions are
exact and each figure is bit for bit what the planes give (``problem_counts``).

The hash of a captured set is the XOR of one random key per unit (Zobrist): the key of
``U \\ b`` is the key of ``U`` XOR the key of what ``b`` captures of ``U``, with no pass over the
words. Keys are only hints: the table verifies row sets before trusting one.

A struct held by value by its one user (no Python object; every function nogil, allocation only
in ``tailscan_init`` and the first build of a level).
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector

from bitops cimport gw_popcount64, splitmix64
from corels_problem cimport CorelsProblem, LABELS, MINORITY, MAX_CLASSES, problem_counts

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int gw_ctz64(unsigned long long x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
    #else
    static inline int gw_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    #endif
    #include <vector>
    #include <cstdint>
    #include <algorithm>
    /* The ``head`` ids of largest ``key[id]`` first, largest first (ties by id), the rest after
     * them in any order. */
    static void gw_sort_by_desc(std::vector<int32_t>& ids, const double* key, size_t head) {
        auto cmp = [key](int32_t a, int32_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); };
        if (head >= ids.size()) std::sort(ids.begin(), ids.end(), cmp);
        else std::partial_sort(ids.begin(), ids.begin() + head, ids.end(), cmp);
    }
    /* Size one level's arrays; 0 when memory runs out. */
    static int gw_ts_size(std::vector<double>& cnt, std::vector<double>& mz, std::vector<uint64_t>& zh,
                          std::vector<int32_t>& nu, size_t mc, size_t mzn, size_t m) {
        try { cnt.resize(mc); mz.resize(mzn); zh.resize(m); nu.resize(m); } catch (...) { return 0; }
        return 1;
    }
    """
    int gw_ctz64(uint64_t x) noexcept nogil
    void gw_sort_by_desc(vector[int32_t]& ids, const double* key, size_t head) noexcept nogil
    int gw_ts_size(vector[double]& cnt, vector[double]& mz, vector[uint64_t]& zh, vector[int32_t]& nu,
                   size_t mc, size_t mzn, size_t m) noexcept nogil


cdef struct TailScan:
    int M, W, C, units
    bint minority                 # whether the equivalent-points minority counts are kept
    vector[int32_t] start         # units -> the antecedents covering them (CSR)
    vector[uint16_t] covers
    vector[double] ulab           # (units, C) each unit's label counts
    vector[double] umin           # (units, C) each unit's minority counts
    vector[uint64_t] ukey         # (units) each unit's random key
    # per level: (M, C) label counts and minority counts, (M) keys and unit counts of what each
    # antecedent captures of that level's U
    vector[vector[double]] cnt
    vector[vector[double]] mz
    vector[vector[uint64_t]] zh
    vector[vector[int32_t]] nu
    # what each antecedent captures of a set of removed units (tailscan_delta), and which
    vector[double] dcnt
    vector[int32_t] dnu
    vector[int32_t] touched


cdef inline void tailscan_init(TailScan* ts, const CorelsProblem* pb, int levels, bint minority,
                               int64_t* acc) except *:
    """Each unit's counts (read off the planes one unit at a time, so they are the planes'
    figures), its random key and the antecedents covering it; ``levels`` levels, built lazily."""
    cdef int W = pb.W, C = pb.C, M = pb.M, u, a, k, n
    cdef vector[uint64_t] one
    cdef double cnt[MAX_CLASSES]
    ts.M = M
    ts.W = W
    ts.C = C
    ts.minority = minority
    n = 0
    for k in range(W):
        n += gw_popcount64(pb.mask[k])
    ts.units = n
    ts.ulab.assign(<size_t>n * C, 0)
    ts.umin.assign(<size_t>n * C, 0)
    ts.ukey.assign(n, 0)
    ts.start.assign(n + 1, 0)
    one.assign(W, 0)
    for u in range(n):
        one[u >> 6] = (<uint64_t>1) << (u & 63)
        problem_counts(pb, &one[0], LABELS, cnt, acc)
        for k in range(C):
            ts.ulab[<size_t>u * C + k] = cnt[k]
        if minority:
            problem_counts(pb, &one[0], MINORITY, cnt, acc)
            for k in range(C):
                ts.umin[<size_t>u * C + k] = cnt[k]
        one[u >> 6] = 0
        ts.ukey[u] = splitmix64(0x2545F4914F6CDD1DULL + <uint64_t>u * 0x9E3779B97F4A7C15ULL)
        for a in range(M):
            if (pb.caps[<size_t>a * W + (u >> 6)] >> (u & 63)) & 1:
                ts.covers.push_back(<uint16_t>a)
        ts.start[u + 1] = <int32_t>ts.covers.size()
    ts.dcnt.assign(<size_t>M * C, 0)
    ts.dnu.assign(M, 0)
    ts.touched.reserve(M)
    ts.cnt.resize(levels)
    ts.mz.resize(levels)
    ts.zh.resize(levels)
    ts.nu.resize(levels)


cdef inline int tailscan_ready(TailScan* ts, int L) noexcept nogil:
    """Make level ``L``'s arrays exist (0 when memory runs out)."""
    cdef size_t MC = <size_t>ts.M * ts.C
    if ts.nu[L].size() == <size_t>ts.M:
        return 1
    return gw_ts_size(ts.cnt[L], ts.mz[L], ts.zh[L], ts.nu[L], MC, MC if ts.minority else 0, ts.M)


cdef inline void _tailscan_unit(TailScan* ts, int L, int u, double sign) noexcept nogil:
    """Add (sign 1) or remove (sign -1) unit ``u`` to what each antecedent covering it captures."""
    cdef int C = ts.C, j, k, a
    cdef const double* lab = &ts.ulab[<size_t>u * C]
    cdef const double* mino = &ts.umin[<size_t>u * C]
    cdef double* cnt = ts.cnt[L].data()
    cdef double* mz = NULL
    cdef uint64_t* zh = ts.zh[L].data()
    cdef int32_t* nu = ts.nu[L].data()
    cdef uint64_t key = ts.ukey[u]
    cdef int32_t step = 1 if sign > 0 else -1
    if ts.minority:
        mz = ts.mz[L].data()
    for j in range(ts.start[u], ts.start[u + 1]):
        a = ts.covers[j]
        for k in range(C):
            cnt[<size_t>a * C + k] += sign * lab[k]
        if mz != NULL:
            for k in range(C):
                mz[<size_t>a * C + k] += sign * mino[k]
        zh[a] ^= key
        nu[a] += step


cdef inline int tailscan_build(TailScan* ts, int L, const uint64_t* U) noexcept nogil:
    """Level ``L`` from scratch: what each antecedent captures of ``U``. 0 when memory runs out."""
    cdef int i, u
    cdef uint64_t w
    if not tailscan_ready(ts, L):
        return 0
    memset(ts.cnt[L].data(), 0, sizeof(double) * ts.cnt[L].size())
    if ts.minority:
        memset(ts.mz[L].data(), 0, sizeof(double) * ts.mz[L].size())
    memset(ts.zh[L].data(), 0, sizeof(uint64_t) * ts.M)
    memset(ts.nu[L].data(), 0, sizeof(int32_t) * ts.M)
    for i in range(ts.W):
        w = U[i]
        while w:
            u = i * 64 + gw_ctz64(w)
            w &= w - 1
            _tailscan_unit(ts, L, u, 1.0)
    return 1


cdef inline int tailscan_child(TailScan* ts, int L, const uint64_t* removed, const uint64_t* left) noexcept nogil:
    """Level ``L`` from level ``L - 1`` (built), whose U loses the units ``removed``; ``left`` is
    what stays. Copies and subtracts, or builds from ``left`` when that is fewer units. 0 when
    memory runs out."""
    cdef int i, u, n_removed = 0, n_left = 0
    cdef uint64_t w
    for i in range(ts.W):
        n_removed += gw_popcount64(removed[i])
        n_left += gw_popcount64(left[i])
    if n_left <= n_removed:
        return tailscan_build(ts, L, left)
    if not tailscan_ready(ts, L):
        return 0
    memcpy(ts.cnt[L].data(), ts.cnt[L - 1].data(), sizeof(double) * ts.cnt[L].size())
    if ts.minority:
        memcpy(ts.mz[L].data(), ts.mz[L - 1].data(), sizeof(double) * ts.mz[L].size())
    memcpy(ts.zh[L].data(), ts.zh[L - 1].data(), sizeof(uint64_t) * ts.M)
    memcpy(ts.nu[L].data(), ts.nu[L - 1].data(), sizeof(int32_t) * ts.M)
    for i in range(ts.W):
        w = removed[i]
        while w:
            u = i * 64 + gw_ctz64(w)
            w &= w - 1
            _tailscan_unit(ts, L, u, -1.0)
    return 1


cdef inline uint64_t tailscan_key(const TailScan* ts, const uint64_t* U) noexcept nogil:
    """The key of a unit set (XOR of its units' keys), computed from its words."""
    cdef int i, u
    cdef uint64_t w, h = 0
    for i in range(ts.W):
        w = U[i]
        while w:
            u = i * 64 + gw_ctz64(w)
            w &= w - 1
            h ^= ts.ukey[u]
    return h



# --------------------------------------------------- the one-rule bound on a child (two classes)
#
# A one-rule tail (a -> q_a, default -> q_0) on V errs (w(V) - w_q0(V)) - gain(a & V) with
# gain(X) = w_qa(X) - w_q0(X), additive over units. For V = U \ b and any a,
# gain(a & V) = gain(a & U) - gain(a & b & U) <= G(U) + neg(b & U), with G(U) the largest gain of
# any antecedent on U and neg(X) the sum over X's units of max(0, w_q0 - w_qa), which with two
# classes is w_q0(X) less X's equivalent-points minority. So the parent bounds every one-rule tail
# of each child from its own scan, without building the child's level
# (docs/maintainers/corels-rashomon-count.md proves it).

cdef inline void gain_tops(const TailScan* ts, int L, const double* weights, double* g10, double* g01) noexcept nogil:
    """Two classes: the largest w1 - w0 (``g10``) and w0 - w1 (``g01``) over what the antecedents
    capture of level ``L``'s U (-inf when none captures a unit)."""
    cdef const double* cnt = ts.cnt[L].data()
    cdef const int32_t* nu = ts.nu[L].data()
    cdef double d
    cdef int t
    g10[0] = -1e300
    g01[0] = -1e300
    for t in range(ts.M):
        if nu[t] == 0:
            continue
        d = weights[1] * cnt[2 * t + 1] - weights[0] * cnt[2 * t]
        if d > g10[0]:
            g10[0] = d
        if -d > g01[0]:
            g01[0] = -d


cdef inline double one_rule_floor(const double* weights, const double* ucnt, const double* bcnt, double bmino,
                                  double g10, double g01) noexcept nogil:
    """Two classes: a lower bound on the errors of every tail of one rule and the default on
    U \\ b, from U's counts ``ucnt``, b's capture of U (``bcnt``, its minority weight ``bmino``) and
    U's largest gains (``gain_tops``)."""
    cdef double v0 = weights[0] * (ucnt[0] - bcnt[0]), v1 = weights[1] * (ucnt[1] - bcnt[1])
    cdef double up10 = g10 + weights[0] * bcnt[0] - bmino      # the gain of a rule -> 1, default 0
    cdef double up01 = g01 + weights[1] * bcnt[1] - bmino      # the gain of a rule -> 0, default 1
    cdef double e0 = v1 - (up10 if up10 > 0 else 0.0)          # default 0 errs v1 less the gain
    cdef double e1 = v0 - (up01 if up01 > 0 else 0.0)
    return e0 if e0 < e1 else e1


cdef inline void tailscan_delta(TailScan* ts, const uint64_t* removed) noexcept nogil:
    """What each antecedent captures of the units ``removed`` (``dcnt``, ``dnu``; the antecedents
    touched listed in ``touched``), so that a rule's capture of U less them is its level's figure
    less this, with no level built. ``tailscan_delta_clear`` undoes it."""
    cdef int i, u, j, k, a, C = ts.C
    cdef uint64_t w
    for i in range(ts.W):
        w = removed[i]
        while w:
            u = i * 64 + gw_ctz64(w)
            w &= w - 1
            for j in range(ts.start[u], ts.start[u + 1]):
                a = ts.covers[j]
                if ts.dnu[a] == 0:
                    ts.touched.push_back(a)
                ts.dnu[a] += 1
                for k in range(C):
                    ts.dcnt[<size_t>a * C + k] += ts.ulab[<size_t>u * C + k]


cdef inline void tailscan_delta_clear(TailScan* ts) noexcept nogil:
    cdef size_t j
    cdef int a, k
    for j in range(ts.touched.size()):
        a = ts.touched[j]
        ts.dnu[a] = 0
        for k in range(ts.C):
            ts.dcnt[<size_t>a * ts.C + k] = 0
    ts.touched.clear()


cdef enum:
    GAIN_HEAD = 16        # gain_orders sorts this many; a walk past them checks each one


cdef inline void gain_orders(const TailScan* ts, int L, const double* weights, vector[int32_t]& order10,
                             vector[int32_t]& order01, vector[double]& pos10, vector[double]& pos01,
                             const vector[int32_t]* prev10, const vector[int32_t]* prev01) noexcept nogil:
    """Two classes: the antecedents capturing a unit of level ``L``'s U, by pos(t & U) largest first,
    for a rule -> 1 before a default 0 (``order10``; pos = w1 less the minority) and the other way
    (``order01``), with their pos per antecedent. A tail ``t`` then the default on U \\ b gains at
    most pos(t & U) over the default alone, so ``_one_rule_child`` scores only the head of each
    order. Only the first ``GAIN_HEAD`` of each are sorted; the rest follow in any order.
    ``prev10``/``prev01`` (or NULL): the orders of a superset of U (the table above), whose
    antecedents are all those capturing a unit of U and more: taken in their order, which is
    nearly this one (pos only shrinks, and only for the antecedents covering the units removed),
    the head's selection rarely replaces one (the same orders, found sooner)."""
    cdef const double* cnt = ts.cnt[L].data()
    cdef const double* mz = ts.mz[L].data()
    cdef const int32_t* nu = ts.nu[L].data()
    cdef double mino
    cdef int t
    cdef size_t j
    cdef size_t n = prev10.size() if prev10 != NULL else <size_t>ts.M
    order10.clear()
    order01.clear()
    for j in range(n):
        t = prev10[0][j] if prev10 != NULL else <int>j
        if nu[t] == 0:
            continue
        mino = weights[0] * mz[2 * t] + weights[1] * mz[2 * t + 1]
        pos10[t] = weights[1] * cnt[2 * t + 1] - mino
        pos01[t] = weights[0] * cnt[2 * t] - mino
        order10.push_back(t)
        if prev01 == NULL:
            order01.push_back(t)
    if prev01 != NULL:
        for j in range(prev01.size()):
            t = prev01[0][j]
            if nu[t] != 0:
                order01.push_back(t)
    gw_sort_by_desc(order10, pos10.data(), GAIN_HEAD)
    gw_sort_by_desc(order01, pos01.data(), GAIN_HEAD)
