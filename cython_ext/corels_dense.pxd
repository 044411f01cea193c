# cython: language_level=3
"""The CORELS search's dense kernel: two classes and few units, counted by masked sums.

With binary labels and at most a few thousand units, a child's counts are cheaper as sums of
per-unit counts under a 0/-1 mask per antecedent (``gw_masked_sum3``, vectorised) than as
popcounts over bit-sliced planes. ``DenseKernel`` holds the masks and the per-unit counts (total,
class 1, equivalent-points minority); ``dense_context`` masks them by what a prefix leaves
uncaptured, once per expansion. ``corels.Search`` chooses it (``kernel="auto"``) and reads the sums
in its scoring. A struct and inline functions, as ``corels_disk.pxd``: a cdef class shared between
extension modules cannot be imported under its installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t
from libcpp.vector cimport vector

from corels_problem cimport CorelsProblem


cdef struct DenseKernel:
    bint on                 # chosen (else the bit-sliced counts)
    int UP                  # units, padded to 16
    vector[int32_t] dmask   # per antecedent, 0/-1 per unit: -1 where it captures
    vector[int32_t] ut, u1, uzt   # per unit: its count, its class-1 count, its minority count


cdef inline void dense_init(DenseKernel* dk, const CorelsProblem* pb, str kernel, int n_units) except *:
    """Choose the kernel: dense masks for two classes and few units, else bit-sliced."""
    cdef int i, p, s
    cdef int64_t big = 0
    if kernel not in ("auto", "dense", "bitsliced"):
        raise ValueError(f"unknown kernel {kernel!r}; choose auto, dense or bitsliced")
    dk.UP = ((n_units + 15) // 16) * 16
    eligible = (pb.C == 2 and pb.QT == pb.Q
                and <int64_t>pb.M * dk.UP <= 16 * 1024 * 1024)
    dk.on = eligible and (kernel == "dense" or (kernel == "auto" and n_units <= 4096))
    if not dk.on:
        return
    dk.ut.assign(dk.UP, 0)
    dk.u1.assign(dk.UP, 0)
    dk.uzt.assign(dk.UP, 0)
    for i in range(n_units):
        for p in range(pb.P):
            if (pb.lplanes[<size_t>(i >> 6) * pb.P + p] >> (i & 63)) & 1:
                if pb.lclass[p] < 0:
                    dk.ut[i] += 1 << pb.lshift[p]
                else:
                    dk.u1[i] += 1 << pb.lshift[p]
        for p in range(pb.Q):
            if (pb.zplanes[<size_t>(i >> 6) * pb.Q + p] >> (i & 63)) & 1:
                dk.uzt[i] += 1 << pb.zshift[p]
        big += dk.ut[i]
    if big >= (<int64_t>1 << 31):
        dk.on = False
        return
    dk.dmask.assign(<size_t>pb.M * dk.UP, 0)
    for s in range(pb.M):
        for i in range(n_units):
            if (pb.caps[<size_t>s * pb.W + (i >> 6)] >> (i & 63)) & 1:
                dk.dmask[<size_t>s * dk.UP + i] = -1


cdef inline void dense_context(const DenseKernel* dk, const CorelsProblem* pb, const uint64_t* u, int32_t* wt,
                               int32_t* w1, int32_t* wz) noexcept nogil:
    """The dense kernel's per-unit counts of the units ``u`` leaves uncaptured (the rest 0)."""
    cdef int i
    cdef int32_t m
    for i in range(dk.UP):
        m = -<int32_t>((u[i >> 6] >> (i & 63)) & 1) if i < pb.W * 64 else 0
        wt[i] = dk.ut[i] & m
        w1[i] = dk.u1[i] & m
        wz[i] = dk.uzt[i] & m
