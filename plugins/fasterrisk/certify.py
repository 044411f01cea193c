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

The search itself is compiled (``riskcert.SupportTree``: nodes in flat C++ vectors, evaluated
without the GIL and without allocating); this module prepares its data, runs it in slices of
``SLICE_SECONDS`` so that the caller can report progress and stop it, and says what it proved.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass, field

import numpy as np
from glasswork.cython_ext import fasterrisk as kernels
from glasswork.cython_ext import riskcert
from glasswork.plugins.fasterrisk.engine import Constraints, merge_rows
from glasswork.plugins.fasterrisk.fairness import MAX_GROUPS, FairnessTarget

MAX_LOGIT = 1.0e4  # the bound covers every model whose |coefficient| on the logit scale is below this
# the root relaxation fits every allowed feature at once, in one uninterruptible compiled Newton
# solve whose cost grows with the square of their number: beyond this many the search is not run
MAX_FEATURES = 100
SLICE_SECONDS = 0.02  # the compiled search returns to Python this often (progress, stop, limits)
REPORT_SECONDS = 0.2  # how often ``report`` hears about the state


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

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None,
        cons: Constraints,
        k: int,
        fairness: FairnessTarget | None = None,
    ) -> None:
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if set(np.unique(y)) <= {0.0, 1.0}:
            y = 2.0 * y - 1.0
        n, p = X.shape
        s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.p, self.k, self.cons, self.fairness = p, k, cons, fairness
        bits = None if fairness is None else fairness.group_bits()
        rows, self.y, self.s = merge_rows(X, y, s, bits)
        self.A, _, _ = kernels.build_design(X, rows, self.y, self.s, False)
        lo = np.concatenate([[-np.inf], np.full(p, -np.inf)])
        design = kernels.Design(self.A, self.s, lo, -lo, 0.0)
        self.codes, self.nvals, _ = design.codes
        self.fair_scale = (1.0, 1.0)
        if fairness is not None and bits is not None:
            # the intercept's column has one x-value: its codes carry the row's group bits instead,
            # so the kernel never merges rows of different groups and reads each row's groups back
            if len(fairness.masks) > MAX_GROUPS or int(self.nvals[0]) != 1:
                raise ValueError(f"the fairness constraint takes 1 to {MAX_GROUPS} protected groups")
            self.codes = self.codes.copy()
            self.codes[0] = (self.codes[0] & 1) | (bits[rows] << 1).astype(np.uint8)
            self.nvals = np.array(self.nvals, dtype=np.intc)
            self.nvals[0] = 1 << len(fairness.masks)
            self.fair_scale = fairness.label_scale(y, s)
        self.signs = feature_signs(cons)
        self.scale = np.sqrt(np.maximum((self.A[1:] ** 2) @ self.s / self.s.sum(), 1e-300))
        self.nodes = 0
        # the coefficients the bound covers: any size up to MAX_LOGIT with the box's sign
        self.f_lo = np.where((self.signs == 0) | (self.signs == -1), -MAX_LOGIT, 0.0)
        self.f_hi = np.where((self.signs == 0) | (self.signs == 1), MAX_LOGIT, 0.0)
        self.b_box = (-MAX_LOGIT, MAX_LOGIT)
        self.tree: riskcert.SupportTree | None = None  # the compiled search of the last run

    def within_box(self, intercept: tuple[float, float]) -> SupportSearch:
        """Bound §1.3 instead: coefficients in the box itself and the intercept in ``intercept``."""
        self.f_lo = np.asarray(self.cons.lower, dtype=np.float64).copy()
        self.f_hi = np.asarray(self.cons.upper, dtype=np.float64).copy()
        self.b_box = (float(intercept[0]), float(intercept[1]))
        return self

    def _fair_arguments(self) -> dict[str, Any]:
        """The compiled search's fairness arguments (none without the constraint)."""
        fair = self.fairness
        if fair is None:
            return {}
        return {
            "fair_metric": fair.code,
            "fair_at_most": float(fair.at_most),
            "fair_groups": len(fair.masks),
            "fair_scale_negative": self.fair_scale[0],
            "fair_scale_positive": self.fair_scale[1],
        }

    def run(
        self,
        *,
        upper_bound: float = math.inf,
        time_limit: float | None = None,
        node_limit: int | None = None,
        stop: Callable[[], str | None] | None = None,
        report: Callable[[BoundReport], None] | None = None,
        tolerance: float = 1e-9,
        lattice: bool = False,
        threshold: float | None = None,
        max_models: int = 0,
    ) -> BoundReport:
        """Search until the tree is exhausted or a limit hits; the bound holds either way.

        ``upper_bound`` is the best known loss of a k-sparse model (it prunes); ``stop()``
        returns a reason to stop ("cancel", "time") or None; ``report`` gets the state now and
        then. With ``lattice`` (the exact policy, after ``within_box``) each leaf is solved over
        the integer lattice of its box and ``self.tree.best_card`` holds the best card found.
        With a ``threshold`` (the Rashomon set, ``exact.enumerate_cards``) every card with loss at
        most ``threshold`` is counted instead, the best ``max_models`` kept; ``upper_bound`` is
        then unused, and ``node_limit`` counts lattice boxes too.
        """
        started = time.monotonic()
        cons = self.cons
        include = np.zeros(self.p, dtype=np.uint8)
        include[[int(f) for f in cons.include]] = 1
        banned = {int(f) for f in cons.exclude}
        taken = {int(cons.group_of[f]) for f in cons.include if cons.group_of[f] >= 0}
        free = np.zeros(self.p, dtype=np.uint8)
        if int(include.sum()) < self.k:
            for j in range(self.p):
                if not include[j] and j not in banned and self.signs[j] != 2 and int(cons.group_of[j]) not in taken:
                    free[j] = 1
        tree = riskcert.SupportTree(
            self.A,
            self.s,
            self.codes,
            np.ascontiguousarray(self.nvals, dtype=np.intc),
            np.ascontiguousarray(self.f_lo, dtype=np.float64),
            np.ascontiguousarray(self.f_hi, dtype=np.float64),
            float(self.b_box[0]),
            float(self.b_box[1]),
            np.ascontiguousarray(self.scale, dtype=np.float64),
            np.ascontiguousarray(cons.group_of, dtype=np.intc),
            include.copy(),
            self.k,
            upper_bound=upper_bound,
            tolerance=tolerance,
            lattice=lattice or threshold is not None,
            rashomon=threshold is not None,
            threshold=math.inf if threshold is None else float(threshold),
            max_keep=int(max_models),
            **self._fair_arguments(),
        )
        self.tree = tree
        tree.start(include, free)
        flag = np.zeros(1, dtype=np.uint8)
        history: list[tuple[float, float]] = []
        stopped: str | None = None
        last_report = started
        while not tree.finished:
            reason = stop() if stop is not None else None
            elapsed = time.monotonic() - started
            if reason is None and time_limit is not None and elapsed >= time_limit:
                reason = "time"
            if reason is not None:
                stopped = reason
                break
            seconds = SLICE_SECONDS if time_limit is None else max(0.0, min(SLICE_SECONDS, time_limit - elapsed))
            if tree.run(seconds, flag, -1 if node_limit is None else int(node_limit)) == riskcert.NODES:
                stopped = "nodes"
                break
            now = time.monotonic()
            if report is not None and now - last_report >= REPORT_SECONDS:
                last_report = now
                history.append((now - started, tree.lower_bound))
                report(
                    BoundReport(
                        tree.lower_bound,
                        tree.upper_bound,
                        tree.best_support,
                        tree.nodes,
                        tree.open_nodes,
                        False,
                        now - started,
                        None,
                        history,
                    )
                )
        self.nodes = tree.nodes
        lb = max(0.0, tree.lower_bound)  # a logistic loss is never negative
        best_support = (
            tree.best_support
            if math.isfinite(tree.upper_bound) and tree.upper_bound < upper_bound
            else tuple(sorted(int(f) for f in cons.include))
        )
        history.append((time.monotonic() - started, lb))
        return BoundReport(
            lb,
            tree.upper_bound,
            best_support,
            tree.nodes,
            tree.open_nodes,
            tree.finished and stopped is None,
            time.monotonic() - started,
            stopped,
            history,
        )
