# cython: language_level=3
"""The counting arithmetic of the CORELS search's scoring: class counts from bit-sliced count planes.

Counts are stored bit-sliced (plane j of a count holds bit j of every unit's count), so a count
over a set of units is ``sum_j 2^j * popcount(set & plane_j)``. A plane belongs to a class
(``cls`` -1: the total count, k >= 1: class k; class 0 is the total minus the others) and has a
shift ``sh`` (its bit). Planes are stored word-major: plane p of word i is ``planes[i * P + p]``.
Pure inline functions over their arguments, ``nogil``: ``Search`` holds the planes and weights.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t

from bitops cimport gw_popcount64


cdef inline bint binary_counts(int W, const uint64_t* u, const uint64_t* cap, uint64_t* v,
                               const uint64_t* planes, int P, int PT, const int32_t* sh,
                               double* cnt) noexcept nogil:
    """Two-class counts of ``v = u & cap`` (``cap`` NULL: of ``u``), written to ``v`` (unless NULL);
    True when ``v`` has any unit.

    Planes ``[0, PT)`` hold the total count, ``[PT, P)`` class 1; two register accumulators.
    """
    cdef int i, p
    cdef uint64_t t
    cdef int64_t tot = 0, c1 = 0
    cdef const uint64_t* base
    cdef bint any_bits = False
    for i in range(W):
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


cdef inline void plane_popcounts(int W, const uint64_t* vec, const uint64_t* planes, int P,
                                 int64_t* acc) noexcept nogil:
    """``acc[p] = popcount(vec & plane_p)`` for every plane."""
    cdef int i, p
    cdef uint64_t t
    for p in range(P):
        acc[p] = 0
    for i in range(W):
        t = vec[i]
        if t == 0:
            continue
        for p in range(P):
            acc[p] += gw_popcount64(t & planes[i * P + p])


cdef inline void fold_counts(int C, const int64_t* acc, int n, const int32_t* cls, const int32_t* sh,
                             double* cnt) noexcept nogil:
    """Per-class counts from per-plane popcounts."""
    cdef int p, k
    cdef double total = 0
    for k in range(C):
        cnt[k] = 0
    for p in range(n):
        if cls[p] < 0:
            total += <double>(acc[p] << sh[p])
        else:
            cnt[cls[p]] += <double>(acc[p] << sh[p])
    cnt[0] = total
    for k in range(1, C):
        cnt[0] -= cnt[k]


cdef inline double weighted_majority(int C, const double* weights, const double* cnt, double* correct,
                                     int* label) noexcept nogil:
    """Total weight of ``cnt`` and, in ``correct``, the weight of its majority class."""
    cdef int k
    cdef double tot = 0, best = -1, w
    label[0] = 0
    for k in range(C):
        w = weights[k] * cnt[k]
        tot += w
        if w >= best:      # ties go to the higher class (1 for binary), as Algorithm 5
            best = w
            label[0] = k
    correct[0] = best
    return tot


cdef inline double weighted_sum(int C, const double* weights, const double* cnt) noexcept nogil:
    cdef int k
    cdef double tot = 0
    for k in range(C):
        tot += weights[k] * cnt[k]
    return tot


cdef inline bint masked_counts(int C, int W, const uint64_t* u, const uint64_t* cap, uint64_t* v,
                               const uint64_t* planes, int P, const int32_t* cls, const int32_t* sh,
                               int64_t* acc, double* cnt) noexcept nogil:
    """Per-class counts of ``v = u & cap`` (written to ``v``), any number of classes; True when
    ``v`` has any unit (else the counts are 0). ``binary_counts`` is the two-class shortcut."""
    cdef int i, p, k
    cdef uint64_t t
    cdef bint any_bits = False
    for p in range(P):
        acc[p] = 0
    for i in range(W):
        t = u[i] & cap[i]
        v[i] = t
        if t == 0:
            continue
        any_bits = True
        for p in range(P):
            acc[p] += gw_popcount64(t & planes[i * P + p])
    if any_bits:
        fold_counts(C, acc, P, cls, sh, cnt)
    else:
        for k in range(C):
            cnt[k] = 0
    return any_bits
