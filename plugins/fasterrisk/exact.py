"""``search.policy: exact``: the best risk score of §1.3, proven, by branch and bound.

The problem: integer points ``w_j`` in ``[lb_j, ub_j]``, at most k non-zero, an integer
intercept, minimising the logistic loss (a weighted sum over rows), multiplier 1. Two nested
searches share one kind of bound, the Fenchel dual value of ``cython_ext/riskcert.pyx`` at a
box-constrained real fit (valid however far the fit got):

1. over supports, ``certify.SupportSearch`` bounded by the box itself (the convex hull of the
   k-sparse box is a real restriction here, unlike for multiplier cards), pruning every support
   whose relaxation cannot beat the best card known;
2. on each surviving support, a branch and bound over the integer box of the intercept and
   points (split the most fractional coordinate), with rounded fits as cards. Each box's bound
   is the dual value at its box-constrained fit, valid however far the fit got; the rows are
   merged on the support's columns first (for 5 binary features at most 64 distinct rows).

Both run compiled in one loop (``riskcert.SupportTree`` with ``lattice=True``): a leaf of the
support tree starts its lattice without returning to Python, and a lattice in progress resumes
across time slices.

It starts from FasterRisk's cards (their points with the best integer intercept). The
intercept box comes from the data (``intercept_range``): for any points, the best intercept lies
where neither class's rows are all pushed past ``log(W+/W-)``. The status is ``optimal`` only
when both trees are closed or pruned; stopped early, the smallest open bound is reported.

``enumerate_cards`` runs the same two trees against a fixed threshold instead of the incumbent:
every card with loss at most the threshold is counted (the Rashomon set of the exact policy,
docs/fasterrisk.md proves which prunings stay valid), the best ``max_models`` kept.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from glasswork.contract.result import relative_gap
from glasswork.plugins.fasterrisk.certify import SupportSearch
from glasswork.plugins.fasterrisk.engine import Constraints, merge_rows
from glasswork.plugins.fasterrisk.fairness import FairnessTarget, card_predictions


@dataclass
class ExactResult:
    """The best card found (integer points, integer intercept) and what is proven about it."""

    status: str  # "optimal", "infeasible" (proven: no card meets the constraint), or why it stopped
    objective: float  # inf when no card meeting the fairness constraint was found
    lower_bound: float  # inf when proven infeasible
    points: np.ndarray | None  # (p,) integers; None when no card was found
    intercept: int | None
    support_nodes: int
    lattice_nodes: int
    seconds: float
    fairness_pruned: int = 0  # lattice boxes closed because none of their cards meets the constraint

    @property
    def gap(self) -> float:
        gap = relative_gap(self.objective, self.lower_bound)
        return math.inf if gap is None else gap


class LogisticLoss:
    """``L(w0, w)`` and its gradient on merged rows (identical rows summed)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, s: np.ndarray | None) -> None:
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if set(np.unique(y)) <= {0.0, 1.0}:
            y = 2.0 * y - 1.0
        s = np.ones(len(y)) if s is None else np.asarray(s, dtype=np.float64)
        rows, self.y, self.s = merge_rows(X, y, s)
        self.X = X[rows]

    def best_intercept(self, w: np.ndarray, lo: int, hi: int) -> tuple[int, float]:
        """The best integer intercept for points ``w`` (convex in it: a short ternary search)."""
        score = self.X @ w

        def loss(b: int) -> float:
            return float(self.s @ np.logaddexp(0.0, -self.y * (score + b)))

        a, c = lo, hi
        while c - a > 2:
            m1, m2 = a + (c - a) // 3, c - (c - a) // 3
            if loss(m1) <= loss(m2):
                c = m2
            else:
                a = m1
        best = min(range(a, c + 1), key=loss)
        return best, loss(best)


def _score_range(X: np.ndarray, cons: Constraints, k: int) -> tuple[float, float]:
    """``smin <= 0 <= smax`` bounding every row's points total for every feasible card."""
    X = np.asarray(X, dtype=np.float64)
    xmin, xmax = X.min(axis=0), X.max(axis=0)
    low = np.minimum.reduce([cons.lower * xmin, cons.lower * xmax, cons.upper * xmin, cons.upper * xmax])
    high = np.maximum.reduce([cons.lower * xmin, cons.lower * xmax, cons.upper * xmin, cons.upper * xmax])
    smin = float(np.sort(np.minimum(low, 0.0))[:k].sum())
    smax = float(np.sort(np.maximum(high, 0.0))[::-1][:k].sum())
    return smin, smax


def intercept_range(X: np.ndarray, y: np.ndarray, s: np.ndarray | None, cons: Constraints, k: int) -> tuple[int, int]:
    """Integer intercepts that contain the optimum for EVERY feasible set of points.

    For points ``w`` with row scores in ``[smin, smax]``, the derivative of the loss in the
    intercept ``b`` is positive once ``b + smin > log(W+/W-)`` (every row is then pushed past it)
    and negative once ``b + smax < -log(W-/W+)``; the best integer intercept is within one of
    the real one. ``smin``/``smax`` are bounded by the k most extreme per-feature contributions.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    s = np.ones(len(y)) if s is None else np.asarray(s, dtype=np.float64)
    pos, neg = float(s[y > 0].sum()), float(s[y <= 0].sum())
    smin, smax = _score_range(X, cons, k)
    shift = abs(math.log(pos / neg))
    return int(math.floor(-smax - shift)) - 1, int(math.ceil(-smin + shift)) + 1


def intercept_range_within(
    X: np.ndarray, y: np.ndarray, s: np.ndarray | None, cons: Constraints, k: int, threshold: float
) -> tuple[int, int]:
    """Integer intercepts that hold EVERY card with loss <= ``threshold`` (and the optimum).

    With ``l(t) = log(1 + exp(-t)) > max(0, -t)``: if ``b + smax <= -threshold / W+`` every
    positive row has margin at most that, so the loss exceeds ``W+ * threshold / W+``; likewise
    ``b + smin >= threshold / W-`` for the negative rows. Joined with ``intercept_range``.
    """
    y = np.asarray(y, dtype=np.float64)
    s = np.ones(len(y)) if s is None else np.asarray(s, dtype=np.float64)
    pos, neg = float(s[y > 0].sum()), float(s[y <= 0].sum())
    smin, smax = _score_range(X, cons, k)
    lo, hi = intercept_range(X, y, s, cons, k)
    return (
        min(lo, int(math.floor(-smax - threshold / pos))),
        max(hi, int(math.ceil(-smin + threshold / neg))),
    )


@dataclass
class RashomonCards:
    """The cards (integer points and intercept, m = 1) with loss <= ``threshold``.

    ``count`` is exact for what was enumerated; ``complete`` says every such card was; otherwise
    every card not enumerated has loss >= ``unenumerated_bound``. Cards are enumerated in objective
    order, so ``losses`` and ``coefficients`` (intercept first, then points by feature) are the best
    ``max_models`` cards of the set (of a stopped run: the best it reached), best first.
    """

    threshold: float
    count: int
    complete: bool
    unenumerated_bound: float | None
    losses: np.ndarray
    coefficients: np.ndarray
    support_nodes: int
    lattice_nodes: int
    seconds: float
    stopped: str | None
    peak_open: int  # the most lattice boxes and waiting cards open at once (the memory it needed)
    unreported: tuple[np.ndarray, np.ndarray]  # kept cards ``report`` has not drained, best first


def enumerate_cards(
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    cons: Constraints,
    k: int,
    threshold: float,
    *,
    max_models: int = 1000,
    time_limit: float | None = None,
    node_limit: int | None = None,
    stop: Callable[[], str | None] | None = None,
    report: Callable[[Any], None] | None = None,
) -> RashomonCards:
    """Every card with loss <= ``threshold``, best first: the support tree and the lattice of each
    leaf in one best-first order, pruned only where a bound exceeds the threshold. ``report`` gets
    the compiled tree now and then (``rashomon_fresh()`` drains the cards kept since the last call)."""
    started = time.monotonic()
    b_range = intercept_range_within(X, y, sample_weight, cons, k, threshold)
    search = SupportSearch(X, y, sample_weight, cons, k).within_box(b_range)

    def feed(_: Any) -> None:  # report gets the tree, not its bound report: it drains the fresh cards
        if report is not None and search.tree is not None:
            report(search.tree)

    found = search.run(
        threshold=threshold, max_models=max_models, time_limit=time_limit, node_limit=node_limit, stop=stop, report=feed
    )
    tree = search.tree
    assert tree is not None
    open_bound = float(tree.unenumerated_bound)
    cutoff = threshold + 1e-9 * max(1.0, abs(threshold))
    complete = bool(tree.finished) or open_bound >= cutoff  # what is open holds no member
    unreported = tree.rashomon_fresh()
    losses, coefficients = tree.rashomon_kept()
    return RashomonCards(
        threshold,
        int(tree.rashomon_count),
        complete,
        None if complete else open_bound,
        losses,
        coefficients,
        found.nodes,
        int(tree.lattice_nodes),
        time.monotonic() - started,
        None if complete else (found.stopped or "nodes"),
        int(tree.rashomon_peak_open),
        unreported,
    )


def solve_exact(
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    cons: Constraints,
    k: int,
    *,
    starts: Sequence[np.ndarray] = (),
    time_limit: float | None = None,
    node_limit: int | None = None,
    stop: Callable[[], str | None] | None = None,
    report: Callable[[Any], None] | None = None,
    tolerance: float = 1e-6,
    fairness: FairnessTarget | None = None,
) -> ExactResult:
    """§1.3 by branch and bound: supports (the certificate's search, bounded by the box), then
    the lattice of each surviving support. Proven when the tree closes.

    With ``fairness`` only cards whose predictions meet it count (the starts are checked with
    ``fairness.within``, the lattice's cards by the kernel, as docs/maintainers/fasterrisk-fairness.md
    proves); when none does and the tree closes, the status is ``infeasible``."""
    started = time.monotonic()
    p = X.shape[1]
    b_range = intercept_range(X, y, sample_weight, cons, k)
    search = SupportSearch(X, y, sample_weight, cons, k, fairness).within_box(b_range)
    loss_fn = LogisticLoss(X, y, sample_weight)
    best_loss, best_v = math.inf, np.zeros(p + 1)
    for w in [np.zeros(p), *starts]:
        w = np.asarray(w, dtype=np.float64)
        if (
            w.shape != (p,)
            or np.count_nonzero(w) > k
            or np.any(w < cons.lower)
            or np.any(w > cons.upper)
            or any(w[j] for j in cons.exclude)
            or not all(w[j] for j in cons.include)
            or not _groups_ok(w, cons)
        ):
            continue
        b, loss = loss_fn.best_intercept(w, *b_range)
        if loss < best_loss and (
            fairness is None or fairness.meets(y, card_predictions(X, np.flatnonzero(w), w[w != 0], b))
        ):
            best_loss, best_v = loss, np.concatenate([[b], w])
    found = search.run(
        lattice=True,
        tolerance=tolerance * 1e-3,
        upper_bound=best_loss,
        time_limit=time_limit,
        node_limit=node_limit,
        stop=stop,
        report=report,
    )
    tree = search.tree
    assert tree is not None
    card_loss, card = tree.best_card
    if card is not None and card_loss < best_loss:
        best_loss, best_v = card_loss, card
    lower = min(found.lower_bound, best_loss)
    if not math.isfinite(best_loss):  # no card meets the fairness constraint (none found, or none at all)
        proven = found.complete and math.isinf(lower)
        return ExactResult(
            "infeasible" if proven else (found.stopped or "nodes"),
            math.inf,
            lower,
            None,
            None,
            found.nodes,
            tree.lattice_nodes,
            time.monotonic() - started,
            tree.fairness_pruned,
        )
    gap = relative_gap(best_loss, lower)
    closed = gap is not None and gap <= tolerance
    status = "optimal" if closed else (found.stopped or "nodes")
    return ExactResult(
        status,
        best_loss,
        lower,
        np.rint(best_v[1:]).astype(np.int64),
        int(round(best_v[0])),
        found.nodes,
        tree.lattice_nodes,
        time.monotonic() - started,
        tree.fairness_pruned,
    )


def _groups_ok(w: np.ndarray, cons: Constraints) -> bool:
    used = [int(cons.group_of[j]) for j in np.flatnonzero(w) if cons.group_of[j] >= 0]
    return len(used) == len(set(used))
