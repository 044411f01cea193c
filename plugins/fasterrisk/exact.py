"""``search.policy: exact``: the best risk score of §1.3, proven, by a lattice cutting plane.

The problem: integer points ``w_j`` in ``[lb_j, ub_j]``, at most k non-zero, an integer
intercept, minimising the logistic loss ``L`` (a weighted sum over rows), multiplier 1. ``L`` is
convex, so every tangent ``L(v) + grad L(v) . (w - v)`` lies below it. The master problem

    min eta  s.t.  eta >= tangents so far,  lb_j z_j <= w_j <= ub_j z_j,  sum z <= k,
                   at most one z per group, include/exclude fixed, w and w0 integer, z binary

is a MILP on HiGHS whose dual bound is a lower bound on the true optimum (the tangents
under-estimate ``L``). Each round adds the tangent at the master's integer solution, whose true
loss is an upper bound; the loop ends when the two meet. It starts from tangents at FasterRisk's
cards (their points with the best integer intercept), takes their losses as the incumbent, and
``eta >= `` the support search's bound (``certify``), which holds for §1.3 cards too. The
intercept box comes from the data: for any points, the best intercept lies where neither class's
rows are all pushed past ``log(W+/W-)`` (see ``intercept_range``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glasswork.plugins.fasterrisk.engine import Constraints, _merge_rows


@dataclass
class ExactResult:
    """The best card found (integer points, integer intercept) and what is proven about it."""

    status: str  # "optimal", "time", "cancel", "iterations"
    objective: float
    lower_bound: float
    points: np.ndarray  # (p,) integers
    intercept: int
    iterations: int
    cuts: int
    seconds: float
    history: list[tuple[float, float, float]] = field(default_factory=list)  # (s, ub, lb)

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
        self.A = np.vstack([self.y, (self.X * self.y[:, None]).T])  # label-signed, row 0 intercept

    def value_grad(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        z = v @ self.A
        loss = float(self.s @ np.logaddexp(0.0, -z))
        grad = -(self.A @ (self.s / (1.0 + np.exp(np.clip(z, -700, 700)))))
        return loss, grad

    def box_fit(self, v: np.ndarray, cons: Constraints) -> np.ndarray:
        """The real-valued fit on ``v``'s support within the box (a point near the support's best
        integer card: the tangent there is tight where it matters)."""
        from glasswork.cython_ext import fasterrisk as kernels

        cols = np.array([0, *(np.flatnonzero(v[1:]) + 1)], dtype=np.int64)
        sub = np.ascontiguousarray(self.A[cols])
        w = np.ascontiguousarray(v[cols], dtype=np.float64)
        lo = np.concatenate([[-np.inf], cons.lower[cols[1:] - 1]]).astype(np.float64)
        hi = np.concatenate([[np.inf], cons.upper[cols[1:] - 1]]).astype(np.float64)
        kernels.finetune_newton(sub, np.ascontiguousarray(self.s), w, lo, hi, 0.0, 50, 1e-12)
        out = np.zeros_like(v, dtype=np.float64)
        out[cols] = w
        return out

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


class Master:
    """The master MILP on HiGHS: columns eta, w0, w_1..w_p, z_1..z_p. Writes nothing to stdout."""

    def __init__(self, cons: Constraints, k: int, b_range: tuple[int, int], eta_floor: float,
                 stop_flag: np.ndarray | None) -> None:
        import highspy

        p = cons.lower.size
        self.p = p
        h = highspy.Highs()
        h.silent()
        for name, value in (("mip_rel_gap", 1e-9), ("mip_abs_gap", 1e-9), ("threads", 1),
                            ("random_seed", 0), ("mip_feasibility_tolerance", 1e-9),
                            ("primal_feasibility_tolerance", 1e-9)):
            h.setOptionValue(name, value)
        inf = highspy.kHighsInf
        h.addVar(max(eta_floor, 0.0), inf)  # eta >= the certificate's bound (and L >= 0)
        h.changeColCost(0, 1.0)
        h.addVar(float(b_range[0]), float(b_range[1]))
        banned = set(cons.exclude)
        for j in range(p):
            lo, hi = (0.0, 0.0) if j in banned else (float(cons.lower[j]), float(cons.upper[j]))
            h.addVar(lo, hi)
        for j in range(p):
            forced = j in cons.include
            h.addVar(1.0 if forced else 0.0, 0.0 if j in banned else 1.0)
        ints = np.arange(1, 2 + 2 * p, dtype=np.int32)
        h.changeColsIntegrality(ints.size, ints, np.full(ints.size, highspy.HighsVarType.kInteger))
        for j in range(p):  # lb z <= w <= ub z
            wj, zj = 2 + j, 2 + p + j
            h.addRow(-inf, 0.0, 2, np.array([wj, zj], dtype=np.int32), np.array([1.0, -float(cons.upper[j])]))
            h.addRow(0.0, inf, 2, np.array([wj, zj], dtype=np.int32), np.array([1.0, -float(cons.lower[j])]))
        zs = np.arange(2 + p, 2 + 2 * p, dtype=np.int32)
        h.addRow(-inf, float(k), p, zs, np.ones(p))
        for g in sorted({int(g) for g in cons.group_of if g >= 0}):
            members = np.flatnonzero(np.asarray(cons.group_of) == g).astype(np.int32) + 2 + p
            h.addRow(-inf, 1.0, members.size, members, np.ones(members.size))
        self.h = h
        self.cuts = 0
        if stop_flag is not None:
            flag = stop_flag

            def interrupt(event: Any) -> None:
                if flag[0]:
                    event.interrupt()

            h.cbMipInterrupt.subscribe(interrupt)

    def add_cut(self, v: np.ndarray, loss: float, grad: np.ndarray) -> None:
        """eta >= loss + grad . (x - v) over x = (w0, w), i.e. eta - grad . x >= loss - grad . v."""
        import highspy

        idx = np.arange(0, 2 + self.p, dtype=np.int32)
        vals = np.concatenate([[1.0], -grad])
        self.h.addRow(float(loss - grad @ v), highspy.kHighsInf, idx.size, idx, vals)
        self.cuts += 1

    def set_incumbent(self, v: np.ndarray, loss: float) -> None:
        z = (np.abs(v[1:]) > 0.5).astype(float)
        val = np.concatenate([[loss], v, z])
        self.h.setSolution(int(val.size), np.arange(val.size, dtype=np.int32), val)

    def solve(self, time_limit: float) -> tuple[str, float, np.ndarray | None]:
        """Run HiGHS: (state, dual bound on eta, the (w0, w) of its best solution or None)."""
        import highspy

        h = self.h
        h.setOptionValue("time_limit", max(time_limit, 1e-3))
        h.run()
        status = h.getModelStatus()
        MS = highspy.HighsModelStatus
        info = h.getInfo()
        bound = float(info.mip_dual_bound)
        x = None
        if info.primal_solution_status == 2:
            x = np.rint(np.asarray(h.getSolution().col_value)[1: 2 + self.p])
        if status == MS.kInfeasible:
            return "infeasible", math.inf, None
        state = {MS.kOptimal: "optimal", MS.kTimeLimit: "time", MS.kInterrupt: "cancel"}.get(status, "other")
        return state, bound if math.isfinite(bound) else -math.inf, x


def solve_exact(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None, cons: Constraints,
                k: int, *, starts: Sequence[np.ndarray] = (), lower_bound: float = 0.0,
                time_limit: float | None = None, tolerance: float = 1e-6,
                max_iterations: int = 100000, stop_flag: np.ndarray | None = None,
                report: Callable[[float, float, int], None] | None = None) -> ExactResult:
    """The lattice cutting plane until the gap closes (relative ``tolerance``) or a limit hits.

    ``starts`` are integer point vectors (p,) to begin from, FasterRisk's cards;
    ``lower_bound`` a proven bound (the support search's).
    """
    started = time.monotonic()
    p = X.shape[1]
    loss_fn = LogisticLoss(X, y, sample_weight)
    b_lo, b_hi = intercept_range(X, y, sample_weight, cons, k)
    master = Master(cons, k, (b_lo, b_hi), lower_bound, stop_flag)

    best_v, best_loss = np.zeros(p + 1), math.inf
    first = [np.zeros(p)]
    for w in starts:
        w = np.asarray(w, dtype=np.float64)
        if w.shape == (p,) and np.count_nonzero(w) <= k and np.all(w >= cons.lower) and np.all(w <= cons.upper) \
                and not any(w[j] for j in cons.exclude) and all(w[j] for j in cons.include):
            first.append(w)
    for w in first:
        b, loss = loss_fn.best_intercept(w, b_lo, b_hi)
        v = np.concatenate([[b], w])
        master.add_cut(v, *loss_fn.value_grad(v))
        polished = loss_fn.box_fit(v, cons)
        master.add_cut(polished, *loss_fn.value_grad(polished))
        feasible = all(w[j] != 0 for j in cons.include) and _groups_ok(w, cons)
        if feasible and loss < best_loss:
            best_v, best_loss = v, loss
    lower = max(lower_bound, 0.0)
    history: list[tuple[float, float, float]] = []
    status, it = "iterations", 0
    for it in range(1, max_iterations + 1):
        elapsed = time.monotonic() - started
        if stop_flag is not None and stop_flag[0]:
            status = "cancel"
            break
        if time_limit is not None and elapsed >= time_limit:
            status = "time"
            break
        if best_loss - lower <= tolerance * max(abs(best_loss), 1e-10):
            status = "optimal"
            break
        if math.isfinite(best_loss):
            master.set_incumbent(best_v, best_loss)
        state, bound, x = master.solve(math.inf if time_limit is None else time_limit - elapsed)
        if state == "infeasible":  # no solution below eta's floor: the incumbent is optimal
            lower = best_loss
            status = "optimal"
            break
        lower = max(lower, min(bound, best_loss))
        if x is not None:
            loss, grad = loss_fn.value_grad(x)
            if loss < best_loss:
                best_v, best_loss = x, loss
            master.add_cut(x, loss, grad)
            polished = loss_fn.box_fit(x, cons)
            master.add_cut(polished, *loss_fn.value_grad(polished))
        history.append((time.monotonic() - started, best_loss, lower))
        if report is not None:
            report(best_loss, lower, master.cuts)
        if state in ("time", "cancel"):
            status = state
            break
        if x is None:
            status = state
            break
    else:
        it = max_iterations
    if best_loss - lower <= tolerance * max(abs(best_loss), 1e-10):
        status = "optimal"
    return ExactResult(status, best_loss, min(lower, best_loss), best_v[1:].astype(np.int64),
                       int(best_v[0]), it, master.cuts, time.monotonic() - started, history)


def _groups_ok(w: np.ndarray, cons: Constraints) -> bool:
    used = [int(cons.group_of[j]) for j in np.flatnonzero(w) if cons.group_of[j] >= 0]
    return len(used) == len(set(used))
