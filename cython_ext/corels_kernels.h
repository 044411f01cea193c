/* Dense counting kernel of the CORELS search (cython_ext/corels.pyx).
 *
 * When the data collapse to few units (equivalence classes), per-unit counts summed under an
 * antecedent's 0/-1 mask beat bit-sliced popcounts: the loop is AND + ADD over int32 lanes,
 * which the compiler vectorises, and target_clones picks AVX-512/AVX2 at load time where the CPU
 * has them (the build itself only assumes the x86-64 baseline).
 */
#ifndef GW_CORELS_KERNELS_H
#define GW_CORELS_KERNELS_H

#include <stdint.h>
#include <stdlib.h>
#if !defined(_WIN32)
#include <sys/mman.h>
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define GW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GW_CLONES
#endif

/* out[k] = sum_i (mask[i] & w_k[i]) for the three weight vectors; n a multiple of 16. */
GW_CLONES
static void gw_masked_sum3(const int32_t* __restrict mask, const int32_t* __restrict a,
                           const int32_t* __restrict b, const int32_t* __restrict c, int n,
                           int64_t* out) {
    int32_t sa = 0, sb = 0, sc = 0;
    for (int i = 0; i < n; i++) {
        int32_t m = mask[i];
        sa += m & a[i];
        sb += m & b[i];
        sc += m & c[i];
    }
    out[0] = sa;
    out[1] = sb;
    out[2] = sc;
}

/* Zeroed memory straight from the kernel for the search's big tables, with transparent huge
 * pages where the system allows them (the map and the node pool are reached at random: fewer TLB
 * misses). Untouched parts cost no resident memory. NULL on failure. */
static void* gw_big_alloc(size_t bytes) {
#if defined(_WIN32)
    return calloc(bytes, 1);
#else
    void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= ((size_t)2 << 20)) madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
#endif
}

static void gw_big_free(void* p, size_t bytes) {
    if (p == NULL) return;
#if defined(_WIN32)
    (void)bytes;
    free(p);
#else
    munmap(p, bytes);
#endif
}

static inline void gw_prefetch(const void* p) {
#if defined(__GNUC__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

#endif
