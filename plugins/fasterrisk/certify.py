"""A proven lower bound for every FasterRisk card: branch and bound over supports.

A card with points ``w``, intercept ``w0`` and multiplier ``m`` is the real-valued logistic
model ``(w / m, w0 / m)``: at most k features, each with the sign its box allows. Its loss (the
card's loss, a weighted sum over rows) is therefore never below

    L*_k = min { L(b) : b k-sparse, signs from the box, groups, include/exclude }.

``SupportSearch`` bounds ``L*_k`` from below by a best-first branch and bound over supports. A
node forces some features in and leaves others free; its relaxation drops the cardinality of
the free ones, a convex fit over all of them, and its bound is the Fenchel dual value of
``glasswork.cython_ext.riskcert.dual_bound`` at the fit's dual point. That value bounds the
loss of every model of the node whose coefficients (on the logit scale) are below
``MAX_LOGIT`` in size, whatever the fit reached: a search stopped at any time still reports a
valid bound, the smallest over the open nodes. A node whose bound reaches the best known
k-sparse loss (FasterRisk's cards and continuous models, the leaves' fits) is pruned.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from glasswork.cython_ext import fasterrisk as kernels
from glasswork.cython_ext import riskcert
from glasswork.plugins.fasterrisk.engine import Constraints, _merge_rows

MAX_LOGIT = 1.0e4  # the bound covers every model whose |coefficient| on the logit scale is below this
# the root relaxation fits every allowed feature at once, in one uninterruptible compiled Newton
# solve whose cost grows with the square of their number: beyond this many the search is not run
MAX_FEATURES = 100


@dataclass
class BoundReport:
    """What the search proved: ``lower_bound <= L*_k <= upper_bound``."""

    lower_bound: float
    upper_bound: float
    best_support: tuple[int, ...]
    nodes: int
    open_nodes: int
    complete: bool  # the tree was exhausted (lower bound = best k-sparse loss up to tolerance)
    seconds: float
    stopped: str | None = None  # why it stopped early: "time", "nodes", "cancel"
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, lower bound)


@dataclass(order=True)
class _Node:
    bound: float
    depth_key: int  # deeper first among equal bounds
    order: int
    include: tuple[int, ...] = field(compare=False)
    free: tuple[int, ...] = field(compare=False)
    w: dict[int, float] = field(compare=False)  # warm start per feature, -1 the intercept


def feature_signs(cons: Constraints) -> np.ndarray:
    """+1 where the box forces points >= 0, -1 where <= 0, 0 free, 2 where it forces 0."""
    lo, hi = np.asarray(cons.lower), np.asarray(cons.upper)
    signs = np.zeros(lo.size, dtype=np.int8)
    signs[(lo >= 0) & (hi > 0)] = 1
    signs[(hi <= 0) & (lo < 0)] = -1
    signs[(lo >= 0) & (hi <= 0)] = 2
    return signs


class SupportSearch:
    """Best-first branch and bound for the k-sparse sign-constrained logistic loss."""

    def __init__(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None,
                 cons: Constraints, k: int) -> None:
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if set(np.unique(y)) <= {0.0, 1.0}:
            y = 2.0 * y - 1.0
        n, p = X.shape
        s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.p, self.k, self.cons = p, k, cons
        rows, self.y, self.s = _merge_rows(X, y, s)
        self.A, _, _ = kernels.build_design(X, rows, self.y, self.s, False)
        lo = np.concatenate([[-np.inf], np.full(p, -np.inf)])
        design = kernels.Design(self.A, self.s, lo, -lo, 0.0)
        self.codes, self.nvals, _ = design.codes
        self.signs = feature_signs(cons)
        self.scale = np.sqrt(np.maximum((self.A[1:] ** 2) @ self.s / self.s.sum(), 1e-300))
        self.nodes = 0
        # the coefficients the bound covers: any size up to MAX_LOGIT with the box's sign
        self.f_lo = np.where((self.signs == 0) | (self.signs == -1), -MAX_LOGIT, 0.0)
        self.f_hi = np.where((self.signs == 0) | (self.signs == 1), MAX_LOGIT, 0.0)
        self.b_box = (-MAX_LOGIT, MAX_LOGIT)
        self.leaf: Callable[[tuple[int, ...]], tuple[float, float]] | None = None

    def within_box(self, intercept: tuple[float, float]) -> SupportSearch:
        """Bound §1.3 instead: coefficients in the box itself and the intercept in ``intercept``."""
        self.f_lo = np.asarray(self.cons.lower, dtype=np.float64).copy()
        self.f_hi = np.asarray(self.cons.upper, dtype=np.float64).copy()
        self.b_box = (float(intercept[0]), float(intercept[1]))
        return self

    # -- one node ------------------------------------------------------------------------------

    def _rows(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grouped = kernels.compress_rows(self.codes, cols, self.nvals, self.s)
        if grouped is None:
            return np.arange(self.s.size), self.s
        return grouped

    def evaluate(self, include: Sequence[int], free: Sequence[int],
                 warm: dict[int, float] | None = None) -> tuple[float, float, dict[int, float]]:
        """Fit the node's relaxation and bound it: ``(bound, fitted loss, coefficients)``."""
        feats = [*include, *free]
        cols = np.array([0, *(f + 1 for f in feats)], dtype=np.int64)
        rows, weights = self._rows(cols)
        sub = np.ascontiguousarray(self.A[np.ix_(cols, rows)])
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        warm = warm or {}
        w = np.array([warm.get(-1, 0.0), *(warm.get(f, 0.0) for f in feats)])
        idx = np.asarray(feats, dtype=np.int64)
        lo = np.concatenate([[self.b_box[0]], self.f_lo[idx]])
        hi = np.concatenate([[self.b_box[1]], self.f_hi[idx]])
        w = np.clip(w, lo, hi)
        loss = float(kernels.finetune_newton(sub, weights, w, lo, hi, 0.0, 100, 1e-13))
        z = w @ sub
        role = np.array([0, *([0] * len(include)), *([1] * len(free))], dtype=np.int8)
        active = ((w > lo) & (w < hi)).astype(np.uint8)
        bound, _, _ = riskcert.dual_bound(sub, weights, np.ascontiguousarray(z), lo, hi, role, active,
                                          self.k - len(include))
        self.nodes += 1
        coefs = {-1: float(w[0]), **{f: float(v) for f, v in zip(feats, w[1:])}}
        return min(float(bound), loss), loss, coefs

    # -- the tree ------------------------------------------------------------------------------

    def _is_leaf(self, include: Sequence[int], free: Sequence[int]) -> bool:
        if len(include) + len(free) > self.k:
            return False
        groups = [self.cons.group_of[f] for f in free if self.cons.group_of[f] >= 0]
        return len(groups) == len(set(groups))

    def _join(self, include: tuple[int, ...], free: tuple[int, ...], j: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The child that forces ``j`` in: its group mates leave, and a full support closes."""
        g = self.cons.group_of[j]
        inc = tuple(sorted((*include, j)))
        rest = () if len(inc) >= self.k else tuple(
            f for f in free if f != j and (g < 0 or self.cons.group_of[f] != g))
        return inc, rest

    def run(self, *, upper_bound: float = math.inf, time_limit: float | None = None,
            node_limit: int | None = None, stop: Callable[[], str | None] | None = None,
            report: Callable[[BoundReport], None] | None = None, tolerance: float = 1e-9) -> BoundReport:
        """Search until the tree is exhausted or a limit hits; the bound holds either way.

        ``upper_bound`` is the best known loss of a k-sparse model (it prunes); ``stop()``
        returns a reason to stop ("cancel", "time") or None; ``report`` gets the state now and then.
        """
        started = time.monotonic()
        cons = self.cons
        include = tuple(sorted(int(f) for f in cons.include))
        banned = set(int(f) for f in cons.exclude)
        free = tuple(j for j in range(self.p)
                     if j not in include and j not in banned and self.signs[j] != 2
                     and (cons.group_of[j] < 0 or cons.group_of[j] not in
                          {cons.group_of[i] for i in include}))
        if len(include) >= self.k:
            free = ()
        best_ub, best_support = upper_bound, tuple(include)
        floor = math.inf  # smallest bound of the leaves already closed
        heap: list[_Node] = []
        counter = itertools.count()
        history: list[tuple[float, float]] = []
        stopped: str | None = None
        last_report = started

        def cutoff() -> float:
            """Nodes bounded at or above this cannot hold a better model."""
            return best_ub - tolerance * max(1.0, abs(best_ub)) if math.isfinite(best_ub) else math.inf

        def lower() -> float:
            return min(best_ub, floor, heap[0].bound if heap else math.inf)

        def push(inc: tuple[int, ...], fr: tuple[int, ...], warm: dict[int, float], bound: float | None) -> None:
            nonlocal best_ub, best_support, floor
            leaf = self._is_leaf(inc, fr)
            if leaf and self.leaf is not None:  # e.g. the best integer card on this support
                low, loss = self.leaf(tuple(sorted((*inc, *fr))))
                floor = min(floor, low)
                if loss < best_ub:
                    best_ub, best_support = loss, tuple(sorted((*inc, *fr)))
                return
            if bound is None:
                bound, loss, warm = self.evaluate(inc, fr, warm)
                if leaf:
                    floor = min(floor, bound)
                    if loss < best_ub:
                        best_ub, best_support = loss, tuple(sorted((*inc, *fr)))
                    return
            if bound < cutoff():
                heapq.heappush(heap, _Node(bound, -len(inc), next(counter), inc, fr, warm))

        push(include, free, {}, None)
        while heap:
            reason = stop() if stop is not None else None
            if reason is None and time_limit is not None and time.monotonic() - started >= time_limit:
                reason = "time"
            if reason is None and node_limit is not None and self.nodes >= node_limit:
                reason = "nodes"
            if reason is not None:
                stopped = reason
                break
            node = heapq.heappop(heap)
            if node.bound >= cutoff():
                continue
            # branch on the free feature carrying the most weight in the relaxation
            j = max(node.free, key=lambda f: (abs(node.w.get(f, 0.0)) * self.scale[f], -f))
            inc, fr = self._join(node.include, node.free, j)
            out = tuple(f for f in node.free if f != j)
            same = fr == out  # forcing j in left the relaxation unchanged: the bound carries over
            push(inc, fr, node.w, node.bound if same and not self._is_leaf(inc, fr) else None)
            warm = dict(node.w)
            warm.pop(j, None)
            push(node.include, out, warm, None)
            now = time.monotonic()
            if report is not None and now - last_report >= 0.2:
                last_report = now
                history.append((now - started, lower()))
                report(BoundReport(lower(), best_ub, best_support, self.nodes, len(heap), False,
                                   now - started, None, history))
        lb = max(0.0, lower())  # a logistic loss is never negative
        history.append((time.monotonic() - started, lb))
        return BoundReport(lb, best_ub, best_support, self.nodes, len(heap), not heap and stopped is None,
                           time.monotonic() - started, stopped, history)

