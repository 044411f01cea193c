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
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from glasswork.plugins.fasterrisk.certify import SupportSearch
from glasswork.plugins.fasterrisk.engine import Constraints, merge_rows
from glasswork.result import relative_gap


@dataclass
class ExactResult:
    """The best card found (integer points, integer intercept) and what is proven about it."""

    status: str  # "optimal", or why it stopped: "time", "nodes", "cancel"
    objective: float
    lower_bound: float
    points: np.ndarray  # (p,) integers
    intercept: int
    support_nodes: int
    lattice_nodes: int
    seconds: float

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
    xmin, xmax = X.min(axis=0), X.max(axis=0)
    low = np.minimum.reduce([cons.lower * xmin, cons.lower * xmax, cons.upper * xmin, cons.upper * xmax])
    high = np.maximum.reduce([cons.lower * xmin, cons.lower * xmax, cons.upper * xmin, cons.upper * xmax])
    smin = float(np.sort(np.minimum(low, 0.0))[:k].sum())
    smax = float(np.sort(np.maximum(high, 0.0))[::-1][:k].sum())
    shift = abs(math.log(pos / neg))
    return int(math.floor(-smax - shift)) - 1, int(math.ceil(-smin + shift)) + 1


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
) -> ExactResult:
    """§1.3 by branch and bound: supports (the certificate's search, bounded by the box), then
    the lattice of each surviving support. Proven when the tree closes."""
    started = time.monotonic()
    p = X.shape[1]
    b_range = intercept_range(X, y, sample_weight, cons, k)
    search = SupportSearch(X, y, sample_weight, cons, k).within_box(b_range)
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
        if loss < best_loss:
            best_loss, best_v = loss, np.concatenate([[b], w])
    found = search.run(
        upper_bound=best_loss,
        time_limit=time_limit,
        node_limit=node_limit,
        stop=stop,
        report=report,
        tolerance=tolerance * 1e-3,
        lattice=True,
    )
    tree = search.tree
    assert tree is not None
    card_loss, card = tree.best_card
    if card is not None and card_loss < best_loss:
        best_loss, best_v = card_loss, card
    lower = min(found.lower_bound, best_loss)
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
    )


def _groups_ok(w: np.ndarray, cons: Constraints) -> bool:
    used = [int(cons.group_of[j]) for j in np.flatnonzero(w) if cons.group_of[j] >= 0]
    return len(used) == len(set(used))
