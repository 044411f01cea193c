"""The search step of the run path (``glasswork.running.launch``): the solver's ``solve`` on a worker
thread while the calling thread pumps its events to the sinks and watches the limits.

That split is what lets a Ctrl-C land while a compiled search holds no GIL: the first interrupt
raises the stop flag and the solver returns its best model with status ``cancelled``; a second
one abandons the run. ``RunOutcome`` lives in ``glasswork.contract.record`` (re-exported here).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from glasswork.contract.events import Event, EventSink
from glasswork.contract.record import RunInfo, RunOutcome
from glasswork.contract.result import Result
from glasswork.contract.solver import ClusterExecutor, Limits, SolveContext, Solver, StopReason
from glasswork.data import DataError, Problem
from glasswork.memory import memory_reached

__all__ = ["RunAborted", "RunInfo", "RunOutcome", "Runner", "SolverFailure"]

POLL_SECONDS = 0.05
WATCHDOG_GRACE_SECONDS = 10.0
#: Seconds after its stop flag was raised (a limit, a cancel) before a solver that has not
#: returned is abandoned as its plugin's failure: one that never polls would hold a sweep or a
#: CI job for ever. The contract suite asks for a return within 5 s.
ABANDON_SECONDS = 120.0
_WHY_STOPPED = {
    StopReason.CANCEL: "being cancelled",
    StopReason.TIME: "its time limit",
    StopReason.MEMORY: "its memory limit",
    StopReason.NODES: "its node limit",
}


class SolverFailure(RuntimeError):
    """The solver raised, or returned something that is not a valid ``Result`` (exit status 1)."""


class RunAborted(KeyboardInterrupt):
    """A second Ctrl-C: the run is abandoned without waiting for the solver."""


class Runner:
    """The search of one run: the solver on a worker thread, its events pumped to the sinks on
    the calling thread, the limits watched, Ctrl-C turned into a stop.

    Internal to ``glasswork.running.launch.Launch``, the one run path; nothing else builds one
    (``tests/test_architecture.py`` checks it). The sinks are the run's, given to ``solve``.
    """

    def __init__(self) -> None:
        self.sink_errors: list[str] = []
        self._ctx: SolveContext | None = None
        self._cancel_requested = False
        self._who = "the solver"

    def cancel(self) -> None:
        """Stop the current solve as Ctrl-C would (safe from any thread, e.g. a UI's).

        The solver returns its best model with status ``cancelled``; a cancel that arrives
        before the search starts takes effect as soon as it does.
        """
        self._cancel_requested = True
        if self._ctx is not None:
            self._ctx.request_stop(StopReason.CANCEL)

    def solve(
        self,
        solver: Solver,
        problem: Problem,
        limits: Limits,
        sinks: list[EventSink],
        executor: ClusterExecutor | None = None,
        plugin: str | None = None,
        search: Callable[[Problem, SolveContext], Result] | None = None,
    ) -> tuple[Result, float, bool]:
        """The solver's result, the seconds it took, and whether it was cancelled (Ctrl-C).

        ``search`` runs on the worker thread instead of ``solver.solve`` when the core drives
        the solver's solves itself (``glasswork.frontier``: one solve per frontier point).

        Raises ``DataError`` (the solver found the data unusable), ``SolverFailure`` (naming
        ``plugin``, how messages name the solver's plugin, when given) or ``RunAborted``. A sink
        that raises is detached and noted in ``sink_errors``.
        """
        self._who = f"solver {solver.name!r}" + (f" from {plugin}" if plugin else "")
        events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        ctx = SolveContext(limits, events.put, executor=executor)
        self._ctx = ctx
        if self._cancel_requested:
            ctx.request_stop(StopReason.CANCEL)
        for note in problem.warnings:  # what loading noticed (an ID column) goes in the run's log
            self._warn(sinks, 0.0, note)
        try:
            result, elapsed = self._solve_in_worker(solver, problem, ctx, events, sinks, search or solver.solve)
        finally:
            self._ctx = None
        return result, elapsed, ctx.stop_reason is StopReason.CANCEL

    # -- the solve ----------------------------------------------------------------------------

    def _solve_in_worker(
        self,
        solver: Solver,
        problem: Problem,
        ctx: SolveContext,
        events: queue.SimpleQueue[Event],
        sinks: list[EventSink],
        search: Callable[[Problem, SolveContext], Result],
    ) -> tuple[Result, float]:
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["result"] = search(problem, ctx)
            except BaseException as exc:  # reported on the runner's thread
                box["error"] = exc
            finally:
                done.set()

        worker = threading.Thread(target=work, name=f"glasswork-{solver.name}", daemon=True)
        started = time.monotonic()
        worker.start()
        interrupts = 0
        stop_asked_at: float | None = None
        warned = False
        while True:
            try:
                # An Event, not Thread.join: on CPython 3.11 an interrupt inside join() can make
                # is_alive() report False for a thread that is still running.
                finished = done.wait(POLL_SECONDS)
                self._pump(events, sinks)
                if finished:
                    break
                self._watch_limits(ctx)
                if ctx.stop_reason is not StopReason.NONE:
                    stop_asked_at = stop_asked_at or time.monotonic()
                    if time.monotonic() - stop_asked_at > ABANDON_SECONDS:
                        raise SolverFailure(
                            f"{self._who} did not stop within {ABANDON_SECONDS:g} s of "
                            f"{_WHY_STOPPED[ctx.stop_reason]}: it never looks at ctx.check or ctx.stop_flag, "
                            "so the run was abandoned; a fault in that plugin, its authors can fix it "
                            "(docs/plugins.md, 'The solver')"
                        )
                    if not warned and time.monotonic() - stop_asked_at > WATCHDOG_GRACE_SECONDS:
                        warned = True
                        self._warn(
                            sinks,
                            ctx.elapsed(),
                            f"solver {solver.name!r} has not stopped {WATCHDOG_GRACE_SECONDS:g} s "
                            f"after {_WHY_STOPPED[ctx.stop_reason]}; press Ctrl-C "
                            f"{'again' if interrupts else 'twice'} to abandon the run "
                            f"(it is abandoned at {ABANDON_SECONDS:g} s)",
                        )
            except KeyboardInterrupt:
                interrupts += 1
                if interrupts > 1:
                    raise RunAborted("run abandoned by a second interrupt") from None
                ctx.request_stop(StopReason.CANCEL)
                self._warn(
                    sinks,
                    ctx.elapsed(),
                    "interrupted: stopping the search and keeping the best model so far "
                    "(press Ctrl-C again to abandon it)",
                )
        elapsed = time.monotonic() - started
        self._pump(events, sinks)
        if "error" in box:
            exc = box["error"]
            if isinstance(exc, DataError):  # the solver found the data unusable: the user's to fix
                raise exc
            raise SolverFailure(f"{self._who} failed: {type(exc).__name__}: {exc}") from exc
        result = box.get("result")
        if not isinstance(result, Result):
            raise SolverFailure(f"{self._who} returned {type(result).__name__}, not a glasswork.Result")
        return result, elapsed

    @staticmethod
    def _watch_limits(ctx: SolveContext) -> None:
        """Backstop for solvers that poll only the flag: raise it at the deadline or memory cap."""
        if ctx.stop_reason is not StopReason.NONE:
            return
        if ctx.deadline is not None and time.monotonic() >= ctx.deadline:
            ctx.request_stop(StopReason.TIME)
        elif memory_reached(ctx.limits.memory):
            ctx.request_stop(StopReason.MEMORY)

    # -- sinks --------------------------------------------------------------------------------

    def start_sinks(self, sinks: Sequence[EventSink], info: RunInfo) -> list[EventSink]:
        """The sinks whose ``on_start`` succeeded (the others are noted and left out)."""
        active = []
        for sink in sinks:
            try:
                sink.on_start(info)
                active.append(sink)
            except Exception as exc:
                self.sink_errors.append(f"{type(sink).__name__}.on_start: {exc}")
        return active

    def _pump(self, events: queue.SimpleQueue[Event], sinks: list[EventSink]) -> None:
        while True:
            try:
                event = events.get_nowait()
            except queue.Empty:
                return
            self._deliver(sinks, event)

    def _warn(self, sinks: list[EventSink], elapsed: float, message: str) -> None:
        """The runner's own warning (a slow stop, an interrupt), delivered as a log event."""
        self._deliver(sinks, Event("log", elapsed, level="warning", message=message))

    def _deliver(self, sinks: list[EventSink], event: Event) -> None:
        for sink in list(sinks):
            try:
                sink.on_event(event)
            except Exception as exc:
                sinks.remove(sink)
                self.sink_errors.append(f"{type(sink).__name__}.on_event: {exc} (sink detached)")

    def finish_sinks(
        self,
        sinks: Iterable[EventSink],
        info: RunInfo,
        outcome: RunOutcome | None,
        error: BaseException | None,
    ) -> None:
        for sink in sinks:
            try:
                sink.on_finish(info, outcome, error)
            except Exception as exc:
                self.sink_errors.append(f"{type(sink).__name__}.on_finish: {exc}")
