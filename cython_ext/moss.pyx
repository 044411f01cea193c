# cython: language_level=3
"""MOSS's compiled kernel: coordinate descent on the perspective relaxation, in Gram space.

For multipliers ``lam_i`` (``tau - mu * stab_i``: the price of a rule's slot in ``sum z <= k``
less its reward in ``stab'z >= eps``), minimising the relaxation of problem (9) over ``z`` in
closed form leaves a separable convex problem in the rule weights alone:

    F(w) = 1/2 w'Gw - b'w + sum_i B_i(w_i),     G = M'M, b = M'y,

with ``B_i`` the reverse-Huber penalty ``min_{0<=z<=1} w^2/(2 gamma z) + lam_i z`` for a free rule
(``sqrt(2 lam / gamma)|w|`` up to ``|w| = sqrt(2 gamma lam)``, ``w^2/(2 gamma) + lam`` beyond),
the ridge ``w^2/(2 gamma)`` for a rule forced in (or a free one with ``lam <= 0``), and ``w = 0``
for a rule forced out. The solver keeps the gradient ``g = Gw - b`` up to date, so a coordinate
step costs one row of G; it sweeps the active set to convergence and then checks every rule,
as the support of the relaxation is small (about k rules) while G has one row per candidate.
The loop runs without the GIL and creates no Python object.
"""

import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt, fabs, copysign, log, exp, fmax, fmin, INFINITY

cnp.import_array()


cdef inline double _penalty(double t, double lam, signed char state, double gamma,
                            double inv_gamma) noexcept nogil:
    """B_i(t): the z-minimised perspective penalty of one rule."""
    if state < 0:
        return 0.0
    if state > 0 or lam <= 0.0:
        return 0.5 * t * t * inv_gamma + lam
    if fabs(t) <= sqrt(2.0 * gamma * lam):
        return sqrt(2.0 * lam * inv_gamma) * fabs(t)
    return 0.5 * t * t * inv_gamma + lam


cdef inline double _argmin(double a, double beta, double lam, signed char state, double gamma,
                           double inv_gamma) noexcept nogil:
    """The minimiser of ``a t^2 / 2 - beta t + B_i(t)`` (B_i is convex and C^1, so one of two pieces)."""
    cdef double kappa, t
    if state < 0:
        return 0.0
    if state > 0 or lam <= 0.0:
        return beta / (a + inv_gamma)
    kappa = sqrt(2.0 * lam * inv_gamma)
    if fabs(beta) <= kappa:
        return 0.0
    t = (beta - copysign(kappa, beta)) / a
    if fabs(t) <= sqrt(2.0 * gamma * lam):
        return t
    return beta / (a + inv_gamma)


cdef inline double _step(const double[:, ::1] G, double[::1] w, double[::1] g, Py_ssize_t i,
                         double lam, signed char state, double gamma, double inv_gamma,
                         const Py_ssize_t[::1] live, Py_ssize_t n_live) noexcept nogil:
    """One exact coordinate step on rule i; returns the decrease of F (>= 0).

    Only the gradient entries of ``live`` rules (those not forced out) are kept up to date: the
    others never enter a step or the bound, so a search deep in the tree pays for the rules it
    still considers, not for every candidate.
    """
    cdef Py_ssize_t t, j
    cdef double a = G[i, i]
    cdef double old = w[i]
    cdef double beta = a * old - g[i]
    cdef double new = _argmin(a, beta, lam, state, gamma, inv_gamma)
    cdef double delta = new - old
    cdef double dec
    if delta == 0.0:
        return 0.0
    dec = (0.5 * a * old * old - beta * old + _penalty(old, lam, state, gamma, inv_gamma)) \
        - (0.5 * a * new * new - beta * new + _penalty(new, lam, state, gamma, inv_gamma))
    w[i] = new
    for t in range(n_live):  # G is symmetric: row i is column i
        j = live[t]
        g[j] += G[i, j] * delta
    return dec if dec > 0.0 else 0.0


cdef int _cd(const double[:, ::1] G, const double[::1] b, double gamma, const double[::1] lam,
             const signed char[::1] state, double[::1] w, double[::1] g, double tol, double scale,
             int max_sweeps, Py_ssize_t[::1] active, Py_ssize_t[::1] live,
             unsigned char[::1] member) noexcept nogil:
    """The coordinate descent of ``perspective_cd``, on caller-provided work arrays."""
    cdef Py_ssize_t m = G.shape[0], i, t, n_active, n_live
    cdef double inv_gamma = 1.0 / gamma
    cdef double dec, stop = tol * scale
    cdef int sweeps = 0
    cdef bint admitted
    n_live = 0
    for i in range(m):
        member[i] = 0
        if state[i] >= 0:
            live[n_live] = i
            n_live += 1
    n_active = 0
    for i in range(m):
        if state[i] < 0 and w[i] != 0.0:
            _step(G, w, g, i, lam[i], state[i], gamma, inv_gamma, live, n_live)  # sets w_i = 0
        if state[i] > 0 or (state[i] == 0 and w[i] != 0.0):
            active[n_active] = i
            member[i] = 1
            n_active += 1
    while sweeps < max_sweeps:
        while sweeps < max_sweeps:
            dec = 0.0
            for t in range(n_active):
                i = active[t]
                dec += _step(G, w, g, i, lam[i], state[i], gamma, inv_gamma, live, n_live)
            sweeps += 1
            if dec <= stop:
                break
        dec = 0.0
        admitted = False
        for t in range(n_live):
            i = live[t]
            dec += _step(G, w, g, i, lam[i], state[i], gamma, inv_gamma, live, n_live)
            if w[i] != 0.0 and member[i] == 0:
                active[n_active] = i
                member[i] = 1
                n_active += 1
                admitted = True
        sweeps += 1
        if not admitted and dec <= stop:
            break
        t = 0  # drop rules that left the support
        for i in range(n_active):
            if w[active[i]] != 0.0 or state[active[i]] > 0:
                active[t] = active[i]
                t += 1
            else:
                member[active[i]] = 0
        n_active = t
    return sweeps


def perspective_cd(const double[:, ::1] G, const double[::1] b, double gamma,
                   const double[::1] lam, const signed char[::1] state,
                   double[::1] w, double[::1] g, double tol, double scale,
                   int max_sweeps=100000):
    """Minimise F(w) in place by active-set cyclic coordinate descent; returns the sweeps made.

    ``state[i]`` is 0 for a free rule, 1 for a rule forced in and -1 for one forced out. ``w`` is
    the warm start and ``g`` must equal ``G w - b`` on entry; both are updated. A pass ends when
    the objective falls by at most ``tol * scale`` over a sweep; the solve ends when a sweep over
    every rule neither admits a new rule nor decreases F by more than that. Entries of ``g`` for
    rules forced out are left as they were (stale): a later call must not free such a rule.
    """
    cdef Py_ssize_t m = G.shape[0]
    cdef int sweeps
    if b.shape[0] != m or lam.shape[0] != m or state.shape[0] != m or w.shape[0] != m or g.shape[0] != m:
        raise ValueError("perspective_cd: G, b, lam, state, w and g must agree in length")
    cdef Py_ssize_t[::1] active = np.empty(m, dtype=np.intp)
    cdef Py_ssize_t[::1] live = np.empty(m, dtype=np.intp)
    cdef unsigned char[::1] member = np.zeros(m, dtype=np.uint8)
    with nogil:
        sweeps = _cd(G, b, gamma, lam, state, w, g, tol, scale, max_sweeps, active, live, member)
    return sweeps


cdef double _dual(const double[::1] b, double yy, double gamma, const double[::1] stab, int k,
                  double tau, double mu, double threshold, const signed char[::1] state,
                  const double[::1] w, const double[::1] g, double[::1] z,
                  double* zsum, double* zstab) noexcept nogil:
    """The dual bound D at (w, tau, mu) with ``g = G w - b`` (see ``relaxation.py``); fills the
    relaxation's z (1 in, 0 out, ``min(1, |w| / sqrt(2 gamma lam))`` free) and its row activities."""
    cdef Py_ssize_t i, m = b.shape[0]
    cdef double lam_i, s, zi, wg = 0.0, terms = 0.0
    zsum[0] = 0.0
    zstab[0] = 0.0
    for i in range(m):
        wg += w[i] * (g[i] + b[i])
        s = 0.5 * gamma * g[i] * g[i]
        lam_i = tau - mu * stab[i]
        if state[i] > 0:
            terms += lam_i - s
            zi = 1.0
        elif state[i] < 0:
            zi = 0.0
        else:
            if s > lam_i:
                terms -= s - lam_i
            zi = 1.0 if lam_i <= 0.0 else fmin(1.0, fabs(w[i]) / sqrt(2.0 * gamma * lam_i))
        z[i] = zi
        zsum[0] += zi
        zstab[0] += zi * stab[i]
    return 0.5 * yy - 0.5 * wg + terms - tau * k + mu * threshold


def dual_bound(const double[::1] b, double yy, double gamma, const double[::1] stab, int k,
               double tau, double mu, double threshold, const signed char[::1] state,
               const double[::1] w, const double[::1] g):
    """D at (w, tau, mu) for a given gradient ``g = G w - b`` (entries of rules forced out unused)."""
    cdef Py_ssize_t m = b.shape[0]
    cdef double zsum, zstab
    if stab.shape[0] != m or state.shape[0] != m or w.shape[0] != m or g.shape[0] != m:
        raise ValueError("dual_bound: b, stab, state, w and g must agree in length")
    cdef double[::1] z = np.empty(m)
    return _dual(b, yy, gamma, stab, k, tau, mu, threshold, state, w, g, z, &zsum, &zstab)


cdef struct Trial:
    double value
    double tau
    double zsum
    double zstab


cdef class MultiplierSearch:
    """Maximises the dual bound over (w, tau, mu) for one threshold and one set of fixings.

    ``tau`` is the root of the cardinality row's slack ``sum z - k`` (which falls as tau rises),
    found by bracketing then Illinois regula falsi in log tau; ``mu`` maximises the concave
    ``max_tau D`` by bracketing on the stability row's slack and then golden section, which needs
    values only (the relaxation's z can jump, so a slope is only a hint). Every evaluation is a
    valid bound; the best is kept in ``best_w``, ``best_g``, ``best_z``, and the search stops as soon
    as one reaches ``target``. The work arrays are allocated once per search, not per evaluation.
    """

    cdef const double[:, ::1] G
    cdef const double[::1] b
    cdef const double[::1] stab
    cdef const signed char[::1] state
    cdef double[::1] w, g, z, lam
    cdef Py_ssize_t[::1] active, live
    cdef unsigned char[::1] member
    cdef public object best_w, best_g, best_z
    cdef double[::1] bw, bg, bz
    cdef double yy, gamma, threshold, target
    cdef int k
    cdef public double best_value, best_tau, best_mu
    cdef public int evaluations
    cdef bint reached

    def __init__(self, const double[:, ::1] G, const double[::1] b, double yy, double gamma,
                 const double[::1] stab, int k, double threshold, const signed char[::1] state,
                 double[::1] w, double[::1] g, double target):
        cdef Py_ssize_t m = G.shape[0]
        self.G, self.b, self.stab, self.state = G, b, stab, state
        self.w, self.g = w, g
        if b.shape[0] != m or stab.shape[0] != m or state.shape[0] != m or w.shape[0] != m or g.shape[0] != m:
            raise ValueError("MultiplierSearch: G, b, stab, state, w and g must agree in length")
        self.z = np.empty(m)
        self.lam = np.empty(m)
        self.active = np.empty(m, dtype=np.intp)
        self.live = np.empty(m, dtype=np.intp)
        self.member = np.zeros(m, dtype=np.uint8)
        self.best_w, self.best_g, self.best_z = np.array(w, copy=True), np.array(g, copy=True), np.zeros(m)
        self.bw, self.bg, self.bz = self.best_w, self.best_g, self.best_z
        self.yy, self.gamma, self.k, self.threshold, self.target = yy, gamma, k, threshold, target
        self.best_value = -INFINITY
        self.best_tau = 0.0
        self.best_mu = 0.0
        self.evaluations = 0
        self.reached = False

    cdef Trial at(self, double tau, double mu) noexcept nogil:
        """The bound at (tau, mu), after minimising the Lagrangian over w from the current w."""
        cdef Py_ssize_t i, m = self.G.shape[0]
        cdef Trial t
        for i in range(m):
            self.lam[i] = tau - mu * self.stab[i]
        _cd(self.G, self.b, self.gamma, self.lam, self.state, self.w, self.g, 1e-13, 0.5 * self.yy, 100000,
            self.active, self.live, self.member)
        t.value = _dual(self.b, self.yy, self.gamma, self.stab, self.k, tau, mu, self.threshold, self.state,
                        self.w, self.g, self.z, &t.zsum, &t.zstab)
        t.tau = tau
        self.evaluations += 1
        if t.value > self.best_value:
            self.best_value, self.best_tau, self.best_mu = t.value, tau, mu
            for i in range(m):
                self.bw[i] = self.w[i]
                self.bg[i] = self.g[i]
                self.bz[i] = self.z[i]
            if t.value >= self.target:
                self.reached = True
        return t

    cdef Trial tau_root(self, double mu, double start, double tol, double rel) noexcept nogil:
        """tau with |sum z - k| <= tol (or a bracket narrower than rel in log tau), for this mu."""
        cdef double x = start if start > 1e-300 else 1e-300
        cdef double step, lo_x, lo_s, hi_x, hi_s, a, fa, bb, fb, u, sl
        cdef int it, side = 0
        cdef bint bracketed = False
        cdef Trial t = self.at(x, mu)
        sl = t.zsum - self.k
        if self.reached or fabs(sl) <= tol:
            return t
        lo_x = hi_x = x
        lo_s = hi_s = sl
        step = 4.0 if sl > 0 else 0.25
        for it in range(60):
            x *= step
            if step < 1.0 and x < 1e-12 * start:
                return self.at(0.0, mu)
            t = self.at(x, mu)
            sl = t.zsum - self.k
            if self.reached or fabs(sl) <= tol:
                return t
            if (sl > 0) == (step > 1.0):
                if sl > 0:
                    lo_x, lo_s = x, sl
                else:
                    hi_x, hi_s = x, sl
                continue
            if step > 1.0:
                hi_x, hi_s = x, sl
            else:
                lo_x, lo_s = x, sl
            bracketed = True
            break
        if not bracketed:
            return t
        a, fa, bb, fb = log(lo_x), lo_s, log(hi_x), hi_s
        for it in range(60):
            if bb - a <= rel:
                break
            u = (a * fb - bb * fa) / (fb - fa)
            if not (a < u < bb):
                u = 0.5 * (a + bb)
            t = self.at(exp(u), mu)
            sl = t.zsum - self.k
            if self.reached or fabs(sl) <= tol:
                break
            if sl > 0:
                a, fa = u, sl
                if side == 1:
                    fb *= 0.5
                side = 1
            else:
                bb, fb = u, sl
                if side == -1:
                    fa *= 0.5
                side = -1
        return t

    cdef Trial p(self, double mu, double* tau_now) noexcept nogil:
        cdef Trial t = self.tau_root(mu, tau_now[0], 1e-4 * self.k, 1e-4)
        tau_now[0] = t.tau if t.tau > 0 else tau_now[0]
        return t

    def run(self, double tau0, double mu0, bint warm, int effort):
        """The whole search; returns nothing, the best bound is in the ``best_*`` attributes."""
        with nogil:
            self._run(tau0, mu0, warm, effort)

    cdef void _run(self, double tau0, double mu0, bint warm, int effort) noexcept nogil:
        cdef Trial first, t
        cdef double mu, lo, hi, x1, x2, f1, f2, ratio = (sqrt(5.0) - 1.0) / 2.0, tau_now
        cdef int it
        if warm:
            self.at(tau0, mu0)  # the parent's multipliers often prune a child at once
            if self.reached:
                return
        first = self.tau_root(mu0, tau0, 1e-4 * self.k, 1e-4)
        if self.reached or not (mu0 > 0.0 or first.zstab < self.threshold):
            return
        tau_now = first.tau if first.tau > 0 else tau0
        mu = mu0 if mu0 > 0.0 else tau_now / fmax(_max(self.stab), 1e-300)
        t = self.p(mu, &tau_now)
        if self.reached:
            return
        if self.threshold - t.zstab > 0:  # rising: more mu
            lo, hi = mu, mu * 4.0
            for it in range(40):
                t = self.p(hi, &tau_now)
                if self.reached:
                    return
                if not (self.threshold - t.zstab > 0):
                    break
                lo, hi = hi, hi * 4.0
        else:
            lo, hi = mu / 4.0, mu
            for it in range(40):
                if lo < 1e-12 * mu:
                    lo = 0.0
                    break
                t = self.p(lo, &tau_now)
                if self.reached:
                    return
                if self.threshold - t.zstab > 0:
                    break
                lo, hi = lo / 4.0, lo
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        f1 = self.p(x1, &tau_now).value
        if self.reached:
            return
        f2 = self.p(x2, &tau_now).value
        for it in range(effort):
            if self.reached:
                return
            if f1 >= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - ratio * (hi - lo)
                f1 = self.p(x1, &tau_now).value
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + ratio * (hi - lo)
                f2 = self.p(x2, &tau_now).value


cdef double _max(const double[::1] v) noexcept nogil:
    cdef Py_ssize_t i
    cdef double out = -INFINITY
    for i in range(v.shape[0]):
        if v[i] > out:
            out = v[i]
    return out
