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

#endif
