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
from libc.math cimport sqrt, fabs, copysign

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
    cdef Py_ssize_t m = G.shape[0], i, t, n_active, n_live
    cdef double inv_gamma = 1.0 / gamma
    cdef double dec, stop = tol * scale
    cdef int sweeps = 0
    cdef bint admitted
    if b.shape[0] != m or lam.shape[0] != m or state.shape[0] != m or w.shape[0] != m or g.shape[0] != m:
        raise ValueError("perspective_cd: G, b, lam, state, w and g must agree in length")
    active_arr = np.empty(m, dtype=np.intp)
    live_arr = np.empty(m, dtype=np.intp)
    member_arr = np.zeros(m, dtype=np.uint8)
    cdef Py_ssize_t[::1] active = active_arr
    cdef Py_ssize_t[::1] live = live_arr
    cdef unsigned char[::1] member = member_arr
    with nogil:
        n_live = 0
        for i in range(m):
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


def perspective_bound(const double[:, ::1] G, const double[::1] b, double yy, double gamma,
                      const double[::1] stab, int k, double tau, double mu, double threshold,
                      const signed char[::1] state, double[::1] w, double[::1] g, double[::1] z):
    """Minimise the Lagrangian at (tau, mu) (warm, in place), then return (D, sum z, stab'z).

    ``D`` is the dual bound of the module docstring of ``relaxation.py``, valid for every binary
    z the fixings allow; ``z`` receives the relaxation's z at the minimiser (1 for rules forced
    in, ``min(1, |w| / sqrt(2 gamma lam))`` for free ones, 0 for rules forced out).
    """
    cdef Py_ssize_t m = G.shape[0], i
    cdef double lam_i, s, wg = 0.0, terms = 0.0, zsum = 0.0, zstab = 0.0
    if stab.shape[0] != m or z.shape[0] != m:
        raise ValueError("perspective_bound: stab and z must have one entry per rule")
    lam_arr = np.empty(m, dtype=np.float64)
    cdef double[::1] lam = lam_arr
    for i in range(m):
        lam[i] = tau - mu * stab[i]
    perspective_cd(G, b, gamma, lam, state, w, g, 1e-13, 0.5 * yy)
    with nogil:
        for i in range(m):
            wg += w[i] * (g[i] + b[i])
            s = 0.5 * gamma * g[i] * g[i]
            lam_i = lam[i]
            if state[i] > 0:
                terms += lam_i - s
                z[i] = 1.0
            elif state[i] < 0:
                z[i] = 0.0
            else:
                if s > lam_i:
                    terms -= s - lam_i
                if lam_i <= 0.0:
                    z[i] = 1.0
                else:
                    z[i] = fabs(w[i]) / sqrt(2.0 * gamma * lam_i)
                    if z[i] > 1.0:
                        z[i] = 1.0
            zsum += z[i]
            zstab += z[i] * stab[i]
    return 0.5 * yy - 0.5 * wg + terms - tau * k + mu * threshold, zsum, zstab
