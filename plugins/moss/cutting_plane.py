"""Algorithm 1 (outer approximation) with a persistent HiGHS master, and the EPM sweep (spec §3-4).

The master ``min nu s.t. stab'z >= eps, 1'z <= k, nu >= cuts`` lives in one ``highspy.Highs``
object for the whole sweep: a new epsilon changes one row bound, a new cut is one added row, and
the incumbent is handed back as a MIP start. Every cut is a global under-estimator of the convex
H2, so cuts stay valid for every epsilon and in any order (spec §4.2). The master objective is
scaled by ``1 / H2(0)`` so its values lie in [0, 1] whatever the scale of y.

The lower bound of an epsilon is the master's proven dual bound (valid even when the master is
interrupted); a point is ``optimal`` only once ``UB - LB <= tol * UB``.

The master, the EPM loop and the shared ``EpsilonSolver`` base (which branch and bound extends)
stay in one module of about 500 lines: they are one algorithm whose parts share the master's
state, and the base's stop and deadline checks serve both policies.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from glasswork.contract.result import Status, relative_gap
from glasswork.cython_ext.moss import rounding

from .loss import Evaluation, Oracle
from .relaxation import Bound, PerspectiveRelaxation

StopCheck = Callable[[int], "Status | None"]
Progress = Callable[[dict[str, Any]], None]
Admissible = Callable[[tuple[int, ...]], bool]
"""Whether a rule set may be returned (a side constraint on its predictions, ``fairness.py``)."""

_TINY = 1e-12  # cut coefficients below this (in scaled units) are dropped, the cut loosened


_silence_lock = threading.Lock()
_silence_depth = 0
_saved_stdout = -1


@contextmanager
def _stdout_silenced() -> Iterator[None]:
    """Point file descriptor 1 at /dev/null while native code runs that may print on it.

    ``glasswork run --json`` writes its document to stdout, so C-level chatter there corrupts
    it; Python's ``sys.stdout`` cannot catch a ``printf``. The window is kept to the model's
    construction: other threads' writes to fd 1 in it are lost too, which is harmless for the
    terminal UI (Textual draws on stderr and captures Python's stdout). Nested and concurrent
    uses share one redirection (counted), so the last to leave restores the real stdout.
    """
    global _silence_depth, _saved_stdout
    with _silence_lock:
        if _silence_depth == 0:
            sys.stdout.flush()
            _saved_stdout = os.dup(1)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        _silence_depth += 1
    try:
        yield
    finally:
        with _silence_lock:
            _silence_depth -= 1
            if _silence_depth == 0:
                os.dup2(_saved_stdout, 1)
                os.close(_saved_stdout)
                _saved_stdout = -1


class InfeasibleEpsilon(ValueError):
    """No rule set of at most k rules reaches the requested stability."""


@dataclass
class Point:
    """One solved epsilon: the best rule set found, its bounds and how the search went."""

    epsilon: float
    support: tuple[int, ...]
    h1: float
    h2: float
    lower_bound: float
    status: Status
    iterations: int = 0
    cuts_added: int = 0
    seconds: float = 0.0
    master_seconds: float = 0.0
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    found: bool = True
    """False when no admissible rule set was found: ``support`` is empty and ``h2`` infinite;
    with status ``optimal`` that is a proof that none exists, otherwise the search stopped first."""
    excluded: int = 0  # rule sets the side constraint excluded at this point

    @property
    def gap(self) -> float:
        gap = relative_gap(self.h2, self.lower_bound)
        return math.inf if gap is None else gap


class Master:
    """The persistent master MILP: column 0 is nu, columns 1..m are z."""

    def __init__(
        self,
        stab: np.ndarray,
        k: int,
        scale: float,
        *,
        mip_rel_gap: float = 1e-7,
        threads: int = 1,
        stop_flag: np.ndarray | None = None,
    ) -> None:
        import highspy

        self.m = int(stab.size)
        self.scale = float(scale)
        with _stdout_silenced():  # highspy >= 1.16 prints a banner on fd 1 when the first model is made
            h = highspy.Highs()
        h.silent()  # output_flag off before any solve: HiGHS's solves print nothing after this
        for name, value in (
            ("mip_rel_gap", mip_rel_gap),
            ("mip_abs_gap", 0.0),
            ("small_matrix_value", _TINY),
            ("primal_feasibility_tolerance", 1e-9),
            ("mip_feasibility_tolerance", 1e-9),
            ("threads", threads),
            ("random_seed", 0),
            # a restart re-presolves a model that is mostly dense cut rows: a third slower here (a loop
            # seen once in highspy 1.16.0's presolve no longer reproduces, restarts on or off)
            ("mip_allow_restart", False),
            # the master is tiny; HiGHS's sub-MIP heuristics cost more than they save here
            ("mip_heuristic_run_rins", False),
            ("mip_heuristic_run_rens", False),
            ("mip_heuristic_run_root_reduced_cost", False),
            ("mip_heuristic_run_zi_round", False),
            ("mip_heuristic_run_shifting", False),
        ):
            h.setOptionValue(name, value)
        inf = highspy.kHighsInf
        h.addVar(0.0, inf)  # nu >= 0 (H2 >= 0) keeps the first master bounded
        h.changeColCost(0, 1.0)
        for _ in range(self.m):
            h.addVar(0.0, 1.0)
        idx = np.arange(1, self.m + 1, dtype=np.int32)
        h.changeColsIntegrality(self.m, idx, np.full(self.m, highspy.HighsVarType.kInteger))
        h.addRow(-inf, inf, self.m, idx, np.asarray(stab, dtype=np.float64))  # row 0: stability
        h.addRow(-inf, float(k), self.m, idx, np.ones(self.m))  # row 1: cardinality
        self.h = h
        self.cuts = 0
        self.no_goods = 0
        self.fixed = np.zeros(0, dtype=np.int32)  # columns (1-based) fixed for the current threshold
        self._stop_flag = stop_flag
        if stop_flag is not None:
            flag = stop_flag

            def interrupt(event: Any) -> None:
                if flag[0]:
                    event.interrupt()

            h.cbMipInterrupt.subscribe(interrupt)

    def set_threshold(self, lower: float) -> None:
        import highspy

        self.h.changeRowBounds(0, float(lower), highspy.kHighsInf)

    def add_cut(self, ev: Evaluation) -> None:
        """``nu >= H2(zj) + g'(z - zj)``; as a row: ``nu - g'z/s >= (H2(zj) - g'zj)/s``."""
        self.add_linear_cut(ev.value - float(ev.grad[list(ev.support)].sum()), -ev.grad)

    def add_linear_cut(self, const: float, coef: np.ndarray) -> None:
        """``nu >= const - coef'z`` with ``coef >= 0`` (in H2 units)."""
        import highspy

        a = np.maximum(coef, 0.0) / self.scale
        rhs = const / self.scale
        small = a < _TINY
        rhs -= float(a[small].sum())  # dropping a_i z_i with z_i <= 1: loosen by a_i, stay valid
        keep = np.flatnonzero(~small)
        idx = np.concatenate([[0], keep + 1]).astype(np.int32)
        val = np.concatenate([[1.0], a[keep]])
        self.h.addRow(rhs, highspy.kHighsInf, idx.size, idx, val)
        self.cuts += 1

    def exclude(self, support: tuple[int, ...], k: int) -> None:
        """Remove the one rule set ``S`` from the master and no other, so its bound stays valid.

        With ``|S| = k`` the row is ``sum_{i in S} z_i <= k - 1`` (k entries): it also removes
        every superset of S, but those have more than k rules and were never feasible. A smaller
        S takes the full no-good ``sum_{i in S} z_i - sum_{i not in S} z_i <= |S| - 1`` (any other
        binary z differs from S in a coordinate, which lowers the left side by one).
        """
        import highspy

        if len(support) >= k:
            idx = (np.asarray(support, dtype=np.int64) + 1).astype(np.int32)
            coef = np.ones(idx.size)
        else:
            coef = -np.ones(self.m)
            coef[list(support)] = 1.0
            idx = np.arange(1, self.m + 1, dtype=np.int32)
        self.h.addRow(-highspy.kHighsInf, float(len(support) - 1), idx.size, idx, coef)
        self.no_goods += 1

    def fix(self, out: np.ndarray, into: np.ndarray) -> None:
        """Fix rules (0-based) out of or into every solution, for the current threshold only."""
        for idx, value in ((out, 0.0), (into, 1.0)):
            if idx.size:
                cols = (np.asarray(idx) + 1).astype(np.int32)
                self.h.changeColsBounds(cols.size, cols, np.full(cols.size, value), np.full(cols.size, value))
        self.fixed = np.union1d(self.fixed, np.concatenate([out, into]).astype(np.int32) + 1).astype(np.int32)

    def unfix(self) -> None:
        """Free every rule again (a new threshold starts from the whole candidate set)."""
        if self.fixed.size:
            n = self.fixed.size
            self.h.changeColsBounds(n, self.fixed, np.zeros(n), np.ones(n))
        self.fixed = np.zeros(0, dtype=np.int32)

    def _fix_by_reduced_cost(self, start: tuple[int, ...] | None, start_value: float | None) -> np.ndarray:
        """Fix to 0 every z_i whose LP reduced cost proves it cannot beat the incumbent.

        With LP bound L and reduced cost d_i, any master solution with z_i = 1 costs at least
        L + d_i; when that exceeds H2(incumbent) >= master optimum, no optimal master solution
        uses i, so fixing it keeps the master optimum and its dual bound valid. HiGHS does the
        same at its root, but only after a presolve that costs far more on these dense rows.
        """
        import highspy

        if start is None or start_value is None or self.m < 64:
            return np.zeros(0, dtype=np.int32)
        h = self.h
        cols = np.arange(1, self.m + 1, dtype=np.int32)
        h.changeColsIntegrality(self.m, cols, np.full(self.m, highspy.HighsVarType.kContinuous))
        try:
            h.run()
            ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            if ok:
                L = float(h.getInfo().objective_function_value)
                d = np.asarray(h.getSolution().col_dual)[1:]
        finally:
            h.changeColsIntegrality(self.m, cols, np.full(self.m, highspy.HighsVarType.kInteger))
        if not ok:
            return np.zeros(0, dtype=np.int32)
        ub = start_value / self.scale
        mask = L + d > ub + 1e-6  # margin for the LP's dual feasibility tolerance
        mask[list(start)] = False
        mask[self.fixed - 1] = False  # already fixed for this threshold: leave their bounds alone
        fixed = (np.flatnonzero(mask) + 1).astype(np.int32)
        if fixed.size:
            h.changeColsBounds(fixed.size, fixed, np.zeros(fixed.size), np.zeros(fixed.size))
        return fixed

    def solve(
        self, start: tuple[int, ...] | None, start_value: float | None, time_limit: float | None
    ) -> tuple[str, float, tuple[int, ...] | None]:
        """Solve; returns (state, dual bound in H2 units, support or None)."""
        import highspy

        h = self.h
        h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else highspy.kHighsInf)
        fixed = self._fix_by_reduced_cost(start, start_value)
        if start is not None and start_value is not None:
            idx = np.concatenate([[0], np.asarray(start, dtype=np.int64) + 1]).astype(np.int32)
            val = np.concatenate([[start_value / self.scale * (1 + 1e-9) + 1e-12], np.ones(len(start))])
            zero = np.setdiff1d(np.arange(1, self.m + 1), idx[1:]).astype(np.int32)
            idx = np.concatenate([idx, zero]).astype(np.int32)
            val = np.concatenate([val, np.zeros(zero.size)])
            h.setSolution(int(idx.size), idx, val)
        h.run()
        status = h.getModelStatus()
        MS = highspy.HighsModelStatus
        info = h.getInfo()
        bound = float(info.mip_dual_bound)
        support: tuple[int, ...] | None = None
        if info.primal_solution_status == 2:  # feasible
            x = np.asarray(h.getSolution().col_value)
            support = tuple(int(i) for i in np.flatnonzero(x[1:] > 0.5))
        if fixed.size:  # read everything first: changing the model resets HiGHS's status
            h.changeColsBounds(fixed.size, fixed, np.zeros(fixed.size), np.ones(fixed.size))
        if status == MS.kInfeasible:
            return "infeasible", math.inf, None
        if status == MS.kOptimal:
            state = "optimal"
        elif status == MS.kTimeLimit:
            state = "time"
        elif status == MS.kInterrupt:
            state = "interrupted"
        else:
            state = h.modelStatusToString(status)
        if not math.isfinite(bound):
            bound = 0.0
        return state, max(bound, 0.0) * self.scale, support


class EpsilonSolver(ABC):
    """What every exact MOSS search shares: the threshold checks, warm starts and the EPM sweep.

    ``stab`` are the stability weights in the units of the thresholds: integer tree counts when
    Pi is a multiple of 1/B (so the stability row is exact), or Pi itself. Subclasses implement
    ``solve(threshold, warm) -> Point``.
    """

    def __init__(
        self,
        oracle: Oracle,
        stab: np.ndarray,
        k: int,
        *,
        pi_scale: float,
        tol: float,
        stop: StopCheck | None,
        deadline: float | None,
        progress: Progress | None,
    ) -> None:
        self.oracle = oracle
        self.stab = np.asarray(stab, dtype=np.float64)
        self.k = int(k)
        self.pi_scale = float(pi_scale)
        self.tol = float(tol)
        self.stop = stop
        self.deadline = deadline
        self.progress = progress
        self.total_iterations = 0
        self.stopped: Status | None = None

    @abstractmethod
    def solve(self, threshold: float, warm: tuple[int, ...] | None = None) -> Point:
        """Solve (9) at ``stab'z >= threshold``, warm-started from a feasible rule set if given."""

    def _work(self) -> int:
        """What the run's node limit counts."""
        return self.total_iterations

    def _check(self) -> Status | None:
        """The run's stop check (cancel, time, nodes, memory) and the deadline; remembers why it stopped."""
        if self.stop is not None:
            s = self.stop(self._work())
            if s is not None:
                self.stopped = s
                return s
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stopped = Status.STOPPED_TIME
            return self.stopped
        return None

    def _closed(self, value: float, lower: float) -> bool:
        """Whether the bound meets the incumbent within the relative tolerance (the proof of a point)."""
        gap = relative_gap(value, lower)
        return gap is not None and gap <= self.tol

    def max_threshold(self) -> float:
        return float(np.sort(self.stab)[::-1][: self.k].sum())

    def feasible(self, support: tuple[int, ...], threshold: float) -> bool:
        return len(support) <= self.k and float(self.stab[list(support)].sum()) >= threshold - 1e-9 * max(
            1.0, abs(threshold)
        )

    def _start(self, threshold: float, warm: tuple[int, ...] | None) -> Evaluation:
        """Refuse thresholds above eps_max; the incumbent to start from (feasible by construction)."""
        top = self.max_threshold()
        if threshold > top + 1e-9 * max(1.0, abs(top)):
            raise InfeasibleEpsilon(
                f"stability {threshold / self.pi_scale:.6g} exceeds eps_max = {top / self.pi_scale:.6g}, "
                f"the sum of the {self.k} largest Pi"
            )
        if warm is None or not self.feasible(warm, threshold):
            order = np.argsort(-self.stab, kind="stable")
            warm = tuple(sorted(int(i) for i in order[: self.k]))
        return self.oracle(warm)

    def _rounding(self, z: np.ndarray, w: np.ndarray, threshold: float) -> tuple[int, ...] | None:
        """The rule set read off a relaxation: its k largest z, repaired to meet the threshold
        (compiled, the same rounding the branch-and-bound nodes use); None if there is none."""
        return rounding(
            np.ascontiguousarray(z, dtype=np.float64),
            np.ascontiguousarray(w, dtype=np.float64),
            self.stab,
            self.k,
            threshold,
        )

    def sweep(
        self, thresholds: list[float] | np.ndarray, on_point: Callable[[Point], None] | None = None
    ) -> list[Point]:
        """EPM: descending thresholds, each solution warm-starts the next (and cuts are shared)."""
        points: list[Point] = []
        warm: tuple[int, ...] | None = None
        for thr in sorted(thresholds, reverse=True):
            p = self.solve(float(thr), warm)
            points.append(p)
            if on_point is not None:
                on_point(p)
            if p.status is not Status.OPTIMAL and self.stopped is not None:
                break
            if p.found:
                warm = p.support
        return points


class CuttingPlane(EpsilonSolver):
    """Algorithm 1 over a shared cut pool; ``sweep`` runs the EPM.

    Before the master's first solve at a threshold, the perspective relaxation (when the oracle
    works in Gram space) bounds the optimum, adds its dual point as a cut and fixes the rules it
    rules out, so the master starts from the relaxation's bound over a few dozen columns.

    With ``admissible`` (a side constraint on a rule set's predictions, such as a fairness limit)
    only admissible rule sets become the incumbent, and each inadmissible one the master proposes
    is removed from it by a no-good row (``Master.exclude``). Its tangent cut stays (H2 is convex
    whatever the constraint), the rows are shared by every threshold, and the master's bound stays
    a bound over the admissible rule sets: the search is exact for any constraint, however it
    depends on the rule set. A master with no rule set left proves that none is admissible.
    """

    def __init__(
        self,
        oracle: Oracle,
        stab: np.ndarray,
        k: int,
        *,
        pi_scale: float = 1.0,
        tol: float = 1e-6,
        mip_rel_gap: float = 1e-7,
        max_iterations: int = 100_000,
        stop: StopCheck | None = None,
        deadline: float | None = None,
        stop_flag: np.ndarray | None = None,
        progress: Progress | None = None,
        threads: int = 1,
        relaxation: bool = True,
        admissible: Admissible | None = None,
    ) -> None:
        super().__init__(oracle, stab, k, pi_scale=pi_scale, tol=tol, stop=stop, deadline=deadline, progress=progress)
        self.max_iterations = max_iterations
        self.admissible = admissible
        self.excluded: set[tuple[int, ...]] = set()  # rule sets the side constraint removed (no-good rows)
        if admissible is not None:  # the relaxation's rounding and fixings know nothing of the side constraint
            relaxation = False
        self.master = Master(
            self.stab,
            self.k,
            max(oracle.h0, 1e-300),
            mip_rel_gap=mip_rel_gap,
            threads=threads,
            stop_flag=stop_flag,
        )
        self.pool: set[tuple[int, ...]] = set()
        gram = getattr(oracle, "gram", None)
        self.relaxation = (
            PerspectiveRelaxation(gram, oracle.gamma, self.stab, self.k) if relaxation and gram is not None else None
        )
        self._bound: Bound | None = None  # the last unfixed relaxation, the next threshold's warm start
        self._state = np.zeros(self.stab.size, dtype=np.int8)  # this threshold's fixings
        self._state_bound: Bound | None = None  # the relaxation under those fixings

    # -- helpers ----------------------------------------------------------------------------

    def _cut(self, ev: Evaluation) -> bool:
        if ev.support in self.pool:
            return False
        self.pool.add(ev.support)
        self.master.add_cut(ev)
        return True

    def _work(self) -> int:
        return self.master.cuts

    # -- one epsilon -----------------------------------------------------------------------

    def _admits(self, ev: Evaluation) -> bool:
        """Whether the rule set may be the incumbent; an inadmissible one is excluded from the master."""
        if self.admissible is None or self.admissible(ev.support):
            return True
        if ev.support not in self.excluded:
            self.excluded.add(ev.support)
            self.master.exclude(ev.support, self.k)
        return False

    def solve(self, threshold: float, warm: tuple[int, ...] | None = None) -> Point:
        """Solve (9) at ``stab'z >= threshold``; raises ``InfeasibleEpsilon`` above eps_max."""
        t0 = time.perf_counter()
        excluded0 = len(self.excluded)
        start = self._start(threshold, warm)
        self._cut(start)
        best: Evaluation | None = start if self._admits(start) else None
        self.master.set_threshold(threshold - 1e-9 * max(1.0, abs(threshold)))
        self.master.unfix()
        iterations = cuts = 0
        master_seconds = 0.0
        status: Status | None = None
        lb = 0.0
        presolve = self._presolve(threshold, start) if self.relaxation is not None else None
        if presolve is not None:
            best, lb = presolve
            if self._closed(best.value, lb):
                status = Status.OPTIMAL
        while status is None:
            stop = self._check()
            if stop is not None:
                status = stop
                break
            if iterations >= self.max_iterations:
                status = Status.STOPPED_NODES
                break
            remaining = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
            tm = time.perf_counter()
            upper = None if best is None else best.value
            state, bound, z = self.master.solve(None if best is None else best.support, upper, remaining)
            master_seconds += time.perf_counter() - tm
            iterations += 1
            self.total_iterations += 1
            if state == "infeasible":
                if best is not None:  # cannot happen: the incumbent is a solution of the master
                    raise RuntimeError("master reported infeasible although a feasible start exists")
                status = Status.OPTIMAL  # every rule set that meets the threshold is inadmissible: proven
                lb = math.inf
                break
            lb = max(lb, bound if upper is None else min(bound, upper))
            added = excluded = False
            if z is not None and self.feasible(z, threshold):
                ev = self.oracle(z)
                if best is None or ev.value < best.value:
                    if self._admits(ev):
                        best = ev
                        self._fix_more(best.value)
                    else:
                        excluded = True
                added = self._cut(ev)
            if best is not None:
                lb = min(lb, best.value)
            if self.progress is not None:
                self.progress(
                    {
                        "epsilon": threshold / self.pi_scale,
                        "upper": None if best is None else best.value,
                        "lower": lb,
                        "iterations": iterations,
                        "cuts": self.master.cuts,
                    }
                )
            if best is not None and self._closed(best.value, lb):
                status = Status.OPTIMAL
                break
            if state != "optimal":
                status = self._check() or Status.STOPPED_TIME
                break
            if added or excluded:
                cuts += int(added)
            elif best is None:  # a master point off the threshold by its tolerance: no progress to make
                status = Status.STOPPED_NODES
                break
            else:
                # The master returned a point already cut, so its value meets H2 there up to the
                # master's own gap; one exact re-solve settles it, else report the gap honestly.
                self.master.h.setOptionValue("mip_rel_gap", 0.0)
                state, bound, _ = self.master.solve(best.support, best.value, remaining)
                self.master.h.setOptionValue("mip_rel_gap", 1e-7)
                lb = max(lb, min(bound, best.value))
                status = Status.OPTIMAL if self._closed(best.value, lb) else Status.HEURISTIC
                break
        self.master.unfix()
        self._state_bound = None
        assert status is not None
        found = best is not None
        return Point(
            epsilon=threshold / self.pi_scale,
            support=best.support if best is not None else (),
            h1=float(self.stab[list(best.support)].sum()) / self.pi_scale if best is not None else 0.0,
            h2=best.value if best is not None else math.inf,
            lower_bound=lb,
            status=status,
            iterations=iterations,
            cuts_added=cuts,
            seconds=time.perf_counter() - t0,
            master_seconds=master_seconds,
            weights=best.weights if best is not None else np.zeros(0),
            found=found,
            excluded=len(self.excluded) - excluded0,
        )

    # -- the perspective relaxation ----------------------------------------------------------

    def _presolve(self, threshold: float, best: Evaluation) -> tuple[Evaluation, float]:
        """Bound the threshold's optimum by the perspective relaxation and fix what it rules out.

        Adds the relaxation's dual point as a cut (so the master starts at the relaxation's
        bound), tries the relaxation's rounding as an incumbent, then fixes every rule whose
        own bound exceeds the incumbent and re-solves with those fixings while that fixes more.
        Returns the incumbent and the lower bound proven so far.
        """
        relax = self.relaxation
        assert relax is not None
        state = np.zeros(self.stab.size, dtype=np.int8)
        bound = relax.solve(threshold, state, self._bound)
        self._bound = bound
        self.master.add_linear_cut(*relax.cut(bound))
        candidate = self._rounding(bound.z, bound.w, threshold)
        if candidate is not None:
            ev = self.oracle(candidate)
            self._cut(ev)
            if ev.value < best.value:
                best = ev
        lb = min(bound.value, best.value)
        for _ in range(4):
            # the incumbent, not the pruning cutoff below it: the master's bound must stay valid
            # over the rules fixed away, so they may hold no rule set better than the incumbent
            out, into = relax.fixings(bound, state, best.value)
            if not out.size and not into.size:
                break
            state[out], state[into] = -1, 1
            bound = relax.solve(threshold, state, bound)
            lb = max(lb, min(bound.value, best.value))
            if bound.value >= best.value:
                break
        self._state, self._state_bound = state, bound
        self.master.fix(np.flatnonzero(state < 0), np.flatnonzero(state > 0))
        return best, lb

    def _fix_more(self, upper: float) -> None:
        """A better incumbent lowers the cutoff: fix what the last relaxation now rules out."""
        if self.relaxation is None or self._state_bound is None:
            return
        out, into = self.relaxation.fixings(self._state_bound, self._state, upper)
        if out.size or into.size:
            self._state[out], self._state[into] = -1, 1
            self.master.fix(out, into)

    def _cutoff(self, upper: float) -> float:
        """Fix a rule only when its bound beats the incumbent by more than rounding can explain."""
        return upper + 1e-10 * max(abs(upper), self.oracle.h0)
