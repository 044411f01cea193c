# cython: language_level=3
"""The CORELS searches' threads (``corels_threads.h``), declared once for ``corels.Search`` and
``corels_rashomon.Enumerator``: the locks, the parked worker pool and the live-figure counter."""

from libc.stdint cimport uint64_t, int64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.map cimport map as ordered_map

cdef extern from "corels_threads.h" nogil:
    ctypedef struct gw_sync:
        pass
    ctypedef void (*gw_worker_fn)(void* ctx, int tid) noexcept nogil
    gw_sync* gw_sync_new()
    void gw_sync_free(gw_sync* s)
    void gw_lock(gw_sync* s)
    void gw_unlock(gw_sync* s)
    void gw_inc_lock(gw_sync* s)
    void gw_inc_unlock(gw_sync* s)
    void gw_wait(gw_sync* s, double seconds)
    void gw_notify_all(gw_sync* s)
    ctypedef struct gw_pool:
        pass
    gw_pool* gw_pool_new(int n)
    void gw_pool_run(gw_pool* p, gw_worker_fn fn, void* ctx)
    void gw_pool_free(gw_pool* p)
    bint gw_pool_stale(gw_pool* p)
    int gw_live_inc(ordered_map[double, int64_t]& lb, double key,
                    unordered_map[uint64_t, int64_t]& err, uint64_t ekey)


cdef inline void pool_run(gw_pool** pool, int n, gw_worker_fn fn, void* ctx) noexcept nogil:
    """Run ``fn(ctx, tid)`` on the ``n`` parked workers of ``*pool``, made on first use (and made
    again in a forked child, where the pool's threads are gone); on this thread alone when there
    is no memory even for the pool."""
    if pool[0] != NULL and gw_pool_stale(pool[0]):
        pool[0] = NULL
    if pool[0] == NULL:
        pool[0] = gw_pool_new(n)
    if pool[0] == NULL:
        fn(ctx, 0)
    else:
        gw_pool_run(pool[0], fn, ctx)


cdef inline void pool_free(gw_pool** pool) noexcept nogil:
    """Stop and free the workers (not a forked child's copy: its threads are not its own)."""
    if pool[0] != NULL and not gw_pool_stale(pool[0]):
        gw_pool_free(pool[0])
    pool[0] = NULL


cdef struct WorkerTimes:  # where a worker's slices went, in seconds (Search.thread_times)
    double score          # scoring children without a lock
    double wait           # waiting for the queue lock
    double locked         # holding it
    double idle           # queue empty while another expansion was in flight
    double take, admit    # parts of locked: taking nodes off the heap; admitting children
