# cython: language_level=3
"""The CORELS searches' threads (``corels_threads.h``), declared once for ``corels.Search`` and
``corels_rashomon.Enumerator``: the locks, the parked worker pool and the live-figure counter, and
the slice both kernels' workers share (``WorkerSlice``: the lock, the pool, the slice's limits, who
is in flight and who waits; the workers' loops stay with their kernels)."""

from libc.stdint cimport uint64_t, int64_t, uint8_t
from libc.string cimport memset
from libcpp.unordered_map cimport unordered_map
from libcpp.map cimport map as ordered_map

from monotonic_clock cimport now

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


cdef inline void times_add(WorkerTimes* total, WorkerTimes* t) noexcept nogil:
    """Add a worker's times to ``total`` (every field a double) and zero them."""
    cdef size_t k
    for k in range(sizeof(WorkerTimes) // sizeof(double)):
        (<double*>total)[k] += (<double*>t)[k]
    memset(t, 0, sizeof(WorkerTimes))


cdef struct WorkerSlice:  # a slice's workers: their lock and pool, the slice's limits, their rendezvous
    gw_sync* sync         # the queue lock (and the incumbent's)
    gw_pool* pool         # the worker threads, parked between slices (made on first run)
    double t_end          # the slice ends at this time (monotonic_clock.now)
    const uint8_t* stop_ptr   # the caller's stop flag
    int64_t max_evals     # the evaluations the run stops at (-1: none)
    int n_inflight        # expansions scored outside the lock now
    int n_waiting         # workers waiting for another's children
    bint halt             # the slice is over for every worker


cdef inline void slice_start(WorkerSlice* ws, double seconds, const uint8_t* stop, int64_t max_evals) noexcept nogil:
    """A slice of ``seconds`` from now, with the caller's stop flag and evaluation cap."""
    ws.t_end = now() + seconds
    ws.stop_ptr = stop
    ws.max_evals = max_evals
    ws.n_inflight = 0
    ws.n_waiting = 0
    ws.halt = False


cdef inline bint slice_over(const WorkerSlice* ws, int64_t evaluated, bint out_of_memory) noexcept nogil:
    """The stop flag, the memory, the slice's time or the evaluations end the slice."""
    return (ws.stop_ptr[0] != 0 or out_of_memory or now() >= ws.t_end
            or (ws.max_evals >= 0 and evaluated >= ws.max_evals))


cdef inline void slice_wait(WorkerSlice* ws) noexcept nogil:
    """Wait (the lock released) for another worker's children, half a millisecond at most."""
    ws.n_waiting += 1
    gw_wait(ws.sync, 0.0005)
    ws.n_waiting -= 1


cdef inline void slice_notify(WorkerSlice* ws) noexcept nogil:
    """Wake the waiting workers, if any."""
    if ws.n_waiting > 0:
        gw_notify_all(ws.sync)


cdef inline dict times_dict(const WorkerTimes* t, double slices):
    """The workers' times summed (``Search.thread_times``); ``slices``: the wall time of their slices."""
    return {"score": t.score, "lock_wait": t.wait, "locked": t.locked, "idle": t.idle, "slices": slices,
            "locked_take": t.take, "locked_admit": t.admit}
