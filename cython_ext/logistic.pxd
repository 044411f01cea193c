# cython: language_level=3
"""Allocation-free logistic-loss kernels shared by ``fasterrisk.pyx`` and ``riskcert.pyx``.

Every function is inline and ``nogil`` and writes only into scratch the caller owns, so a
branch and bound can evaluate a node without the GIL and without allocating. The design ``A`` is
label-signed and stored by coordinate (``q`` rows of ``n`` entries, coordinate 0 the intercept):
the margins are ``z = A^T w`` and the loss is ``sum_i s_i log(1 + exp(-z_i))``.
"""

from libc.math cimport exp, log, log1p, fabs, sqrt
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t


cdef inline double lg_ell(double z) noexcept nogil:
    """log(1 + exp(-z)), stable for any z."""
    if z > 0:
        return log1p(exp(-z))
    return -z + log1p(exp(z))


cdef inline double lg_ridge(const double* w, Py_ssize_t q) noexcept nogil:
    """``||w[1:]||^2``: the ridge term (the intercept ``w[0]`` is never penalised)."""
    cdef double ridge = 0.0
    cdef Py_ssize_t j
    for j in range(1, q):
        ridge += w[j] * w[j]
    return ridge


cdef inline double lg_penalised_loss(const double* s, const double* z, Py_ssize_t n, const double* w,
                                     Py_ssize_t q, double lam2) noexcept nogil:
    """``sum_i s_i log(1 + exp(-z_i)) + lam2 ||w[1:]||^2``: the objective every fit minimises."""
    cdef double loss = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        loss += s[i] * lg_ell(z[i])
    return loss + lam2 * lg_ridge(w, q)


cdef inline double lg_clip(double v, double lo, double hi) noexcept nogil:
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


cdef inline void lg_margins(const double* A, Py_ssize_t q, Py_ssize_t n, const double* w,
                            double* z) noexcept nogil:
    """z = A^T w."""
    cdef Py_ssize_t i, j
    for i in range(n):
        z[i] = 0.0
    for j in range(q):
        if w[j] != 0.0:
            for i in range(n):
                z[i] += A[j * n + i] * w[j]


cdef inline bint lg_cholesky(const double* H, double* L, Py_ssize_t m, double ridge) noexcept nogil:
    cdef Py_ssize_t i, j, k
    cdef double acc
    for i in range(m):
        for j in range(i + 1):
            acc = H[i * m + j] + (ridge if i == j else 0.0)
            for k in range(j):
                acc -= L[i * m + k] * L[j * m + k]
            if i == j:
                if acc <= 0.0:
                    return False
                L[i * m + i] = sqrt(acc)
            else:
                L[i * m + j] = acc / L[j * m + j]
    return True


cdef inline void lg_solve(const double* L, Py_ssize_t m, const double* b, double* x) noexcept nogil:
    """x = (L L^T)^{-1} b."""
    cdef Py_ssize_t i, k
    cdef double acc
    for i in range(m):
        acc = b[i]
        for k in range(i):
            acc -= L[i * m + k] * x[k]
        x[i] = acc / L[i * m + i]
    for i in range(m - 1, -1, -1):
        acc = x[i]
        for k in range(i + 1, m):
            acc -= L[k * m + i] * x[k]
        x[i] = acc / L[i * m + i]


cdef inline double newton_fit(const double* A, Py_ssize_t q, Py_ssize_t n, const double* s, double* w,
                              const double* lo, const double* hi, double lam2, int max_iter, double tol,
                              double* z, double* zd, double* work, int32_t* nz_col, double* nz_val,
                              int64_t* nz_ptr) noexcept nogil:
    """The box-constrained logistic fit by projected Newton; returns the final loss.

    ``w`` (in the box) is updated in place; ``z`` and ``zd`` are ``n`` doubles of scratch,
    ``work`` ``2 q^2 + 3 q``; ``nz_col``/``nz_val`` (one entry per non-zero of ``A``) and ``nz_ptr`` (``n + 1``)
    receive the non-zeros of ``A`` by row, so that the Hessian costs the pairs of non-zeros of a
    row rather than ``q`` per non-zero (dummy columns are mostly zero). The sums are taken in the
    same order as over the dense rows. Each iteration builds the exact gradient and Hessian in one
    pass, minimises the quadratic model over the box (the plain Newton step by Cholesky when it
    stays in the box, else coordinate descent), and backtracks on the true
    loss (Armijo); it stops when an iteration lowers the loss by less than ``tol`` relative.
    An optional ridge ``lam2 * ||w[1:]||^2`` is added (the intercept is never penalised).
    """
    cdef Py_ssize_t i, j, k
    cdef double* H = work
    cdef double* g = H + q * q
    cdef double* d = g + q
    cdef double* Hd = d + q
    cdef double* L = Hd + q
    cdef double loss, trial = 0.0, t, gd, p, h, change, new, step, ridge, damp, wt, aji
    cdef int it, sweep, halvings
    cdef int64_t e, f, count = 0
    cdef bint accepted, inside
    for i in range(n):  # the non-zeros by row, coordinates ascending
        nz_ptr[i] = count
        for j in range(q):
            aji = A[j * n + i]
            if aji != 0.0:
                nz_col[count] = <int32_t> j
                nz_val[count] = aji
                count += 1
    nz_ptr[n] = count
    lg_margins(A, q, n, w, z)
    loss = lg_penalised_loss(s, z, n, w, q, lam2)
    for it in range(max_iter):
        for j in range(q):
            g[j] = 0.0
            for k in range(q):
                H[j * q + k] = 0.0
        for i in range(n):
            p = 1.0 / (1.0 + exp(z[i]))          # sigma(-z)
            h = s[i] * p * (1.0 - p)
            p = s[i] * p
            for e in range(nz_ptr[i], nz_ptr[i + 1]):
                j = nz_col[e]
                aji = nz_val[e]
                g[j] -= p * aji
                for f in range(e, nz_ptr[i + 1]):
                    H[j * q + nz_col[f]] += h * aji * nz_val[f]
        damp = 0.0
        for j in range(q):
            for k in range(j + 1, q):
                H[k * q + j] = H[j * q + k]
            if j > 0:
                g[j] += 2.0 * lam2 * w[j]
                H[j * q + j] += 2.0 * lam2
            damp += H[j * q + j]
        damp = 1e-12 * damp / q + 1e-300
        # the quadratic model over the box: the Newton step if it stays inside (the common case:
        # a dense solve is q^3 / 6, coordinate descent up to 500 q^2 on an ill-conditioned H)
        inside = lg_cholesky(H, L, q, damp)
        if inside:
            for j in range(q):
                Hd[j] = -g[j]
            lg_solve(L, q, Hd, d)
            for j in range(q):
                if w[j] + d[j] < lo[j] or w[j] + d[j] > hi[j] or d[j] != d[j]:
                    inside = False
                    break
        for j in range(q):
            if not inside:
                d[j] = 0.0
            Hd[j] = 0.0
        for sweep in range(0 if inside else 500):
            change = 0.0
            for j in range(q):
                h = H[j * q + j] + damp
                new = lg_clip(w[j] + d[j] - (g[j] + Hd[j]) / h, lo[j], hi[j]) - w[j]
                step = new - d[j]
                if step != 0.0:
                    d[j] = new
                    for k in range(q):
                        Hd[k] += H[k * q + j] * step
                    if fabs(step) > change:
                        change = fabs(step)
            if change <= 1e-13 * (1.0 + fabs(d[0])):
                break
        gd = 0.0
        for j in range(q):
            gd += g[j] * d[j]
        if gd >= 0.0:
            break
        for i in range(n):
            aji = 0.0
            for e in range(nz_ptr[i], nz_ptr[i + 1]):
                if d[nz_col[e]] != 0.0:
                    aji += nz_val[e] * d[nz_col[e]]
            zd[i] = aji
        t = 1.0
        accepted = False
        for halvings in range(40):
            trial = 0.0
            for i in range(n):
                trial += s[i] * lg_ell(z[i] + t * zd[i])
            ridge = 0.0
            for j in range(1, q):
                wt = w[j] + t * d[j]
                ridge += wt * wt
            trial += lam2 * ridge
            if trial <= loss + 1e-4 * t * gd:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        for j in range(q):
            w[j] = lg_clip(w[j] + t * d[j], lo[j], hi[j])
        for i in range(n):
            z[i] += t * zd[i]
        change = loss - trial
        loss = trial
        if change <= tol * fabs(loss):
            break
    return loss


cdef inline double lg_entropy(double a) noexcept nogil:
    """Binary entropy -a log a - (1 - a) log(1 - a), 0 at the ends."""
    cdef double out = 0.0
    if a > 0.0 and a < 1.0:
        out = -a * log(a) - (1.0 - a) * log(1.0 - a)
    return out


cdef inline double lg_sigma_neg(double z) noexcept nogil:
    """sigma(-z) = 1 / (1 + exp(z)), stable for any z."""
    cdef double e
    if z > 0:
        e = exp(-z)
        return e / (1.0 + e)
    return 1.0 / (1.0 + exp(z))


cdef inline double dual_bound_at(const double* A, Py_ssize_t q, Py_ssize_t n, const double* s,
                                 const double* z, const double* lo, const double* hi,
                                 const signed char* role, const unsigned char* active, int budget,
                                 double* a, Py_ssize_t* idx, double* work, double* entropy,
                                 double* penalty) noexcept nogil:
    """The Fenchel dual bound of ``riskcert.dual_bound`` (see there), into caller scratch.

    ``a`` is ``n`` doubles, ``idx`` ``q`` entries, ``work`` ``2 q^2 + 4 q`` doubles.
    """
    cdef Py_ssize_t i, c, d, m = 0, r
    cdef double* H = work
    cdef double* L = H + q * q
    cdef double* res = L + q * q
    cdef double* lam = res + q
    cdef double* viol = lam + q
    cdef double* g = viol + q
    cdef double h, t, acc, ent = 0.0, pen = 0.0, ridge, trace
    cdef bint ok
    cdef int tries, picked
    for c in range(q):
        if active[c]:
            idx[m] = c
            m += 1
    for i in range(n):
        a[i] = lg_sigma_neg(z[i])
    if m > 0:
        # Newton step in the dual: (sum_i s_i a_i (1 - a_i) A_C A_C^T) lam = g_C(a)
        for c in range(m):
            res[c] = 0.0
            for d in range(m):
                H[c * m + d] = 0.0
        for i in range(n):
            h = s[i] * a[i] * (1.0 - a[i])
            for c in range(m):
                t = A[idx[c] * n + i]
                if t == 0.0:
                    continue
                res[c] += s[i] * a[i] * t
                for d in range(c, m):
                    H[c * m + d] += h * t * A[idx[d] * n + i]
        trace = 0.0
        for c in range(m):
            for d in range(c + 1, m):
                H[d * m + c] = H[c * m + d]
            trace += H[c * m + c]
        ridge = 1e-14 * trace / m + 1e-300
        ok = False
        for tries in range(8):
            ok = lg_cholesky(H, L, m, ridge)
            if ok:
                break
            ridge *= 1000.0
        if ok:
            lg_solve(L, m, res, lam)
            for i in range(n):
                acc = 0.0
                for c in range(m):
                    acc += A[idx[c] * n + i] * lam[c]
                t = a[i] - a[i] * (1.0 - a[i]) * acc
                if t < 0.0:
                    t = 0.0
                elif t > 1.0:
                    t = 1.0
                a[i] = t
    # the bound at the corrected point
    for c in range(q):
        g[c] = 0.0
    for i in range(n):
        ent += s[i] * lg_entropy(a[i])
        for c in range(q):
            t = A[c * n + i]
            if t != 0.0:
                g[c] += s[i] * a[i] * t
    for c in range(q):
        viol[c] = lo[c] * g[c]
        if hi[c] * g[c] > viol[c]:
            viol[c] = hi[c] * g[c]
        if role[c] == 0:
            pen += viol[c]
        elif viol[c] < 0.0:
            viol[c] = 0.0  # a free coordinate may stay at zero
    # the budget: the largest violations among the free coordinates, a partial selection
    for picked in range(budget):
        r = -1
        for c in range(q):
            if role[c] == 1 and viol[c] >= 0.0 and (r < 0 or viol[c] > viol[r]):
                r = c
        if r < 0:
            break
        pen += viol[r]
        viol[r] = -1.0
    entropy[0] = ent
    penalty[0] = pen
    return ent - pen


cdef inline Py_ssize_t compress_into(const uint8_t* codes, Py_ssize_t n, const int64_t* cols, Py_ssize_t m,
                                     const int* nvals, const double* s, int64_t* first, double* weight,
                                     int64_t* slot, int64_t* keys, int64_t* used,
                                     Py_ssize_t capacity) noexcept nogil:
    """Rows made distinct by their label and their codes on ``cols``: the group count, or -1.

    ``codes`` holds ``n`` codes per coordinate (row-major). Groups appear in order of their first
    row: ``first[g]`` that row, ``weight[g]`` the summed ``s``. -1 when a column is not fully
    coded, the key could overflow, or the table would exceed ``capacity`` (then keep all rows).
    ``slot`` (``capacity`` entries) must be all -1 on entry and is left so; ``keys`` holds
    ``capacity`` entries, ``used`` ``n``.
    """
    cdef Py_ssize_t i, k, g = 0, size, h
    cdef double span = 2.0
    cdef bint dense
    cdef int64_t key, mask
    cdef uint64_t mix
    for k in range(m):
        if nvals[cols[k]] <= 0:
            return -1
        span *= nvals[cols[k]]
    if span > 4.0e18:
        return -1
    dense = span <= 65536 or span <= 4.0 * n
    if dense:
        size = <Py_ssize_t> span
    else:
        size = 1
        while size < 2 * n:
            size *= 2
    if size > capacity:
        return -1
    mask = size - 1
    for i in range(n):
        key = codes[i] & 1
        for k in range(m):
            key = key * nvals[cols[k]] + (codes[cols[k] * n + i] >> 1)
        if dense:
            h = key
        else:
            mix = (<uint64_t> key) * 0x9E3779B97F4A7C15ULL
            h = <Py_ssize_t> ((mix >> 17) & <uint64_t> mask)
            while slot[h] >= 0 and keys[h] != key:
                h = (h + 1) & mask
            keys[h] = key
        if slot[h] < 0:
            slot[h] = g
            first[g] = i
            weight[g] = 0.0
            used[g] = h
            g += 1
        weight[slot[h]] += s[i]
    for k in range(g):
        slot[used[k]] = -1
    return g
