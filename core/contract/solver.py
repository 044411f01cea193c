"""The solver contract: what a plugin implements, and the context the runner hands it.

A solver is a class with a ``name``, a ``spec_model`` (a ``SolverSpec`` subclass whose
``solver`` field is ``Literal[name]``) and a ``solve(problem, ctx)`` method returning a
``Result``. The runner calls ``solve`` on a worker thread; compiled searches release the GIL and
poll ``ctx.stop_flag``, a one-byte buffer, so a Ctrl-C or a time limit reaches them without
Python being involved in their inner loop.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from glasswork.contract.events import Event, EventKind
from glasswork.contract.model import Task
from glasswork.contract.result import Result, Status
from glasswork.memory import memory_reached
from glasswork.rashomon import SetProgress

if TYPE_CHECKING:
    from collections.abc import Sequence

    from glasswork.contract.model import Model
    from glasswork.data import Problem
    from glasswork.rashomon import RashomonMember
    from glasswork.spec.models import SolverSpec


class StopReason(IntEnum):
    """Values of ``ctx.stop_flag[0]``; the first reason set wins."""

    NONE = 0
    CANCEL = 1
    TIME = 2
    MEMORY = 3
    NODES = 4

    @property
    def status(self) -> Status:
        return _STOP_STATUS[self]


_STOP_STATUS = {
    StopReason.CANCEL: Status.CANCELLED,
    StopReason.TIME: Status.STOPPED_TIME,
    StopReason.MEMORY: Status.STOPPED_MEMORY,
    StopReason.NODES: Status.STOPPED_NODES,
}


@dataclass(frozen=True)
class Limits:
    """Resource limits for one solve; ``None`` means unlimited."""

    time: float | None = None  # wall seconds
    nodes: int | None = None  # search nodes (whatever the solver counts as one)
    memory: int | None = None  # bytes of resident memory for the whole process


# What a local cluster does besides its tasks, made rarer: its workers share this machine's cores
# with the tasks, and every wake-up of a monitor takes a core from a task's threads. By default
# each server's event loop wakes every 20 ms to see that it is not blocked, each worker samples its
# tasks' stacks every 10 ms for a profile nobody reads here, and the memory and system monitors
# look every 100 and 500 ms: a two-thread count on a worker was switched out 10,000 times in 29 s,
# against 1,600 with these (docs/maintainers/corels-rashomon-count.md, "On a Dask cluster").
QUIET_LOCAL_CLUSTER: dict[str, Any] = {
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "500ms",
    "distributed.admin.system-monitor.interval": "2s",
}


@dataclass(frozen=True)
class ClusterExecutor:
    """Where one search may spread beyond this process (``glasswork run --executor``): a
    dask.distributed scheduler at ``address``, or ``local`` for a cluster of worker processes on
    this machine (``workers`` of them, one thread each). A solver with ``distributed = True``
    finds it as ``ctx.executor`` and makes its client with ``connect``; core never searches."""

    address: str
    workers: int | None = None
    # a local cluster started early (``started_early``) and not yet taken by ``connect``
    _early: list[_Starting] = field(default_factory=list, init=False, compare=False, repr=False)

    @property
    def name(self) -> str:
        return f"dask:{self.address}"

    @property
    def starting(self) -> bool:
        """Whether a cluster started early is still starting: a solver may search in this process
        meanwhile, where ``connect`` would only wait for it."""
        return bool(self._early) and self._early[-1].running

    @contextlib.contextmanager
    def started_early(self) -> Iterator[None]:
        """Start the local cluster in the background now, for ``connect`` to take later: its
        processes start while this one reads the spec and the data (about 0.7 s on two cores,
        a run's whole lead over one process otherwise). On the way out a cluster that no
        ``connect`` took (the run failed before its search) is closed. A remote scheduler is
        connected to when asked, as before."""
        if self.address != "local":
            yield
            return
        starting = _Starting(self._start_local)
        self._early.append(starting)
        try:
            yield
        finally:
            if starting in self._early:
                self._early.remove(starting)
                starting.close()

    def _start_local(self) -> Any:
        import dask
        from distributed import LocalCluster

        with dask.config.set(QUIET_LOCAL_CLUSTER):  # its nannies pass it on to their workers
            return LocalCluster(
                n_workers=self.workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # no fixed port to collide with another cluster
            )

    @classmethod
    def parse(cls, kind: str, *, workers: int | None = None) -> ClusterExecutor | None:
        """``local`` (this process: ``None``), ``dask:local`` or ``dask:HOST:PORT``; ValueError
        for anything else."""
        if kind == "local":
            return None
        if kind.startswith("dask:") and kind.partition(":")[2].strip():
            return cls(kind.partition(":")[2].strip(), workers)
        raise ValueError(f"unknown executor {kind!r}: use local, dask:local or dask:HOST:PORT")

    def connect(self, cancelled: Callable[[], bool] | None = None) -> tuple[Any, Callable[[], None]]:
        """A connected ``distributed.Client`` and the call that closes it (and the local cluster);
        ``cancelled`` is asked between looks while connecting (``SolveContext.connect_cluster``
        passes the run's stop flag, so its first Ctrl-C ends a connect too);
        OSError when the scheduler cannot be reached."""
        from glasswork.hooks.extras import require

        require("dask", f"--executor {self.name}")
        from distributed import Client

        cluster = None
        address = self.address
        if address == "local":
            cluster = self._early.pop().result() if self._early else self._start_local()
            address = cluster.scheduler_address
        try:
            if cluster is None:
                self._answers(address, cancelled)
            client = Client(address, timeout=f"{CONNECT_TIMEOUT:g}s")
        except Exception as exc:
            if cluster is not None:
                cluster.close()
            if isinstance(exc, OSError) and str(exc).startswith("cannot reach"):
                raise
            raise OSError(f"cannot reach the Dask scheduler at {self.address!r}: {exc}") from exc

        def close() -> None:
            try:
                client.close()
            finally:
                if cluster is not None:
                    cluster.close()

        return client, close

    def _answers(self, address: str, cancelled: Callable[[], bool] | None) -> None:
        """Open a connection to the scheduler and read its handshake within ``CONNECT_TIMEOUT``:
        ``distributed``'s connect bounds the TCP connect only, and then waits for the handshake
        without a deadline (about 3 minutes at a port that accepts and never answers). OSError
        naming the address past the deadline; a Ctrl-C (or the run's stop flag) ends the wait."""
        import asyncio

        from distributed.comm import connect

        async def probe() -> None:
            attempt = asyncio.ensure_future(connect(address, timeout=CONNECT_TIMEOUT))
            deadline = time.monotonic() + CONNECT_TIMEOUT
            while not attempt.done():
                if time.monotonic() >= deadline or (cancelled is not None and cancelled()):
                    attempt.cancel()
                    why = "cancelled" if time.monotonic() < deadline else f"no answer within {CONNECT_TIMEOUT:g} s"
                    raise OSError(f"cannot reach the Dask scheduler at {self.address!r}: {why}")
                await asyncio.wait({attempt}, timeout=0.05)
            comm = attempt.result()
            await comm.close()

        asyncio.run(probe())


class _Starting:
    """A local cluster being started on a thread of its own: ``result`` waits for it (or raises
    what its start raised), ``close`` waits and closes it."""

    def __init__(self, start: Callable[[], Any]) -> None:
        self._cluster: Any = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._cluster = start()
            except BaseException as exc:  # handed to whoever takes the cluster
                self._error = exc

        self._thread = threading.Thread(target=run, name="glasswork-cluster-start", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._cluster

    def close(self) -> None:
        self._thread.join()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()


CONNECT_TIMEOUT = 10.0  # seconds a Dask scheduler has to answer (connect and handshake)


class SolveContext:
    """The runner's side of a solve: limits, the stop flag, and the event channel.

    ``emit`` is thread-safe and cheap (it enqueues); call it every few milliseconds of work at
    most. ``check(nodes)`` is the one-stop poll for Python-level loops: it returns the status to
    stop with, or ``None`` to go on.
    """

    def __init__(
        self,
        limits: Limits | None = None,
        emit: Callable[[Event], None] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        executor: ClusterExecutor | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.executor = executor  # where the search may spread (None: this process)
        self._emit = emit or (lambda event: None)
        self._clock = clock
        self.started = clock()
        self.deadline = None if self.limits.time is None else self.started + self.limits.time
        self.stop_flag = np.zeros(1, dtype=np.uint8)
        self._lock = threading.Lock()
        self._rashomon_basis = SetProgress(0)  # what the run's set is measured from (rashomon_basis)

    # -- stopping ---------------------------------------------------------------------------

    def request_stop(self, reason: StopReason) -> None:
        """Ask the search to stop; the first reason given is the one reported."""
        with self._lock:
            if self.stop_flag[0] == StopReason.NONE:
                self.stop_flag[0] = int(reason)

    @property
    def stop_reason(self) -> StopReason:
        return StopReason(int(self.stop_flag[0]))

    @property
    def cancelled(self) -> bool:
        return self.stop_reason is StopReason.CANCEL

    def connect_cluster(self) -> tuple[Any, Callable[[], None]]:
        """``executor.connect()``, ended by this run's stop (Ctrl-C, a limit) as well as by its
        deadline: a solver connects through here, never to the executor directly."""
        assert self.executor is not None
        return self.executor.connect(cancelled=lambda: self.stop_reason is not StopReason.NONE)

    def elapsed(self) -> float:
        return self._clock() - self.started

    def check(self, nodes: int | None = None) -> Status | None:
        """Poll cancel, time, node and memory limits; the status to stop with, or ``None``."""
        if self.stop_flag[0] == StopReason.NONE:
            if self.deadline is not None and self._clock() >= self.deadline:
                self.request_stop(StopReason.TIME)
            elif self.limits.nodes is not None and nodes is not None and nodes >= self.limits.nodes:
                self.request_stop(StopReason.NODES)
            elif memory_reached(self.limits.memory):
                self.request_stop(StopReason.MEMORY)
        reason = self.stop_reason
        return None if reason is StopReason.NONE else reason.status

    # -- events -----------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        self._emit(event)

    def _stamped(self, kind: EventKind, **fields: Any) -> None:
        """Emit an event of ``kind`` stamped with the seconds since the solve began."""
        self._emit(Event(kind, self.elapsed(), **fields))

    def progress(
        self,
        *,
        objective: float | None = None,
        lower_bound: float | None = None,
        nodes: int | None = None,
        **counters: Any,
    ) -> None:
        self._stamped("progress", objective=objective, lower_bound=lower_bound, nodes=nodes, counters=counters)

    def incumbent(
        self,
        objective: float,
        model: Model | None = None,
        *,
        lower_bound: float | None = None,
        nodes: int | None = None,
    ) -> None:
        self._stamped("incumbent", objective=objective, lower_bound=lower_bound, nodes=nodes, model=model)

    def rashomon(
        self,
        count: int,
        members: Sequence[RashomonMember] = (),
        *,
        threshold: float | None = None,
        lower_bound: float | None = None,
        nodes: int | None = None,
        point: int | None = None,
        complete: bool | None = None,
    ) -> None:
        """Report Rashomon set members just enumerated (best first) and the running ``count``.

        Send only the members that will be kept (``rashomon.max_models``), batched and throttled
        like progress; ``lower_bound`` is the smallest bound left on what is not enumerated yet.
        With ``point`` (from 1), the event is the set of one point of a sweep the search runs (a
        frontier point), not the run's set: sent once, when that point's enumeration ended,
        ``complete`` saying whether it counted everything; the store and the monitor keep these
        apart from the run's set (``Result.rashomon``), which events without ``point`` announce.
        """
        if point is not None:
            progress = SetProgress(int(count), threshold, point=int(point), complete=bool(complete))
        else:
            progress = replace(self._rashomon_basis, count=int(count), threshold=threshold)
        self._emit(
            Event(
                "rashomon",
                self.elapsed(),
                lower_bound=lower_bound,
                nodes=nodes,
                members=tuple(members),
                rashomon=progress,
            )
        )

    def rashomon_basis(self, optimum: float, *, proven: bool, epsilon: float | None = None) -> None:
        """Say what the run's Rashomon set is measured from as soon as it is known, before its
        first ``rashomon`` event: the ``optimum`` the threshold came from, whether it is certified
        (``proven``), and the spec's relative ``epsilon`` (``None`` for an absolute threshold).
        Every later event of the run's set carries them, so a reader of a live run's store (a
        second terminal, the TUI) sees them while the set grows, not only at the finish."""
        self._rashomon_basis = SetProgress(
            0, optimum=float(optimum), optimum_proven=bool(proven), epsilon=None if epsilon is None else float(epsilon)
        )

    def log(self, message: str, level: str = "info") -> None:
        self._stamped("log", message=message, level=level)


class Solver(ABC):
    """Base class of every solver plugin, built-in or third-party.

    Subclasses set the class attributes and implement ``solve``. The runner builds the solver
    with its validated spec (``self.spec``), so ``solve`` reads options from there.
    """

    name: ClassVar[str]
    spec_model: ClassVar[type[SolverSpec]]
    version: ClassVar[str] = "0.0.0"
    description: ClassVar[str] = ""
    tasks: ClassVar[frozenset[Task]] = frozenset({"binary"})
    # whether ``solve`` can spread one search over ``ctx.executor`` (``run --executor dask:...``);
    # a solver without it is refused such a run before it starts
    distributed: ClassVar[bool] = False
    supports_rashomon: ClassVar[bool] = False
    """Whether ``solve`` fills ``Result.rashomon`` when the spec has a ``rashomon:`` section."""
    supports_fairness_frontier: ClassVar[bool] = False
    """Whether the core may walk the accuracy-fairness frontier (``constraints.fairness.frontier``)
    through this solver's own constrained solve, one point at a time (``glasswork.frontier``): set
    it when ``solve`` returns the best model within ``constraints.fairness`` with its certificate,
    or ``infeasible`` with no model."""

    def __init__(self, spec: SolverSpec) -> None:
        self.spec = spec

    @abstractmethod
    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        """Search, honouring ``ctx``'s limits and stop flag, and return the best model found."""

    def check(self, problem: Problem) -> None:
        """Raise ``DataError`` for what in the spec does not fit ``problem`` and ``solve`` would
        refuse before its search (a feature name that matches nothing, an unknown class, an option
        the task does not take). ``glasswork validate`` calls it, so those mistakes fail there as
        they fail ``run``; it must be cheap and never search. Share the code with ``solve``."""
        return None

    def size_report(self, problem: Problem, time_limit: float | None) -> tuple[str, str | None] | None:
        """How big the search on ``problem`` will be, before it runs: a one-line summary and a
        one-line warning (or ``None``) when it looks hopeless within ``time_limit``; ``None`` when
        the solver cannot tell. ``glasswork validate`` shows it; a run logs it as it starts. It may
        raise ``DataError`` as the same preparation in ``solve`` would (CORELS mines here)."""
        return None

    @classmethod
    def rashomon_refusal(cls, spec: SolverSpec) -> str | None:
        """Why this solver cannot enumerate the Rashomon set ``spec.rashomon`` asks for (a
        sentence saying what to change), or ``None`` when it can. Spec validation calls it, so a
        refused spec fails ``validate`` and ``run`` with exit 2 before anything runs. Override it
        when support depends on options (a policy that only samples, a task not covered)."""
        if cls.supports_rashomon:
            return None
        return (
            f"solver {cls.name!r} does not enumerate Rashomon sets; remove the 'rashomon' section "
            "or choose a solver that lists it under 'rashomon' in `glasswork plugins`"
        )

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "version": cls.version,
            "description": cls.description,
            "tasks": sorted(cls.tasks),
            "rashomon": cls.supports_rashomon,
            "fairness_frontier": cls.supports_fairness_frontier,
        }
