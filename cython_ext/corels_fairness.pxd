# cython: language_level=3
"""A fairness constraint on CORELS rule lists (``constraints.fairness``), shared by the search
(``corels.Search``) and the Rashomon enumerator: the protected groups over the units, the
confusion cells a prefix fixes in each group, the exact test of a whole list and the relaxation
that prunes a prefix (docs/maintainers/corels-fairness.md has the proofs).

Cells are the weights (unweighted counts, exact integers in doubles, as ``glasswork.fairness``
sums the sample weights) of ``[tn, fp, fn, tp]`` (index ``2 * y + prediction``): per protected
group ``g`` its rows at ``4 g``, and every row at ``4 G``; a group's reference side is every row
less its own. ``fair_list_meets`` decides exactly as ``glasswork.fairness.figures.within``: the same rates
by the same divisions of the same exact sums, an undefined figure fails, and the same tolerance.

``fair_possible`` is the pruning: a prefix's captured rows have fixed predictions; its uncaptured
ones may end up with any prediction, so each rate a side can still reach lies in an interval (the
rates are monotone in the rows added to each cell); when even the nearest points of the two
sides' intervals are further apart than the limit, no list through the prefix meets it. The
caller must keep every unit inside or outside each group (the compression key holds the groups).
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t
from libc.string cimport memset, memcpy
from libc.math cimport INFINITY
from libcpp.vector cimport vector
from libcpp.utility cimport pair
from libcpp.algorithm cimport sort

from corels_problem cimport CorelsProblem, MAX_CLASSES, LABELS, problem_counts, problem_rule, problem_context
from corels_counts cimport weighted_majority
from bitops cimport splitmix64
from fairness_cells cimport (
    FC_SIDE, FC_STATISTICAL_PARITY, FC_PREDICTIVE_EQUALITY, FC_EQUAL_OPPORTUNITY, FC_EQUALIZED_ODDS, fc_limit,
    fc_within, fc_lower, fc_metric_code,
)

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int gw_ctz64(unsigned long long x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
    #else
    static inline int gw_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    #endif
    """
    int _ctz "gw_ctz64"(uint64_t x) noexcept nogil

cdef enum:
    MAX_GROUPS = 16
    FAIR_CELLS = 4 * (MAX_GROUPS + 1)


cdef struct FairMove:       # relabelling one signature class (fair_loss)
    double ratio            # its cost per unit of rate difference it closes
    double h                # the rate difference it closes
    int32_t r               # its representative unit


cdef struct FairProblem:
    int G                   # protected groups; 0: no constraint (nothing below is read)
    int metric              # fairness_cells.pxd's code
    double at_most
    double prune            # the relaxation prunes only past this (the limit plus float slack)
    vector[uint64_t] gmask  # (G, W) the units of each protected group
    double total[FAIR_CELLS]   # each side's totals, as [neg, 0, pos, 0] per group and for every row
    int U                   # units, and each one's negatives and positives (counts, for the rates)
    vector[double] n0, n1
    # signature classes: the units with the same antecedents (they differ only in their groups),
    # which every rule list predicts alike; ``rep`` marks one unit of each (W words), and at a
    # representative ``r`` ``cn0[r]``/``cn1[r]`` are its class's negatives/positives and
    # ``gn0[g * U + r]``/``gn1[g * U + r]`` those of them in group ``g`` (fair_loss)
    vector[uint64_t] rep
    vector[double] cn0, cn1, gn0, gn1
    # the moves of ``_moves``, cheapest first, per (kind, group, direction): their costs and
    # effects are constants of the classes, so they are sorted once (``_sort_moves``)
    vector[FairMove] moves
    vector[size_t] move_off


cdef struct FairScratch:    # one thread's working memory
    vector[uint64_t] u, v, tmp
    vector[uint64_t] last     # what the prefix's last rule captures (fair_prefix), and its label
    int last_label
    double prefix[FAIR_CELLS]  # the cells the prefix being expanded fixes
    double child[FAIR_CELLS]   # the last child fair_child_possible passed: its cells
    double child_loss          # and its fair_loss (the symmetry map recomputes bounds from it)
    double admit[FAIR_CELLS]   # the cells of the child the symmetry map is admitting


cdef inline void fair_add(const FairProblem* fp, const CorelsProblem* pb, const uint64_t* rows, const double* cnt,
                          int pred, double* cells, uint64_t* tmp, int64_t* acc) noexcept nogil:
    """Add the units ``rows`` (label counts ``cnt``), all predicted ``pred``, to ``cells``."""
    cdef double gc[MAX_CLASSES]
    cdef int g, i, W = pb.W
    cdef const uint64_t* gm
    cells[4 * fp.G + pred] += cnt[0]
    cells[4 * fp.G + 2 + pred] += cnt[1]
    for g in range(fp.G):
        gm = &fp.gmask[<size_t>g * W]
        for i in range(W):
            tmp[i] = rows[i] & gm[i]
        problem_counts(pb, tmp, LABELS, gc, acc)
        cells[4 * g + pred] += gc[0]
        cells[4 * g + 2 + pred] += gc[1]


cdef inline void fair_prefix(const FairProblem* fp, const CorelsProblem* pb, const uint16_t* path, int depth,
                             FairScratch* fs, double* cells, int64_t* acc, bint expanding=False) noexcept nogil:
    """The cells the prefix ``path[:depth]`` fixes (each rule predicting its majority label, as the
    search labels it); what it leaves uncaptured is left in ``fs.u``, and when ``expanding``
    what its last rule captures in ``fs.last`` (``fair_redundant``)."""
    cdef double cnt[MAX_CLASSES]
    cdef int i, k, label
    cdef uint64_t* u = &fs.u[0]
    cdef uint64_t* v = &fs.v[0]
    memset(cells, 0, FAIR_CELLS * sizeof(double))
    for i in range(pb.W):
        u[i] = pb.mask[i]
    for k in range(depth):
        problem_rule(pb, u, u, v, path[k], acc, &label)
        problem_counts(pb, v, LABELS, cnt, acc)
        fair_add(fp, pb, v, cnt, label, cells, &fs.tmp[0], acc)
    if expanding:
        for i in range(pb.W):
            fs.last[i] = v[i] if depth > 0 else 0
        fs.last_label = label if depth > 0 else -1


cdef inline int _label(const CorelsProblem* pb, const uint64_t* rows, int64_t* acc) noexcept nogil:
    cdef double cnt[MAX_CLASSES]
    cdef double correct
    cdef int label
    problem_counts(pb, rows, LABELS, cnt, acc)
    weighted_majority(pb.C, pb.weights, cnt, &correct, &label)
    return label


cdef inline bint fair_redundant(const CorelsProblem* pb, FairScratch* fs, const uint16_t* path, int depth,
                                int t, const uint64_t* u, const uint64_t* capv, const double* cnt, int label,
                                int64_t* acc) noexcept nogil:
    """The child ``path[:depth] + (t,)`` (capturing ``cnt``, labelled ``label``; ``u``: what its
    parent leaves open) has a twin the search keeps: ``t`` captures no row (the list without it
    predicts every row alike, with one rule less), or ``t`` has a smaller id than the last rule
    ``p`` and swapping the two predicts every row alike (they capture disjoint rows there, or
    the rows both capture get one label either way and neither rule's label changes): the same
    list, so the same objective and the same figures (docs/maintainers/corels-fairness.md,
    "Twins"). Sound under the constraint, as it compares equal predictions only."""
    cdef int i, lt2, lp2
    cdef bint overlap = False
    cdef uint64_t* x = &fs.tmp[0]
    if cnt[0] + cnt[1] == 0:
        return True
    if depth == 0 or t > path[depth - 1]:
        return False
    for i in range(pb.W):
        if capv[i] & fs.last[i]:
            overlap = True
            break
    if not overlap:
        return True
    if fs.last_label != label:          # the overlap would change hands between the two labels
        return False
    for i in range(pb.W):               # t first: it captures the overlap too
        x[i] = capv[i] & (u[i] | fs.last[i])
    lt2 = _label(pb, x, acc)
    if lt2 != label:
        return False
    for i in range(pb.W):               # p after t: what is left of its rows
        x[i] = fs.last[i] & ~capv[i]
    for i in range(pb.W):
        if x[i]:
            lp2 = _label(pb, x, acc)
            return lp2 == fs.last_label
    return True


cdef inline void fair_sides(const FairProblem* fp, const double* cells, int g, double* p, double* r) noexcept nogil:
    """Group ``g``'s protected side ``p`` and reference side ``r`` as ``fairness_cells.pxd``
    reads them (``FC_SIDE`` each): the cells fixed by ``cells`` (a whole list's, or a prefix's)
    and, for the rows left open, ``fp``/``tp`` free up to every open negative/positive."""
    cdef int s, k
    cdef double c[4]
    cdef double* side
    for s in range(2):
        side = p if s == 0 else r
        for k in range(4):
            c[k] = cells[4 * g + k] if s == 0 else cells[4 * fp.G + k] - cells[4 * g + k]
        side[0] = fp.total[4 * g] if s == 0 else fp.total[4 * fp.G] - fp.total[4 * g]
        side[1] = fp.total[4 * g + 2] if s == 0 else fp.total[4 * fp.G + 2] - fp.total[4 * g + 2]
        side[2] = c[1]
        side[3] = side[0] - c[0]             # fp and every open negative
        side[4] = c[3]
        side[5] = side[1] - c[2]             # tp and every open positive
        side[6] = c[0]
        side[7] = c[2]


cdef inline bint fair_meets(const FairProblem* fp, const double* cells) noexcept nogil:
    """A whole list's ``cells`` meet the constraint in every group (``fairness.within``, by
    ``fc_within``: the same rates of the same exact sums)."""
    cdef double p[FC_SIDE]
    cdef double r[FC_SIDE]
    cdef int g
    for g in range(fp.G):
        fair_sides(fp, cells, g, p, r)
        if not fc_within(fp.metric, fp.at_most, p, r):
            return False
    return True


cdef inline bint fair_list_meets(const FairProblem* fp, const CorelsProblem* pb, const uint16_t* path, int depth,
                                 int last, FairScratch* fs, int64_t* acc) noexcept nogil:
    """The list ``path[:depth]`` (then rule ``last`` when >= 0) and its default rule meets the
    constraint (True without one: ``fp.G == 0``)."""
    cdef double cells[FAIR_CELLS]
    cdef double cnt[MAX_CLASSES]
    cdef double correct
    cdef int label
    cdef uint64_t* u
    cdef uint64_t* v
    if fp.G == 0:
        return True
    u = &fs.u[0]
    v = &fs.v[0]
    fair_prefix(fp, pb, path, depth, fs, cells, acc)
    if last >= 0:
        problem_rule(pb, u, u, v, last, acc, &label)
        problem_counts(pb, v, LABELS, cnt, acc)
        fair_add(fp, pb, v, cnt, label, cells, &fs.tmp[0], acc)
    problem_counts(pb, u, LABELS, cnt, acc)
    weighted_majority(pb.C, pb.weights, cnt, &correct, &label)
    fair_add(fp, pb, u, cnt, label, cells, &fs.tmp[0], acc)
    return fair_meets(fp, cells)


cdef inline bint fair_possible(const FairProblem* fp, const double* cells) noexcept nogil:
    """Some prediction of the rows ``cells`` leaves open may meet the constraint in every group
    (False: no list through the prefix does): ``fc_lower``, the least figure over the sides'
    intervals (docs/maintainers/corels-fairness.md)."""
    cdef double p[FC_SIDE]
    cdef double r[FC_SIDE]
    cdef int g
    for g in range(fp.G):
        fair_sides(fp, cells, g, p, r)
        if fc_lower(fp.metric, p, r) > fp.prune:
            return False
    return True


cdef inline bint fair_child_possible(const FairProblem* fp, const CorelsProblem* pb, FairScratch* fs,
                                     const uint64_t* u, const uint64_t* capv, const double* cnt, int label,
                                     double b, double* lb, int64_t* acc) noexcept nogil:
    """``fair_possible`` for a child: the prefix's cells (``fs.prefix``) and its last rule's,
    which captures ``u & capv`` (label counts ``cnt``) and predicts ``label``. When possible,
    raises the child's bound ``lb`` to ``b`` (its prefix loss and rules) plus ``fair_loss``."""
    cdef double cells[FAIR_CELLS]
    cdef int i
    cdef uint64_t* v = &fs.v[0]
    for i in range(FAIR_CELLS):
        cells[i] = fs.prefix[i]
    for i in range(pb.W):
        v[i] = u[i] & capv[i]
    fair_add(fp, pb, v, cnt, label, cells, &fs.tmp[0], acc)
    if not fair_possible(fp, cells):
        return False
    for i in range(pb.W):      # what the child leaves open
        v[i] = u[i] & ~capv[i]
    memcpy(fs.child, cells, FAIR_CELLS * sizeof(double))
    fs.child_loss = fair_loss(fp, pb, fs, v, cells)
    lb[0] = fair_raise(lb[0], b, fs.child_loss)
    return True


cdef inline double fair_raise(double lb, double b, double loss) noexcept nogil:
    """A child's bound ``lb`` raised to its prefix cost ``b`` plus its ``fair_loss`` (less float
    slack): one expression, so the symmetry map recomputes a record's bound to the bit."""
    return max(lb, b + loss * (1.0 - 1e-12) - 1e-9)


cdef inline uint64_t fair_cells_key(const FairProblem* fp, uint64_t key, const double* cells) noexcept nogil:
    """``key`` (a symmetry map key) mixed with the fixed ``cells``: under a constraint a map
    class is the antecedent set (or the uncaptured samples) *and* the cells."""
    cdef uint64_t bits
    cdef int i
    for i in range(4 * (fp.G + 1)):
        memcpy(&bits, &cells[i], 8)
        key = splitmix64(key ^ bits)
    return key


cdef inline bint fair_same_cells(const FairProblem* fp, const double* a, const double* b) noexcept nogil:
    """Two prefixes fix the same cells in every group and overall."""
    cdef int i
    for i in range(4 * (fp.G + 1)):
        if a[i] != b[i]:
            return False
    return True


cdef inline void fair_child_cells(const FairProblem* fp, const CorelsProblem* pb, FairScratch* fs,
                                  const uint64_t* u, int s, double* cells, int64_t* acc) noexcept nogil:
    """The cells the child ``prefix + (s,)`` fixes: the prefix's (``fs.prefix``; ``u``: what it
    leaves open) and what ``s`` captures there, at its majority label (``fs.u``, ``fs.v`` are
    overwritten)."""
    cdef double cnt[MAX_CLASSES]
    cdef int label
    memcpy(cells, fs.prefix, FAIR_CELLS * sizeof(double))
    problem_rule(pb, u, &fs.u[0], &fs.v[0], s, acc, &label)
    problem_counts(pb, &fs.v[0], LABELS, cnt, acc)
    fair_add(fp, pb, &fs.v[0], cnt, label, cells, &fs.tmp[0], acc)


cdef inline int fair_init(FairProblem* fp, const CorelsProblem* pb, object groups, str metric,
                          double at_most, int n_units) except -1:
    """The constraint over ``groups`` ((G, W) uint64 unit masks; None or G = 0: no constraint);
    call after ``problem_init``."""
    cdef const uint64_t[:, ::1] gm
    cdef double cnt[MAX_CLASSES]
    cdef vector[int64_t] acc
    cdef vector[uint64_t] tmp
    cdef int g, i
    fp.G = 0
    if groups is None or len(groups) == 0:
        return 0
    gm = groups
    if pb.C != 2:
        raise ValueError("a fairness constraint needs a binary target")
    if gm.shape[0] > MAX_GROUPS:
        raise ValueError(f"a fairness constraint takes at most {MAX_GROUPS} protected groups")
    if gm.shape[1] != pb.W:
        raise ValueError("group masks must have the same number of words as the antecedents")
    if not at_most >= 0:
        raise ValueError("the fairness limit must be >= 0")
    fp.metric = fc_metric_code(metric)
    fp.at_most = at_most
    fp.prune = fc_limit(at_most) + 1e-9 * max(1.0, at_most)
    fp.G = gm.shape[0]
    fp.gmask.resize(<size_t>fp.G * pb.W)
    for g in range(fp.G):
        for i in range(pb.W):
            fp.gmask[<size_t>g * pb.W + i] = gm[g, i] & pb.mask[i]
    # each unit's counts, from the label planes (class -1: the total, class 1: the positives)
    fp.U = n_units
    fp.n0.assign(n_units, 0.0)
    fp.n1.assign(n_units, 0.0)
    for i in range(n_units):
        for g in range(pb.P):
            if (pb.lplanes[<size_t>(i >> 6) * pb.P + g] >> (i & 63)) & 1:
                if pb.lclass[g] < 0:
                    fp.n0[i] += <double>(<int64_t>1 << pb.lshift[g])
                else:
                    fp.n1[i] += <double>(<int64_t>1 << pb.lshift[g])
        fp.n0[i] -= fp.n1[i]
    _signature_classes(fp, pb)
    # each side's negatives and positives: the cells of every row "predicted 0"
    acc.assign(max(pb.P, pb.Q) + 1, 0)
    tmp.assign(pb.W, 0)
    memset(fp.total, 0, FAIR_CELLS * sizeof(double))
    problem_counts(pb, &pb.mask[0], LABELS, cnt, &acc[0])
    fair_add(fp, pb, &pb.mask[0], cnt, 0, fp.total, &tmp[0], &acc[0])
    _sort_moves(fp, pb)
    return 0


cdef inline int _signature_classes(FairProblem* fp, const CorelsProblem* pb) except -1:
    """The signature classes (``FairProblem.rep``): units with equal antecedent vectors."""
    import numpy as np
    cdef int U = fp.U, M = pb.M, W = pb.W, g, u, r
    cdef Py_ssize_t[::1] first
    cdef Py_ssize_t[::1] inverse
    cdef uint64_t[:, ::1] bits
    cdef int m, w, K = M // 64 + 1
    cdef uint64_t x
    fp.rep.assign(W, 0)
    fp.cn0.assign(U, 0.0)
    fp.cn1.assign(U, 0.0)
    fp.gn0.assign(<size_t>fp.G * U, 0.0)
    fp.gn1.assign(<size_t>fp.G * U, 0.0)
    if U == 0:
        return 0
    # each unit's antecedents packed in K words (U * M / 8 bytes), bit M: the unit exists
    rows = np.zeros((U, K), dtype=np.uint64)
    bits = rows
    for m in range(M + 1):
        for w in range(W):
            x = pb.mask[w] if m == M else pb.caps[<size_t>m * W + w] & pb.mask[w]
            while x:
                u = (w << 6) + _ctz(x)
                x &= x - 1
                bits[u, m >> 6] |= <uint64_t>1 << (m & 63)
    _, first_, inverse_ = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    first = np.ascontiguousarray(first_, dtype=np.intp)
    inverse = np.ascontiguousarray(np.asarray(inverse_).reshape(-1), dtype=np.intp)
    for u in range(U):
        if not (pb.mask[u >> 6] >> (u & 63)) & 1:
            continue
        r = <int>first[inverse[u]]
        fp.rep[r >> 6] |= <uint64_t>1 << (r & 63)
        fp.cn0[r] += fp.n0[u]
        fp.cn1[r] += fp.n1[u]
        for g in range(fp.G):
            if (fp.gmask[<size_t>g * W + (u >> 6)] >> (u & 63)) & 1:
                fp.gn0[<size_t>g * U + r] += fp.n0[u]
                fp.gn1[<size_t>g * U + r] += fp.n1[u]
    return 0


cdef inline void fair_scratch_init(FairScratch* fs, int W, int U) except *:
    fs.child_loss = 0.0
    fs.u.assign(W, 0)
    fs.last.assign(W, 0)
    fs.v.assign(W, 0)
    fs.tmp.assign(W, 0)


cdef inline double _part(const FairProblem* fp, int g, int r, int kind, bint protected) noexcept nogil:
    """What the class of representative ``r`` adds to one side's count of a rate of ``kind`` (0
    selection: its rows, 1 false positive: its negatives, 2 true positive: its positives) when
    predicted 1; ``protected``: group ``g``'s rows of it, else the rest."""
    cdef size_t k = <size_t>g * fp.U + r
    cdef double n0 = fp.gn0[k] if protected else fp.cn0[r] - fp.gn0[k]
    cdef double n1 = fp.gn1[k] if protected else fp.cn1[r] - fp.gn1[k]
    if kind == 0:
        return n0 + n1
    return n0 if kind == 1 else n1


cdef inline bint _best_one(const FairProblem* fp, const CorelsProblem* pb, int r) noexcept nogil:
    """The best label of the class of representative ``r`` is 1 (ties to 1, as the rules)."""
    return pb.weights[1] * fp.cn1[r] >= pb.weights[0] * fp.cn0[r]


cdef inline void _kind_sides(const FairProblem* fp, const double* cells, int g, int kind, double* num,
                             double* den) noexcept nogil:
    """Group ``g``'s two sides' counts (``num``: the fixed cells') and fixed denominators of the
    rate of ``kind`` (0 selection, 1 false positive, 2 true positive)."""
    cdef double side[2][FC_SIDE]
    cdef int s
    fair_sides(fp, cells, g, side[0], side[1])
    for s in range(2):
        if kind == 0:
            num[s], den[s] = side[s][2] + side[s][4], side[s][0] + side[s][1]
        elif kind == 1:
            num[s], den[s] = side[s][2], side[s][0]
        else:
            num[s], den[s] = side[s][4], side[s][1]


cdef inline size_t _move_list(const FairProblem* fp, int kind, int g, bint down) noexcept nogil:
    return (<size_t>kind * fp.G + g) * 2 + (1 if down else 0)


cdef inline int _sort_moves(FairProblem* fp, const CorelsProblem* pb) except -1:
    """``FairProblem.moves``: for each rate kind, group and direction of the difference ``d``
    (protected rate less reference rate; ``down``: ``d`` must fall), the classes whose
    relabelling (away from their best label) moves ``d`` that way, cheapest per unit first."""
    cdef double num[2]
    cdef double den[2]
    cdef double cells[FAIR_CELLS]
    cdef double e, h, cost
    cdef int kind, g, d, r
    cdef FairMove mv
    cdef vector[pair[double, int32_t]] order
    memset(cells, 0, FAIR_CELLS * sizeof(double))
    fp.moves.clear()
    fp.move_off.assign(<size_t>3 * fp.G * 2 + 1, 0)
    cdef int kinds[2]
    cdef int nk = _metric_kinds(fp.metric, kinds)
    for kind in range(3):
        for g in range(fp.G):
            _kind_sides(fp, cells, g, kind, num, den)
            for d in range(2):
                fp.move_off[_move_list(fp, kind, g, d == 1)] = fp.moves.size()
                if den[0] <= 0 or den[1] <= 0 or not (nk > 0 and kinds[0] == kind or nk > 1 and kinds[1] == kind):
                    continue          # undefined for every list (_moves says INFINITY), or not the metric's
                order.clear()
                for r in range(fp.U):
                    if not (fp.rep[r >> 6] >> (r & 63)) & 1:
                        continue
                    e = _part(fp, g, r, kind, True) / den[0] - _part(fp, g, r, kind, False) / den[1]
                    h = -e if _best_one(fp, pb, r) else e      # the change of d when relabelled
                    if d == 1:
                        h = -h
                    if h > 0:
                        cost = abs(pb.weights[1] * fp.cn1[r] - pb.weights[0] * fp.cn0[r])
                        order.push_back(pair[double, int32_t](cost / h, r))
                sort(order.begin(), order.end())
                for i in range(<int>order.size()):
                    r = order[i].second
                    e = _part(fp, g, r, kind, True) / den[0] - _part(fp, g, r, kind, False) / den[1]
                    mv.h = -e if _best_one(fp, pb, r) else e
                    if d == 1:
                        mv.h = -mv.h
                    mv.ratio = order[i].first
                    mv.r = r
                    fp.moves.push_back(mv)
    fp.move_off[3 * fp.G * 2] = fp.moves.size()
    return 0


cdef inline double _moves(const FairProblem* fp, const uint64_t* open_, const double* cells, const double* opened,
                          int g, int kind) noexcept nogil:
    """The least extra weighted loss, over the open classes' best labels, that brings group
    ``g``'s rate of ``kind`` (0 selection, 1 false positive, 2 true positive: each a count over a
    fixed denominator that a class adds its rows of a side to when predicted 1) within the limit;
    ``opened``: what the open classes labelled 1 add to each side's count. A class (the units of
    one antecedent signature) takes one prediction on both sides, so relabelling it moves the two
    rates together: a fractional knapsack on their difference (the linear relaxation: one
    constraint, boxed moves, cheapest per unit of difference first, in the order sorted once by
    ``_sort_moves``). INFINITY when no assignment reaches it."""
    cdef double num[2]
    cdef double den[2]
    cdef double d, need, take, extra = 0.0
    cdef size_t i, end
    cdef const FairMove* mv
    _kind_sides(fp, cells, g, kind, num, den)
    if den[0] <= 0 or den[1] <= 0:
        return INFINITY
    d = (num[0] + opened[0]) / den[0] - (num[1] + opened[1]) / den[1]
    need = abs(d) - fp.prune
    if need <= 0:
        return 0.0
    i = fp.move_off[_move_list(fp, kind, g, d > 0)]
    end = fp.move_off[_move_list(fp, kind, g, d > 0) + 1]
    while i < end:
        mv = &fp.moves[i]
        i += 1
        if not (open_[mv.r >> 6] >> (mv.r & 63)) & 1:
            continue
        take = min(need, mv.h)
        extra += mv.ratio * take
        need -= take
        if need <= 0:
            return extra
    return INFINITY


cdef inline int _metric_kinds(int metric, int* kinds) noexcept nogil:
    """The rates of fixed denominators whose gaps ``fair_loss`` closes for ``metric`` (0
    selection, 1 false positive, 2 true positive: equal opportunity's gap is the true positive
    rate's); how many (none for the ratios of predictive parity and conditional use accuracy)."""
    if metric == FC_STATISTICAL_PARITY:
        kinds[0] = 0
    elif metric == FC_PREDICTIVE_EQUALITY:
        kinds[0] = 1
    elif metric == FC_EQUAL_OPPORTUNITY:
        kinds[0] = 2
    elif metric == FC_EQUALIZED_ODDS:       # each of its two gaps is at most the limit too
        kinds[0], kinds[1] = 1, 2
        return 2
    else:
        return 0
    return 1


cdef inline double fair_loss(const FairProblem* fp, const CorelsProblem* pb, FairScratch* fs, const uint64_t* open_,
                             const double* cells) noexcept nogil:
    """A lower bound on the weighted loss, on the units ``open_``, of every list that meets the
    constraint after a prefix fixing ``cells``: each open signature class (units every list
    predicts alike) at its best label (the equivalent points over classes, at least the bound
    over units), plus, for the metrics whose rates have fixed denominators (statistical parity,
    predictive equality, equal opportunity, and equalized odds through either of its two parts),
    the cheapest relabelling of classes that brings each group within the limit (``_moves``).
    INFINITY when none can. One pass over the open classes sums what every group's rates need.
    docs/maintainers/corels-fairness.md, "The loss the constraint costs"."""
    cdef double base = 0.0, extra = 0.0, e
    cdef double opened[MAX_GROUPS][2][2]     # [group][kind][side]
    cdef int kinds[2]
    cdef int r, g, w, j, nk = _metric_kinds(fp.metric, kinds)
    cdef uint64_t x
    memset(opened, 0, sizeof(opened))
    for w in range(pb.W):
        x = open_[w] & fp.rep[w]
        while x:
            r = (w << 6) + _ctz(x)
            x &= x - 1
            base += min(pb.weights[0] * fp.cn0[r], pb.weights[1] * fp.cn1[r])
            if nk > 0 and _best_one(fp, pb, r):
                for g in range(fp.G):
                    for j in range(nk):
                        opened[g][j][0] += _part(fp, g, r, kinds[j], True)
                        opened[g][j][1] += _part(fp, g, r, kinds[j], False)
    for g in range(fp.G):
        for j in range(nk):
            e = _moves(fp, open_, cells, opened[g][j], g, kinds[j])
            extra = max(extra, e)
    return base + extra


cdef inline double fair_prefix_bound(const FairProblem* fp, const CorelsProblem* pb, const uint16_t* ids, int n,
                                     FairScratch* fs, int64_t* acc) noexcept nogil:
    """The search's lower bound (in weighted errors plus lambda per rule, unscaled) on every list
    through the prefix ``ids[:n]`` that meets the constraint: INFINITY when the relaxation says
    none does, else the prefix's own cost plus ``fair_loss`` on what it leaves (for tests)."""
    cdef double err = 0.0
    cdef int label, k
    cdef vector[uint64_t] u, v
    fair_prefix(fp, pb, ids, n, fs, fs.prefix, acc)
    if not fair_possible(fp, fs.prefix):
        return INFINITY
    u.assign(pb.W, 0)
    v.assign(pb.W, 0)
    problem_context(pb, NULL, 0, u.data(), NULL)
    for k in range(n):
        err += problem_rule(pb, u.data(), u.data(), v.data(), ids[k], acc, &label)
    return err + n * pb.lamW + fair_loss(fp, pb, fs, u.data(), fs.prefix)


cdef inline bint fair_child_hopeless(const FairProblem* fp, const CorelsProblem* pb, FairScratch* fs,
                                     const uint64_t* u, const uint64_t* capv, const double* cnt, int label,
                                     double b, double* lb, int64_t* acc, double lookahead,
                                     double best) noexcept nogil:
    """The search's pruning of a child by the constraint: no extension can meet it, or its bound
    raised by ``fair_loss`` (``lb``, updated) plus the lookahead's ``lambda`` reaches ``best``."""
    return not (fair_child_possible(fp, pb, fs, u, capv, cnt, label, b, lb, acc) and lb[0] + lookahead < best)


cdef inline object fair_probe(const FairProblem* fp, const CorelsProblem* pb, FairScratch* fs, int64_t* acc, prefix,
                              bint bound):
    """For tests: whether the list ``prefix`` (then its default rule) meets the constraint (True
    without one), or with ``bound`` ``fair_prefix_bound`` as a fraction of the total weight
    (None without one)."""
    cdef vector[uint16_t] ids = [int(a) for a in prefix]
    if fp.G == 0 and bound:
        return None
    if bound:
        return fair_prefix_bound(fp, pb, ids.data(), ids.size(), fs, acc) / pb.total
    return fair_list_meets(fp, pb, ids.data(), ids.size(), -1, fs, acc)
