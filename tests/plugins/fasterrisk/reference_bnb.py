"""Test-only reference: the branch and bounds as they were written in Python before they were
compiled (``cython_ext/riskcert.pyx``'s ``SupportTree``). The compiled search must find the same
bounds and optima; nothing in the product imports this module.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from glasswork.cython_ext import fasterrisk as kernels
from glasswork.cython_ext import riskcert
from glasswork.plugins.fasterrisk.certify import BoundReport, SupportSearch
from glasswork.plugins.fasterrisk.engine import Constraints
from glasswork.plugins.fasterrisk.exact import ExactResult, LogisticLoss, _groups_ok, intercept_range


@dataclass(order=True)
class _Node:
    bound: float
    depth_key: int  # deeper first among equal bounds
    order: int
    include: tuple[int, ...] = field(compare=False)
    free: tuple[int, ...] = field(compare=False)
    w: dict[int, float] = field(compare=False)  # warm start per feature, -1 the intercept


class PythonSupportSearch(SupportSearch):
    """The support search with one Python object per node (the pre-compiled version)."""

    leaf: Callable[[tuple[int, ...]], tuple[float, float]] | None = None

    def _rows(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grouped = kernels.compress_rows(self.codes, cols, self.nvals, self.s)
        if grouped is None:
            return np.arange(self.s.size), self.s
        return grouped

    def evaluate(
        self, include: Sequence[int], free: Sequence[int], warm: dict[int, float] | None = None
    ) -> tuple[float, float, dict[int, float]]:
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
        bound, _, _ = riskcert.dual_bound(
            sub, weights, np.ascontiguousarray(z), lo, hi, role, active, self.k - len(include)
        )
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
        rest = () if len(inc) >= self.k else tuple(f for f in free if f != j and (g < 0 or self.cons.group_of[f] != g))
        return inc, rest

    def run(
        self,
        *,
        upper_bound: float = math.inf,
        time_limit: float | None = None,
        node_limit: int | None = None,
        stop: Callable[[], str | None] | None = None,
        report: Callable[[BoundReport], None] | None = None,
        tolerance: float = 1e-9,
    ) -> BoundReport:
        """Search until the tree is exhausted or a limit hits; the bound holds either way.

        ``upper_bound`` is the best known loss of a k-sparse model (it prunes); ``stop()``
        returns a reason to stop ("cancel", "time") or None; ``report`` gets the state now and then.
        """
        started = time.monotonic()
        cons = self.cons
        include = tuple(sorted(int(f) for f in cons.include))
        banned = set(int(f) for f in cons.exclude)
        free = tuple(
            j
            for j in range(self.p)
            if j not in include
            and j not in banned
            and self.signs[j] != 2
            and (cons.group_of[j] < 0 or cons.group_of[j] not in {cons.group_of[i] for i in include})
        )
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
                report(
                    BoundReport(
                        lower(), best_ub, best_support, self.nodes, len(heap), False, now - started, None, history
                    )
                )
        lb = max(0.0, lower())  # a logistic loss is never negative
        history.append((time.monotonic() - started, lb))
        return BoundReport(
            lb,
            best_ub,
            best_support,
            self.nodes,
            len(heap),
            not heap and stopped is None,
            time.monotonic() - started,
            stopped,
            history,
        )


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

    def solve(
        self, support: tuple[int, ...], cutoff: float, node_limit: int = 200000, stop: Callable[[], bool] | None = None
    ) -> tuple[float, float]:
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


def python_solve_exact(
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
    the lattice of each surviving support (``LatticeLeaf``). Proven when the tree closes."""
    started = time.monotonic()
    p = X.shape[1]
    b_range = intercept_range(X, y, sample_weight, cons, k)
    search = PythonSupportSearch(X, y, sample_weight, cons, k).within_box(b_range)
    leaf = LatticeLeaf(search, b_range)
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
    cutoff = [best_loss]

    deadline = None if time_limit is None else started + time_limit

    def halt() -> bool:
        return (stop is not None and stop() is not None) or (deadline is not None and time.monotonic() >= deadline)

    def on_leaf(support: tuple[int, ...]) -> tuple[float, float]:
        low, loss = leaf.solve(support, cutoff[0], stop=halt)
        cutoff[0] = min(cutoff[0], loss)
        return low, loss

    search.leaf = on_leaf
    found = search.run(
        upper_bound=best_loss,
        time_limit=time_limit,
        node_limit=node_limit,
        stop=stop,
        report=report,
        tolerance=tolerance * 1e-3,
    )
    if leaf.best[0] < best_loss:
        loss, v, support = leaf.best
        best_loss = loss
        best_v = np.zeros(p + 1)
        best_v[0] = v[0]
        best_v[1 + np.asarray(support, dtype=np.int64)] = v[1:]
    lower = min(found.lower_bound, best_loss)
    closed = best_loss - lower <= tolerance * max(abs(best_loss), 1e-10)
    status = "optimal" if closed else (found.stopped or "nodes")
    return ExactResult(
        status,
        best_loss,
        lower,
        np.rint(best_v[1:]).astype(np.int64),
        int(round(best_v[0])),
        found.nodes,
        leaf.nodes,
        time.monotonic() - started,
    )
