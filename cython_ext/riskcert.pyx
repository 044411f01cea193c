# cython: language_level=3
"""Certificate kernels for risk scores: a Fenchel dual bound on the logistic loss, and the two
branch and bounds that use it (over supports, and over the integer lattice of one support).

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

``SupportTree`` is the compiled search behind ``plugins/fasterrisk/certify.py`` and
``exact.py``; with ``rashomon`` it enumerates every card within a threshold, best first (below). Nodes live in flat C++ vectors (include/free bitsets and warm-start coefficients
in fixed-size slots, recycled through a free list; ``paged_heap.h``'s heap of (bound, depth,
order, slot)); evaluating a node (row compression on its columns, the Newton fit, the dual bound)
writes into scratch allocated once. ``run`` releases the GIL and returns after a time slice, so Python can
report progress and honour limits; the bound it reports holds whenever it stops.
"""

import numpy as np
from libc.math cimport fabs, floor, ceil, rint, INFINITY
from libc.stdint cimport uint8_t, uint64_t, int64_t, int32_t
from libc.string cimport memcpy, memset
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from bitops cimport gw_popcount64
from monotonic_clock cimport now
from paged_heap cimport PagedHeap
from logistic cimport newton_fit, dual_bound_at, compress_into, lg_clip, lg_ell, lg_margins
from fairness_cells cimport FC_SIDE, fc_within, fc_lower, fc_limit



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
    cdef Py_ssize_t q = A.shape[0], n = A.shape[1]
    if s.shape[0] != n or z.shape[0] != n or lo.shape[0] != q or hi.shape[0] != q \
            or role.shape[0] != q or active.shape[0] != q:
        raise ValueError("shape mismatch")
    if q == 0 or n == 0:
        return 0.0, 0.0, 0.0
    a_arr = np.empty(n)
    idx_arr = np.zeros(q, dtype=np.intp)
    work_arr = np.zeros(2 * q * q + 4 * q)
    cdef double[::1] a = a_arr, work = work_arr
    cdef Py_ssize_t[::1] idx = idx_arr
    cdef double ent = 0.0, pen = 0.0, bound
    with nogil:
        bound = dual_bound_at(&A[0, 0], q, n, &s[0], &z[0], &lo[0], &hi[0], &role[0], &active[0], budget,
                              &a[0], &idx[0], &work[0], &ent, &pen)
    return bound, ent, pen


# -- the branch and bounds -------------------------------------------------------------------------

cdef enum:
    R_DONE = 0        # every node closed or pruned: the bound is proven tight
    R_SLICE = 1       # the time slice is over; call run again
    R_STOPPED = 2     # the stop flag was set
    R_NODES = 3       # the support-node limit was reached
    LATTICE_NODE_LIMIT = 200000   # nodes per lattice; beyond it the leaf closes with its open bound

DONE = R_DONE
SLICE = R_SLICE
STOPPED = R_STOPPED
NODES = R_NODES


cdef struct Item:  # an open node in a heap (paged_heap.h): the smallest (bound, depth_key, order) first
    double key                      # the node's bound
    pair[int32_t, int64_t] tie      # (depth_key, insertion order)
    int32_t slot


cdef inline Item _item(double bound, int32_t depth_key, int64_t order, int32_t slot) noexcept nogil:
    cdef Item it
    it.key = bound
    it.tie.first = depth_key
    it.tie.second = order
    it.slot = slot
    return it


cdef inline bint has(const uint64_t* bits, Py_ssize_t f) noexcept nogil:
    return (bits[f >> 6] >> (f & 63)) & 1


cdef inline void put(uint64_t* bits, Py_ssize_t f) noexcept nogil:
    bits[f >> 6] |= (<uint64_t> 1) << (f & 63)


cdef inline void drop(uint64_t* bits, Py_ssize_t f) noexcept nogil:
    bits[f >> 6] &= ~((<uint64_t> 1) << (f & 63))


cdef class SupportTree:
    """Best-first branch and bound over supports for the k-sparse logistic loss (see certify.py).

    A node forces the features of ``include`` in and leaves those of ``free`` to join; its bound
    is the dual bound at the box-constrained fit over all of them, with ``k - |include|`` of the
    free ones counted. With ``lattice`` set, each leaf (a support that fits within k and the
    groups) is solved over the integer lattice of its box instead (exact.py), one lattice at a
    time, resumable across slices.
    """

    cdef Py_ssize_t p, P, n, W, k
    cdef const double[:, ::1] A
    cdef const double[::1] s
    cdef const uint8_t[:, ::1] codes
    cdef const int[::1] nvals
    cdef double[::1] f_lo, f_hi, scale
    cdef int[::1] group_of
    cdef uint8_t[::1] forced
    cdef double b_lo, b_hi, tolerance
    cdef bint lattice, started
    cdef object _keep
    # the node pool: fixed-size slots, recycled
    cdef vector[uint64_t] inc_bits, free_bits
    cdef vector[double] warm
    cdef vector[int32_t] free_slots
    cdef PagedHeap[Item] heap
    cdef int64_t order
    # leaves waiting for their lattice, with a bound valid for them (their parent's)
    cdef vector[uint64_t] leaf_bits
    cdef vector[double] leaf_bound
    cdef Py_ssize_t leaf_head
    # what is known
    cdef double best_ub, floor_
    cdef vector[uint64_t] best_bits
    cdef double card_loss
    cdef vector[double] card  # intercept, then points by feature
    cdef int64_t n_nodes, n_lattice
    # scratch for one node
    cdef Py_ssize_t capacity
    cdef vector[int64_t] cols, first, slot, keys, used, nz_ptr
    cdef vector[int32_t] nz_col
    cdef vector[double] weight, sub, z, zd, dual_a, wv, lo, hi, rv, nwork, dwork, nz_val
    cdef vector[Py_ssize_t] idx
    cdef vector[signed char] role
    cdef vector[unsigned char] active
    cdef vector[uint64_t] bits_i, bits_f, bits_c, bits_o
    cdef vector[double] warm_p, warm_q, warm_out
    # the lattice in progress
    cdef bint lat_active
    cdef Py_ssize_t lq, lG
    cdef vector[int64_t] lcols
    cdef vector[uint8_t] lforced
    cdef vector[double] lsub, lweight, larena, lnode, llo, lhi
    cdef vector[int32_t] lfree
    cdef PagedHeap[Item] lheap
    cdef vector[uint64_t] lat_support
    cdef double lat_best, lat_floor
    cdef int64_t lat_count, lat_order
    cdef double slice_end
    # the Rashomon enumeration (rashomon=True): one best-first order over support nodes and the
    # boxes of every open lattice; a point box waits in ``rheap`` keyed by its exact loss, so the
    # cards leave the heap in objective order. Each lattice keeps its merged design (sub-design,
    # then row weights) while it has open boxes; box slots hold lo, hi and fit (3 x (k + 1)).
    cdef bint rashomon
    cdef double threshold
    cdef int64_t r_count, max_keep, r_order, fresh_from
    cdef Py_ssize_t Q
    cdef vector[vector[double]] lt_design
    cdef vector[vector[int64_t]] lt_cols
    cdef vector[vector[uint8_t]] lt_forced
    cdef vector[Py_ssize_t] lt_q, lt_G
    cdef vector[int64_t] lt_open
    cdef vector[int32_t] lt_free, rbox_lat, rfree
    cdef vector[double] rarena, rzero, kept_loss, kept_coef
    cdef vector[uint64_t] gbits
    cdef PagedHeap[Item] rheap
    cdef vector[Item] rstack  # once max_keep cards are kept: boxes split depth first (little memory)
    cdef int64_t r_peak_open
    # the fairness constraint (exact policy; docs/maintainers/fasterrisk-fairness.md): a card's
    # predictions (points total + intercept > 0) must meet ``fair_metric`` <= ``fair_at_most`` for
    # each of ``fair_groups`` protected groups. codes[0] carries each row's group bits above its
    # label bit, so merged rows never mix groups; ``lfair`` keeps that code per lattice row.
    cdef int fair_metric, fair_groups
    cdef double fair_at_most
    cdef double fair_scale[2]  # fairness weight = loss weight x this, by label (undoes class weights)
    cdef vector[uint8_t] lfair
    cdef vector[double] facc
    cdef int64_t n_fair_pruned

    def __init__(self, const double[:, ::1] A, const double[::1] s, const uint8_t[:, ::1] codes,
                 const int[::1] nvals, double[::1] f_lo, double[::1] f_hi, double b_lo, double b_hi,
                 double[::1] scale, int[::1] group_of, uint8_t[::1] forced, int k,
                 double upper_bound=INFINITY, double tolerance=1e-9, bint lattice=False,
                 bint rashomon=False, double threshold=INFINITY, int64_t max_keep=0,
                 int fair_metric=-1, double fair_at_most=0.0, int fair_groups=0,
                 double fair_scale_negative=1.0, double fair_scale_positive=1.0):
        cdef Py_ssize_t P = A.shape[0], n = A.shape[1], p = P - 1, size, nnz
        if P < 1 or s.shape[0] != n or codes.shape[0] != P or codes.shape[1] != n or nvals.shape[0] != P \
                or f_lo.shape[0] != p or f_hi.shape[0] != p or scale.shape[0] != p \
                or group_of.shape[0] != p or forced.shape[0] != p:
            raise ValueError("shape mismatch")
        if n == 0:
            raise ValueError("no rows")
        self._keep = (A, s, codes, nvals)
        self.A, self.s, self.codes, self.nvals = A, s, codes, nvals
        self.f_lo, self.f_hi, self.scale, self.group_of, self.forced = f_lo, f_hi, scale, group_of, forced
        self.p, self.P, self.n, self.k = p, P, n, k
        self.W = max((p + 63) >> 6, 1)
        self.b_lo, self.b_hi, self.tolerance, self.lattice = b_lo, b_hi, tolerance, lattice
        if rashomon and not (lattice and threshold < INFINITY and max_keep >= 0):
            raise ValueError("the Rashomon enumeration needs lattice=True, a finite threshold and max_keep >= 0")
        self.rashomon, self.threshold, self.max_keep = rashomon, threshold, max_keep
        if fair_metric >= 0 and (rashomon or not lattice or not 1 <= fair_groups <= 6 or fair_metric > 5
                                 or nvals[0] != (1 << fair_groups)):
            raise ValueError("the fairness constraint needs lattice=True without rashomon, 1 to 6 groups, "
                             "a metric code 0..5 and the group bits coded in codes[0]")
        self.fair_metric, self.fair_at_most, self.fair_groups = fair_metric, fair_at_most, fair_groups
        self.fair_scale[0], self.fair_scale[1] = fair_scale_negative, fair_scale_positive
        self.facc.assign(2 * max(fair_groups, 1) * FC_SIDE, 0.0)
        self.Q = min(k, p) + 1
        self.best_ub, self.floor_ = upper_bound, INFINITY
        self.card_loss = INFINITY
        self.card.assign(P, 0.0)
        self.best_bits.assign(self.W, 0)
        size = 65536
        while size < 4 * n + 4:
            size *= 2
        self.capacity = size
        self.slot.assign(size, -1)
        self.keys.assign(size, 0)
        self.first.assign(n, 0)
        self.used.assign(n, 0)
        self.weight.assign(n, 0.0)
        self.lweight.assign(n, 0.0)
        self.z.assign(n, 0.0)
        self.zd.assign(n, 0.0)
        self.dual_a.assign(n, 0.0)
        self.sub.assign(P * n, 0.0)
        # a node's sub-design takes rows and columns of A: it has at most A's non-zeros
        nnz = max(int(np.count_nonzero(np.asarray(A))), 1)
        self.nz_val.assign(nnz, 0.0)
        self.nz_col.assign(nnz, 0)
        self.nz_ptr.assign(n + 1, 0)
        self.cols.assign(P, 0)
        self.lcols.assign(P, 0)
        self.lforced.assign(P, 0)
        self.wv.assign(P, 0.0)
        self.lo.assign(P, 0.0)
        self.hi.assign(P, 0.0)
        self.rv.assign(P, 0.0)
        self.warm_p.assign(P, 0.0)
        self.warm_q.assign(P, 0.0)
        self.warm_out.assign(P, 0.0)
        self.lnode.assign(3 * P, 0.0)
        self.llo.assign(P, 0.0)
        self.lhi.assign(P, 0.0)
        self.nwork.assign(2 * P * P + 3 * P, 0.0)
        self.dwork.assign(2 * P * P + 4 * P, 0.0)
        self.idx.assign(P, 0)
        self.role.assign(P, 0)
        self.active.assign(P, 0)
        self.bits_i.assign(self.W, 0)
        self.bits_f.assign(self.W, 0)
        self.bits_c.assign(self.W, 0)
        self.bits_o.assign(self.W, 0)
        self.lat_support.assign(self.W, 0)
        self.gbits.assign(self.W, 0)
        self.rzero.assign(P, 0.0)

    # -- one node --------------------------------------------------------------------------------

    cdef Py_ssize_t _design(self, const int64_t* cols, Py_ssize_t q, double* sub, double* weight) noexcept nogil:
        """The node's rows (merged on its columns) and its sub-design ``q x G``; returns G."""
        cdef Py_ssize_t g, r, c, n = self.n
        cdef const double* row
        g = compress_into(&self.codes[0, 0], n, cols, q, &self.nvals[0], &self.s[0], &self.first[0], weight,
                          &self.slot[0], &self.keys[0], &self.used[0], self.capacity)
        if g < 0:
            g = n
            for r in range(n):
                self.first[r] = r
                weight[r] = self.s[r]
        for c in range(q):
            row = &self.A[cols[c], 0]
            for r in range(g):
                sub[c * g + r] = row[self.first[r]]
        return g

    cdef double _evaluate(self, const uint64_t* inc, const uint64_t* fr, const double* warm,
                          double* out, double* loss_out) noexcept nogil:
        """Fit the node's relaxation and bound it; ``out`` gets the fit by feature (P entries)."""
        cdef Py_ssize_t f, c, q = 1, n_inc = 0, G
        cdef int64_t* cols = &self.cols[0]
        cdef double* wv = &self.wv[0]
        cdef double* lo = &self.lo[0]
        cdef double* hi = &self.hi[0]
        cdef double loss, bound, ent, pen
        cols[0] = 0
        for f in range(self.p):
            if has(inc, f):
                cols[q] = f + 1
                q += 1
                n_inc += 1
        for f in range(self.p):
            if has(fr, f):
                cols[q] = f + 1
                q += 1
        G = self._design(cols, q, &self.sub[0], &self.weight[0])
        lo[0], hi[0] = self.b_lo, self.b_hi
        self.role[0] = 0
        for c in range(1, q):
            f = cols[c] - 1
            lo[c], hi[c] = self.f_lo[f], self.f_hi[f]
            self.role[c] = 0 if c <= n_inc else 1
        for c in range(q):
            wv[c] = lg_clip(warm[cols[c]], lo[c], hi[c])
        loss = newton_fit(&self.sub[0], q, G, &self.weight[0], wv, lo, hi, 0.0, 100, 1e-13,
                          &self.z[0], &self.zd[0], &self.nwork[0], &self.nz_col[0], &self.nz_val[0],
                          &self.nz_ptr[0])
        lg_margins(&self.sub[0], q, G, wv, &self.z[0])
        for c in range(q):
            self.active[c] = lo[c] < wv[c] and wv[c] < hi[c]
        bound = dual_bound_at(&self.sub[0], q, G, &self.weight[0], &self.z[0], lo, hi, &self.role[0],
                              &self.active[0], <int> (self.k - n_inc), &self.dual_a[0], &self.idx[0],
                              &self.dwork[0], &ent, &pen)
        self.n_nodes += 1
        memset(out, 0, self.P * sizeof(double))
        for c in range(q):
            out[cols[c]] = wv[c]
        loss_out[0] = loss
        return bound if bound < loss else loss

    # -- the support tree ------------------------------------------------------------------------

    cdef bint _is_leaf(self, const uint64_t* inc, const uint64_t* fr) noexcept nogil:
        """The node is one support: it fits within k, and no two free features share a group."""
        cdef Py_ssize_t w, f, g, count = 0
        for w in range(self.W):
            count += gw_popcount64(inc[w]) + gw_popcount64(fr[w])
        if count > self.k:
            return False
        for f in range(self.p):
            if has(fr, f) and self.group_of[f] >= 0:
                for g in range(f + 1, self.p):
                    if has(fr, g) and self.group_of[g] == self.group_of[f]:
                        return False
        return True

    cdef double _cutoff(self) noexcept nogil:
        """Nodes bounded at or above this cannot hold a better model (with ``rashomon``: any card
        with loss <= threshold; the slack absorbs rounding in the computed bound)."""
        if self.rashomon:
            return self.threshold + 1e-9 * max(1.0, fabs(self.threshold))
        if self.best_ub == INFINITY:
            return INFINITY
        return self.best_ub - self.tolerance * max(1.0, fabs(self.best_ub))

    cdef void _push(self, const uint64_t* inc, const uint64_t* fr, const double* warm, double bound,
                    bint known, double parent) noexcept nogil:
        """Place a child: a leaf closes (or waits for its lattice), an inner node joins the heap."""
        cdef Py_ssize_t w
        cdef double loss = INFINITY
        cdef int32_t slot
        cdef int depth = 0
        cdef bint leaf = self._is_leaf(inc, fr)
        if leaf and self.rashomon:
            if parent < self._cutoff():
                for w in range(self.W):
                    self.gbits[w] = inc[w] | fr[w]
                self._g_start(&self.gbits[0], inc)
            return
        if leaf and self.lattice:
            for w in range(self.W):
                self.leaf_bits.push_back(inc[w] | fr[w])
            self.leaf_bound.push_back(parent)
            return
        if not known:
            bound = self._evaluate(inc, fr, warm, &self.warm_out[0], &loss)
            warm = &self.warm_out[0]
            if leaf:
                self.floor_ = min(self.floor_, bound)
                if loss < self.best_ub:
                    self.best_ub = loss
                    for w in range(self.W):
                        self.best_bits[w] = inc[w] | fr[w]
                return
        if bound < self._cutoff():
            if self.free_slots.size() > 0:
                slot = self.free_slots.back()
                self.free_slots.pop_back()
            else:
                slot = <int32_t> (self.warm.size() // self.P)
                self.warm.resize(self.warm.size() + self.P)
                self.inc_bits.resize(self.inc_bits.size() + self.W)
                self.free_bits.resize(self.free_bits.size() + self.W)
            memcpy(&self.warm[slot * self.P], warm, self.P * sizeof(double))
            memcpy(&self.inc_bits[slot * self.W], inc, self.W * sizeof(uint64_t))
            memcpy(&self.free_bits[slot * self.W], fr, self.W * sizeof(uint64_t))
            for w in range(self.W):
                depth += gw_popcount64(inc[w])
            self.heap.push_or_terminate(_item(bound, -depth, self.order, slot))
            self.order += 1

    cdef void _branch(self) noexcept nogil:
        """Pop the best node and split it on the free feature carrying the most weight."""
        cdef Item it = self.heap.pop()
        cdef Py_ssize_t w, f, j = -1, n_inc = 0, W = self.W, P = self.P
        cdef uint64_t* I = &self.bits_i[0]
        cdef uint64_t* F = &self.bits_f[0]
        cdef uint64_t* C = &self.bits_c[0]
        cdef uint64_t* O = &self.bits_o[0]
        cdef double* wp = &self.warm_p[0]
        cdef double* wq = &self.warm_q[0]
        cdef double val, best = -1.0
        cdef int gj
        cdef bint same, ok
        self.free_slots.push_back(it.slot)
        if it.key >= self._cutoff():
            return
        memcpy(I, &self.inc_bits[it.slot * W], W * sizeof(uint64_t))
        memcpy(F, &self.free_bits[it.slot * W], W * sizeof(uint64_t))
        memcpy(wp, &self.warm[it.slot * P], P * sizeof(double))
        for f in range(self.p):
            if has(F, f):
                val = fabs(wp[1 + f]) * self.scale[f]
                if val > best:
                    best, j = val, f
        if j < 0:
            return  # no free feature: cannot happen for an inner node
        # the child that forces j in: its group mates leave, and a full support closes
        memcpy(C, I, W * sizeof(uint64_t))
        put(C, j)
        memcpy(O, F, W * sizeof(uint64_t))
        drop(O, j)
        for w in range(W):
            n_inc += gw_popcount64(C[w])
        gj = self.group_of[j]
        if n_inc >= self.k:
            memset(F, 0, W * sizeof(uint64_t))
        else:
            memcpy(F, O, W * sizeof(uint64_t))
            if gj >= 0:
                for f in range(self.p):
                    if self.group_of[f] == gj:
                        drop(F, f)
        same = True
        for w in range(W):
            if F[w] != O[w]:
                same = False
        if same and not self._is_leaf(C, F):  # forcing j in left the relaxation unchanged
            self._push(C, F, wp, it.key, True, it.key)
        else:
            self._push(C, F, wp, 0.0, False, it.key)
        memcpy(wq, wp, P * sizeof(double))
        wq[1 + j] = 0.0
        self._push(I, O, wq, 0.0, False, it.key)

    # -- the lattice of one support --------------------------------------------------------------

    cdef Py_ssize_t _lat_root(self, const uint64_t* support, const uint64_t* inc, Py_ssize_t* G) noexcept nogil:
        """Set up the lattice of the leaf ``support``: its columns (the intercept, then the
        support's features) in ``lcols``, those that must stay non-zero in ``lforced`` (the forced
        features, and ``inc``'s unless it is NULL), its design in ``lsub``/``lweight`` (``G`` rows)
        and its root box in ``llo``/``lhi``. Returns the number of columns."""
        cdef Py_ssize_t f, c, q = 1
        cdef int64_t* cols = &self.lcols[0]
        cols[0] = 0
        self.lforced[0] = 0
        for f in range(self.p):
            if has(support, f):
                cols[q] = f + 1
                self.lforced[q] = self.forced[f] or (inc != NULL and has(inc, f))
                q += 1
        self.lsub.resize(q * self.n)
        G[0] = self._design(cols, q, &self.lsub[0], &self.lweight[0])
        if self.fair_metric >= 0:
            self.lfair.resize(G[0])
            for c in range(G[0]):
                self.lfair[c] = self.codes[0, self.first[c]]
        self.llo[0], self.lhi[0] = self.b_lo, self.b_hi
        for c in range(1, q):
            f = cols[c] - 1
            self.llo[c], self.lhi[c] = self.f_lo[f], self.f_hi[f]
        return q

    cdef void _fair_sides(self, const double* lo, const double* hi) noexcept nogil:
        """Each group's protected side and reference side (fairness_cells.pxd) over the lattice box
        ``[lo, hi]``: a row is predicted positive for sure when its smallest total (intercept plus
        points) over the box is > 0, possibly when its largest is, and negative otherwise. For a
        point box the sides are the card's own cells."""
        cdef Py_ssize_t r, c, g, q = self.lq, G = self.lG
        cdef double y, x, a, b, tmin, tmax, w
        cdef int label, code
        cdef double* acc = &self.facc[0]
        cdef double* side
        memset(acc, 0, 2 * self.fair_groups * FC_SIDE * sizeof(double))
        for r in range(G):
            y = self.lsub[r]  # column 0 is the intercept's: the label, +-1
            tmin = 0.0
            tmax = 0.0
            for c in range(q):
                x = self.lsub[c * G + r] * y
                a = x * lo[c]
                b = x * hi[c]
                if a <= b:
                    tmin += a
                    tmax += b
                else:
                    tmin += b
                    tmax += a
            code = self.lfair[r]
            label = code & 1
            w = self.lweight[r] * self.fair_scale[label]
            for g in range(self.fair_groups):
                side = acc + (2 * g + ((code >> (1 + g)) & 1)) * FC_SIDE
                side[label] += w
                if tmin > 0.0:
                    side[2 + 2 * label] += w
                    side[3 + 2 * label] += w
                elif tmax > 0.0:
                    side[3 + 2 * label] += w
                else:
                    side[6 + label] += w

    cdef bint _fair_card(self, const double* v) noexcept nogil:
        """The card ``v`` (lattice columns) meets the constraint, as ``fairness.within`` decides."""
        cdef int g
        self._fair_sides(v, v)
        for g in range(self.fair_groups):
            if not fc_within(self.fair_metric, self.fair_at_most, &self.facc[(2 * g + 1) * FC_SIDE],
                             &self.facc[2 * g * FC_SIDE]):
                return False
        return True

    cdef bint _fair_box_out(self, const double* lo, const double* hi) noexcept nogil:
        """No card of the box meets the constraint: for some group, even the interval relaxation of
        its rates (rows the box does not decide count either way) puts the metric over the limit."""
        cdef int g
        self._fair_sides(lo, hi)
        for g in range(self.fair_groups):
            if fc_lower(self.fair_metric, &self.facc[(2 * g + 1) * FC_SIDE], &self.facc[2 * g * FC_SIDE]) \
                    > fc_limit(self.fair_at_most) + 1e-9:
                self.n_fair_pruned += 1
                return True
        return False

    cdef void _lat_start(self, const uint64_t* support) noexcept nogil:
        memcpy(&self.lat_support[0], support, self.W * sizeof(uint64_t))
        self.lq = self._lat_root(support, NULL, &self.lG)
        self.lheap.clear()
        self.lfree.clear()
        self.larena.clear()
        self.lat_best = INFINITY
        self.lat_floor = INFINITY
        self.lat_count = 0
        self.lat_order = 0
        self.lat_active = True
        memset(&self.warm_p[0], 0, self.lq * sizeof(double))
        self._lat_visit(&self.llo[0], &self.lhi[0], &self.warm_p[0])

    cdef void _lat_visit(self, const double* lo, const double* hi, const double* warm) noexcept nogil:
        """Fit and bound one lattice box; keep its rounded fit as a card; queue it if still open."""
        cdef Py_ssize_t c, q = self.lq, G = self.lG
        cdef double* wv = &self.wv[0]
        cdef double* r = &self.rv[0]
        cdef double* z = &self.z[0]
        cdef double loss, bound, ent, pen, limit, rloss = 0.0, frac = 0.0
        cdef int32_t slot
        cdef bint ok = True, fair = True, point = True
        self.n_lattice += 1
        if self.fair_metric >= 0 and self._fair_box_out(lo, hi):
            return  # no card here meets the constraint: nothing to bound
        for c in range(q):
            wv[c] = lg_clip(warm[c], lo[c], hi[c])
            self.role[c] = 0
        loss = newton_fit(&self.lsub[0], q, G, &self.lweight[0], wv, lo, hi, 0.0, 100, 1e-13,
                          z, &self.zd[0], &self.nwork[0], &self.nz_col[0], &self.nz_val[0], &self.nz_ptr[0])
        lg_margins(&self.lsub[0], q, G, wv, z)
        for c in range(q):
            self.active[c] = lo[c] < wv[c] and wv[c] < hi[c]
        bound = dual_bound_at(&self.lsub[0], q, G, &self.lweight[0], z, lo, hi, &self.role[0],
                              &self.active[0], 0, &self.dual_a[0], &self.idx[0], &self.dwork[0], &ent, &pen)
        if loss < bound:
            bound = loss
        limit = min(self.lat_best, self.best_ub)
        if bound >= limit - 1e-9 * max(1.0, fabs(limit)):
            self.lat_floor = min(self.lat_floor, bound)  # pruned: nothing here beats what is known
            return
        for c in range(q):
            r[c] = rint(wv[c])
            if c > 0 and self.lforced[c] and r[c] == 0.0:
                ok = False
            if fabs(wv[c] - r[c]) > frac:
                frac = fabs(wv[c] - r[c])
        lg_margins(&self.lsub[0], q, G, r, &self.zd[0])
        for c in range(G):
            rloss += self.lweight[c] * lg_ell(self.zd[c])
        if self.fair_metric >= 0 and ok and (rloss < self.lat_best or frac <= 1e-7):
            fair = self._fair_card(r)
        if ok and fair and rloss < self.lat_best:  # the rounded fit is a card (an integer box holds it)
            self.lat_best = rloss
            if rloss < self.best_ub:
                self.best_ub = rloss
                memcpy(&self.best_bits[0], &self.lat_support[0], self.W * sizeof(uint64_t))
            if rloss < self.card_loss:
                self.card_loss = rloss
                for c in range(self.P):
                    self.card[c] = 0.0
                for c in range(q):
                    self.card[self.lcols[c]] = r[c]
        if frac <= 1e-7 and ok and fair:
            self.lat_floor = min(self.lat_floor, bound)
            return
        if frac <= 1e-7 and ok:  # the box's best card misses the constraint: split unless it is the box
            for c in range(q):
                if hi[c] > lo[c]:
                    point = False
            if point:
                return
        # open: fractional, integral with a forced feature at 0 (then split it off zero), or
        # integral and unfair (then split next to it, docs/maintainers/fasterrisk-fairness.md)
        if self.lfree.size() > 0:
            slot = self.lfree.back()
            self.lfree.pop_back()
        else:
            slot = <int32_t> (self.larena.size() // (3 * q))
            self.larena.resize(self.larena.size() + 3 * q)
        memcpy(&self.larena[3 * q * slot], lo, q * sizeof(double))
        memcpy(&self.larena[3 * q * slot + q], hi, q * sizeof(double))
        memcpy(&self.larena[3 * q * slot + 2 * q], wv, q * sizeof(double))
        self.lat_order += 1
        self.lheap.push_or_terminate(_item(bound, 0, self.lat_order, slot))

    cdef double _lat_open(self) noexcept nogil:
        """The smallest bound over the lattice's open and closed boxes."""
        cdef double low = self.lat_floor
        if self.lheap.size() > 0 and self.lheap.top().key < low:
            low = self.lheap.top().key
        return low

    cdef void _lat_finish(self) noexcept nogil:
        self.floor_ = min(self.floor_, min(self._lat_open(), self.lat_best))
        self.lheap.clear()
        self.lat_active = False

    cdef int _lat_step(self, const uint8_t* stop, Py_ssize_t* steps) noexcept nogil:
        """Work on the current lattice; R_DONE when it is closed (or over its node budget)."""
        cdef Py_ssize_t q = self.lq, c, j
        cdef Item it
        cdef double limit, frac, best, v, width
        cdef double* node = &self.lnode[0]
        cdef double* lo = node
        cdef double* hi = node + q
        cdef double* w = node + 2 * q
        cdef double* edge = &self.llo[0]
        while self.lheap.size() > 0 and self.lat_count < LATTICE_NODE_LIMIT:
            if steps[0] > 0 and (self.lat_count & 15) == 0:
                if stop[0]:
                    return R_STOPPED
                if now() >= self.slice_end:
                    return R_SLICE
            steps[0] += 1
            self.lat_count += 1
            it = self.lheap.pop()
            self.lfree.push_back(it.slot)
            limit = min(self.lat_best, self.best_ub)
            if it.key >= limit - 1e-9 * max(1.0, fabs(limit)):
                self.lat_floor = min(self.lat_floor, it.key)
                continue
            memcpy(node, &self.larena[3 * q * it.slot], 3 * q * sizeof(double))
            j, best = 0, -1.0
            for c in range(q):  # the most fractional coordinate that can still move
                frac = fabs(w[c] - rint(w[c])) if hi[c] > lo[c] else 0.0
                if frac > best:
                    best, j = frac, c
            if best <= 1e-7:
                # an integral fit with a forced feature at 0: its cards lie at <= -1 or >= 1
                j = -1
                for c in range(1, q):
                    if self.lforced[c] and lo[c] <= 0.0 and hi[c] >= 0.0 and rint(w[c]) == 0.0:
                        j = c
                        break
                if j < 0 and self.fair_metric >= 0:
                    # integral, unfair (_lat_visit closed it otherwise): cut the widest coordinate
                    # next to the fit, so the card ends in a point box of its own
                    width = 0.0
                    for c in range(q):
                        if hi[c] - lo[c] > width:
                            width, j = hi[c] - lo[c], c
                    if j < 0:
                        continue
                    v = lg_clip(rint(w[j]), lo[j], hi[j])
                    if v >= hi[j]:
                        v = hi[j] - 1.0
                    memcpy(edge, hi, q * sizeof(double))
                    edge[j] = v
                    self._lat_visit(lo, edge, w)
                    memcpy(edge, lo, q * sizeof(double))
                    edge[j] = v + 1.0
                    self._lat_visit(edge, hi, w)
                    continue
                if j < 0:
                    self.lat_floor = min(self.lat_floor, it.key)
                    continue
                if lo[j] <= -1.0:
                    memcpy(edge, hi, q * sizeof(double))
                    edge[j] = -1.0
                    self._lat_visit(lo, edge, w)
                if hi[j] >= 1.0:
                    memcpy(edge, lo, q * sizeof(double))
                    edge[j] = 1.0
                    self._lat_visit(edge, hi, w)
                continue
            memcpy(edge, hi, q * sizeof(double))
            edge[j] = floor(w[j])
            self._lat_visit(lo, edge, w)
            memcpy(edge, lo, q * sizeof(double))
            edge[j] = ceil(w[j])
            self._lat_visit(edge, hi, w)
        self._lat_finish()
        return R_DONE

    # -- the Rashomon enumeration: every card within the threshold, best first --------------------
    #
    # Support nodes and lattice boxes share one order (their bounds; a point box's key is its
    # exact loss), and nothing is pruned because of another card (no incumbent). docs/fasterrisk.md
    # proves that each card is counted exactly once and that cards leave in objective order.

    cdef inline int64_t _spent(self) noexcept nogil:
        """Nodes counted against ``node_limit``: support nodes, and lattice boxes when enumerating."""
        return self.n_nodes + (self.n_lattice if self.rashomon else 0)

    cdef void _g_start(self, const uint64_t* support, const uint64_t* inc) noexcept nogil:
        """Open the lattice of the leaf ``support``. The features of ``inc`` (forced in on the leaf's
        path) must be non-zero: the leaves partition the exact supports, so each card belongs to
        one lattice (a zero point makes it the card of a smaller support, in another leaf)."""
        cdef Py_ssize_t G, q = self._lat_root(support, inc, &G)
        cdef int32_t lat
        cdef int64_t* cols = &self.lcols[0]
        if self.lt_free.size() > 0:
            lat = self.lt_free.back()
            self.lt_free.pop_back()
        else:
            lat = <int32_t> self.lt_q.size()
            self.lt_q.push_back(0)
            self.lt_G.push_back(0)
            self.lt_open.push_back(0)
            self.lt_design.resize(lat + 1)
            self.lt_cols.resize(lat + 1)
            self.lt_forced.resize(lat + 1)
        self.lt_q[lat], self.lt_G[lat], self.lt_open[lat] = q, G, 0
        self.lt_design[lat].assign(q * G + G, 0.0)
        memcpy(&self.lt_design[lat][0], &self.lsub[0], q * G * sizeof(double))
        memcpy(&self.lt_design[lat][q * G], &self.lweight[0], G * sizeof(double))
        self.lt_cols[lat].assign(cols, cols + q)
        self.lt_forced[lat].assign(&self.lforced[0], &self.lforced[0] + q)
        self._g_visit(lat, &self.llo[0], &self.lhi[0], &self.rzero[0])
        self._g_release(lat)

    cdef void _g_release(self, int32_t lat) noexcept nogil:
        """Free a lattice's design once it has no open box."""
        if self.lt_open[lat] == 0:
            self.lt_design[lat].clear()
            self.lt_design[lat].shrink_to_fit()
            self.lt_free.push_back(lat)

    cdef void _g_queue(self, int32_t lat, const double* lo, const double* hi, const double* w,
                       double key, bint point) noexcept nogil:
        cdef Py_ssize_t q = self.lt_q[lat], S = 3 * self.Q
        cdef int32_t slot
        cdef int64_t open_now
        if self.rfree.size() > 0:
            slot = self.rfree.back()
            self.rfree.pop_back()
        else:
            slot = <int32_t> self.rbox_lat.size()
            self.rbox_lat.push_back(0)
            self.rarena.resize(self.rarena.size() + S)
        self.rbox_lat[slot] = lat
        memcpy(&self.rarena[S * slot], lo, q * sizeof(double))
        memcpy(&self.rarena[S * slot + q], hi, q * sizeof(double))
        memcpy(&self.rarena[S * slot + 2 * q], w, q * sizeof(double))
        self.lt_open[lat] += 1
        self.r_order += 1
        if not point and <int64_t> self.kept_loss.size() >= self.max_keep:
            self.rstack.push_back(_item(key, 1, self.r_order, slot))
        else:
            self.rheap.push_or_terminate(_item(key, 0 if point else 1, self.r_order, slot))
        open_now = <int64_t> (self.rheap.size() + self.rstack.size())
        if open_now > self.r_peak_open:
            self.r_peak_open = open_now

    cdef void _g_emit(self, int32_t lat, const double* point, double loss) noexcept nogil:
        """A card of the set, in objective order: count it; keep it while fewer than max_keep are."""
        cdef Py_ssize_t c, q = self.lt_q[lat], base
        cdef const int64_t* cols = &self.lt_cols[lat][0]
        self.r_count += 1
        if loss < self.card_loss:
            self.card_loss = loss
            for c in range(self.P):
                self.card[c] = 0.0
            for c in range(q):
                self.card[cols[c]] = point[c]
        if <int64_t> self.kept_loss.size() < self.max_keep:
            self.kept_loss.push_back(loss)
            base = <Py_ssize_t> self.kept_coef.size()
            self.kept_coef.resize(base + self.P, 0.0)
            for c in range(q):
                self.kept_coef[base + cols[c]] = point[c]

    cdef void _g_visit(self, int32_t lat, const double* lo, const double* hi, const double* warm) noexcept nogil:
        """A point box within the threshold waits for its turn (or is counted at once when no more
        cards are kept); a larger box is fitted, bounded and queued unless its bound exceeds the
        threshold."""
        cdef Py_ssize_t c, q = self.lt_q[lat], G = self.lt_G[lat]
        cdef const double* sub = &self.lt_design[lat][0]
        cdef const double* weight = sub + q * G
        cdef const uint8_t* forced = &self.lt_forced[lat][0]
        cdef double* wv = &self.wv[0]
        cdef double* z = &self.z[0]
        cdef double loss = 0.0, bound, ent, pen
        cdef bint point = True
        self.n_lattice += 1
        for c in range(q):
            if hi[c] > lo[c]:
                point = False
                break
        if point:
            for c in range(1, q):
                if forced[c] and lo[c] == 0.0:
                    return  # the card of a smaller support, counted in its own lattice
            lg_margins(sub, q, G, lo, z)
            for c in range(G):
                loss += weight[c] * lg_ell(z[c])
            if loss > self.threshold + 1e-12 * max(1.0, fabs(self.threshold)):  # slack: summation order
                return
            if <int64_t> self.kept_loss.size() >= self.max_keep:
                self._g_emit(lat, lo, loss)  # nothing more is kept: the order no longer matters
            else:
                self._g_queue(lat, lo, hi, lo, loss, True)
            return
        if <int64_t> self.kept_loss.size() >= self.max_keep and self._g_count_whole(lat, lo, hi):
            return
        for c in range(q):
            wv[c] = lg_clip(warm[c], lo[c], hi[c])
            self.role[c] = 0
        loss = newton_fit(sub, q, G, weight, wv, lo, hi, 0.0, 100, 1e-13,
                          z, &self.zd[0], &self.nwork[0], &self.nz_col[0], &self.nz_val[0], &self.nz_ptr[0])
        lg_margins(sub, q, G, wv, z)
        for c in range(q):
            self.active[c] = lo[c] < wv[c] and wv[c] < hi[c]
        bound = dual_bound_at(sub, q, G, weight, z, lo, hi, &self.role[0],
                              &self.active[0], 0, &self.dual_a[0], &self.idx[0], &self.dwork[0], &ent, &pen)
        if loss < bound:
            bound = loss
        if bound >= self._cutoff():
            return  # no card of this box is within the threshold
        self._g_queue(lat, lo, hi, wv, bound, False)

    cdef bint _g_count_whole(self, int32_t lat, const double* lo, const double* hi) noexcept nogil:
        """Count every card of the box at once when even its worst card is within the threshold.

        Each row's margin is smallest where each coordinate takes the end of its box that lowers
        it, and ``log(1 + exp(-z))`` falls with ``z``: summing each row's loss at its smallest
        margin bounds the loss of every point of the box. The box's cards are the product of each
        coordinate's integers (without 0 for a feature forced in)."""
        cdef Py_ssize_t c, i, q = self.lt_q[lat], G = self.lt_G[lat]
        cdef const double* sub = &self.lt_design[lat][0]
        cdef const double* weight = sub + q * G
        cdef const uint8_t* forced = &self.lt_forced[lat][0]
        cdef double worst = 0.0, zmin, a, cards = 1.0, values
        for i in range(G):
            zmin = 0.0
            for c in range(q):
                a = sub[c * G + i]
                zmin += a * lo[c] if a * lo[c] < a * hi[c] else a * hi[c]
            worst += weight[i] * lg_ell(zmin)
        if worst > self.threshold:
            return False
        for c in range(q):
            values = hi[c] - lo[c] + 1.0
            if c > 0 and forced[c] and lo[c] <= 0.0 and hi[c] >= 0.0:
                values -= 1.0
            cards *= values
        if cards > 4.0e18:
            return False  # beyond the count's int64: split it instead
        self.r_count += <int64_t> cards
        return True

    cdef void _g_pop(self, Item it) noexcept nogil:
        """Take an open box: emit a point, split anything else. The splits partition the box's
        integer points (docs/fasterrisk.md)."""
        cdef int32_t lat = self.rbox_lat[it.slot]
        cdef Py_ssize_t q = self.lt_q[lat], c, j, S = 3 * self.Q
        cdef const uint8_t* forced = &self.lt_forced[lat][0]
        cdef double frac, best, v, width
        cdef double* node = &self.lnode[0]
        cdef double* lo = node
        cdef double* hi = node + q
        cdef double* w = node + 2 * q
        cdef double* edge = &self.llo[0]
        memcpy(node, &self.rarena[S * it.slot], 3 * q * sizeof(double))
        self.rfree.push_back(it.slot)
        if it.tie.first == 0:
            self._g_emit(lat, lo, it.key)
        elif it.key < self._cutoff():
            j = -1
            for c in range(1, q):  # a forced feature whose box still holds 0: cut 0 out first
                if forced[c] and lo[c] <= 0.0 and hi[c] >= 0.0:
                    j = c
                    break
            if j >= 0:
                if lo[j] <= -1.0:
                    memcpy(edge, hi, q * sizeof(double))
                    edge[j] = -1.0
                    self._g_visit(lat, lo, edge, w)
                if hi[j] >= 1.0:
                    memcpy(edge, lo, q * sizeof(double))
                    edge[j] = 1.0
                    self._g_visit(lat, edge, hi, w)
            else:
                j, best = -1, 1e-7
                for c in range(q):  # the most fractional coordinate that can still move
                    frac = fabs(w[c] - rint(w[c])) if hi[c] > lo[c] else 0.0
                    if frac > best:
                        best, j = frac, c
                if j >= 0:
                    memcpy(edge, hi, q * sizeof(double))
                    edge[j] = floor(w[j])
                    self._g_visit(lat, lo, edge, w)
                    memcpy(edge, lo, q * sizeof(double))
                    edge[j] = ceil(w[j])
                    self._g_visit(lat, edge, hi, w)
                else:
                    j, width = -1, 0.0
                    for c in range(q):  # the fit is integral: cut the widest coordinate next to it
                        if hi[c] - lo[c] > width:
                            width, j = hi[c] - lo[c], c
                    if j >= 0:
                        v = lg_clip(rint(w[j]), lo[j], hi[j])
                        if v >= hi[j]:
                            v = hi[j] - 1.0
                        memcpy(edge, hi, q * sizeof(double))
                        edge[j] = v
                        self._g_visit(lat, lo, edge, w)
                        memcpy(edge, lo, q * sizeof(double))
                        edge[j] = v + 1.0
                        self._g_visit(lat, edge, hi, w)
        self.lt_open[lat] -= 1
        self._g_release(lat)

    cdef int _g_run(self, double seconds, const uint8_t* stop, int64_t node_limit) noexcept nogil:
        cdef Py_ssize_t steps = 0
        cdef bint has_s, has_r
        cdef Item it
        self.slice_end = now() + seconds
        while True:
            has_s = self.heap.size() > 0
            has_r = self.rheap.size() > 0
            if not has_s and not has_r and self.rstack.size() == 0:
                return R_DONE
            if node_limit >= 0 and self._spent() >= node_limit:
                return R_NODES
            if steps > 0 and (steps & 15) == 0:
                if stop[0]:
                    return R_STOPPED
                if now() >= self.slice_end:
                    return R_SLICE
            steps += 1
            if self.rstack.size() > 0:  # finish the depth-first part first: it stays small
                it = self.rstack.back()
                self.rstack.pop_back()
                self._g_pop(it)
            elif has_r and (not has_s or self.rheap.top().key <= self.heap.top().key):
                self._g_pop(self.rheap.pop())
            else:
                self._branch()

    # -- the loop --------------------------------------------------------------------------------

    cdef int _run(self, double seconds, const uint8_t* stop, int64_t node_limit) noexcept nogil:
        cdef Py_ssize_t steps = 0, w, W = self.W
        cdef int code
        cdef double bound
        self.slice_end = now() + seconds
        while True:
            if self.lat_active:
                code = self._lat_step(stop, &steps)
                if code != R_DONE:
                    return code
                continue
            if self.leaf_head < <Py_ssize_t> self.leaf_bound.size():
                bound = self.leaf_bound[self.leaf_head]
                if bound >= self._cutoff():
                    self.floor_ = min(self.floor_, bound)
                else:
                    memcpy(&self.bits_c[0], &self.leaf_bits[self.leaf_head * W], W * sizeof(uint64_t))
                    self._lat_start(&self.bits_c[0])
                    if self.lheap.size() == 0:
                        self._lat_finish()
                self.leaf_head += 1
                if self.leaf_head == <Py_ssize_t> self.leaf_bound.size():
                    self.leaf_bits.clear()
                    self.leaf_bound.clear()
                    self.leaf_head = 0
                continue
            if self.heap.size() == 0:
                return R_DONE
            if node_limit >= 0 and self.n_nodes >= node_limit:
                return R_NODES
            if steps > 0:
                if stop[0]:
                    return R_STOPPED
                if now() >= self.slice_end:
                    return R_SLICE
            steps += 1
            self._branch()

    # -- Python API ------------------------------------------------------------------------------

    def start(self, const uint8_t[::1] include_mask, const uint8_t[::1] free_mask):
        """Evaluate the root: ``include`` forced in, ``free`` allowed to join (masks by feature)."""
        if include_mask.shape[0] != self.p or free_mask.shape[0] != self.p:
            raise ValueError("shape mismatch")
        if self.started:
            raise RuntimeError("the search has already started")
        self.started = True
        cdef Py_ssize_t f
        for f in range(self.W):
            self.bits_i[f] = 0
            self.bits_f[f] = 0
        for f in range(self.p):
            if include_mask[f]:
                put(&self.bits_i[0], f)
            elif free_mask[f]:
                put(&self.bits_f[0], f)
        memset(&self.warm_p[0], 0, self.P * sizeof(double))
        with nogil:
            self._push(&self.bits_i[0], &self.bits_f[0], &self.warm_p[0], 0.0, False, 0.0)

    def run(self, double seconds, const uint8_t[::1] stop_flag, int64_t node_limit=-1):
        """Search for about ``seconds`` (at least one step). Returns DONE, SLICE, STOPPED or NODES."""
        if not self.started:
            raise RuntimeError("call start first")
        cdef int code
        cdef const uint8_t* stop = &stop_flag[0]
        with nogil:
            code = self._g_run(seconds, stop, node_limit) if self.rashomon else self._run(seconds, stop, node_limit)
        return code

    @property
    def finished(self):
        """Every node closed or pruned, no leaf waiting: the bound is the optimum (up to tolerance)."""
        return self.heap.size() == 0 and self.rheap.size() == 0 and self.rstack.size() == 0 and not self.lat_active \
            and self.leaf_head >= <Py_ssize_t> self.leaf_bound.size()

    @property
    def lower_bound(self):
        """The smallest bound over open nodes, waiting leaves, the lattice in progress, closed leaves
        and the incumbent: a bound on the optimum wherever the search stopped."""
        cdef double low = min(self.best_ub, self.floor_)
        cdef Py_ssize_t i
        if self.heap.size() > 0:
            low = min(low, self.heap.top().key)
        for i in range(self.leaf_head, <Py_ssize_t> self.leaf_bound.size()):
            low = min(low, self.leaf_bound[i])
        if self.lat_active:
            low = min(low, self._lat_open())
        return low

    @property
    def upper_bound(self):
        return self.best_ub

    @property
    def best_support(self):
        return tuple(f for f in range(self.p) if has(&self.best_bits[0], f))

    @property
    def nodes(self):
        """Support nodes evaluated (fits with a dual bound)."""
        return self.n_nodes

    @property
    def lattice_nodes(self):
        return self.n_lattice

    @property
    def fairness_pruned(self):
        """Lattice boxes closed because no card of theirs can meet the fairness constraint."""
        return self.n_fair_pruned

    @property
    def open_nodes(self):
        return <Py_ssize_t> self.heap.size() + <Py_ssize_t> self.leaf_bound.size() - self.leaf_head \
            + (<Py_ssize_t> self.lheap.size() if self.lat_active else 0) + <Py_ssize_t> self.rheap.size() \
            + <Py_ssize_t> self.rstack.size()

    @property
    def best_card(self):
        """``(loss, coefficients)`` of the best integer card the lattices found (intercept first),
        or ``(inf, None)``."""
        if self.card_loss == INFINITY:
            return INFINITY, None
        return self.card_loss, np.array([self.card[c] for c in range(self.P)])

    # -- the Rashomon enumeration's results ------------------------------------------------------

    @property
    def rashomon_count(self):
        """Cards with loss <= threshold enumerated so far (each counted once)."""
        return self.r_count

    @property
    def rashomon_peak_open(self):
        """The most lattice boxes (and waiting cards) open at once."""
        return self.r_peak_open

    @property
    def unenumerated_bound(self):
        """A lower bound on the loss of every card not enumerated yet: the smallest key over open
        support nodes and lattice boxes (``inf`` when nothing is open). Pruned nodes and boxes
        hold no card within the threshold. Cards leave in objective order, so every card kept has
        a loss at most this."""
        cdef double low = INFINITY
        cdef Py_ssize_t i
        if self.heap.size() > 0:
            low = self.heap.top().key
        if self.rheap.size() > 0 and self.rheap.top().key < low:
            low = self.rheap.top().key
        for i in range(<Py_ssize_t> self.rstack.size()):
            if self.rstack[i].key < low:
                low = self.rstack[i].key
        return low

    def _kept(self, Py_ssize_t start):
        cdef Py_ssize_t i, c, m = <Py_ssize_t> self.kept_loss.size() - start
        losses = np.array([self.kept_loss[start + i] for i in range(m)], dtype=np.float64)
        coef = np.array([self.kept_coef[(start + i) * self.P + c] for i in range(m) for c in range(self.P)],
                        dtype=np.float64).reshape(m, self.P)
        return losses, coef

    def rashomon_fresh(self):
        """``(losses, coefficients)`` of the cards kept since the last call, best first
        (coefficients: intercept, then points by feature)."""
        out = self._kept(self.fresh_from)
        self.fresh_from = <int64_t> self.kept_loss.size()
        return out

    def rashomon_kept(self):
        """``(losses, coefficients)`` of the best ``max_keep`` cards, in the order enumerated: best first."""
        return self._kept(0)
