"""Perspective branch and bound for problem (9): the exact search that scales in n.

Outer approximation (``cutting_plane.py``) bounds H2 by tangent planes at binary points. Where
H2 bends a lot along single coordinates (``gamma * ||M_i||^2`` large: many rows, little
shrinkage) a tangent overstates what a new rule brings several times over, and the master needs
hundreds of cuts. Here every node is bounded by the perspective relaxation instead
(``relaxation.py``), which keeps that curvature exactly; this is the approach of L0BnB
(Hazimeh, Mazumder & Saab, 2022) for sparse ridge regression, with the stability row added.

At each threshold: the relaxation at the root bounds the optimum and fixes every rule whose own
bound exceeds the incumbent (over 90 % of them on the paper's instance sizes); the search then
runs best-first on the few dozen rules left, in Gram space, branching a rule in or out where the
relaxation is most fractional. Every node's bound is valid whenever the multiplier search stops,
so a node stops as soon as it can be pruned. The reported lower bound is the smallest bound of
any open node, so a search stopped at a limit reports an honest gap.
"""

from __future__ import annotations

import time

import numpy as np
from glasswork.contract.result import Status, relative_gap
from glasswork.cython_ext.moss import NodeSearch, local_search

from .cutting_plane import EpsilonSolver, Point, Progress, StopCheck
from .loss import Evaluation, H2Oracle, Oracle
from .relaxation import IN, OUT, Bound, PerspectiveRelaxation

NODE_EFFORT = 5  # golden-section steps on mu at a node: warm from the parent, a few suffice
CHECK_EVERY = 8  # nodes between the run's stop checks


class BranchAndBound(EpsilonSolver):
    """Best-first branch and bound over rule sets with perspective-relaxation bounds."""

    def __init__(
        self,
        oracle: Oracle,
        stab: np.ndarray,
        k: int,
        *,
        pi_scale: float = 1.0,
        tol: float = 1e-6,
        max_nodes: int = 10_000_000,
        stop: StopCheck | None = None,
        deadline: float | None = None,
        progress: Progress | None = None,
    ) -> None:
        gram = getattr(oracle, "gram", None)
        if gram is None:
            raise ValueError(
                "branch and bound needs the squared loss in Gram space (at most "
                f"{H2Oracle.GRAM_MAX} candidates); use search.policy: cutting_plane"
            )
        super().__init__(oracle, stab, k, pi_scale=pi_scale, tol=tol, stop=stop, deadline=deadline, progress=progress)
        self.max_nodes = int(max_nodes)  # total_iterations counts nodes, over every threshold
        self.root = PerspectiveRelaxation(gram, oracle.gamma, self.stab, self.k)
        self._root_bound: Bound | None = None  # the last unfixed root relaxation: the next warm start
        self.last_sub_size = self.stab.size  # rules left to the last search (for benchmarks)

    def _cutoff(self, upper: float) -> float:
        """A node is pruned once its bound is within the optimality tolerance of the incumbent."""
        return upper - self.tol * abs(upper)

    def solve(self, threshold: float, warm: tuple[int, ...] | None = None) -> Point:
        """Solve (9) at ``stab'z >= threshold``; raises ``InfeasibleEpsilon`` above eps_max."""
        t0 = time.perf_counter()
        best = self._start(threshold, warm)
        state = np.zeros(self.stab.size, dtype=np.int8)
        bound = self.root.solve(threshold, state, self._root_bound)
        self._root_bound = bound
        best = self._improve(best, bound, threshold)
        reduced = (bound.tau - bound.mu * self.stab) - 0.5 * self.oracle.gamma * bound.g * bound.g
        best = self._local_search(best, threshold, np.argsort(reduced, kind="stable")[: 2 * self.k + 10])
        for _ in range(4):  # fix what the root rules out, re-solve with those fixings
            out, into = self.root.fixings(bound, state, best.value)
            if not out.size and not into.size or bound.value >= self._cutoff(best.value):
                break
            state[out], state[into] = OUT, IN
            bound = self.root.solve(threshold, state, bound, target=self._cutoff(best.value))
        nodes = 0
        lower = min(bound.value, best.value)
        status: Status | None = None
        if bound.value >= self._cutoff(best.value):
            status = Status.OPTIMAL
        else:
            best, lower, status, nodes = self._search(threshold, state, bound, best)
        return Point(
            epsilon=threshold / self.pi_scale,
            support=best.support,
            h1=float(self.stab[list(best.support)].sum()) / self.pi_scale,
            h2=best.value,
            lower_bound=min(lower, best.value),
            status=status,
            iterations=nodes,
            seconds=time.perf_counter() - t0,
            weights=best.weights,
        )

    def _search(
        self, threshold: float, state: np.ndarray, root: Bound, best: Evaluation
    ) -> tuple[Evaluation, float, Status, int]:
        """Best-first search on the rules the root left free; returns (incumbent, bound, status, nodes).

        The node loop is compiled (``NodeSearch``): this drives it a few nodes at a time, for
        the run's stop checks and the progress events.
        """
        keep = np.flatnonzero(state != OUT)  # the sub-problem's rule i is rule keep[i]
        self.last_sub_size = keep.size
        G = np.ascontiguousarray(self.root.G[np.ix_(keep, keep)])
        search = NodeSearch(
            G,
            np.ascontiguousarray(self.root.b[keep]),
            self.root.yy,
            self.oracle.gamma,
            np.ascontiguousarray(self.stab[keep]),
            self.k,
            threshold,
            self.tol,
            np.ascontiguousarray(state[keep], dtype=np.int8),
            np.ascontiguousarray(root.w[keep]),
            np.ascontiguousarray(root.g[keep]),
            root.tau,
            root.mu,
            root.value,
            self.root.G,
            self.root.b,
            self.stab,
            keep.astype(np.intp),
            best.value,
            best.support,
            NODE_EFFORT,
        )
        last = time.monotonic()
        status: Status | None = None
        while True:
            stop = self._check()
            if stop is not None or search.nodes >= self.max_nodes:
                status = stop or Status.STOPPED_NODES
                break
            before = search.nodes
            done = search.run(min(CHECK_EVERY, self.max_nodes - search.nodes))
            self.total_iterations += search.nodes - before
            if done:
                break
            if self.progress is not None and time.monotonic() - last >= 0.05:
                last = time.monotonic()
                self.progress(
                    {
                        "epsilon": threshold / self.pi_scale,
                        "upper": search.best_value,
                        "lower": search.lower,
                        "iterations": search.nodes,
                        "open": search.open,
                    }
                )
        if search.improved:
            best = self.oracle(search.best_support)
        lower = min(search.lower, best.value)
        if status is None:
            gap = relative_gap(best.value, lower)
            closed = gap is not None and gap <= self.tol * (1 + 1e-9)
            status = Status.OPTIMAL if closed else Status.HEURISTIC
        return best, lower, status, int(search.nodes)

    def _improve(self, best: Evaluation, bound: Bound, threshold: float) -> Evaluation:
        """Round the relaxation to a rule set; keep it if it is feasible and better."""
        candidate = self._rounding(bound.z, bound.w, threshold)
        if candidate is not None:
            ev = self.oracle(candidate)
            if ev.value < best.value:
                return ev
        return best

    def _local_search(
        self, best: Evaluation, threshold: float, candidates: np.ndarray, budget: int = 3000
    ) -> Evaluation:
        """Swap one rule of the incumbent for one of ``candidates`` while that lowers H2 (compiled).

        A good incumbent early is what makes the relaxation's fixings bite, so this runs once
        per threshold on the candidates the relaxation favours; ``budget`` caps the evaluations.
        """
        if not best.support:
            return best
        gram = getattr(self.oracle, "gram", None)
        assert gram is not None  # __init__ refuses an oracle without one
        support, _ = local_search(
            gram.G,
            gram.b,
            gram.yy,
            self.oracle.gamma,
            self.stab,
            self.k,
            threshold,
            best.support,
            best.value,
            np.asarray(candidates, dtype=np.intp),
            budget,
        )
        return self.oracle(support) if support != best.support else best
