"""``search.policy: exact``: the best risk score of §1.3, proven, by branch and bound.

The problem: integer points ``w_j`` in ``[lb_j, ub_j]``, at most k non-zero, an integer
intercept, minimising the logistic loss (a weighted sum over rows), multiplier 1. Two nested
searches share one kind of bound, the Fenchel dual value of ``cython_ext/riskcert.pyx`` at a
box-constrained real fit (valid however far the fit got):

1. over supports, ``certify.SupportSearch`` bounded by the box itself (the convex hull of the
   k-sparse box is a real restriction here, unlike for multiplier cards), pruning every support
   whose relaxation cannot beat the best card known;
2. on each surviving support, ``LatticeLeaf``: branch and bound over the integer box of the
   intercept and points (split the most fractional coordinate), with rounded fits as cards.

It starts from FasterRisk's cards (their points with the best integer intercept). The
intercept box comes from the data (``intercept_range``): for any points, the best intercept lies
where neither class's rows are all pushed past ``log(W+/W-)``. The status is ``optimal`` only
when both trees are closed or pruned; stopped early, the smallest open bound is reported.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from glasswork.cython_ext import fasterrisk as kernels
from glasswork.cython_ext import riskcert
from glasswork.plugins.fasterrisk.certify import SupportSearch
from glasswork.plugins.fasterrisk.engine import Constraints, _merge_rows


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
        return max(0.0, self.objective - self.lower_bound) / max(abs(self.objective), 1e-10)


class LogisticLoss:
    """``L(w0, w)`` and its gradient on merged rows (identical rows summed)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, s: np.ndarray | None) -> None:
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if set(np.unique(y)) <= {0.0, 1.0}:
            y = 2.0 * y - 1.0
        s = np.ones(len(y)) if s is None else np.asarray(s, dtype=np.float64)
        rows, self.y, self.s = _merge_rows(X, y, s)
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


class LatticeLeaf:
    """The best integer card on one support: branch and bound over the box lattice.

    Each node is a box of integer bounds on (intercept, points); its bound is the Fenchel dual
    value (``riskcert.dual_bound``) at the box-constrained real fit, valid however far the fit
    got. A fit that lands on integers is a card; otherwise the most fractional coordinate is split
    into ``<= floor`` and ``>= ceil``. The rows are merged on the support's columns first (for
    5 binary features at most 64 distinct rows), so a node costs microseconds.
    """

    def __init__(self, search: SupportSearch, b_range: tuple[int, int]) -> None:
        self.search = search  # its merged rows and design are shared
        self.b_range = b_range
        self.nodes = 0
        self.best: tuple[float, np.ndarray, tuple[int, ...]] = (math.inf, np.zeros(0), ())

    def solve(self, support: tuple[int, ...], cutoff: float, node_limit: int = 200000,
              stop: Callable[[], bool] | None = None) -> tuple[float, float]:
        """``(proven lower bound, best loss found)`` on ``support``; the best card is kept in
        ``self.best`` when it beats ``cutoff``. ``stop()`` (polled every 64 nodes) ends it early;
        the bound returned then covers the open nodes."""
        S = self.search
        cols = np.array([0, *(f + 1 for f in support)], dtype=np.int64)
        rows, weights = S._rows(cols)
        sub = np.ascontiguousarray(S.A[np.ix_(cols, rows)])
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        q = cols.size
        lo0 = np.array([self.b_range[0], *(S.cons.lower[f] for f in support)], dtype=np.float64)
        hi0 = np.array([self.b_range[1], *(S.cons.upper[f] for f in support)], dtype=np.float64)
        role = np.zeros(q, dtype=np.int8)
        forced = [t for t, f in enumerate(support) if f in S.cons.include]
        best_loss, best_v = math.inf, None
        floor = math.inf
        heap: list[tuple[float, int, np.ndarray, np.ndarray, np.ndarray]] = []
        order = 0

        def visit(lo: np.ndarray, hi: np.ndarray, warm: np.ndarray) -> None:
            nonlocal best_loss, best_v, order, floor
            self.nodes += 1
            w = np.clip(warm, lo, hi)
            loss = float(kernels.finetune_newton(sub, weights, w, lo, hi, 0.0, 100, 1e-13))
            z = np.ascontiguousarray(w @ sub)
            active = ((w > lo) & (w < hi)).astype(np.uint8)
            bound = min(float(riskcert.dual_bound(sub, weights, z, lo, hi, role, active, 0)[0]), loss)
            limit = min(best_loss, cutoff)
            if bound >= limit - 1e-9 * max(1.0, abs(limit)):
                floor = min(floor, bound)  # pruned: nothing here beats what is known
                return
            r = np.rint(w)
            rloss = float(weights @ np.logaddexp(0.0, -(r @ sub)))
            if rloss < best_loss and all(r[1 + t] != 0 for t in forced):
                best_loss, best_v = rloss, r  # the rounded fit is a card (an integer box holds it)
            frac = np.abs(w - r)
            if frac.max() <= 1e-7:
                floor = min(floor, bound)
                return
            order += 1
            heapq.heappush(heap, (bound, order, lo, hi, w))

        visit(lo0, hi0, np.zeros(q))
        count = 0
        while heap and count < node_limit:
            count += 1
            if stop is not None and count % 64 == 0 and stop():
                break
            bound, _, lo, hi, w = heapq.heappop(heap)
            if bound >= min(best_loss, cutoff) - 1e-9 * max(1.0, abs(min(best_loss, cutoff))):
                floor = min(floor, bound)
                continue
            j = int(np.argmax(np.abs(w - np.rint(w)) * (hi > lo)))
            down_hi = hi.copy()
            down_hi[j] = math.floor(w[j])
            up_lo = lo.copy()
            up_lo[j] = math.ceil(w[j])
            visit(lo, down_hi, w)
            visit(up_lo, hi, w)
        lower = min([floor, best_loss, *(node[0] for node in heap)])
        if best_v is not None and best_loss < self.best[0]:
            self.best = (best_loss, best_v, support)
        return lower, best_loss


def intercept_range(X: np.ndarray, y: np.ndarray, s: np.ndarray | None, cons: Constraints,
                    k: int) -> tuple[int, int]:
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


def solve_exact(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None, cons: Constraints,
                  k: int, *, starts: Sequence[np.ndarray] = (), time_limit: float | None = None,
                  node_limit: int | None = None, stop: Callable[[], str | None] | None = None,
                  report: Callable[[Any], None] | None = None, tolerance: float = 1e-6) -> ExactResult:
    """§1.3 by branch and bound: supports (the certificate's search, bounded by the box), then
    the lattice of each surviving support (``LatticeLeaf``). Proven when the tree closes."""
    started = time.monotonic()
    p = X.shape[1]
    b_range = intercept_range(X, y, sample_weight, cons, k)
    search = SupportSearch(X, y, sample_weight, cons, k).within_box(b_range)
    leaf = LatticeLeaf(search, b_range)
    loss_fn = LogisticLoss(X, y, sample_weight)
    best_loss, best_v = math.inf, np.zeros(p + 1)
    for w in [np.zeros(p), *starts]:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (p,) or np.count_nonzero(w) > k or np.any(w < cons.lower) or np.any(w > cons.upper) \
                or any(w[j] for j in cons.exclude) or not all(w[j] for j in cons.include) \
                or not _groups_ok(w, cons):
            continue
        b, loss = loss_fn.best_intercept(w, *b_range)
        if loss < best_loss:
            best_loss, best_v = loss, np.concatenate([[b], w])
    cutoff = [best_loss]

    deadline = None if time_limit is None else started + time_limit

    def halt() -> bool:
        return (stop is not None and stop() is not None) or (deadline is not None and time.monotonic() >= deadline)

    def on_leaf(support: tuple[int, ...]) -> tuple[float, float]:
        low, loss = leaf.solve(support, cutoff[0], stop=halt)
        cutoff[0] = min(cutoff[0], loss)
        return low, loss

    search.leaf = on_leaf
    found = search.run(upper_bound=best_loss, time_limit=time_limit, node_limit=node_limit, stop=stop,
                       report=report, tolerance=tolerance * 1e-3)
    if leaf.best[0] < best_loss:
        loss, v, support = leaf.best
        best_loss = loss
        best_v = np.zeros(p + 1)
        best_v[0] = v[0]
        best_v[1 + np.asarray(support, dtype=np.int64)] = v[1:]
    lower = min(found.lower_bound, best_loss)
    closed = best_loss - lower <= tolerance * max(abs(best_loss), 1e-10)
    status = "optimal" if closed else (found.stopped or "nodes")
    return ExactResult(status, best_loss, lower, np.rint(best_v[1:]).astype(np.int64), int(round(best_v[0])),
                       found.nodes, leaf.nodes, time.monotonic() - started)




def _groups_ok(w: np.ndarray, cons: Constraints) -> bool:
    used = [int(cons.group_of[j]) for j in np.flatnonzero(w) if cons.group_of[j] >= 0]
    return len(used) == len(set(used))
