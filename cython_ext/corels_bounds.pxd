# cython: language_level=3
"""The bound arithmetic of the CORELS search (docs/maintainers/corels-proofs.md): when a prefix is hopeless, and
Theorem 7's f for the live-queue figures.

Pure inline functions over their arguments, ``nogil``: ``Search`` holds the incumbent, lambda
and the switches, and decides what to prune (its policy).
"""

from libc.math cimport floor


cdef inline bint hopeless(double lb, int depth, double best, double lamW, int max_len,
                          bint lookahead, bint length_bound) noexcept nogil:
    """True when no strict extension of a prefix with bound ``lb`` and length ``depth`` can beat
    ``best`` (R^c): the lookahead bound (Theorem 2) or the plain one, the length bound, the cap."""
    if lookahead:
        if lb + lamW >= best:
            return True
    elif lb >= best:
        return True
    if length_bound and (depth + 1) * lamW >= best:
        return True
    return depth >= max_len


cdef inline int theorem7_f(double err, int L, double best, double lamW, int M) noexcept nogil:
    """Theorem 7: how many more rules a prefix of length ``L`` and error ``err`` may take before
    its penalty reaches ``best``, clipped to [0, M - L] (M - L when lambda is 0)."""
    cdef double x
    if lamW <= 0:
        return M - L
    x = floor((best - (err + L * lamW)) / lamW)
    if x < 0:
        x = 0
    if x > M - L:
        x = M - L
    return <int>x


cdef struct Pruning:        # what ``hopeless`` reads besides R^c: the search's switches
    double lamW
    int max_len
    bint lookahead, length_bound


cdef inline bint prunes(const Pruning* pr, double lb, int depth, double best) noexcept nogil:
    """``hopeless`` under the switches ``pr``."""
    return hopeless(lb, depth, best, pr.lamW, pr.max_len, pr.lookahead, pr.length_bound)
