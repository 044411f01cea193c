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
#include <cstdint>
#include <map>
#include <unordered_map>
#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>
#if !defined(_WIN32)
#include <unistd.h>
#endif

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

/* Count a node in the live figures (bound -> count, prefix error bits -> count); 0 when the
 * containers cannot allocate, and then neither count changed. The search's code is noexcept: a
 * std::bad_alloc escaping it would abort the process instead of ending the search with
 * `out_of_memory` and a valid bound. */
static int gw_live_inc(std::map<double, int64_t>& lb, double key,
                       std::unordered_map<uint64_t, int64_t>& err, uint64_t ekey) {
    try {
        int64_t& a = lb[key];
        try {
            err[ekey] += 1;
        } catch (const std::bad_alloc&) {
            if (a == 0) lb.erase(key);
            return 0;
        }
        a += 1;
        return 1;
    } catch (const std::bad_alloc&) {
        return 0;
    }
}

/* A pool of n - 1 parked threads plus the caller, kept for the life of a search so that a slice
 * of a few milliseconds does not pay for creating threads (on 64 cores that would cost more than
 * the slice). gw_pool_run runs fn(ctx, 0..n-1), the caller as thread 0, and returns when all
 * are done; between runs the threads sleep on a condition variable and use no CPU. If the system
 * refuses a thread, the pool has fewer (every worker loop is correct for any count). */
struct gw_pool {
    std::mutex m;
    std::condition_variable start, done;
    std::vector<std::thread> threads;
    unsigned long long generation = 0;
    int running = 0;
    bool quit = false;
    gw_worker_fn fn = nullptr;
    void* ctx = nullptr;
    long pid = 0;
};

static long gw_pid(void) {
#if defined(_WIN32)
    return 0;
#else
    return (long)getpid();
#endif
}

/* True in a child forked after the pool was made: its threads did not survive the fork, so the
 * pool must be replaced (the old one is left alone: freeing it would join threads that are gone). */
static int gw_pool_stale(gw_pool* p) { return p != nullptr && p->pid != gw_pid(); }

static void gw_pool_loop(gw_pool* p, int tid) {
    unsigned long long seen = 0;
    for (;;) {
        gw_worker_fn fn;
        void* ctx;
        {
            std::unique_lock<std::mutex> lk(p->m);
            p->start.wait(lk, [&] { return p->quit || p->generation != seen; });
            if (p->quit) return;
            seen = p->generation;
            fn = p->fn;
            ctx = p->ctx;
        }
        fn(ctx, tid);
        {
            std::lock_guard<std::mutex> lk(p->m);
            if (--p->running == 0) p->done.notify_one();
        }
    }
}

static gw_pool* gw_pool_new(int n) {
    gw_pool* p = new (std::nothrow) gw_pool();
    if (p == nullptr) return nullptr;
    p->pid = gw_pid();
    try {
        p->threads.reserve(n > 1 ? n - 1 : 0);
        for (int t = 1; t < n; t++) p->threads.emplace_back(gw_pool_loop, p, t);
    } catch (const std::exception&) {
        /* fewer workers */
    }
    return p;
}

static void gw_pool_run(gw_pool* p, gw_worker_fn fn, void* ctx) {
    {
        std::lock_guard<std::mutex> lk(p->m);
        p->fn = fn;
        p->ctx = ctx;
        p->running = (int)p->threads.size();
        p->generation++;
    }
    p->start.notify_all();
    fn(ctx, 0);
    std::unique_lock<std::mutex> lk(p->m);
    p->done.wait(lk, [&] { return p->running == 0; });
}

static void gw_pool_free(gw_pool* p) {
    if (p == nullptr) return;
    {
        std::lock_guard<std::mutex> lk(p->m);
        p->quit = true;
    }
    p->start.notify_all();
    for (auto& th : p->threads) th.join();
    delete p;
}

#endif
