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

import heapq
import itertools
import time

import numpy as np
from glasswork.result import Status

from .cutting_plane import EpsilonSolver, Point, Progress, StopCheck
from .loss import Evaluation, Gram, H2Oracle
from .relaxation import FREE, IN, OUT, Bound, PerspectiveRelaxation

NODE_EFFORT = 5  # golden-section steps on mu at a node: warm from the parent, a few suffice


class BranchAndBound(EpsilonSolver):
    """Best-first branch and bound over rule sets with perspective-relaxation bounds."""

    def __init__(
        self,
        oracle: H2Oracle,
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
        if getattr(oracle, "gram", None) is None:
            raise ValueError("branch and bound needs the squared loss in Gram space (at most "
                             f"{H2Oracle.GRAM_MAX} candidates); use search.policy: cutting_plane")
        super().__init__(oracle, stab, k, pi_scale=pi_scale, tol=tol, stop=stop, deadline=deadline,
                         progress=progress)
        self.max_nodes = int(max_nodes)  # total_iterations counts nodes, over every threshold
        self.root = PerspectiveRelaxation(oracle.gram, oracle.gamma, self.stab, self.k)
        self._root_bound: Bound | None = None  # the last unfixed root relaxation: the next warm start
        self._keep = np.arange(self.stab.size)  # full rule number of each sub-problem rule
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
        best = self._improve(best, bound, threshold, np.arange(self.stab.size))
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

    def _search(self, threshold: float, state: np.ndarray, root: Bound,
                best: Evaluation) -> tuple[Evaluation, float, Status, int]:
        """Best-first search on the rules the root left free; returns (incumbent, bound, status, nodes)."""
        keep = np.flatnonzero(state != OUT)  # the sub-problem's rule i is rule keep[i]
        self._keep, self.last_sub_size = keep, keep.size
        G = np.ascontiguousarray(self.root.G[np.ix_(keep, keep)])
        sub = PerspectiveRelaxation(Gram(G, self.root.b[keep].copy(), self.root.yy), self.oracle.gamma,
                                    self.stab[keep], self.k)
        first = Bound(root.value, root.w[keep].copy(), root.g[keep].copy(), root.tau, root.mu, root.z[keep].copy())
        order = itertools.count()
        heap: list[tuple[float, int, np.ndarray, Bound]] = [(root.value, next(order), state[keep].copy(), first)]
        nodes = 0
        last = time.monotonic()
        floor = best.value  # the smallest bound of any node closed within the tolerance of the incumbent
        while heap and heap[0][0] < self._cutoff(best.value):
            stop = self._check() if nodes % 8 == 0 else None
            if stop is not None or nodes >= self.max_nodes:
                return best, min(heap[0][0], floor, best.value), stop or Status.STOPPED_NODES, nodes
            _, _, node_state, parent = heapq.heappop(heap)
            nodes += 1
            self.total_iterations += 1
            bound = sub.solve(threshold, node_state, parent, target=self._cutoff(best.value), effort=NODE_EFFORT)
            if bound.value < self._cutoff(best.value):
                best = self._improve(best, bound, threshold, keep)
                out, into = sub.fixings(bound, node_state, best.value)
                if out.size or into.size:
                    node_state = node_state.copy()
                    node_state[out], node_state[into] = OUT, IN
                    if not sub.feasible(threshold, node_state):
                        continue
                    bound = sub.solve(threshold, node_state, bound, target=self._cutoff(best.value),
                                      effort=NODE_EFFORT)
                    if bound.value < self._cutoff(best.value):
                        best = self._improve(best, bound, threshold, keep)
            j = -1
            if bound.value < self._cutoff(best.value):
                j, best = self._branching_rule(bound, node_state, threshold, best)
            if j < 0:  # pruned, solved, or a leaf (every rule fixed: the rules forced in are its one set)
                leaf = tuple(int(i) for i in keep[node_state == IN])
                if (node_state == FREE).any() or bound.value >= self._cutoff(best.value):
                    floor = min(floor, bound.value)
                elif leaf and self.feasible(leaf, threshold):
                    ev = self.oracle(leaf)
                    best = ev if ev.value < best.value else best
                    floor = min(floor, ev.value)
                continue
            for value in (IN, OUT):
                child = node_state.copy()
                child[j] = value
                if sub.feasible(threshold, child):
                    heapq.heappush(heap, (bound.value, next(order), child, bound))
            if self.progress is not None and time.monotonic() - last >= 0.05:
                last = time.monotonic()
                self.progress({"epsilon": threshold / self.pi_scale, "upper": best.value,
                               "lower": min(heap[0][0], floor, best.value) if heap else min(floor, best.value),
                               "iterations": nodes, "open": len(heap)})
        lower = min(heap[0][0], floor, best.value) if heap else min(floor, best.value)
        closed = best.value - lower <= self.tol * abs(best.value) * (1 + 1e-9)
        return best, lower, Status.OPTIMAL if closed else Status.HEURISTIC, nodes

    def _branching_rule(self, bound: Bound, state: np.ndarray, threshold: float,
                        best: Evaluation) -> tuple[int, Evaluation]:
        """The free rule to branch on (the most fractional one), or -1 once the node is solved;
        and the incumbent, improved by the node's rule set when its relaxation is integral.

        An integral relaxation solves its node only when its rule set meets the stability row
        (a Lagrangian relaxation may violate the row it prices) and its H2 meets the bound;
        otherwise a chosen rule, else the most stable free rule, is split.
        """
        free = state == FREE
        if not free.any():
            return -1, best
        frac = np.where(free, np.minimum(bound.z, 1.0 - bound.z), -1.0)
        j = int(np.argmax(frac))
        if frac[j] > 1e-6:
            return j, best
        support = tuple(int(self._keep[i]) for i in np.flatnonzero((state == IN) | (free & (bound.z > 0.5))))
        if support and self.feasible(support, threshold):
            ev = self.oracle(support)
            best = ev if ev.value < best.value else best
            if ev.value <= bound.value * (1 + self.tol) + 1e-12 * self.oracle.h0:
                return -1, best
        chosen = np.flatnonzero(free & (bound.z > 0.5))
        if chosen.size:
            return int(chosen[np.argmax(np.abs(bound.w[chosen]))]), best
        candidates = np.flatnonzero(free)
        return int(candidates[np.argmax(self.stab[self._keep[candidates]])]), best

    def _improve(self, best: Evaluation, bound: Bound, threshold: float, keep: np.ndarray) -> Evaluation:
        """Round the relaxation to a rule set; keep it if it is feasible and better."""
        z, w = np.zeros(self.stab.size), np.zeros(self.stab.size)
        z[keep], w[keep] = bound.z, bound.w
        for candidate in self._roundings(z, w, threshold):
            ev = self.oracle(candidate)
            if ev.value < best.value:
                best = ev
        return best
