# cython: language_level=3
"""Group fairness in C, for a branch and bound: ``glasswork.fairness.figures.within`` on two groups'
confusion cells, and a lower bound on a metric over every model whose cells lie in intervals.

A side (the protected group or the reference) is described by ``FC_SIDE`` weights:

    [W0, W1, fp_lo, fp_hi, tp_lo, tp_hi, tn, fn]

``W0``/``W1`` the weight of its negative/positive rows; ``fp``/``tp`` the weight of its negative/
positive rows predicted positive, known to lie in ``[lo, hi]`` (a rule list's captured rows, a
score card's rows whose score is decided over a box); ``tn``/``fn`` the weight predicted negative
for sure (summed directly, so that a single model's cells are the ones ``GroupRates.of_cells``
sums). The metric codes follow ``glasswork.fairness.figures.METRICS``' order.
"""

from libc.math cimport INFINITY

cdef enum:
    FC_SIDE = 8
    FC_STATISTICAL_PARITY = 0
    FC_PREDICTIVE_PARITY = 1
    FC_PREDICTIVE_EQUALITY = 2
    FC_EQUAL_OPPORTUNITY = 3
    FC_EQUALIZED_ODDS = 4
    FC_CONDITIONAL_USE_ACCURACY_EQUALITY = 5
    # the rates of one side, as GroupRates names them
    FC_SELECTION = 0
    FC_PPV = 1
    FC_NPV = 2
    FC_FPR = 3
    FC_FNR = 4


cdef inline int fc_metric_code(str metric) except -1:
    """The code of ``metric`` (its place in ``glasswork.fairness.figures.METRICS``)."""
    cdef tuple names = ("statistical_parity", "predictive_parity", "predictive_equality", "equal_opportunity",
                        "equalized_odds", "conditional_use_accuracy_equality")
    if metric not in names:
        raise ValueError(f"unknown fairness metric {metric!r}; choose one of {list(names)}")
    return names.index(metric)


cdef inline bint fc_rate(const double* side, int rate, double* out) noexcept nogil:
    """One rate of a single model's side (``fp_lo``/``tp_lo`` are its cells), computed as
    ``GroupRates.of_cells`` does; False where its denominator has no weight (undefined)."""
    cdef double tn = side[6], fp = side[2], fn = side[7], tp = side[4], num, den
    if rate == FC_SELECTION:
        num, den = fp + tp, tn + fp + fn + tp
    elif rate == FC_PPV:
        num, den = tp, fp + tp
    elif rate == FC_NPV:
        num, den = tn, tn + fn
    elif rate == FC_FPR:
        num, den = fp, tn + fp
    else:
        num, den = fn, fn + tp
    if den <= 0.0:
        return False
    out[0] = num / den
    return True


cdef inline double fc_gap(const double* p, const double* r, int rate) noexcept nogil:
    """``|rate(p) - rate(r)|`` of a single model, -1 when either is undefined."""
    cdef double a, b
    if not fc_rate(p, rate, &a) or not fc_rate(r, rate, &b):
        return -1.0
    return a - b if a >= b else b - a


cdef inline int fc_terms(int metric, int* rates) noexcept nogil:
    """The rates whose gaps the metric sums (``fairness.prediction_metrics``); returns how many."""
    if metric == FC_STATISTICAL_PARITY:
        rates[0] = FC_SELECTION
    elif metric == FC_PREDICTIVE_PARITY:
        rates[0] = FC_PPV
    elif metric == FC_PREDICTIVE_EQUALITY:
        rates[0] = FC_FPR
    elif metric == FC_EQUAL_OPPORTUNITY:
        rates[0] = FC_FNR
    elif metric == FC_EQUALIZED_ODDS:
        rates[0], rates[1] = FC_FPR, FC_FNR
        return 2
    else:
        rates[0], rates[1] = FC_PPV, FC_NPV
        return 2
    return 1


cdef inline double fc_figure(int metric, const double* p, const double* r) noexcept nogil:
    """The metric of a single model, -1 when undefined (a sum of gaps, in the Python order)."""
    cdef int rates[2]
    cdef int t, m = fc_terms(metric, rates)
    cdef double gap, total = 0.0
    for t in range(m):
        gap = fc_gap(p, r, rates[t])
        if gap < 0.0:
            return -1.0
        total = gap if t == 0 else total + gap
    return total


cdef inline double fc_limit(double at_most) noexcept nogil:
    """The largest figure that meets ``at_most``: ``fairness.within``'s 1e-12 relative slack."""
    return at_most + 1e-12 * (at_most if at_most > 1.0 else 1.0)


cdef inline bint fc_within(int metric, double at_most, const double* p, const double* r) noexcept nogil:
    """``fairness.within`` of a single model: the figure is defined and at most the limit."""
    cdef double figure = fc_figure(metric, p, r)
    return figure >= 0.0 and figure <= fc_limit(at_most)


cdef inline double _ratio_lo(double num_lo, double other_hi) noexcept nogil:
    """The smallest ``num / (num + other)`` with ``num >= num_lo``, ``0 <= other <= other_hi``,
    ``num + other > 0`` (it rises with ``num`` and falls with ``other``)."""
    return num_lo / (num_lo + other_hi) if num_lo + other_hi > 0.0 else 1.0


cdef inline double _ratio_hi(double num_hi, double other_lo) noexcept nogil:
    return num_hi / (num_hi + other_lo) if num_hi + other_lo > 0.0 else 0.0


cdef inline bint fc_range(const double* side, int rate, double* lo, double* hi) noexcept nogil:
    """The range ``[lo, hi]`` of a rate over every model whose cells lie in the side's intervals
    and for which the rate is defined; False when it is defined for none of them."""
    cdef double W0 = side[0], W1 = side[1], fpl = side[2], fph = side[3], tpl = side[4], tph = side[5]
    cdef double tnl = W0 - fph, tnh = W0 - fpl, fnl = W1 - tph, fnh = W1 - tpl
    if tnl < 0.0:
        tnl = 0.0
    if fnl < 0.0:
        fnl = 0.0
    if rate == FC_SELECTION:
        if W0 + W1 <= 0.0:
            return False
        lo[0], hi[0] = (fpl + tpl) / (W0 + W1), (fph + tph) / (W0 + W1)
    elif rate == FC_PPV:
        if tph + fph <= 0.0:
            return False
        lo[0], hi[0] = _ratio_lo(tpl, fph), _ratio_hi(tph, fpl)
    elif rate == FC_NPV:
        if tnh + fnh <= 0.0:
            return False
        lo[0], hi[0] = _ratio_lo(tnl, fnh), _ratio_hi(tnh, fnl)
    elif rate == FC_FPR:
        if W0 <= 0.0:
            return False
        lo[0], hi[0] = fpl / W0, fph / W0
    else:
        if W1 <= 0.0:
            return False
        lo[0], hi[0] = fnl / W1, fnh / W1
    return True


cdef inline double fc_gap_lower(const double* p, const double* r, int rate) noexcept nogil:
    """A lower bound on ``|rate(p) - rate(r)|`` over the models of the intervals where both are
    defined; INFINITY when no model has both defined (every one fails the constraint)."""
    cdef double plo, phi, rlo, rhi, gap = 0.0
    if not fc_range(p, rate, &plo, &phi) or not fc_range(r, rate, &rlo, &rhi):
        return INFINITY
    if plo - rhi > gap:
        gap = plo - rhi
    if rlo - phi > gap:
        gap = rlo - phi
    return gap


cdef inline double fc_lower(int metric, const double* p, const double* r) noexcept nogil:
    """A lower bound on the metric of every model of the intervals (a sum bounded term by term)."""
    cdef int rates[2]
    cdef int t, m = fc_terms(metric, rates)
    cdef double total = 0.0
    for t in range(m):
        total += fc_gap_lower(p, r, rates[t])
    return total
