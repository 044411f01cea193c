/* Threads for the CORELS search (cython_ext/corels.pyx): a handful of C++17 standard-library
 * primitives behind plain C functions, so the Cython code stays `nogil` and needs no OpenMP
 * (no extra compiler or linker flag beyond -pthread; builds the same from the sdist).
 *
 * gw_sync holds the search's locks: `queue` guards the shared structures the second pass of an
 * expansion touches (node pool, queue, symmetry map, live statistics); `incumbent` guards the
 * best objective and its prefix, written rarely; `cv` lets an idle worker sleep until a node is
 * queued or the last batch in flight ends.
 */
#ifndef GW_CORELS_THREADS_H
#define GW_CORELS_THREADS_H

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

struct gw_sync {
    std::mutex queue;
    std::mutex incumbent;
    std::condition_variable_any cv;
};

typedef void (*gw_worker_fn)(void* ctx, int tid);

static gw_sync* gw_sync_new(void) { return new (std::nothrow) gw_sync(); }
static void gw_sync_free(gw_sync* s) { delete s; }
static inline void gw_lock(gw_sync* s) { s->queue.lock(); }
static inline void gw_unlock(gw_sync* s) { s->queue.unlock(); }
static inline void gw_inc_lock(gw_sync* s) { s->incumbent.lock(); }
static inline void gw_inc_unlock(gw_sync* s) { s->incumbent.unlock(); }

/* With `queue` held: sleep until notified or `seconds` pass; `queue` is held again on return. */
static inline void gw_wait(gw_sync* s, double seconds) {
    s->cv.wait_for(s->queue, std::chrono::duration<double>(seconds));
}

static inline void gw_notify_all(gw_sync* s) { s->cv.notify_all(); }

/* Run fn(ctx, 0..n-1) on n threads (the caller is thread 0) and join them all. If the system
 * refuses a thread, the search goes on with the ones it got; returns how many ran. */
static int gw_run_threads(int n, gw_worker_fn fn, void* ctx) {
    std::vector<std::thread> pool;
    int started = 1;
    try {
        pool.reserve(n > 1 ? n - 1 : 0);
        for (int t = 1; t < n; t++) {
            pool.emplace_back(fn, ctx, t);
            started++;
        }
    } catch (const std::exception&) {
        /* fewer workers: every worker loop is correct for any count */
    }
    fn(ctx, 0);
    for (auto& th : pool) th.join();
    return started;
}

#endif
