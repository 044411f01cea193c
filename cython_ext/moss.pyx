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
from libc.math cimport sqrt, fabs, copysign, log, exp, fmax, fmin, INFINITY
from libc.stdint cimport int64_t
from libcpp.vector cimport vector
from scipy.linalg.cython_lapack cimport dposv

from paged_heap cimport PagedHeap



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

    cdef void _reset(self, double target) noexcept nogil:
        """Forget the last search; the caller has written the new w, g (and fixings) in place."""
        self.best_value = -INFINITY
        self.best_tau = 0.0
        self.best_mu = 0.0
        self.evaluations = 0
        self.reached = False
        self.target = target

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
        """The search, then the best bound certified."""
        self._search(tau0, mu0, warm, effort)
        self._certify()

    cdef void _certify(self) noexcept nogil:
        """Recompute the best gradient as ``G w - b`` (the coordinate descent keeps it by rank-one
        updates) and D from it, so rounding cannot build up in what is reported. Entries of rules
        forced out stay as they were; ``best_z`` is the search's."""
        cdef Py_ssize_t i, t, nnz = 0, m = self.G.shape[0]
        cdef double acc, zsum, zstab
        for i in range(m):  # the support of w, in the (now free) active-set buffer
            if self.bw[i] != 0.0:
                self.active[nnz] = i
                nnz += 1
        for i in range(m):
            if self.state[i] >= 0:
                acc = -self.b[i]
                for t in range(nnz):
                    acc = acc + self.G[i, self.active[t]] * self.bw[self.active[t]]
                self.bg[i] = acc
        self.best_value = _dual(self.b, self.yy, self.gamma, self.stab, self.k, self.best_tau, self.best_mu,
                                self.threshold, self.state, self.bw, self.bg, self.z, &zsum, &zstab)

    cdef void _search(self, double tau0, double mu0, bint warm, int effort) noexcept nogil:
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


# -- the branch-and-bound node loop ------------------------------------------------------------

cdef struct OpenNode:  # an entry of the node queue (paged_heap.h): the smallest (bound, order) first
    double key          # the node's bound
    int64_t tie         # insertion order
    Py_ssize_t slot     # the node's slot in the pool

cdef enum:
    _FREE = 0
    _IN = 1
    _OUT = -1


cdef class NodeSearch:
    """Best-first branch and bound below a root, on the rules the root left free (the sub-problem).

    Open nodes live in a slot pool of flat C++ vectors (fixings, and the parent's ``w``, ``g``,
    ``tau``, ``mu`` to warm-start from) under a priority queue keyed by the parent's bound, ties in
    insertion order; a node is solved with the one ``MultiplierSearch`` of the search, whose work
    arrays are reused. ``run`` processes nodes without the GIL and creates no Python object per
    node; it returns to the caller every ``budget`` nodes for its stop checks and progress events.

    Incumbents (roundings of a node's relaxation, and the rule set of an integral node) are rule
    sets of the whole problem, in full rule numbers: H2 is one LAPACK ``dposv`` on the full Gram
    matrix. The search reports the best found and the smallest bound of a node it closed within
    the tolerance of the incumbent (``floor``), so the caller can report an honest lower bound.
    """

    cdef MultiplierSearch ms
    cdef const double[:, ::1] G, fullG
    cdef const double[::1] b, fullb, stab, fullstab
    cdef const Py_ssize_t[::1] keep
    cdef Py_ssize_t[::1] by_stab, full_by_stab  # sub / full rule numbers, most stable first
    cdef signed char[::1] state, child
    cdef double[::1] w, g, bw, bg, bz, A, rhs
    cdef Py_ssize_t[::1] chosen, rest, support
    cdef unsigned char[::1] taken
    cdef Py_ssize_t m, mf
    cdef int k, effort
    cdef double yy, gamma, threshold, tol, h0, slack
    cdef vector[signed char] pool_state
    cdef vector[double] pool_w, pool_g, pool_tau, pool_mu
    cdef vector[Py_ssize_t] free_slots
    cdef PagedHeap[OpenNode] heap
    cdef int64_t order
    cdef public long long nodes
    cdef public double best_value, floor
    cdef public bint improved
    cdef vector[Py_ssize_t] best
    cdef double value, tau, mu  # the bound of the node being processed

    def __init__(self, const double[:, ::1] G, const double[::1] b, double yy, double gamma,
                 const double[::1] stab, int k, double threshold, double tol,
                 const signed char[::1] state, const double[::1] w, const double[::1] g, double tau,
                 double mu, double value, const double[:, ::1] fullG, const double[::1] fullb,
                 const double[::1] fullstab, const Py_ssize_t[::1] keep, double best_value,
                 best_support, int effort):
        cdef Py_ssize_t m = G.shape[0], mf = fullG.shape[0], i, slot
        if (b.shape[0] != m or stab.shape[0] != m or state.shape[0] != m or w.shape[0] != m
                or g.shape[0] != m or keep.shape[0] != m or fullb.shape[0] != mf or fullstab.shape[0] != mf):
            raise ValueError("NodeSearch: the sub-problem's and the full problem's arrays must agree in length")
        if m and (np.min(keep) < 0 or np.max(keep) >= mf) or any(not 0 <= i < mf for i in best_support):
            raise IndexError("NodeSearch: a rule number is out of range")
        self.G, self.b, self.stab, self.fullG, self.fullb, self.fullstab, self.keep = G, b, stab, fullG, fullb, fullstab, keep
        self.m, self.mf, self.k, self.effort = m, mf, k, effort
        self.yy, self.gamma, self.threshold, self.tol = yy, gamma, threshold, tol
        self.h0 = 0.5 * yy
        self.slack = 1e-9 * fmax(1.0, fabs(threshold))
        self.by_stab = np.argsort(-np.asarray(stab), kind="stable").astype(np.intp)
        self.full_by_stab = np.argsort(-np.asarray(fullstab), kind="stable").astype(np.intp)
        self.state = np.zeros(m, dtype=np.int8)
        self.child = np.zeros(m, dtype=np.int8)
        self.w = np.zeros(m)
        self.g = np.zeros(m)
        self.A = np.zeros(k * k if k > 0 else 1)
        self.rhs = np.zeros(max(k, 1))
        self.chosen = np.zeros(mf + 1, dtype=np.intp)
        self.rest = np.zeros(mf + 1, dtype=np.intp)
        self.support = np.zeros(mf + 1, dtype=np.intp)
        self.taken = np.zeros(mf, dtype=np.uint8)
        self.ms = MultiplierSearch(G, b, yy, gamma, stab, k, threshold, self.state, self.w, self.g, INFINITY)
        self.bw, self.bg, self.bz = self.ms.best_w, self.ms.best_g, self.ms.best_z
        self.best_value = best_value
        for i in best_support:
            self.best.push_back(i)
        self.improved = False
        self.floor = best_value
        self.nodes = 0
        self.order = 0
        for i in range(m):
            self.bw[i] = w[i]
            self.bg[i] = g[i]
        self.tau, self.mu, self.value = tau, mu, value
        slot = self._slot()
        for i in range(m):
            self.pool_state[slot * m + i] = state[i]
        self._store(slot)
        self.heap.push_or_terminate(OpenNode(value, self.order, slot))
        self.order += 1

    # -- what the caller reads between runs ---------------------------------------------------

    @property
    def open(self) -> int:
        return self.heap.size()

    @property
    def best_support(self) -> tuple:
        return tuple(sorted(int(i) for i in self.best))

    @property
    def lower(self) -> float:
        """The smallest bound of any open node, of a node closed near the incumbent, and the incumbent."""
        low = fmin(self.floor, self.best_value)
        if not self.heap.empty():
            low = fmin(low, self.heap.top().key)
        return low

    def run(self, long long budget) -> bool:
        """Process up to ``budget`` nodes; True once the search is over (no open node can improve)."""
        cdef bint done
        with nogil:
            done = self._run(budget)
        return done

    # -- the loop -----------------------------------------------------------------------------

    cdef inline double _cutoff(self) noexcept nogil:
        return self.best_value - self.tol * fabs(self.best_value)

    cdef bint _run(self, long long budget) noexcept nogil:
        cdef Py_ssize_t slot, i, j, t, m = self.m
        cdef long long done_here = 0
        cdef signed char v
        cdef bint changed, any_free
        cdef double leaf
        while not self.heap.empty() and self.heap.top().key < self._cutoff():
            if done_here >= budget:
                return False
            slot = self.heap.top().slot
            self.heap.pop()
            done_here += 1
            self.nodes += 1
            for i in range(m):  # load the node: its fixings, and its parent's bound as the warm start
                self.state[i] = self.pool_state[slot * m + i]
                self.w[i] = self.pool_w[slot * m + i]
                self.g[i] = self.pool_g[slot * m + i]
            self.free_slots.push_back(slot)
            self._solve(fmax(self.pool_tau[slot], 1e-12), self.pool_mu[slot])
            if self.value < self._cutoff():
                self._round()
                changed = self._fix()
                if changed:
                    if not self._feasible(self.state):
                        continue  # no rule set is left below this node
                    for i in range(m):
                        self.w[i] = self.bw[i]
                        self.g[i] = self.bg[i]
                    self._solve(fmax(self.tau, 1e-12), self.mu)
                    if self.value < self._cutoff():
                        self._round()
            j = -1
            if self.value < self._cutoff():
                j = self._branching_rule()
            if j < 0:  # pruned, solved, or a leaf (every rule fixed: the rules forced in are its one set)
                any_free = False
                for i in range(m):
                    if self.state[i] == _FREE:
                        any_free = True
                        break
                if any_free or self.value >= self._cutoff():
                    self.floor = fmin(self.floor, self.value)
                else:
                    leaf = self._forced_in_value()
                    if leaf < INFINITY:
                        self.floor = fmin(self.floor, leaf)
                continue
            for t in range(2):
                v = _IN if t == 0 else _OUT
                for i in range(m):
                    self.child[i] = self.state[i]
                self.child[j] = v
                if self._feasible(self.child):
                    slot = self._slot()
                    for i in range(m):
                        self.pool_state[slot * m + i] = self.child[i]
                    self._store(slot)
                    self.heap.push_or_terminate(OpenNode(self.value, self.order, slot))
                    self.order += 1
        return True

    cdef Py_ssize_t _slot(self) noexcept nogil:
        """A free slot of the pool, growing it when none is free."""
        cdef Py_ssize_t slot
        if not self.free_slots.empty():
            slot = self.free_slots.back()
            self.free_slots.pop_back()
            return slot
        slot = self.pool_tau.size()
        self.pool_tau.push_back(0.0)
        self.pool_mu.push_back(0.0)
        self.pool_state.resize((slot + 1) * self.m)
        self.pool_w.resize((slot + 1) * self.m)
        self.pool_g.resize((slot + 1) * self.m)
        return slot

    cdef void _store(self, Py_ssize_t slot) noexcept nogil:
        """Keep the current bound (w, g, tau, mu) in ``slot`` as its node's warm start."""
        cdef Py_ssize_t i, m = self.m
        for i in range(m):
            self.pool_w[slot * m + i] = self.bw[i]
            self.pool_g[slot * m + i] = self.bg[i]
        self.pool_tau[slot] = self.tau
        self.pool_mu[slot] = self.mu

    cdef void _solve(self, double tau0, double mu0) noexcept nogil:
        """The node's (certified) bound, from the warm start in ``w``, ``g``."""
        if not self._feasible(self.state):
            self.value = INFINITY
            return
        self.ms._reset(self._cutoff())
        self.ms._run(tau0, mu0, True, self.effort)
        self.value, self.tau, self.mu = self.ms.best_value, self.ms.best_tau, self.ms.best_mu

    cdef bint _feasible(self, const signed char[::1] s) noexcept nogil:
        """Whether the fixings ``s`` leave room for a rule set that reaches the threshold."""
        cdef Py_ssize_t i, t, forced = 0
        cdef double total = 0.0
        for i in range(self.m):
            if s[i] == _IN:
                forced += 1
                total += self.stab[i]
        if forced > self.k:
            return False
        for t in range(self.m):
            if forced >= self.k:
                break
            i = self.by_stab[t]
            if s[i] == _FREE:
                total += self.stab[i]
                forced += 1
        return total >= self.threshold - self.slack

    cdef bint _fix(self) noexcept nogil:
        """Fix every free rule whose forced-in (resp. out) bound exceeds the incumbent; any fixed?

        The incumbent itself, not the pruning cutoff below it: what is fixed away leaves no
        trace in ``floor``, so it must hold no rule set better than the incumbent.
        """
        cdef Py_ssize_t i
        cdef double r, cutoff = self.best_value
        cdef bint changed = False
        for i in range(self.m):
            if self.state[i] != _FREE:
                continue
            r = (self.tau - self.mu * self.stab[i]) - 0.5 * self.gamma * self.bg[i] * self.bg[i]
            if self.value - r > cutoff:  # cannot be left out: in (this wins when both hold)
                self.state[i] = _IN
                changed = True
            elif self.value + r > cutoff:
                self.state[i] = _OUT
                changed = True
        return changed

    cdef int _branching_rule(self) noexcept nogil:
        """The free rule to branch on (the most fractional one), or -1 once the node is solved.

        An integral relaxation solves its node only when its rule set meets the stability row
        (a Lagrangian relaxation may violate the row it prices) and its H2 meets the bound;
        the rule set also competes for the incumbent. Otherwise a chosen rule, else the most
        stable free rule, is split.
        """
        cdef Py_ssize_t i, j = -1, n = 0
        cdef double f, frac = -1.0, h, big
        cdef bint any_free = False
        for i in range(self.m):
            if self.state[i] == _FREE:
                any_free = True
                f = fmin(self.bz[i], 1.0 - self.bz[i])
                if f > frac:
                    frac, j = f, i
        if not any_free:
            return -1
        if frac > 1e-6:
            return <int>j
        for i in range(self.m):
            if self.state[i] == _IN or (self.state[i] == _FREE and self.bz[i] > 0.5):
                self.support[n] = self.keep[i]
                n += 1
        if n > 0:
            h = self._offer(n)
            if h < INFINITY and h <= self.value * (1.0 + self.tol) + 1e-12 * self.h0:
                return -1
        j, big = -1, -1.0
        for i in range(self.m):
            if self.state[i] == _FREE and self.bz[i] > 0.5 and fabs(self.bw[i]) > big:
                j, big = i, fabs(self.bw[i])
        if j >= 0:
            return <int>j
        for i in range(self.m):
            if self.state[i] == _FREE and (j < 0 or self.stab[i] > self.stab[j]):
                j = i
        return <int>j

    cdef double _forced_in_value(self) noexcept nogil:
        """H2 of a leaf's rule set (the rules forced in), offered as an incumbent; inf if infeasible."""
        cdef Py_ssize_t i, n = 0
        for i in range(self.m):
            if self.state[i] == _IN:
                self.support[n] = self.keep[i]
                n += 1
        return self._offer(n) if n > 0 else INFINITY

    cdef void _round(self) noexcept nogil:
        """Offer the rounding of the node's relaxation as an incumbent."""
        cdef Py_ssize_t n = _rounding(self.bz, self.bw, self.keep, self.fullstab, self.full_by_stab, self.k,
                                      self.threshold - self.slack, self.chosen, self.rest, self.taken, self.support)
        if n > 0:
            self._offer(n)

    cdef double _offer(self, Py_ssize_t n) noexcept nogil:
        """H2 of the rule set in ``support[:n]`` if it is feasible (else inf); kept if it beats the incumbent."""
        cdef Py_ssize_t i
        cdef double total = 0.0, h
        if n > self.k:
            return INFINITY
        for i in range(n):
            total += self.fullstab[self.support[i]]
        if total < self.threshold - self.slack:
            return INFINITY
        _sort_indices(self.support, n)
        h = _h2(self.fullG, self.fullb, self.yy, self.gamma, self.support, n, self.A, self.rhs)
        if h < self.best_value:
            self.best_value = h
            self.improved = True
            self.best.clear()
            for i in range(n):
                self.best.push_back(self.support[i])
        return h


cdef Py_ssize_t _rounding(const double[::1] z, const double[::1] w, const Py_ssize_t[::1] keep,
                          const double[::1] stab, const Py_ssize_t[::1] by_stab, int k, double floor,
                          Py_ssize_t[::1] chosen, Py_ssize_t[::1] rest, unsigned char[::1] taken,
                          Py_ssize_t[::1] out) noexcept nogil:
    """A rule set read off a relaxation ``z``, ``w`` over the rules ``keep``: its k largest z (ties
    by |w|, then rule number), repaired by swapping the least stable chosen rule for the most
    stable rule left until ``stab`` sums to ``floor``. Writes it to ``out`` and returns its size,
    or 0 if there is none. ``by_stab`` lists every rule, most stable first; ``chosen`` and
    ``rest`` hold one entry per rule (plus one), ``taken`` one per rule, all zero on entry and exit."""
    cdef Py_ssize_t i, t, n = 0, n_rest = 0, head = 0, pick, m = keep.shape[0]
    cdef double total = 0.0
    for t in range(k):
        pick = -1
        for i in range(m):
            if z[i] > 0.0 and taken[keep[i]] == 0 and (
                    pick < 0 or z[i] > z[pick] or (z[i] == z[pick] and fabs(w[i]) > fabs(w[pick]))):
                pick = i
        if pick < 0:
            break
        chosen[n] = keep[pick]
        taken[keep[pick]] = 1
        total += stab[keep[pick]]
        n += 1
    if n == 0:
        return 0
    if total < floor:
        for t in range(by_stab.shape[0]):  # the rules left, most stable first
            i = by_stab[t]
            if taken[i] == 0:
                rest[n_rest] = i
                n_rest += 1
        _sort_by_key(chosen, n, stab)  # least stable first (stable: keeps the z order on ties)
        t = 0
        while t < n_rest and total < floor:
            if n - head >= k:
                total -= stab[chosen[head]]
                head += 1
            chosen[n] = rest[t]
            total += stab[rest[t]]
            n += 1
            t += 1
    for i in range(n):
        taken[chosen[i]] = 0
    if total < floor:
        return 0
    for i in range(head, n):
        out[i - head] = chosen[i]
    return n - head


def rounding(const double[::1] z, const double[::1] w, const double[::1] stab, int k, double threshold):
    """The rule set read off a relaxation (see ``_rounding``), sorted; None if none meets the threshold."""
    cdef Py_ssize_t m = stab.shape[0], n
    if z.shape[0] != m or w.shape[0] != m:
        raise ValueError("rounding: z, w and stab must agree in length")
    cdef Py_ssize_t[::1] keep = np.arange(m, dtype=np.intp)
    cdef Py_ssize_t[::1] by_stab = np.argsort(-np.asarray(stab), kind="stable").astype(np.intp)
    cdef Py_ssize_t[::1] chosen = np.empty(m + 1, dtype=np.intp), rest = np.empty(m + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] out = np.empty(m + 1, dtype=np.intp)
    cdef unsigned char[::1] taken = np.zeros(max(m, 1), dtype=np.uint8)
    with nogil:
        n = _rounding(z, w, keep, stab, by_stab, k, threshold - 1e-9 * fmax(1.0, fabs(threshold)),
                      chosen, rest, taken, out)
    return tuple(sorted(int(i) for i in out[:n])) if n > 0 else None


cdef double _h2(const double[:, ::1] G, const double[::1] b, double yy, double gamma,
                const Py_ssize_t[::1] support, Py_ssize_t n, double[::1] A, double[::1] rhs) noexcept nogil:
    """H2 of the rule set ``support[:n]`` in Gram space: ``1/2 (y'y - b_S' w)`` with
    ``(I/gamma + G_SS) w = b_S``, by one LAPACK ``dposv`` (A and rhs hold at least n^2 and n);
    inf if the factorisation fails, which I/gamma + G_SS (positive definite) never should."""
    cdef Py_ssize_t i, j
    cdef int nn = <int>n, one = 1, info = 0
    cdef double h = 0.0
    cdef char lower = b'L'
    if n == 0:
        return 0.5 * yy
    for i in range(n):  # column-major; symmetric
        for j in range(n):
            A[j * n + i] = G[support[i], support[j]]
        A[i * n + i] += 1.0 / gamma
        rhs[i] = b[support[i]]
    dposv(&lower, &nn, &one, &A[0], &nn, &rhs[0], &nn, &info)
    if info != 0:
        return INFINITY
    for i in range(n):
        h += b[support[i]] * rhs[i]
    return 0.5 * (yy - h)


def h2(const double[:, ::1] G, const double[::1] b, double yy, double gamma, support) -> float:
    """H2 of one rule set in Gram space (the compiled evaluation the searches use)."""
    cdef Py_ssize_t[::1] s = np.asarray(sorted(support), dtype=np.intp)
    cdef Py_ssize_t n = s.shape[0]
    cdef double[::1] A = np.empty(max(n * n, 1)), rhs = np.empty(max(n, 1))
    if n and (s[0] < 0 or s[n - 1] >= G.shape[0]):
        raise IndexError("h2: a rule number is out of range")
    return _h2(G, b, yy, gamma, s, n, A, rhs)


def local_search(const double[:, ::1] G, const double[::1] b, double yy, double gamma,
                 const double[::1] stab, int k, double threshold, support, double value,
                 const Py_ssize_t[::1] candidates, int budget):
    """Swap one rule of ``support`` for one of ``candidates`` while that lowers H2 (first
    improvement, candidates in the given order, members in rule order); at most ``budget``
    evaluations. Returns the final rule set and its H2. Compiled, without the GIL."""
    cdef Py_ssize_t n = len(support), c, t, i, j, out, spent = 0
    cdef Py_ssize_t[::1] cur = np.asarray(sorted(support), dtype=np.intp)
    cdef Py_ssize_t[::1] trial = np.empty(max(n, 1), dtype=np.intp)
    cdef double[::1] A = np.empty(max(n * n, 1)), rhs = np.empty(max(n, 1))
    cdef double slack = 1e-9 * fmax(1.0, fabs(threshold)), total, h, current = value
    cdef bint improved = True, member
    if n == 0 or n > k:
        return tuple(int(i) for i in cur[:n]), value
    if cur[0] < 0 or cur[n - 1] >= G.shape[0] or (candidates.shape[0] and (
            np.min(candidates) < 0 or np.max(candidates) >= G.shape[0])):
        raise IndexError("local_search: a rule number is out of range")
    if b.shape[0] != G.shape[0] or stab.shape[0] != G.shape[0]:
        raise ValueError("local_search: G, b and stab must agree in length")
    with nogil:
        while improved and spent < budget:
            improved = False
            for c in range(candidates.shape[0]):
                i = candidates[c]
                member = False
                for t in range(n):
                    if cur[t] == i:
                        member = True
                        break
                if member:
                    continue
                for out in range(n):
                    total = 0.0
                    for t in range(n):  # the trial: cur with cur[out] replaced by i
                        trial[t] = i if t == out else cur[t]
                        total += stab[trial[t]]
                    if total < threshold - slack:
                        continue
                    _sort_indices(trial, n)
                    h = _h2(G, b, yy, gamma, trial, n, A, rhs)
                    spent += 1
                    if h < current * (1.0 - 1e-12):
                        current = h
                        for t in range(n):
                            cur[t] = trial[t]
                        improved = True
                        break
                if improved or spent >= budget:
                    break
    return tuple(int(i) for i in cur[:n]), current


cdef void _sort_indices(Py_ssize_t[::1] a, Py_ssize_t n) noexcept nogil:
    """Insertion sort of a[:n] (a rule set: at most k entries)."""
    cdef Py_ssize_t i, j, x
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


cdef void _sort_by_key(Py_ssize_t[::1] a, Py_ssize_t n, const double[::1] key) noexcept nogil:
    """Stable insertion sort of a[:n] by ascending key[a[i]]."""
    cdef Py_ssize_t i, j, x
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and key[a[j]] > key[x]:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
