"""The runner: spec in, certified result out, with events streamed to sinks on the way.

It resolves the data, builds the solver, and calls ``solve`` on a worker thread while the calling
thread pumps events to the sinks and watches the limits. That split is what lets a Ctrl-C land
while a compiled search holds no GIL: the first interrupt raises the stop flag and the solver
returns its best model with status ``cancelled``; a second one abandons the run.
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from glasswork import metrics
from glasswork.data import DataError, Problem, load_problem
from glasswork.events import Event, EventSink
from glasswork.record import RunInfo
from glasswork.registry import Registry, get_registry
from glasswork.result import Result, Status
from glasswork.solver import Limits, SolveContext, Solver, StopReason, peak_memory, resident_memory
from glasswork.spec import LoadedSpec, SolverSpec

POLL_SECONDS = 0.05
WATCHDOG_GRACE_SECONDS = 10.0


class SolverFailure(RuntimeError):
    """The solver raised, or returned something that is not a valid ``Result`` (exit status 1)."""


class RunAborted(KeyboardInterrupt):
    """A second Ctrl-C: the run is abandoned without waiting for the solver."""


@dataclass
class RunOutcome:
    """A finished run: its identity, the solver's result, and how long and how big it was."""

    info: RunInfo
    result: Result
    elapsed: float
    peak_memory: int
    problem: Problem | None = None
    interrupted: bool = False  # a Ctrl-C (or SIGTERM) arrived while the solver ran

    @property
    def status(self) -> Status:
        return self.result.certificate.status

    def to_dict(self) -> dict[str, Any]:
        """The machine-readable result document (``glasswork run --json``)."""
        doc = self.result.to_dict()
        return {
            "run_id": self.info.run_id,
            "name": self.info.name,
            "solver": self.info.solver,
            "solver_version": self.info.solver_version,
            "status": doc["status"],
            "objective": doc["objective"],
            "lower_bound": doc["lower_bound"],
            "gap": doc["gap"],
            "model": doc["model"],
            "model_text": doc["model_text"],
            "metrics": doc["metrics"],
            "stats": {
                **doc["stats"],
                "elapsed": round(self.elapsed, 6),
                "peak_memory": self.peak_memory,
                "model_size": self.result.model.size,
            },
            "spec_hash": self.info.spec_hash,
            "data_fingerprint": self.info.data_fingerprint,
        }


class Runner:
    """Runs specs. Sinks are fixed per runner; ``run`` may be called many times."""

    def __init__(self, registry: Registry | None = None, sinks: Sequence[EventSink] = ()) -> None:
        self.registry = registry or get_registry()
        self.sinks = list(sinks)
        self.sink_errors: list[str] = []
        self._ctx: SolveContext | None = None
        self._cancel_requested = False

    def cancel(self) -> None:
        """Stop the current solve as Ctrl-C would (safe from any thread, e.g. a UI's).

        The solver returns its best model with status ``cancelled``; a cancel that arrives
        before the search starts takes effect as soon as it does.
        """
        self._cancel_requested = True
        if self._ctx is not None:
            self._ctx.request_stop(StopReason.CANCEL)

    def run(
        self,
        loaded: LoadedSpec | SolverSpec,
        *,
        problem: Problem | None = None,
        run_id: str | None = None,
    ) -> RunOutcome:
        """Solve one spec. Raises ``DataError`` (bad data), ``SolverFailure`` or ``RunAborted``."""
        if isinstance(loaded, SolverSpec):
            loaded = LoadedSpec(loaded, None)
        spec = loaded.spec
        solver_cls = self.registry.solver(spec.solver)
        if problem is None:
            problem = self.prepare(loaded)
        _check_task(solver_cls, problem)
        solver = solver_cls(spec)
        info = RunInfo(
            run_id=run_id or uuid.uuid4().hex,
            name=spec.name,
            solver=solver_cls.name,
            solver_version=solver_cls.version,
            spec_hash=spec.spec_hash(),
            spec=spec.resolved(),
            spec_path=None if loaded.path is None else str(loaded.path),
            data_fingerprint=problem.fingerprint(),
            n_train=problem.n_samples,
            n_test=0 if problem.y_test is None else int(problem.y_test.shape[0]),
            n_features=problem.n_features,
            started_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            split=_split_of(problem),
            inputs=_inputs_of(problem),
        )
        limits = Limits(
            time=spec.limits.time,
            nodes=spec.limits.nodes,
            memory=None if spec.limits.memory is None else int(spec.limits.memory),
        )
        events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        ctx = SolveContext(limits, events.put)
        self._ctx = ctx
        if self._cancel_requested:
            ctx.request_stop(StopReason.CANCEL)
        active = self._start_sinks(info)
        try:
            result, elapsed = self._solve_in_worker(solver, problem, ctx, events, active)
            outcome = RunOutcome(
                info, result, elapsed, peak_memory(), problem, interrupted=ctx.stop_reason is StopReason.CANCEL
            )
            self._add_metrics(outcome, problem)
        except BaseException as exc:
            self._finish_sinks(active, info, None, exc)
            raise
        finally:
            self._ctx = None
        self._finish_sinks(active, info, outcome, None)
        return outcome

    def prepare(self, loaded: LoadedSpec) -> Problem:
        """Load the spec's data and check the solver can take it; raises ``DataError``.

        The CLI calls this before opening the run store, so bad data writes nothing.
        """
        limits = loaded.spec.limits  # reading and filtering the data stay inside the run's limits
        problem = load_problem(
            loaded.spec.data,
            loaded.base_dir,
            time_limit=limits.time,
            memory_limit=None if limits.memory is None else int(limits.memory),
        )
        solver_cls = self.registry.solver(loaded.spec.solver)
        _check_task(solver_cls, problem)
        solver_cls(loaded.spec).check(problem)  # the solver's own pre-search checks, also before the store
        return problem

    # -- the solve ----------------------------------------------------------------------------

    def _solve_in_worker(
        self,
        solver: Solver,
        problem: Problem,
        ctx: SolveContext,
        events: queue.SimpleQueue[Event],
        sinks: list[EventSink],
    ) -> tuple[Result, float]:
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["result"] = solver.solve(problem, ctx)
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
                    if not warned and time.monotonic() - stop_asked_at > WATCHDOG_GRACE_SECONDS:
                        warned = True
                        self._deliver(
                            sinks,
                            Event(
                                "log",
                                ctx.elapsed(),
                                level="warning",
                                message=(
                                    f"solver {solver.name!r} has not stopped {WATCHDOG_GRACE_SECONDS:.0f} s "
                                    "after being asked to; press Ctrl-C again to abandon the run"
                                ),
                            ),
                        )
            except KeyboardInterrupt:
                interrupts += 1
                if interrupts > 1:
                    raise RunAborted("run abandoned by a second interrupt") from None
                ctx.request_stop(StopReason.CANCEL)
                self._deliver(
                    sinks,
                    Event(
                        "log",
                        ctx.elapsed(),
                        level="warning",
                        message=(
                            "interrupted: stopping the search and keeping the best model so far "
                            "(press Ctrl-C again to abandon it)"
                        ),
                    ),
                )
        elapsed = time.monotonic() - started
        self._pump(events, sinks)
        if "error" in box:
            exc = box["error"]
            if isinstance(exc, DataError):  # the solver found the data unusable: the user's to fix
                raise exc
            raise SolverFailure(f"solver {solver.name!r} failed: {type(exc).__name__}: {exc}") from exc
        result = box.get("result")
        if not isinstance(result, Result):
            raise SolverFailure(f"solver {solver.name!r} returned {type(result).__name__}, not a glasswork.Result")
        return result, elapsed

    @staticmethod
    def _watch_limits(ctx: SolveContext) -> None:
        """Backstop for solvers that poll only the flag: raise it at the deadline or memory cap."""
        if ctx.stop_reason is not StopReason.NONE:
            return
        if ctx.deadline is not None and time.monotonic() >= ctx.deadline:
            ctx.request_stop(StopReason.TIME)
        elif ctx.limits.memory is not None and resident_memory() >= ctx.limits.memory:
            ctx.request_stop(StopReason.MEMORY)

    # -- metrics ------------------------------------------------------------------------------

    @staticmethod
    def _add_metrics(outcome: RunOutcome, problem: Problem) -> None:
        model = outcome.result.model
        computed = metrics.evaluate(model, problem.X, problem.y, "train_", problem.sample_weight)
        if problem.X_test is not None and problem.y_test is not None:
            computed.update(
                metrics.evaluate(model, problem.X_test, problem.y_test, "test_", problem.test_sample_weight)
            )
        outcome.result.metrics = {**computed, **outcome.result.metrics}

    # -- sinks --------------------------------------------------------------------------------

    def _start_sinks(self, info: RunInfo) -> list[EventSink]:
        active = []
        for sink in self.sinks:
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

    def _deliver(self, sinks: list[EventSink], event: Event) -> None:
        for sink in list(sinks):
            try:
                sink.on_event(event)
            except Exception as exc:
                sinks.remove(sink)
                self.sink_errors.append(f"{type(sink).__name__}.on_event: {exc} (sink detached)")

    def _finish_sinks(
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


def _split_of(problem: Problem) -> dict[str, Any] | None:
    """The row indices of the training and test parts (and, for k-fold, every row's fold and the
    fold held out), kept so a run can be reproduced exactly."""
    split: dict[str, Any] = {
        name: getattr(problem, name).tolist()
        for name in ("train_index", "test_index", "folds")
        if getattr(problem, name, None) is not None
    }
    fold = getattr(problem, "fold", None)
    if fold is not None:
        split["fold"] = int(fold)
    return split or None


def _check_task(solver_cls: type[Solver], problem: Problem) -> None:
    if problem.task not in solver_cls.tasks:
        raise DataError(
            f"solver {solver_cls.name!r} handles {', '.join(sorted(solver_cls.tasks))} targets, "
            f"but the data's target is {problem.task}",
            hint="set data.task, data.positive, or choose another target",
        )


def _inputs_of(problem: Problem) -> dict[str, Any] | None:
    """How the problem's feature columns come from the raw columns (kept for ``glasswork export``);
    ``None`` when the data layer cannot say (a problem built by hand with unknown binarization)."""
    from glasswork.export import ExportError, ModelInputs

    try:
        return ModelInputs.of_problem(problem).model_dump(mode="json")
    except (ExportError, ValueError):
        return None
