# cython: language_level=3
"""Certificate kernels for risk scores: a Fenchel dual bound on the logistic loss.

The logistic loss is ``L(b) = sum_i s_i log(1 + exp(-(A^T b)_i))`` with the label-signed design
``A[c, i] = y_i x_ic`` (coordinate 0 the intercept, ``A[0, i] = y_i``). Since
``log(1 + exp(-t)) = max_{a in [0, 1]} H(a) - a t`` with the binary entropy ``H``, weak duality
gives, for EVERY ``a`` in ``[0, 1]^n``,

    L(b) >= sum_i s_i H(a_i) - sum_c b_c g_c(a),      g_c(a) = sum_i s_i a_i A[c, i].

Bounding ``-b_c g_c`` over the coefficients a model may take (|b_c| <= R, the sign its box
allows, at most ``budget`` non-zero among the free features) turns this into a number that
bounds the loss of every such model, whatever ``a`` is: a dual point from a half-converged
primal gives a weaker bound, never a wrong one. ``dual_bound`` takes the point
``a = sigma(-z)`` of a primal fit, moves it by one Hessian-weighted Newton step in the dual so
that ``g_c(a) = 0`` on the fit's active coordinates, and evaluates the bound.
"""

import numpy as np
cimport numpy as cnp
from libc.math cimport exp, log, fabs, sqrt

cnp.import_array()

cdef inline double _entropy(double a) noexcept nogil:
    """Binary entropy -a log a - (1 - a) log(1 - a), 0 at the ends."""
    cdef double out = 0.0
    if a > 0.0 and a < 1.0:
        out = -a * log(a) - (1.0 - a) * log(1.0 - a)
    return out


cdef inline double _sigma_neg(double z) noexcept nogil:
    """sigma(-z) = 1 / (1 + exp(z)), stable for any z."""
    cdef double e
    if z > 0:
        e = exp(-z)
        return e / (1.0 + e)
    return 1.0 / (1.0 + exp(z))


def dual_bound(const double[:, ::1] A, const double[::1] s, const double[::1] z,
               const double[::1] lo, const double[::1] hi, const signed char[::1] role,
               const unsigned char[::1] active, int budget):
    """A lower bound on the loss of every model the coordinates of ``A`` allow.

    ``z`` are the margins ``A^T b`` of any primal point. Per coordinate: the coefficient lies in
    ``[lo, hi]`` (finite); ``role`` 0 (intercept or forced-in: always counted), 1 (free to join:
    zero, or in its box for at most ``budget`` of them); ``active`` 1 where the dual point is
    corrected to make the gradient vanish (the fit's coordinates strictly inside their box).
    The bound charges each coordinate ``max(lo g, hi g)`` (``min -b g`` over the box) and, for
    the free ones, the ``budget`` largest positive charges. Returns ``(bound, entropy, penalty)``.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, c, d, m = 0, r
    if s.shape[0] != n or z.shape[0] != n or lo.shape[0] != q or hi.shape[0] != q \
            or role.shape[0] != q or active.shape[0] != q:
        raise ValueError("shape mismatch")
    a_arr = np.empty(n)
    cdef double[::1] a = a_arr
    idx_arr = np.zeros(q, dtype=np.intp)
    work_arr = np.zeros(2 * q * q + 4 * q)
    cdef Py_ssize_t[::1] idx = idx_arr
    cdef double[::1] work = work_arr
    cdef double* H = &work[0]
    cdef double* L = H + q * q
    cdef double* res = L + q * q
    cdef double* lam = res + q
    cdef double* viol = lam + q
    cdef double* g = viol + q
    cdef double h, t, acc, ent = 0.0, pen = 0.0, ridge, trace
    cdef bint ok
    cdef int tries, picked
    with nogil:
        for c in range(q):
            if active[c]:
                idx[m] = c
                m += 1
        for i in range(n):
            a[i] = _sigma_neg(z[i])
        if m > 0:
            # Newton step in the dual: (sum_i s_i a_i (1 - a_i) A_C A_C^T) lam = g_C(a)
            for c in range(m):
                res[c] = 0.0
                for d in range(m):
                    H[c * m + d] = 0.0
            for i in range(n):
                h = s[i] * a[i] * (1.0 - a[i])
                for c in range(m):
                    t = A[idx[c], i]
                    if t == 0.0:
                        continue
                    res[c] += s[i] * a[i] * t
                    for d in range(c, m):
                        H[c * m + d] += h * t * A[idx[d], i]
            trace = 0.0
            for c in range(m):
                for d in range(c + 1, m):
                    H[d * m + c] = H[c * m + d]
                trace += H[c * m + c]
            ridge = 1e-14 * trace / m + 1e-300
            ok = False
            for tries in range(8):
                ok = _cholesky(H, L, m, ridge)
                if ok:
                    break
                ridge *= 1000.0
            if ok:
                _solve(L, m, res, lam)
                for i in range(n):
                    acc = 0.0
                    for c in range(m):
                        acc += A[idx[c], i] * lam[c]
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
            ent += s[i] * _entropy(a[i])
            for c in range(q):
                t = A[c, i]
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
    return ent - pen, ent, pen


cdef bint _cholesky(const double* H, double* L, Py_ssize_t m, double ridge) noexcept nogil:
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


cdef void _solve(const double* L, Py_ssize_t m, const double* b, double* x) noexcept nogil:
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
