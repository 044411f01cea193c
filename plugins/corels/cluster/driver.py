"""One driver for work dealt to a Dask cluster in subtrees: the CORELS search's and its Rashomon set's.

A run cuts its work into subtrees that tasks can search apart (open prefixes for the search, first
rules for the set) and hands them to a ``Driver``, which deals them to the workers as tasks, reads
the messages the tasks put on one Dask ``Queue`` every period, and collects what they return. A
subtree whose worker dies is run again from the start: Dask reruns it, and the driver resubmits it
when Dask gives up (``KilledWorker``), at most ``MAX_RESUBMITS`` times; after that, or once the run
is stopping, it is lost and says so (its bound is kept). At a limit (``ctx.check``: time, nodes,
memory, Ctrl-C) the driver tells the tasks to stop; on every way out (``connected``) it stops the
tasks still running and drops the run's named Dask objects from the scheduler.

What differs between runs is given by a subclass: the task a subtree runs (``task``), how its
messages, results and loss fold into the run (``read``, ``finished``, ``lost``), how the tasks
are told to stop (``halt``) and what the run shows each period (``polled``).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from glasswork.contract.solver import ClusterExecutor, SolveContext
from glasswork.plugins.corels.search import engine

MAX_RESUBMITS = 3  # reruns of one subtree after Dask gave up on it (KilledWorker)
STOP_WAIT_SECONDS = 10.0  # on the way out, how long running tasks get to see the stop and return


def release_named(client: Any, names: Iterable[str]) -> None:
    """Drop the run's named Dask objects (Queues, Variables, Events) from the scheduler.

    They outlive the run otherwise: every task's ``Queue(name)`` handle adds a reference that a
    task never gives back, a Variable stays until deleted, a set Event until cleared. Called on
    every exit path, after the tasks have stopped; the function runs on the scheduler by value
    (a nested function), so a scheduler without glasswork installed runs it too."""
    wanted = list(names)

    async def forget(dask_scheduler: Any = None) -> None:
        import asyncio

        extensions = dask_scheduler.extensions
        queues, variables, events = (extensions.get(k) for k in ("queues", "variables", "events"))
        for name in wanted:
            while queues is not None and name in queues.queues:
                queues.release(name=name)  # one reference a call: until the queue is gone
            if variables is not None and name in variables.variables:
                await variables.delete(name=name)
            if events is not None:
                # a task's stop watch may still be waiting on the event (its wait outlives the task
                # by up to a few seconds): setting it answers every wait, and clearing it then
                # deletes it once the last wait has returned (at once when none waits)
                events.event_set(name=name)
                events.event_clear(name=name)
                for _ in range(100):  # a few turns of the loop: gone before this call returns
                    if name not in getattr(events, "_events", ()):
                        break
                    await asyncio.sleep(0.01)

    with contextlib.suppress(Exception):  # a scheduler already gone holds nothing
        client.run_on_scheduler(forget)


def stop_tasks(client: Any, futures: list[Any], signal_stop: Callable[[], None]) -> None:
    """Tell the tasks still running to stop, give them ``STOP_WAIT_SECONDS`` to return (each
    reads the stop every period), and cancel the rest, so none touches the named objects after
    ``release_named`` (a task started later would create its Queue again)."""
    if not futures:
        return
    from distributed import wait

    with contextlib.suppress(Exception):
        signal_stop()
        wait(futures, timeout=STOP_WAIT_SECONDS)
    with contextlib.suppress(Exception):
        client.cancel([f for f in futures if not f.done()])


def workers(client: Any) -> int:
    """The cluster's workers (at least one: a cluster still starting has its first on the way)."""
    return max(1, len(client.scheduler_info(n_workers=-1)["workers"]))


@dataclass(frozen=True)
class TaskConfig:
    """What every task needs to rebuild its search (pickled with each task); a run's subclass
    adds its own fields."""

    units: engine.Units
    regularization: float
    options: dict[str, Any]
    names: dict[str, str]  # Dask names of the run's objects: "queue" for the tasks' messages, and the run's own
    memory: int | None  # per-process resident bytes at which a task stops (the run's memory limit)


@dataclass(kw_only=True)
class Subtree:
    """What the driver keeps of a subtree dealt out; a run's subclass holds what the task searches
    and the bound on it when dealt out."""

    task: int = -1  # the id of the task running it (messages name it), a new one at every run
    reported: float | None = None  # the running task's last bound
    evaluations: int = 0  # its last reported count
    resubmits: int = 0


@dataclass
class Connection:
    """A run's client and the names of its Dask objects; the driver, once made, registers here so
    that the way out stops its tasks."""

    client: Any
    names: dict[str, str]
    driver: Driver[Any] | None = field(default=None, repr=False)


@contextlib.contextmanager
def connected(ctx: SolveContext, key: str, kinds: tuple[str, ...]) -> Iterator[Connection]:
    """Connect to ``ctx.executor``'s cluster and name the run's Dask objects (``key``-``kind``-a
    fresh id each); on every way out (success, a task's failure, Ctrl-C) stop what runs, then drop
    the named objects and close the connection."""
    assert ctx.executor is not None
    client, close = ctx.connect_cluster()
    connection = Connection(client, {k: f"{key}-{k}-{uuid.uuid4().hex}" for k in ("queue", *kinds)})
    try:
        yield connection
    finally:
        try:
            driver = connection.driver
            if driver is not None:
                stop_tasks(client, list(driver.running), driver.halt)
            release_named(client, connection.names.values())
        finally:
            close()


T = TypeVar("T", bound=Subtree)


class Driver(ABC, Generic[T]):
    """Deals subtrees to the cluster's workers as tasks, folds their messages and results, reruns
    a dead worker's and stops them at the run's limits (see the module's docstring)."""

    key: ClassVar[str]  # names the tasks' Dask keys
    period: ClassVar[float]  # the tasks' period for reading the driver's word and reporting
    failed_when_stopping_is_lost: ClassVar[bool] = False  # a task failing once the run stops: lost, or raised

    def __init__(self, connection: Connection, config: TaskConfig, ctx: SolveContext) -> None:
        from distributed import Queue

        self.client, self.config, self.ctx = connection.client, config, ctx
        self.messages = Queue(config.names["queue"], client=self.client)
        self.running: dict[Any, T] = {}
        self.next_id = 0
        self.resubmitted = 0
        self.evaluated = 0  # evaluations of the tasks no longer running (finished, lost, or before a rerun)
        self.nodes_before = 0  # what the run had evaluated before this driver (its node limit counts them)
        self.stopping = False  # a limit was reached: the tasks are told to stop
        self.over = False  # every task has returned
        connection.driver = self

    # -- what a run gives -----------------------------------------------------------------------

    @abstractmethod
    def task(self, tree: T) -> tuple[Callable[..., dict[str, Any]], tuple[Any, ...]]:
        """The function a task runs for ``tree`` (called with the config, the task id, then these
        arguments)."""

    @abstractmethod
    def read(self, message: tuple[Any, ...], tree: T | None) -> None:
        """Fold one message of a task (``message[1]`` is its id; ``tree`` its subtree, ``None``
        once it returned or when it is from an earlier run of a rerun subtree)."""

    @abstractmethod
    def finished(self, tree: T, out: dict[str, Any]) -> None:
        """Fold what a task returned."""

    @abstractmethod
    def lost(self, tree: T) -> None:
        """Fold a subtree given up on (its evaluations already counted)."""

    @abstractmethod
    def halt(self) -> None:
        """Tell every running task to stop."""

    def polled(self, done: list[Any]) -> None:
        """After each period, what was read and collected folded in: the run's progress."""

    # -- the dealing --------------------------------------------------------------------------------

    def submit(self, tree: T) -> None:
        tree.task = self.next_id
        self.next_id += 1
        tree.reported, tree.evaluations = None, 0
        function, arguments = self.task(tree)
        future = self.client.submit(
            function, self.config, tree.task, *arguments, pure=False, key=f"{self.key}-{uuid.uuid4().hex}"
        )
        self.running[future] = tree

    def evaluations(self) -> int:
        return self.evaluated + sum(tree.evaluations for tree in self.running.values())

    def drain(self) -> None:
        by_task = {tree.task: tree for tree in self.running.values()}
        while self.messages.qsize() > 0:
            for message in self.messages.get(batch=True):
                self.read(message, by_task.get(message[1]))

    def collect(self, future: Any) -> None:
        tree = self.running.pop(future)
        try:
            out = future.result()
        except Exception as exc:
            killed = type(exc).__name__ == "KilledWorker"
            if killed and not self.stopping and tree.resubmits < MAX_RESUBMITS:
                tree.resubmits += 1
                self.resubmitted += 1
                self.evaluated += tree.evaluations
                self.submit(tree)
                return
            if killed or (self.stopping and self.failed_when_stopping_is_lost):
                self.evaluated += tree.evaluations
                self.lost(tree)
                return
            raise
        self.finished(tree, out)

    def run(self) -> None:
        """Poll until every task has returned: read the messages, collect the finished tasks, stop
        them all at a limit; then read what is left."""
        while self.running:
            time.sleep(self.period / 2)  # the tasks report every period
            done = [future for future in self.running if future.done()]
            self.drain()
            for future in done:
                self.collect(future)
            if not self.stopping and self.ctx.check(self.nodes_before + self.evaluations()) is not None:
                self.stopping = True
                self.halt()
            self.polled(done)
        self.over = True
        self.drain()


@dataclass(frozen=True)
class ConnectedExecutor(ClusterExecutor):
    """A cluster already connected: ``connect`` hands out its client and leaves it open."""

    client: Any = None

    def connect(self, cancelled: Callable[[], bool] | None = None) -> tuple[Any, Callable[[], None]]:
        return self.client, lambda: None


@contextlib.contextmanager
def one_connection(ctx: SolveContext) -> Iterator[None]:
    """Connect to ``ctx.executor``'s cluster once for the search and the enumeration (a
    ``dask:local`` cluster starts once), and close it at the end."""
    executor = ctx.executor
    assert executor is not None
    client, close = ctx.connect_cluster()
    ctx.executor = ConnectedExecutor(executor.address, executor.workers, client=client)
    try:
        yield
    finally:
        ctx.executor = executor
        close()
