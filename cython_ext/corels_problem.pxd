# cython: language_level=3
"""The CORELS problem, declared once for the two searches over it: ``corels.Search`` (the
optimum) and ``corels_rashomon.Enumerator`` (every list within a threshold) each hold one
``CorelsProblem`` by value and score prefixes through the functions below, so equal lists get
bit-identical objectives in both because both run this one code.

The problem is the data layout (docs/maintainers/corels-proofs.md): antecedent vectors over *units* packed in ``W``
words, the bit-sliced label and equivalent-points minority count planes (``corels_counts.pxd``),
the class weights, the mask of the units, lambda; plus the queue policies' table and Theorem 18's
set-up and test (the dominance of a prefix by itself without one of its last rules), which both
searches apply, against the incumbent or against the threshold. It is a struct, not a cdef
class: a cdef class shared between two extension modules must be importable under the name
Cython gives its ``.pxd`` (``corels_problem``), which is not the installed
``glasswork.cython_ext.corels_problem``; held by value it also costs no pointer in the hot loops.
Everything is inline; only ``problem_init`` and ``policy_code`` need the GIL (they raise).
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t, uint8_t
from libc.math cimport INFINITY, floor, ldexp
from libc.string cimport memset
from libcpp.vector cimport vector

from corels_counts cimport binary_counts, plane_popcounts, fold_counts, weighted_majority, weighted_sum

cdef enum:
    P_BFS = 0            # the queue policies (policy_code)
    P_DFS = 1
    P_CURIOSITY = 2
    P_LOWER_BOUND = 3
    P_OBJECTIVE = 4
    MAX_CLASSES = 64
    SIM_WINDOW = 8       # Theorem 18 tries dropping each of the last SIM_WINDOW rules
    LABELS = 0           # problem_counts: the label planes
    MINORITY = 1         # problem_counts: the equivalent-points minority planes

cdef enum:               # what one slice of a search's ``run`` returns
    R_DONE = 0
    R_SLICE = 1
    R_STOPPED = 2
    R_NODE_LIMIT = 3
    R_OUT_OF_MEMORY = 4


cdef struct CorelsProblem:
    int M, W, C           # antecedents, words per vector, classes
    int P, Q, PT, QT      # label / minority planes, and how many of each hold the total count
    double lam            # lambda, a fraction of the total weight
    double total, lamW    # the total weight and lambda in weighted count units (problem_root)
    vector[uint64_t] caps       # (M, W) antecedent vectors, antecedent-major
    vector[uint64_t] lplanes    # planes word-major: plane p of word i at [i * P + p]
    vector[uint64_t] zplanes
    vector[uint64_t] mask       # the units that exist
    vector[int32_t] lclass, lshift, zclass, zshift   # each with one sentinel 0 past the end
    double weights[MAX_CLASSES]


cdef struct Theorem18:  # one thread's working memory for Theorem 18 (theorem18_setup)
    vector[uint64_t] rest     # what the rules before the window leave uncaptured
    vector[uint64_t] x        # a scratch vector (also lent to other per-child tests)
    vector[uint64_t] ctx      # per rule p_j of the window: what d_j leaves uncaptured
    double gain[SIM_WINDOW]   # per p_j: the part of b(D) - b(d_j + t) that is not t's
    double perr[256]          # the prefix errors along the path, filled by the caller


cdef inline int policy_code(str policy) except -1:
    """The queue policy named ``policy`` (a ValueError naming the choices otherwise)."""
    cdef tuple names = ("bfs", "dfs", "curiosity", "lower_bound", "objective")
    if policy not in names:
        raise ValueError(f"unknown policy {policy!r}; choose one of {sorted(names)}")
    return names.index(policy)


cdef inline void _stable_order(const int32_t[::1] cls, vector[Py_ssize_t]& order):
    """The planes ordered by class, total (-1) first, stably: the binary kernel then sums them
    with two accumulators."""
    cdef Py_ssize_t k, j
    order.clear()
    for k in range(cls.shape[0]):
        order.push_back(k)
        j = k
        while j > 0 and cls[order[j - 1]] > cls[k]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = k


cdef inline int _copy_planes(const uint64_t[:, ::1] src, const int32_t[::1] cls, const int32_t[::1] shift,
                             int C, int W, vector[uint64_t]& planes, vector[int32_t]& pcls,
                             vector[int32_t]& pshift, str what) except -1:
    """Copy count planes word-major, ordered by class; returns how many hold the total."""
    cdef vector[Py_ssize_t] order
    cdef int P = src.shape[0], i, k, total = 0
    _stable_order(cls, order)
    planes.resize(<size_t>W * max(P, 1))
    for i in range(W):
        for k in range(P):
            planes[<size_t>i * P + k] = src[order[k], i]
    for k in range(P):
        if cls[k] < -1 or cls[k] == 0 or cls[k] >= C:
            raise ValueError(f"{what} plane classes must be -1 (total) or 1..C-1")
        pcls.push_back(cls[order[k]])
        pshift.push_back(shift[order[k]])
    while total < P and pcls[total] < 0:
        total += 1
    pcls.push_back(0)
    pshift.push_back(0)
    return total


cdef inline int problem_init(CorelsProblem* pb, const uint64_t[:, ::1] caps, const uint64_t[:, ::1] lplanes,
                             const int32_t[::1] lclass, const int32_t[::1] lshift,
                             const uint64_t[:, ::1] zplanes, const int32_t[::1] zclass,
                             const int32_t[::1] zshift, const double[::1] weights, int n_units,
                             double regularization) except -1:
    """Check the data and lay them out (see ``CorelsProblem``); ``problem_root`` then weighs them."""
    cdef int i, k
    pb.M = caps.shape[0]
    pb.W = caps.shape[1] if pb.M > 0 else (n_units + 63) // 64
    if pb.W == 0:
        pb.W = 1
    pb.C = weights.shape[0]
    if pb.C < 2 or pb.C > MAX_CLASSES:
        raise ValueError(f"between 2 and {MAX_CLASSES} classes are supported, got {pb.C}")
    if pb.M > 65535:
        raise ValueError("at most 65535 antecedents are supported")
    if regularization < 0:
        raise ValueError("regularization must be >= 0")
    if lplanes.shape[1] != pb.W or zplanes.shape[1] != pb.W and zplanes.shape[0] > 0:
        raise ValueError("planes must have the same number of words as the antecedents")
    for k in range(pb.C):
        if weights[k] < 0:
            raise ValueError("class weights must be >= 0")
        pb.weights[k] = weights[k]
    pb.lam = regularization
    pb.P = lplanes.shape[0]
    pb.Q = zplanes.shape[0]
    pb.caps.resize(<size_t>pb.M * pb.W)
    for k in range(pb.M):
        for i in range(pb.W):
            pb.caps[<size_t>k * pb.W + i] = caps[k, i]
    pb.PT = _copy_planes(lplanes, lclass, lshift, pb.C, pb.W, pb.lplanes, pb.lclass, pb.lshift, "label")
    pb.QT = _copy_planes(zplanes, zclass, zshift, pb.C, pb.W, pb.zplanes, pb.zclass, pb.zshift, "minority")
    pb.mask.assign(pb.W, 0)
    for i in range(n_units):
        pb.mask[i >> 6] |= (<uint64_t>1) << (i & 63)
    return 0


cdef inline void problem_counts(const CorelsProblem* pb, const uint64_t* vec, int which, double* cnt,
                                int64_t* acc) noexcept nogil:
    """Per-class counts (unweighted, exact integers in doubles) of the units in ``vec``, over the
    label planes (``which = LABELS``) or the minority planes (``MINORITY``): one layout, one loop."""
    cdef const uint64_t* planes = &pb.lplanes[0]
    cdef const int32_t* sh = &pb.lshift[0]
    cdef const int32_t* cls = &pb.lclass[0]
    cdef int P = pb.P, PT = pb.PT
    if which == MINORITY:
        planes = &pb.zplanes[0]
        sh = &pb.zshift[0]
        cls = &pb.zclass[0]
        P = pb.Q
        PT = pb.QT
    if pb.C == 2:
        binary_counts(pb.W, vec, NULL, NULL, planes, P, PT, sh, cnt)
        return
    plane_popcounts(pb.W, vec, planes, P, acc)
    fold_counts(pb.C, acc, P, cls, sh, cnt)


cdef inline double problem_error(const CorelsProblem* pb, const uint64_t* vec, int64_t* acc) noexcept nogil:
    """The weighted errors of the units in ``vec`` under their (weighted) majority label."""
    cdef double cnt[MAX_CLASSES]
    cdef double correct, wv
    cdef int label
    problem_counts(pb, vec, LABELS, cnt, acc)
    wv = weighted_majority(pb.C, pb.weights, cnt, &correct, &label)
    return wv - correct


cdef inline double problem_omega(const CorelsProblem* pb, const uint64_t* vec, int64_t* acc) noexcept nogil:
    """The most errors any labelling makes on the units in ``vec``: every list labels a unit as
    one (its rows share every antecedent), so on a unit it errs on the rows of the other labels.
    With two classes that is the unit's weighted majority, the weight of ``vec`` less its
    equivalent-points minority (the minority planes); with more, the whole weight (the planes
    hold the weight off the majority, and the most a labelling misses is the weight off the
    smallest class)."""
    cdef double cnt[MAX_CLASSES]
    cdef double omega
    problem_counts(pb, vec, LABELS, cnt, acc)
    omega = weighted_sum(pb.C, pb.weights, cnt)
    if pb.C == 2 and pb.Q > 0:
        problem_counts(pb, vec, MINORITY, cnt, acc)
        omega -= weighted_sum(pb.C, pb.weights, cnt)
    return omega


cdef inline bint accurate_on_units(const CorelsProblem* pb, double correct, const double* uz,
                                   double b0) noexcept nogil:
    """Theorem 11 on units (maintainers/corels-proofs.md, "Omega on units"): with two classes a tail
    errs on a unit at most on its majority, so a rule of an optimal list is right on at least
    ``lamW`` beyond the (weighted) minorities of the units it takes: those the prefix left
    (``uz``, counts) less those the child leaves (its ``b0``). Strict, as Theorem 11: a rule short
    of it is dominated by the list without it, whatever follows."""
    return pb.C == 2 and correct - (weighted_sum(pb.C, pb.weights, uz) - b0) < pb.lamW


cdef inline double problem_root(CorelsProblem* pb, bint eqpts, double* root_err, int64_t* acc) noexcept nogil:
    """Weigh the data: the total weight, lambda in count units, the empty list's error (in
    ``root_err``); returns the equivalent-points bound of the empty prefix (0 unless ``eqpts``)."""
    cdef double cnt[MAX_CLASSES]
    cdef double correct
    cdef int label
    problem_counts(pb, &pb.mask[0], LABELS, cnt, acc)
    pb.total = weighted_majority(pb.C, pb.weights, cnt, &correct, &label)
    pb.lamW = pb.lam * pb.total
    root_err[0] = pb.total - correct      # the empty list: default = majority
    if not eqpts:
        return 0.0
    problem_counts(pb, &pb.mask[0], MINORITY, cnt, acc)
    return weighted_sum(pb.C, pb.weights, cnt)


cdef inline void problem_context(const CorelsProblem* pb, const uint16_t* path, int depth, uint64_t* u,
                                 uint8_t* in_prefix) noexcept nogil:
    """What the prefix ``path[:depth]`` leaves uncaptured, in ``u``; marks its rules in ``in_prefix``
    (unless NULL)."""
    cdef int i, k, W = pb.W
    cdef const uint64_t* cv
    for i in range(W):
        u[i] = pb.mask[i]
    for k in range(depth):
        if in_prefix != NULL:
            in_prefix[path[k]] = 1
        cv = &pb.caps[<size_t>path[k] * W]
        for i in range(W):
            u[i] &= ~cv[i]


cdef inline double default_error(const CorelsProblem* pb, const double* ucnt, const double* cnt,
                                 double* fw) noexcept nogil:
    """The default rule's error after a child: the counts ``ucnt`` left by the prefix minus the
    child's ``cnt``; ``fw`` gets their weight."""
    cdef double fc[MAX_CLASSES]
    cdef double fcorrect
    cdef int k, flabel
    for k in range(pb.C):
        fc[k] = ucnt[k] - cnt[k]
    fw[0] = weighted_majority(pb.C, pb.weights, fc, &fcorrect, &flabel)
    return fw[0] - fcorrect


cdef inline void theorem18_init(Theorem18* ts, int W) except *:
    ts.rest.assign(W, 0)
    ts.x.assign(W, 0)
    ts.ctx.assign(<size_t>SIM_WINDOW * W, 0)


cdef inline int theorem18_setup(const CorelsProblem* pb, Theorem18* ts, const uint16_t* path, int depth,
                                int64_t* acc) noexcept nogil:
    """Prepare Theorem 18 for the children of the prefix D = ``path[:depth]`` = (p_0 .. p_{K-1}).

    The caller has put the prefix errors along the path in ``ts.perr`` (``perr[k]``: the error of
    the first ``k`` rules, for k from ``depth - n`` to ``depth``). For each of the last
    ``n = min(depth, SIM_WINDOW)`` rules p_j, d_j is the prefix without p_j: stores what d_j leaves
    uncaptured (``ts.ctx``) and the part of b(D) - b(d_j + t) that does not depend on the child t:
    lam + sum_{i>=j} err(p_i | D) - sum_{i>j} err(p_i | d_j) (``ts.gain``). Returns ``n``.
    """
    cdef int i, j, k, W = pb.W, n = min(depth, SIM_WINDOW), j0 = depth - n
    cdef uint64_t* x
    cdef const uint64_t* cv
    cdef uint64_t* up = &ts.rest[0]
    cdef uint64_t* sx = &ts.x[0]
    cdef double ej
    problem_context(pb, path, j0, up, NULL)   # what p_0 .. p_{j0-1} leave uncaptured
    for j in range(j0, depth):
        x = &ts.ctx[<size_t>(j - j0) * W]
        for i in range(W):
            x[i] = up[i]
        ej = pb.lamW + ts.perr[depth] - ts.perr[j]
        for k in range(j + 1, depth):     # the later rules again, without p_j before them
            cv = &pb.caps[<size_t>path[k] * W]
            for i in range(W):
                sx[i] = x[i] & cv[i]
                x[i] &= ~cv[i]
            ej -= problem_error(pb, sx, acc)
        ts.gain[j - j0] = ej
        cv = &pb.caps[<size_t>path[j] * W]
        for i in range(W):
            up[i] &= ~cv[i]
    return n


cdef inline bint theorem18_prunes(const CorelsProblem* pb, Theorem18* ts, const uint16_t* path, int t,
                                  int depth, int n, double et, double slack, int64_t* acc) noexcept nogil:
    """Theorem 18 between D = (p_0 .. p_{K-1}, t), a child, and d = D without one of its last
    ``n`` rules p_j (docs/maintainers/corels-proofs.md), after ``theorem18_setup``; ``et`` = err(t | D's prefix).

    With Omega the weight of the units d leaves uncaptured and D does not (those p_j takes
    first), every list D+T scores at least R(d+T) + b(D) - b(d) - Omega: the tail T, labelled as
    best for D's uncaptured data, makes at most Omega more errors on d's. With two classes Omega is
    their majorities' weight, not their whole weight: a unit is labelled as one, so the tail errs
    on at most its majority (``problem_omega``). True when
    b(D) - b(d) - Omega > ``slack``: the search passes a tolerance (no optimal list lies below D:
    the test is strict, so it never removes an optimum), the enumerator the threshold less the
    floor on the optimum (no member lies through D). Reads ``ts`` and the path only: threads run
    it without a lock.
    """
    cdef double cnt[MAX_CLASSES]
    cdef double gain
    cdef int i, j, W = pb.W, j0 = depth - n
    cdef const uint64_t* tv = &pb.caps[<size_t>t * W]
    cdef const uint64_t* pv
    cdef const uint64_t* x
    cdef uint64_t* y = &ts.x[0]
    for j in range(depth - 1, j0 - 1, -1):
        x = &ts.ctx[<size_t>(j - j0) * W]
        for i in range(W):
            y[i] = x[i] & tv[i]
        gain = ts.gain[j - j0] + et - problem_error(pb, y, acc)
        if gain <= slack:                 # Omega >= 0
            continue
        pv = &pb.caps[<size_t>path[j] * W]
        for i in range(W):
            y[i] = x[i] & pv[i] & ~tv[i]
        if gain - problem_omega(pb, y, acc) > slack:
            return True
    return False


cdef inline double policy_key(int policy, int depth, double lb, double R, double b, double total,
                              double fw) noexcept nogil:
    """The queue key of a prefix of length ``depth`` under ``policy``: its lower bound ``lb``, its
    objective ``R``, its length (breadth first, FIFO ties), minus its length (depth first), or its
    curiosity (``b``, its bound without the equivalent points, times the total weight over the
    weight it captures: ``fw`` is what it leaves)."""
    cdef double ucap
    if policy == P_LOWER_BOUND:
        return lb
    if policy == P_OBJECTIVE:
        return R
    if policy == P_BFS:
        return depth
    if policy == P_DFS:
        return -depth
    ucap = total - fw
    return b * total / ucap if ucap > 0 else INFINITY


cdef struct Tally:      # what scoring counts: a thread's pass, merged into its search's total
    int64_t evaluated, expanded, dead                    # children scored, nodes expanded, empty rules
    int64_t support, accurate, bound, lookahead, length  # children pruned by each bound
    int64_t similar, reorder                             # Theorem 18, Theorem 15 within the child
    int64_t fairness                                     # no list through it meets the constraint
    int64_t twin                                         # a twin is searched (fair_redundant)
    int64_t tail                                         # the tail table's raise (corels_tailtable.pxd)


cdef inline void tally_merge(Tally* total, Tally* part) noexcept nogil:
    """Add ``part`` to ``total`` and clear it (under the lock when threaded). Every field is an
    ``int64_t``, so the struct is added as an array of them."""
    cdef size_t i
    for i in range(sizeof(Tally) // sizeof(int64_t)):
        (<int64_t*>total)[i] += (<int64_t*>part)[i]
    memset(part, 0, sizeof(Tally))


cdef inline double problem_rule(const CorelsProblem* pb, const uint64_t* u, uint64_t* rest, uint64_t* v, int s,
                                int64_t* acc, int* label) noexcept nogil:
    """Rule ``s`` after a prefix that leaves ``u`` uncaptured: what it captures goes to ``v``, what
    is still left to ``rest`` (which may be ``u``); returns its weighted errors (its label in
    ``label``), as the scoring adds them to the prefix's."""
    cdef int i
    cdef const uint64_t* cv = &pb.caps[<size_t>s * pb.W]
    cdef double cnt[MAX_CLASSES]
    cdef double correct, wv
    for i in range(pb.W):
        v[i] = u[i] & cv[i]
        rest[i] = u[i] & ~cv[i]
    problem_counts(pb, v, LABELS, cnt, acc)
    wv = weighted_majority(pb.C, pb.weights, cnt, &correct, label)
    return wv - correct


cdef inline dict tally_counters(const Tally* t, int64_t inserted, dict rest):
    """A search's ``counters()``: what both searches count first, in this order, then ``rest``."""
    out = {"evaluated": t.evaluated, "expanded": t.expanded, "inserted": inserted}
    out.update(rest)
    return out


cdef inline bint problem_exact_errors(const CorelsProblem* pb) noexcept nogil:
    """True when every weighted count is exact in a double: each class weight a multiple of
    one power of two 2^-e and the total below 2^53 of those steps. Then prefix errors summed
    in any order are equal bit for bit exactly when they are equal, and the symmetry ties of
    ``reorder_better`` and ``map_earlier_tie`` are decided right; otherwise only strict
    improvements prune."""
    cdef int label, e, e_max = 0
    cdef double w
    for label in range(pb.C):
        w = pb.weights[label]
        e = 0
        while e <= 60 and ldexp(w, e) != floor(ldexp(w, e)):
            e += 1
        if e > 60:
            return False
        e_max = max(e_max, e)
    return ldexp(pb.total, e_max) < 9007199254740992.0


cdef inline bint problem_integral(const CorelsProblem* pb) noexcept nogil:
    """Every prefix error is an integer no larger than the total (integral class weights, a total
    below 2^32): the trie and the map may keep errors as ``uint32`` (issue 27's compact nodes)."""
    cdef int label
    cdef bint integral = pb.total < 4294967296.0
    for label in range(pb.C):
        integral = integral and pb.weights[label] == floor(pb.weights[label])
    return integral
