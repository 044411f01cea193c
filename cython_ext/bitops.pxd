# cython: language_level=3
"""Word-level bit-vector primitives shared by the rule solvers.

A bit vector over N samples is ``ceil(N / 64)`` ``uint64`` words, sample ``i`` at bit ``i % 64`` of
word ``i // 64``. Bits past N are always zero, so a popcount never needs a mask; only a negation
does (use ``tail_mask``). Every function is inline, ``nogil`` and allocation-free, so that a search
loop can ``cimport`` them and run with the GIL released.
"""

from libc.stdint cimport uint64_t, int64_t

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int gw_popcount64(unsigned long long x) { return (int)__popcnt64(x); }
    #else
    static inline int gw_popcount64(unsigned long long x) { return __builtin_popcountll(x); }
    #endif
    """
    int gw_popcount64(uint64_t x) noexcept nogil


cdef inline Py_ssize_t words_for(Py_ssize_t n_bits) noexcept nogil:
    return (n_bits + 63) >> 6


cdef inline uint64_t tail_mask(Py_ssize_t n_bits) noexcept nogil:
    """The mask of valid bits in the last word of an ``n_bits`` vector."""
    cdef int r = n_bits & 63
    if r == 0:
        return <uint64_t>0xFFFFFFFFFFFFFFFF
    return (<uint64_t>1 << r) - 1


cdef inline int64_t popcount(const uint64_t* a, Py_ssize_t n) noexcept nogil:
    cdef int64_t c = 0
    cdef Py_ssize_t i
    for i in range(n):
        c += gw_popcount64(a[i])
    return c


cdef inline int64_t and_popcount(const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    """|a & b|"""
    cdef int64_t c = 0
    cdef Py_ssize_t i
    for i in range(n):
        c += gw_popcount64(a[i] & b[i])
    return c


cdef inline int64_t andnot_popcount(const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    """|a & ~b|"""
    cdef int64_t c = 0
    cdef Py_ssize_t i
    for i in range(n):
        c += gw_popcount64(a[i] & ~b[i])
    return c


cdef inline void and_into(uint64_t* out, const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    """out = a & b (out may alias a or b)"""
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = a[i] & b[i]


cdef inline void not_into(uint64_t* out, const uint64_t* a, Py_ssize_t n_bits) noexcept nogil:
    """out = ~a over ``n_bits`` bits, tail cleared."""
    cdef Py_ssize_t i, n = words_for(n_bits)
    for i in range(n):
        out[i] = ~a[i]
    if n > 0:
        out[n - 1] &= tail_mask(n_bits)


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """The splitmix64 finaliser: a cheap, well-spread 64-bit mix (hashes of bit vectors)."""
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    """One splitmix64 step: the golden-ratio increment, then ``mix64``."""
    return mix64(x + <uint64_t>0x9E3779B97F4A7C15)
