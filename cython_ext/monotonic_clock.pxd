# cython: language_level=3
"""The kernels' one clock: monotonic wall time for slice deadlines and time-to-best figures."""

from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


cdef inline double now() noexcept nogil:
    """Seconds on the monotonic clock (arbitrary origin; only differences mean anything)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + 1e-9 * <double>ts.tv_nsec
