# cython: language_level=3
"""FasterRisk's compiled kernels: logistic coordinate steps, 1-D screening, rounding.

Every kernel works on ``A``, the label-signed design stored by column: ``A[j, i] = y_i * x_ij``
with coordinate 0 the intercept column (``A[0, i] = y_i``), and on per-row weights ``s`` (sample
weights, or counts of identical rows). The margins ``z_i = y_i (x_i . w + w0) = (A^T w)_i`` are
kept up to date by rank-one updates ``z += A[j] * delta`` and never recomputed from ``X . w``;
``e_i = exp(z_i)`` is cached alongside them so a gradient costs a division per row, not an
``exp``. For a column with few distinct values (0/1 dummies, small integers) the ``exp`` factor
of a step comes from a table of those values, so no ``exp`` is evaluated per row at all.

The loss is a weighted **sum** ``sum_i s_i log(1 + exp(-z_i))`` plus an optional ridge
``lam2 * ||w||^2`` on the features (the intercept is never penalised). Everything below runs
without the GIL; long loops poll a one-byte stop flag.
"""

import numpy as np
from libc.math cimport exp, log1p, fabs, floor, ceil, sqrt, INFINITY
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref
from logistic cimport newton_fit, compress_into, lg_ell as _ell, lg_clip as _clip, lg_ridge, lg_penalised_loss


cdef enum:
    MAXV = 64          # table entries per column; rows holding other values get ESCAPE
    ESCAPE = 255       # code of a value outside the column's table (its exp is computed)
    MAXQ = 64          # rounding works on at most this many coordinates (k + 1)

cdef double BIG_STEP = 40.0   # beyond |A * delta| of this, refresh exp() per row instead


cdef inline double _ell_e(double e, double z) noexcept nogil:
    """log(1 + exp(-z)) from a cached e = exp(z): one log1p, no exp."""
    if e > 1e-200 and e < 1e200:
        return log1p(1.0 / e)
    return _ell(z)


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """Dot product with four independent accumulators (no -ffast-math, so no auto-vectorised sum)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t i = 0
    while i + 4 <= n:
        a0 += a[i] * b[i]
        a1 += a[i + 1] * b[i + 1]
        a2 += a[i + 2] * b[i + 2]
        a3 += a[i + 3] * b[i + 3]
        i += 4
    while i < n:
        a0 += a[i] * b[i]
        i += 1
    return (a0 + a1) + (a2 + a3)


cdef int _encode(const double* col, const double* sign, Py_ssize_t n, uint8_t* codes,
                 double* vals) noexcept nogil:
    """Code a label-signed column ``col = y * x`` by the values of ``x = col * y``.

    Row i gets ``2 c + (y_i > 0)`` where ``vals[c]`` is its x-value, so the exp factor of a step
    ``d`` is ``exp(+vals[c] d)`` or ``exp(-vals[c] d)`` by the label bit. Returns nv > 0 when all
    nv x-values are in the table, -nv when values beyond the first MAXV distinct ones got ESCAPE.
    """
    cdef Py_ssize_t i
    cdef int nv = 0, last = 0, c
    cdef bint partial = False
    cdef double v
    for i in range(n):
        v = col[i] * sign[i]
        if nv > 0 and vals[last] == v:
            codes[i] = 2 * last + (1 if sign[i] > 0 else 0)
            continue
        c = 0
        while c < nv and vals[c] != v:
            c += 1
        if c == nv:
            if nv == MAXV:
                codes[i] = ESCAPE
                partial = True
                continue
            vals[nv] = v
            nv += 1
        codes[i] = 2 * c + (1 if sign[i] > 0 else 0)
        last = c
    return -nv if partial else nv


cdef bint _factors(int nv, const double* vals, double d, double* f) noexcept nogil:
    """f[2c + 1] = exp(vals[c] d), f[2c] = exp(-vals[c] d); False when a factor would be extreme."""
    cdef int c, anv = nv if nv > 0 else -nv
    if anv == 0:
        return False
    for c in range(anv):
        if fabs(vals[c] * d) >= BIG_STEP:
            return False
    for c in range(anv):
        f[2 * c + 1] = exp(vals[c] * d)
        f[2 * c] = 1.0 / f[2 * c + 1]
    return True


cdef inline double _step(const double* a, const uint8_t* cd, int nv, const double* vals, double d,
                         double* z, double* e, Py_ssize_t n, const double* s, const double* nxt,
                         bint grad) noexcept nogil:
    """z += a * d and e = exp(z), the exp factor taken from the column's table where it can; with
    ``grad``, fused with the next coordinate's gradient sum ``sum_i s_i nxt_i / (1 + e_i)``, which
    it returns (0 without). Inlined at its two calls, so the constant ``grad`` costs the loops nothing."""
    cdef Py_ssize_t i
    cdef int c
    cdef double f[2 * MAXV]
    cdef double acc = 0.0
    if _factors(nv, vals, d, f):
        if nv > 0:
            for i in range(n):
                z[i] += a[i] * d
                e[i] *= f[cd[i]]
                if grad:
                    acc += s[i] * nxt[i] / (1.0 + e[i])
        else:
            for i in range(n):
                z[i] += a[i] * d
                c = cd[i]
                if c == ESCAPE:
                    e[i] = exp(z[i])
                else:
                    e[i] *= f[c]
                if grad:
                    acc += s[i] * nxt[i] / (1.0 + e[i])
        return acc
    for i in range(n):
        z[i] += a[i] * d
        e[i] = exp(z[i])
        if grad:
            acc += s[i] * nxt[i] / (1.0 + e[i])
    return acc


def encode_columns(const double[:, ::1] A):
    """Table-code the columns of ``A`` (see ``_encode``).

    Row 0 must be the labels (the intercept column). Returns ``(codes uint8 (P, n), nvals int32
    (P,), vals float64 (P, MAXV))``: ``nvals[j] > 0`` means column j is fully coded by its
    ``nvals[j]`` x-values (codes ``2 c + label bit``), ``nvals[j] < 0`` that rows with code
    ``ESCAPE`` (255) hold values outside its ``-nvals[j]``-entry table.
    """
    cdef Py_ssize_t P = A.shape[0], n = A.shape[1], j
    codes_arr = np.zeros((P, n), dtype=np.uint8)
    nvals_arr = np.zeros(P, dtype=np.int32)
    vals_arr = np.zeros((P, MAXV), dtype=np.float64)
    cdef uint8_t[:, ::1] codes = codes_arr
    cdef int[::1] nvals = nvals_arr
    cdef double[:, ::1] vals = vals_arr
    if n > 0:
        with nogil:
            for j in range(P):
                nvals[j] = _encode(&A[j, 0], &A[0, 0], n, &codes[j, 0], &vals[j, 0])
    return codes_arr, nvals_arr, vals_arr


cdef class Design:
    """The full training design plus a mutable point ``w`` with its cached margins.

    ``A`` is ``(P, n)`` C-contiguous (coordinate 0 is the intercept), ``s`` the row weights,
    ``lo``/``hi`` the box per coordinate (``-inf``/``inf`` for the intercept) and ``lam2`` the
    ridge on coordinates ``1..P-1``. The state ``w``, ``z``, ``e`` changes only through
    ``set_point`` and ``step``; the screening and gradient kernels read it.
    """

    cdef readonly Py_ssize_t n, P
    cdef const double[:, ::1] A
    cdef const double[::1] s
    cdef const uint8_t[:, ::1] codes
    cdef const int[::1] nvals
    cdef const double[:, ::1] vals
    cdef readonly double lam2
    cdef double[::1] lo, hi, lip
    cdef double[::1] w, z, e, base
    cdef double base_total
    cdef bint base_ready
    cdef object _keep

    def __init__(self, const double[:, ::1] A, const double[::1] s, const double[::1] lo,
                 const double[::1] hi, double lam2=0.0):
        cdef Py_ssize_t P = A.shape[0], n = A.shape[1], j, i
        if s.shape[0] != n or lo.shape[0] != P or hi.shape[0] != P:
            raise ValueError("A is (P, n); s needs n entries, lo and hi P entries")
        self.A, self.s, self.n, self.P, self.lam2 = A, s, n, P, lam2
        codes, nvals, vals = encode_columns(A)
        self._keep = (codes, nvals, vals)
        self.codes, self.nvals, self.vals = codes, nvals, vals
        self.lo = np.array(lo, dtype=np.float64)
        self.hi = np.array(hi, dtype=np.float64)
        self.lip = np.zeros(P)
        self.w = np.zeros(P)
        self.z = np.zeros(n)
        self.e = np.ones(n)
        self.base = np.zeros(n)
        cdef double acc
        with nogil:
            for j in range(P):
                acc = 0.0
                for i in range(n):
                    acc = acc + s[i] * A[j, i] * A[j, i]
                self.lip[j] = 0.25 * acc + (2.0 * lam2 if j > 0 else 0.0)

    @property
    def codes(self):
        """``(codes, nvals, vals)`` of the table-coded columns (see ``encode_columns``)."""
        return self._keep

    @property
    def lipschitz(self):
        return np.asarray(self.lip).copy()

    @property
    def point(self):
        return np.asarray(self.w).copy()

    @property
    def margins(self):
        return np.asarray(self.z).copy()

    def set_point(self, const double[::1] w):
        """Move to ``w`` (length P): margins are rebuilt from its non-zero coordinates."""
        cdef Py_ssize_t j, i, n = self.n
        if w.shape[0] != self.P:
            raise ValueError("w needs P entries")
        with nogil:
            for i in range(n):
                self.z[i] = 0.0
            for j in range(self.P):
                self.w[j] = w[j]
                if w[j] != 0.0:
                    for i in range(n):
                        self.z[i] += self.A[j, i] * w[j]
            for i in range(n):
                self.e[i] = exp(self.z[i])
            self.base_ready = False

    cdef double _ridge(self) noexcept nogil:
        return self.lam2 * lg_ridge(&self.w[0], self.P)

    def loss(self):
        """Loss at the current point (ridge included)."""
        cdef double acc
        with nogil:
            acc = lg_penalised_loss(&self.s[0] if self.n > 0 else NULL, &self.z[0] if self.n > 0 else NULL,
                                    self.n, &self.w[0], self.P, self.lam2)
        return acc

    cdef double _grad(self, Py_ssize_t j) noexcept nogil:
        cdef double acc = 0.0
        cdef Py_ssize_t i
        cdef const double* a = &self.A[j, 0]
        for i in range(self.n):
            acc += self.s[i] * a[i] / (1.0 + self.e[i])
        acc = -acc
        if j > 0:
            acc += 2.0 * self.lam2 * self.w[j]
        return acc

    def gradient(self):
        """Partial derivatives at the current point, all P coordinates.

        A fully coded column is summed through its codes (one byte per row instead of eight):
        with ``ry_i = s_i y_i / (1 + e_i)`` its partial is ``-sum_c vals[c] * (sum of ry over the
        rows holding value c)``, which for two values needs one masked sum.
        """
        out = np.empty(self.P)
        cdef double[::1] g = out
        cdef double[::1] r = np.empty(self.n)
        cdef double[::1] ry = np.empty(self.n)
        cdef Py_ssize_t i, j, n = self.n
        cdef int nv, c
        cdef double acc, total, a0, a1, a2, a3
        cdef double bucket[MAXV]
        cdef const uint8_t* cd
        with nogil:
            total = 0.0
            for i in range(n):
                r[i] = self.s[i] / (1.0 + self.e[i])
                ry[i] = r[i] * self.A[0, i]
                total += ry[i]
            for j in range(self.P):
                nv = self.nvals[j]
                cd = &self.codes[j, 0]
                if nv == 1:
                    acc = self.vals[j, 0] * total
                elif nv == 2:
                    a0 = a1 = a2 = a3 = 0.0
                    i = 0
                    while i + 4 <= n:
                        a0 += (cd[i] >> 1) * ry[i]
                        a1 += (cd[i + 1] >> 1) * ry[i + 1]
                        a2 += (cd[i + 2] >> 1) * ry[i + 2]
                        a3 += (cd[i + 3] >> 1) * ry[i + 3]
                        i += 4
                    while i < n:
                        a0 += (cd[i] >> 1) * ry[i]
                        i += 1
                    acc = self.vals[j, 0] * total + (self.vals[j, 1] - self.vals[j, 0]) * ((a0 + a1) + (a2 + a3))
                elif nv > 2:
                    for c in range(nv):
                        bucket[c] = 0.0
                    for i in range(n):
                        bucket[cd[i] >> 1] += ry[i]
                    acc = 0.0
                    for c in range(nv):
                        acc += self.vals[j, c] * bucket[c]
                else:
                    acc = _dot(&self.A[j, 0], &r[0], n)
                g[j] = -acc + (2.0 * self.lam2 * self.w[j] if j > 0 else 0.0)
        return out

    cdef void _apply(self, Py_ssize_t j, double d) noexcept nogil:
        """w_j += d, with the margins and their exponentials updated in place."""
        if d == 0.0:
            return
        self.base_ready = False
        self.w[j] += d
        _step(&self.A[j, 0], &self.codes[j, 0], self.nvals[j], &self.vals[j, 0], d,
              &self.z[0], &self.e[0], self.n, NULL, NULL, False)

    def step(self, Py_ssize_t j):
        """One projected coordinate step on ``j`` (the quadratic-bound minimiser, clipped).

        Returns the change of ``w_j``. The step never increases the loss.
        """
        if j < 0 or j >= self.P:
            raise IndexError(j)
        cdef double g, new, d
        with nogil:
            g = self._grad(j)
            new = _clip(self.w[j] - g / self.lip[j], self.lo[j], self.hi[j]) if self.lip[j] > 0 else self.w[j]
            d = new - self.w[j]
            self._apply(j, d)
        return d

    cdef void _prepare(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double total = 0.0
        for i in range(self.n):
            self.base[i] = _ell_e(self.e[i], self.z[i])
            total += self.s[i] * self.base[i]
        self.base_total = total
        self.base_ready = True

    def prepare_losses(self):
        """Cache the per-row losses at the current point, so that ``screen`` calls on other
        threads only read shared state (call it before screening in parallel)."""
        with nogil:
            self._prepare()

    def screen(self, const int64_t[::1] cands, int iters, double tol, double[::1] a_out,
               double[::1] loss_out=None, const uint8_t[::1] stop=None):
        """Independent 1-D projected steps for each candidate from ``a = 0``, the rest fixed.

        All candidates advance in lock-step; the loop ends after ``iters`` rounds or once no
        candidate moved by more than ``tol`` in a round (``tol = 0``: always ``iters`` rounds).
        ``a_out`` gets each candidate's coefficient; ``loss_out`` (optional) the loss at
        ``w + a e_j``, ridge included. Returns False when the stop flag cut it short.
        """
        cdef Py_ssize_t m = cands.shape[0], k, i, j, nv, n = self.n
        cdef int it
        cdef double acc, g, new, moved, ridge, t, base_total
        cdef double f[2 * MAXV]
        cdef const double* a
        cdef const uint8_t* cd
        cdef bint stopped = False
        if a_out.shape[0] < m or (loss_out is not None and loss_out.shape[0] < m):
            raise ValueError("output arrays are too short")
        for k in range(m):
            if cands[k] <= 0 or cands[k] >= self.P:
                raise IndexError(cands[k])
        with nogil:
            for k in range(m):
                a_out[k] = 0.0
            for it in range(iters):
                moved = 0.0
                for k in range(m):
                    if stop is not None and stop[0] != 0:
                        stopped = True
                        break
                    j = cands[k]
                    a = &self.A[j, 0]
                    nv = self.nvals[j]
                    acc = 0.0
                    if _factors(nv, &self.vals[j, 0], a_out[k], f):
                        cd = &self.codes[j, 0]
                        if nv > 0:
                            for i in range(n):
                                acc += self.s[i] * a[i] / (1.0 + self.e[i] * f[cd[i]])
                        else:
                            for i in range(n):
                                if cd[i] == ESCAPE:
                                    acc += self.s[i] * a[i] / (1.0 + exp(self.z[i] + a[i] * a_out[k]))
                                else:
                                    acc += self.s[i] * a[i] / (1.0 + self.e[i] * f[cd[i]])
                    else:
                        for i in range(n):
                            acc += self.s[i] * a[i] / (1.0 + exp(self.z[i] + a[i] * a_out[k]))
                    g = -acc + 2.0 * self.lam2 * (self.w[j] + a_out[k])
                    if self.lip[j] > 0:
                        new = _clip(self.w[j] + a_out[k] - g / self.lip[j], self.lo[j], self.hi[j]) - self.w[j]
                    else:
                        new = 0.0
                    if fabs(new - a_out[k]) > moved:
                        moved = fabs(new - a_out[k])
                    a_out[k] = new
                if stopped or moved <= tol:
                    break
            if loss_out is not None and not stopped:
                if not self.base_ready:
                    self._prepare()
                base_total = self.base_total
                ridge = self._ridge()
                for k in range(m):
                    j = cands[k]
                    a = &self.A[j, 0]
                    acc = base_total
                    if a_out[k] != 0.0:
                        nv = self.nvals[j]
                        if _factors(nv, &self.vals[j, 0], a_out[k], f):
                            cd = &self.codes[j, 0]
                            for i in range(n):
                                if a[i] == 0.0:
                                    continue
                                if cd[i] == ESCAPE:
                                    acc += self.s[i] * (_ell(self.z[i] + a[i] * a_out[k]) - self.base[i])
                                else:
                                    acc += self.s[i] * (_ell_e(self.e[i] * f[cd[i]], self.z[i] + a[i] * a_out[k])
                                                        - self.base[i])
                        else:
                            for i in range(n):
                                if a[i] != 0.0:
                                    acc += self.s[i] * (_ell(self.z[i] + a[i] * a_out[k]) - self.base[i])
                    t = self.w[j] + a_out[k]
                    loss_out[k] = acc + ridge + self.lam2 * (t * t - self.w[j] * self.w[j])
        return not stopped


def finetune(const double[:, ::1] A, const double[::1] s, double[::1] w, const double[::1] lo,
             const double[::1] hi, double lam2=0.0, int max_sweeps=100, double tol=1e-8,
             int check_every=10, bint order_by_gradient=True):
    """Box-constrained coordinate descent on a fixed support; returns the final loss.

    ``A`` holds only the support's columns (row 0 the intercept, unboxed and unpenalised) and is
    usually the row-compressed design, so a sweep costs O(rows * |support|). A sweep is one
    intercept step and one projected step per feature, features ordered once by decreasing
    |gradient| at the start. Every ``check_every`` sweeps (sweep 0, 10, 20, ...) the loss
    before and after the sweep is compared and the loop ends when the relative change is
    below ``tol``. ``w`` is updated in place.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, j, jj, t
    cdef int sweep
    if w.shape[0] != q or s.shape[0] != n or lo.shape[0] != q or hi.shape[0] != q:
        raise ValueError("shape mismatch")
    z_arr = np.zeros(n)
    e_arr = np.empty(n)
    codes_arr = np.zeros((q, max(n, 1)), dtype=np.uint8)
    vals_arr = np.zeros((q, MAXV))
    nv_arr = np.zeros(q, dtype=np.int32)
    cdef uint8_t[:, ::1] codes = codes_arr
    cdef double[:, ::1] vals = vals_arr
    cdef int[::1] nv = nv_arr
    lip_arr = np.empty(q)
    order_arr = np.arange(q, dtype=np.intp)
    g_arr = np.zeros(q)
    cdef double[::1] z = z_arr, e = e_arr, lip = lip_arr, g0 = g_arr
    cdef Py_ssize_t[::1] order = order_arr
    cdef const double* sp = &s[0] if n > 0 else NULL
    cdef const double* zp = &z[0] if n > 0 else NULL
    cdef double acc, before, after, g, new, d, acc_next = 0.0
    cdef bint check, carried = False
    with nogil:
        for j in range(q):
            acc = 0.0
            for i in range(n):
                acc += s[i] * A[j, i] * A[j, i]
            lip[j] = 0.25 * acc + (2.0 * lam2 if j > 0 else 0.0)
            if n > 0:
                nv[j] = _encode(&A[j, 0], &A[0, 0], n, &codes[j, 0], &vals[j, 0])
            if w[j] != 0.0:
                for i in range(n):
                    z[i] += A[j, i] * w[j]
        for i in range(n):
            e[i] = exp(z[i])
        if order_by_gradient and q > 2:
            for j in range(1, q):
                acc = 0.0
                for i in range(n):
                    acc += s[i] * A[j, i] / (1.0 + e[i])
                g0[j] = fabs(-acc + 2.0 * lam2 * w[j])
            # insertion sort of 1..q-1 by decreasing |gradient| (stable, q is small)
            for j in range(2, q):
                t = order[j]
                jj = j - 1
                while jj >= 1 and g0[order[jj]] < g0[t]:
                    order[jj + 1] = order[jj]
                    jj -= 1
                order[jj + 1] = t
        after = 0.0
        for sweep in range(max_sweeps):
            check = check_every > 0 and sweep % check_every == 0
            if check:
                before = lg_penalised_loss(sp, zp, n, &w[0], q, lam2)
            for jj in range(q):
                j = order[jj]
                if carried:
                    acc = acc_next
                else:
                    acc = 0.0
                    for i in range(n):
                        acc += s[i] * A[j, i] / (1.0 + e[i])
                g = -acc
                if j > 0:
                    g += 2.0 * lam2 * w[j]
                new = _clip(w[j] - g / lip[j], lo[j], hi[j]) if lip[j] > 0 else w[j]
                d = new - w[j]
                carried = False
                if d != 0.0:
                    w[j] = new
                    # update the margins and get the next coordinate's gradient in one pass
                    acc_next = _step(&A[j, 0], &codes[j, 0], nv[j], &vals[j, 0], d, &z[0],
                                     &e[0], n, &s[0], &A[order[(jj + 1) % q], 0], True)
                    carried = True
            if check:
                after = lg_penalised_loss(sp, zp, n, &w[0], q, lam2)
                if fabs(before - after) <= tol * fabs(after):
                    break
        after = lg_penalised_loss(sp, zp, n, &w[0], q, lam2)
    return after


def finetune_newton(const double[:, ::1] A, const double[::1] s, double[::1] w,
                    const double[::1] lo, const double[::1] hi, double lam2=0.0,
                    int max_iter=100, double tol=1e-10):
    """The fine-tune problem solved by projected Newton; returns the final loss.

    Same problem as ``finetune`` (support fixed, box on features, free intercept), but each
    iteration builds the exact gradient and Hessian in one pass over the rows, minimises the
    quadratic model over the box (Cholesky when the Newton step stays inside, else coordinate
    descent; no data pass), and backtracks on the
    true loss (Armijo). Quadratic-bound coordinate steps need hundreds of sweeps on correlated
    real-valued columns; this needs a handful of passes. Stops when an iteration lowers the
    loss by less than ``tol`` relative. ``w`` is updated in place. The loop is
    ``logistic.newton_fit``, which the certificate's branch and bound calls per node.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1]
    if w.shape[0] != q or s.shape[0] != n or lo.shape[0] != q or hi.shape[0] != q:
        raise ValueError("shape mismatch")
    if q == 0:
        return 0.0
    z_arr = np.zeros(max(n, 1))
    zd_arr = np.zeros(max(n, 1))
    # any number of coordinates (the certificate's relaxations fit every feature at once)
    work_arr = np.zeros(2 * q * q + 3 * q)
    nnz = max(int(np.count_nonzero(np.asarray(A))), 1)
    nz_val_arr = np.empty(nnz)
    nz_col_arr = np.empty(nnz, dtype=np.int32)
    nz_ptr_arr = np.empty(n + 1, dtype=np.int64)
    cdef double[::1] z = z_arr, zd = zd_arr, work = work_arr, nz_val = nz_val_arr
    cdef int32_t[::1] nz_col = nz_col_arr
    cdef int64_t[::1] nz_ptr = nz_ptr_arr
    cdef double loss
    cdef const double* a = &A[0, 0] if n > 0 else NULL
    cdef const double* sp = &s[0] if n > 0 else NULL
    with nogil:
        loss = newton_fit(a, q, n, sp, &w[0], &lo[0], &hi[0], lam2, max_iter, tol, &z[0], &zd[0],
                          &work[0], &nz_col[0], &nz_val[0], &nz_ptr[0])
    return loss


def logistic_loss(const double[:, ::1] A, const double[::1] s, const double[::1] w,
                  double inv_m=1.0):
    """``sum_i s_i log(1 + exp(-(A^T w)_i * inv_m))``: the loss of a card with multiplier 1/inv_m."""
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, j
    cdef double acc = 0.0, zi
    if w.shape[0] != q or s.shape[0] != n:
        raise ValueError("shape mismatch")
    with nogil:
        for i in range(n):
            zi = 0.0
            for j in range(q):
                zi += A[j, i] * w[j]
            acc += s[i] * _ell(zi * inv_m)
    return acc


cdef void _row_lipschitz(const double[:, ::1] A, const double* g_lo, const double* g_hi,
                         double inv_m, double* l) noexcept nogil:
    """l_i = 1 / (1 + exp(sum_j Z_ij Gamma_ij)) with Z = A * inv_m (Algorithm 6, line 4).

    Gamma_ij is the end of coordinate j's rounding box ``[g_lo_j, g_hi_j]`` that makes the
    margin smallest: ``g_lo`` where Z_ij > 0, ``g_hi`` otherwise.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, j
    cdef double t, zij
    for i in range(n):
        t = 0.0
        for j in range(q):
            zij = A[j, i] * inv_m
            t += zij * (g_lo[j] if zij > 0 else g_hi[j])
        l[i] = 1.0 / (1.0 + exp(t))


cdef void _rounding_box(const double[::1] wc, bint plus_one, const uint8_t* forced,
                        double* up_v, double* dn_v, bint* can_up, bint* can_dn, bint* todo,
                        bint* subst, double* g_lo, double* g_hi) noexcept nogil:
    """Each coordinate's two rounding targets and its box for the Lipschitz constants.

    A free coordinate rounds to ``ceil`` or ``floor`` (Algorithm 6). A forced feature
    (``forced[j]`` non-zero: bit 1 allows positive points, bit 2 negative ones) may not land on
    0: a target of 0 is replaced by the nearest non-zero integer on that side (+1 or -1) when the
    sign is allowed, and that side is closed otherwise; a forced coordinate at exactly 0 is
    rounded too. The Lipschitz box ``[g_lo, g_hi]`` spans the point and both open targets.
    """
    cdef Py_ssize_t q = wc.shape[0], j
    cdef double c, f
    for j in range(q):
        c = ceil(wc[j])
        f = floor(wc[j])
        up_v[j], dn_v[j] = c, f
        can_up[j], can_dn[j] = True, True
        subst[j] = False
        todo[j] = c != f
        g_lo[j] = f
        g_hi[j] = f + 1.0 if plus_one else c
        if forced == NULL or forced[j] == 0:
            continue
        if c == 0.0:
            up_v[j] = 1.0
            can_up[j] = (forced[j] & 1) != 0
            subst[j] = True
        if f == 0.0:
            dn_v[j] = -1.0
            can_dn[j] = (forced[j] & 2) != 0
            subst[j] = True
        todo[j] = (c != f or c == 0.0) and (can_up[j] or can_dn[j])
        g_lo[j] = dn_v[j] if can_dn[j] else f
        g_hi[j] = up_v[j] if can_up[j] else c


cdef double _round(const double[:, ::1] A, const double[::1] s, const double[::1] wc,
                   double inv_m, bint plus_one, bint shortcut, const uint8_t* forced,
                   double* out, double* l, double* G) noexcept nogil:
    """AuxiliaryLossRounding on one scaled point; returns the final auxiliary loss U.

    Uses U(delta) = delta^T G delta with G_jr = sum_i s_i l_i^2 Z_ij Z_ir, kept as the running
    value and the vector b = G delta, so each greedy step costs O(q) after an O(n q^2) setup.
    ``forced`` (NULL: none) marks the coordinates that may not round to 0 (``_rounding_box``);
    the greedy choice between their two targets is the same as for any other coordinate.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, j, r, best_up, best_dn, pick
    cdef double b[MAXQ]
    cdef double delta_up[MAXQ]
    cdef double delta_dn[MAXQ]
    cdef double up_v[MAXQ]
    cdef double dn_v[MAXQ]
    cdef double g_lo[MAXQ]
    cdef double g_hi[MAXQ]
    cdef bint todo[MAXQ]
    cdef bint can_up[MAXQ]
    cdef bint can_dn[MAXQ]
    cdef bint subst[MAXQ]
    cdef double u_cur = 0.0, up, dn, best_up_v, best_dn_v, d, expect, frac, lz
    cdef int left = 0
    _rounding_box(wc, plus_one, forced, up_v, dn_v, can_up, can_dn, todo, subst, g_lo, g_hi)
    _row_lipschitz(A, g_lo, g_hi, inv_m, l)
    for j in range(q):
        for r in range(j, q):
            G[j * q + r] = 0.0
    for i in range(n):
        lz = l[i] * l[i] * s[i] * inv_m * inv_m
        for j in range(q):
            if A[j, i] == 0.0:
                continue
            for r in range(j, q):
                G[j * q + r] += lz * A[j, i] * A[r, i]
    for j in range(q):
        for r in range(j + 1, q):
            G[r * q + j] = G[j * q + r]
    for j in range(q):
        out[j] = wc[j]
        b[j] = 0.0
        if todo[j]:
            left += 1
            delta_up[j] = up_v[j] - wc[j]
            delta_dn[j] = dn_v[j] - wc[j]
    while left > 0:
        best_up = -1
        best_dn = -1
        best_up_v = INFINITY
        best_dn_v = INFINITY
        for j in range(q):
            if not todo[j]:
                continue
            d = delta_up[j]
            up = u_cur + 2.0 * d * b[j] + d * d * G[j * q + j] if can_up[j] else INFINITY
            if shortcut and not subst[j]:
                frac = -delta_dn[j]
                expect = u_cur + G[j * q + j] * frac * (1.0 - frac)
                if up <= expect:
                    if up < best_up_v:
                        best_up_v, best_up = up, j
                    continue
            elif up < best_up_v:
                best_up_v, best_up = up, j
            d = delta_dn[j]
            dn = u_cur + 2.0 * d * b[j] + d * d * G[j * q + j] if can_dn[j] else INFINITY
            if dn < best_dn_v:
                best_dn_v, best_dn = dn, j
        if best_up < 0 and best_dn < 0:  # every value overflowed: take the first open target
            for j in range(q):
                if todo[j]:
                    best_up, best_up_v = j, INFINITY
                    break
            if not can_up[best_up]:
                best_dn, best_dn_v, best_up = best_up, INFINITY, -1
        if best_up >= 0 and best_up_v <= best_dn_v:
            pick, d, u_cur = best_up, delta_up[best_up], best_up_v
        else:
            pick, d, u_cur = best_dn, delta_dn[best_dn], best_dn_v
        out[pick] = wc[pick] + d
        out[pick] = floor(out[pick] + 0.5)  # exact integer despite the float sum
        todo[pick] = False
        left -= 1
        for j in range(q):
            b[j] += G[j * q + pick] * d
    return u_cur


cdef const uint8_t* _rounding_forced(const double[:, ::1] A, const double[::1] s, const double[::1] w,
                                     const uint8_t[::1] forced) except? NULL:
    """Check the shapes of a rounding's arguments (``A`` holds at most MAXQ coordinates, ``w`` and
    ``forced`` one entry per coordinate, ``s`` one weight per row); ``forced`` as a pointer, NULL
    for none."""
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1]
    if q > MAXQ:
        raise ValueError(f"at most {MAXQ} coordinates can be rounded")
    if w.shape[0] != q or s.shape[0] != n or (forced is not None and forced.shape[0] != q):
        raise ValueError("shape mismatch")
    if forced is None:
        return NULL
    return &forced[0]


def auxiliary_rounding(const double[:, ::1] A, const double[::1] s, const double[::1] wc,
                       double inv_m=1.0, bint plus_one=False, bint shortcut=False,
                       const uint8_t[::1] forced=None):
    """Round the scaled point ``wc`` (coordinate 0 the intercept) by Algorithm 6.

    ``A`` holds the support's label-signed columns of the unscaled data; the scaled data is
    ``A * inv_m``. Returns ``(w_plus, U)``, the integer point and its final auxiliary loss.
    ``plus_one`` uses the paper's ``floor + 1`` for Gamma (looser on integer inputs);
    ``shortcut`` evaluates "round down" only when "round up" exceeds the Bernoulli expectation.
    ``forced`` (one byte per coordinate, 0 free; bit 1 allows positive points, bit 2 negative
    ones) marks the features (``constraints.include``) that must keep non-zero points.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1]
    cdef const uint8_t* fp = _rounding_forced(A, s, wc, forced)
    out = np.empty(q)
    cdef double[::1] o = out
    cdef double u
    cdef vector[double] l, G  # _round's workspace: a loss per row, a q x q matrix
    l.resize(max(n, 1))
    G.resize(q * q + 1)
    with nogil:
        u = _round(A, s, wc, inv_m, plus_one, shortcut, fp, &o[0], &l[0], &G[0])
    return out, u


def rounding_bound(const double[:, ::1] A, const double[::1] s, const double[::1] wc,
                   double inv_m=1.0):
    """Theorem 3.1's right-hand sides for rounding ``wc`` on the scaled data ``A * inv_m``.

    Returns ``(surrogate_bound, loss_bound)``: ``sum_i s_i sum_j (l_i Z_ij)^2 u_j (1 - u_j)``,
    the cap on the final auxiliary loss, and ``sqrt(sum_i s_i * surrogate_bound)``, the cap on
    the loss increase (weights generalise the paper's n samples by Cauchy-Schwarz).
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, j
    if wc.shape[0] != q or s.shape[0] != n:
        raise ValueError("shape mismatch")
    l_arr = np.empty(max(n, 1))
    cdef double[::1] l = l_arr
    cdef double acc = 0.0, total = 0.0, u, zij
    g_arr = np.empty((2, max(q, 1)))
    cdef double[:, ::1] g = g_arr
    with nogil:
        for j in range(q):
            g[0, j] = floor(wc[j])
            g[1, j] = ceil(wc[j])
        _row_lipschitz(A, &g[0, 0], &g[1, 0], inv_m, &l[0])
        for i in range(n):
            total += s[i]
            for j in range(q):
                u = wc[j] - floor(wc[j])
                zij = A[j, i] * inv_m
                acc += s[i] * (l[i] * zij) * (l[i] * zij) * u * (1.0 - u)
    return acc, sqrt(total * acc)


def star_ray(const double[:, ::1] A, const double[::1] s, const double[::1] w,
             const double[::1] grid, double early_stop=-1.0, double reference_loss=0.0,
             bint plus_one=False, bint shortcut=False, const uint8_t[::1] stop=None,
             const uint8_t[::1] forced=None):
    """StarRaySearch over the multipliers in ``grid``, visited in order (Algorithm 3).

    ``w`` is the continuous point on the support (coordinate 0 the intercept). For each m the
    scaled point ``m w`` is rounded on the data scaled by ``1/m`` and scored by the loss of the
    integer card with multiplier m. The search ends early once the relative excess over
    ``reference_loss`` drops below ``early_stop`` (negative: never). Returns
    ``(w_plus, m, loss, tried)`` for the best multiplier. ``forced`` is as for
    ``auxiliary_rounding``: every card of the ray keeps those features at non-zero points, so the
    best multiplier is chosen among cards that honour ``constraints.include``.
    """
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1], i, j, g
    cdef Py_ssize_t ng = grid.shape[0]
    cdef const uint8_t* fp = _rounding_forced(A, s, w, forced)
    best = np.zeros(q)
    cand = np.zeros(q)
    wc_arr = np.zeros(q)
    cdef double[::1] bw = best, cw = cand, wc = wc_arr
    cdef double m, loss, best_loss = INFINITY, best_m = 1.0, zi
    cdef Py_ssize_t tried = 0
    cdef vector[double] l, G  # _round's workspace: a loss per row, a q x q matrix
    l.resize(max(n, 1))
    G.resize(q * q + 1)
    with nogil:
        for g in range(ng):
            if stop is not None and stop[0] != 0 and tried > 0:
                break
            m = grid[g]
            for j in range(q):
                wc[j] = w[j] * m
                # snap values a rounding error away from an integer onto it
                if fabs(wc[j] - floor(wc[j] + 0.5)) < 1e-9:
                    wc[j] = floor(wc[j] + 0.5)
            _round(A, s, wc, 1.0 / m, plus_one, shortcut, fp, &cw[0], &l[0], &G[0])
            loss = 0.0
            for i in range(n):
                zi = 0.0
                for j in range(q):
                    zi += A[j, i] * cw[j]
                loss += s[i] * _ell(zi / m)
            tried += 1
            if loss < best_loss:
                best_loss, best_m = loss, m
                for j in range(q):
                    bw[j] = cw[j]
            if early_stop >= 0 and (loss - reference_loss) / reference_loss < early_stop:
                break
    return best, best_m, best_loss, tried


def compress_rows(const uint8_t[:, ::1] codes, const int64_t[::1] cols, const int[::1] nvals,
                  const double[::1] s):
    """Rows made distinct by their values on ``cols`` and their label: ``(first_rows, weights)``.

    The key of a row is its label bit and the x-codes of ``cols`` in mixed radix. Groups appear
    in order of their first row. Returns None when a column is not fully coded or the key could
    overflow (the caller then keeps all rows). The loop is ``logistic.compress_into``.
    """
    cdef Py_ssize_t m = cols.shape[0], n = codes.shape[1], k, g, size = 1
    cdef double span = 2.0
    for k in range(m):
        if nvals[cols[k]] <= 0:
            return None
        span *= nvals[cols[k]]
    if span > 4.0e18:
        return None
    if span <= 65536 or span <= 4.0 * n:
        size = <Py_ssize_t> span
    else:
        while size < 2 * n:
            size *= 2
    first_arr = np.empty(max(n, 1), dtype=np.int64)
    weight_arr = np.zeros(max(n, 1), dtype=np.float64)
    used_arr = np.empty(max(n, 1), dtype=np.int64)
    slot_arr = np.full(size, -1, dtype=np.int64)
    keys_arr = np.empty(size, dtype=np.int64)
    cdef int64_t[::1] first = first_arr, slot = slot_arr, keys = keys_arr, used = used_arr
    cdef double[::1] weight = weight_arr
    if n == 0:
        return first_arr[:0], weight_arr[:0]
    with nogil:
        g = compress_into(&codes[0, 0], n, &cols[0] if m > 0 else NULL, m, &nvals[0], &s[0], &first[0],
                          &weight[0], &slot[0], &keys[0], &used[0], size)
    return first_arr[:g], weight_arr[:g]


def build_design(const double[:, ::1] X, const int64_t[::1] rows, const double[::1] y,
                 const double[::1] s, bint normalize=False):
    """The label-signed design ``A`` (P x m) from rows ``rows`` of row-major ``X``.

    ``y`` and ``s`` are given per selected row. With ``normalize`` each column becomes
    ``(x_j - mean_j) / ||x_j - mean_j||`` (weighted by ``s``; a norm below 1e-9 is left at 1),
    the reference code's reparametrisation. Returns ``(A, mean, norm)``. Plain loops: no BLAS
    threads, which stall on a busy machine, and no copy of ``X``.
    """
    cdef Py_ssize_t m = rows.shape[0], p = X.shape[1], i, j, r, b, e
    if y.shape[0] != m or s.shape[0] != m:
        raise ValueError("shape mismatch")
    for i in range(m):
        if rows[i] < 0 or rows[i] >= X.shape[0]:
            raise IndexError(rows[i])
    A_arr = np.empty((p + 1, m))
    mu_arr = np.zeros(p)
    norm_arr = np.ones(p)
    cdef double[:, ::1] A = A_arr
    cdef double[::1] mu = mu_arr, norm = norm_arr
    cdef double total = 0.0, d
    with nogil:
        for i in range(m):
            A[0, i] = y[i]
        if normalize:
            for i in range(m):
                r = rows[i]
                total += s[i]
                for j in range(p):
                    mu[j] += s[i] * X[r, j]
            for j in range(p):
                mu[j] /= total
                norm[j] = 0.0
            for i in range(m):
                r = rows[i]
                for j in range(p):
                    d = X[r, j] - mu[j]
                    norm[j] += s[i] * d * d
            for j in range(p):
                norm[j] = sqrt(norm[j])
                if norm[j] < 1e-9:
                    norm[j] = 1.0
        # transpose in blocks of 16 rows so both the reads and the writes stay in cache
        for b in range(0, m, 16):
            e = b + 16 if b + 16 < m else m
            for j in range(p):
                for i in range(b, e):
                    A[j + 1, i] = y[i] * (X[rows[i], j] - mu[j]) / norm[j]
    return A_arr, mu_arr, norm_arr


def is_binary(const double[:, ::1] X):
    """True when every entry is 0 or 1 (stops at the first other value)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], i, j
    cdef bint ok = True
    with nogil:
        for i in range(n):
            for j in range(p):
                if X[i, j] != 0.0 and X[i, j] != 1.0:
                    ok = False
                    break
            if not ok:
                break
    return ok
