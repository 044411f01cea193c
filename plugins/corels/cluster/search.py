"""One CORELS search spread over a Dask cluster (``glasswork run SPEC --executor dask:ADDRESS``).

The driver expands the root here until the queue holds a few prefixes per worker, takes them all
(``Search.take``) and deals them out as *subtrees*: each task is a ``Search`` seeded with its
prefixes (``Search.seed``) that runs in slices. Every ``SYNC_SECONDS`` a task makes two round
trips to the scheduler: it reads the driver's control ``Variable`` (the incumbent, which
``Search.offer_incumbent`` rescores bit-exactly, how many workers are idle, and whether to stop),
and puts one status message (its lower bound, evaluations and any better list) on a Dask
``Queue``; when a worker is idle it first hands half of its queue back as a new subtree. Every
open prefix is always somewhere the driver can see: in a running task (bounded by that task's
last report), in a subtree not yet started (bounded by its seeds), or in a message not yet read
(read before the final bound is taken), so the global lower bound, the smallest of those, is
valid at any stop. A task whose worker dies is run again from its seeds: Dask reruns it, and the
driver resubmits it when Dask gives up; a subtree is never lost, at worst searched twice. The
dealing, the reruns and the stop are ``cluster/driver.py``'s, shared with the Rashomon set's
enumeration; ``SearchDriver`` adds the incumbent, the bound and the re-splits.

With ``search.spill``, every task's queue spills to its worker's temporary directory as one
process's does (``worker_spill_space``; docs/corels.md, "The queue on disk").

Each task has its own symmetry map, yet a permutation found in two subtrees is searched in at most
one: the search orders the prefixes of one antecedent set by (prefix error, ids) and drops a child
when moving its last rule earlier comes first in that order, a test that needs no other task
(docs/maintainers/corels-proofs.md, "One search on a Dask cluster"). ``search_split_here`` searches the same split
in one process, the reference the benchmark and the tests compare the cluster with.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from glasswork.contract.result import Status
from glasswork.contract.solver import SolveContext, StopReason
from glasswork.cython_ext import corels as _corels
from glasswork.memory import memory_reached, physical_memory, resident_memory
from glasswork.plugins.corels.cluster.driver import Connection, Driver, Subtree, TaskConfig, connected, workers
from glasswork.plugins.corels.search import engine
from glasswork.plugins.corels.search.engine import SpillError, spill_budget

SYNC_SECONDS = 0.02  # a task's period for reading the incumbent and reporting
SPLIT_MIN_QUEUE = 64  # a task hands work back only with at least this many open prefixes
SPLIT_MAX = 20000  # and at most this many per split (one message)
SEEDS_PER_WORKER = 1  # subtrees the root is cut into, per worker (one map each: fewer, fewer duplicates)
CONTROL_TIMEOUT_SECONDS = 60.0  # a task whose control Variable is gone (the run ended) stops
SPILL_MIN_ENTRIES = 65536  # a task's queue spills only with at least this many prefixes (Search.set_spill)
SPILL_SUMMED = ("spills", "reloads", "spilled")  # per-task spill counters the run adds up
SPILL_MAXED = ("max_spilled", "max_spill_bytes")  # and those it takes the largest of


@dataclass
class SearchSubtree(Subtree):
    """Open prefixes searched by one task, and the smallest bound among them when dealt out."""

    seeds: list[list[int]]
    bound: float


@dataclass
class Outcome:
    """What the distributed search ends with, for ``run_corels`` to package."""

    objective: float
    prefix: list[int]
    status: Status
    lower_bound: float
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchConfig(TaskConfig):
    """What every task needs to rebuild the search (pickled once per task); ``names`` holds the
    control Variable's name besides the message Queue's."""

    spill: str | int = "off"  # search.spill: off | auto (resolved on the worker) | bytes
    spill_min_entries: int = SPILL_MIN_ENTRIES  # engine-level: tests lower it to spill small instances


def split_root(
    units: engine.Units, regularization: float, options: dict[str, Any], parts: int
) -> tuple[Any, list[SearchSubtree]]:
    """Expand the root here until at least ``parts`` prefixes are open, then deal them all
    round-robin in bound order into at most ``parts`` subtrees (each holds good and poor prefixes
    alike). Returns the root search (its incumbent, its evaluations) and the subtrees."""
    root = engine.make_search(units, regularization, **{**options, "threads": 1})
    stop = np.zeros(1, dtype=np.uint8)
    while root.queue_size < parts:
        code = root.run(0.0, stop, root.n_evaluated + 1)  # one expansion at a time
        if code not in (_corels.SLICE, _corels.NODE_LIMIT):
            break
    taken = root.take(root.queue_size)
    n_trees = min(len(taken), parts)
    trees = []
    for i in range(n_trees):
        part = taken[i::n_trees]
        trees.append(SearchSubtree([p for p, _ in part], min(b for _, b in part)))
    return root, trees


def search_split_here(
    units: engine.Units, regularization: float, options: dict[str, Any], parts: int, slice_seconds: float = 0.005
) -> tuple[float, list[int], int]:
    """The driver's first split searched in this one process: the subtrees run round-robin in
    slices, each with its own ``Search`` (its own symmetry map), the incumbent passed between them
    after every slice. What a split costs with no network; returns the optimum, its list, and the
    evaluations (the root's included)."""
    root, trees = split_root(units, regularization, options, parts)
    searches = []
    for tree in trees:
        search = engine.make_search(units, regularization, **{**options, "threads": 1})
        search.offer_incumbent(root.best_prefix)
        search.seed(tree.seeds)
        searches.append(search)
    best: tuple[float, list[int]] = (root.objective, root.best_prefix)
    stop = np.zeros(1, dtype=np.uint8)
    running = list(searches)
    while running:
        for search in list(running):
            if search.run(slice_seconds, stop, -1) != _corels.SLICE:
                running.remove(search)
            if search.objective < best[0]:
                best = (search.objective, search.best_prefix)
        for search in running:
            if search.objective > best[0]:
                search.offer_incumbent(best[1])
    return best[0], best[1], root.n_evaluated + sum(s.n_evaluated for s in searches)


def search_subtree(config: SearchConfig, task_id: int, seeds: list[list[int]]) -> dict[str, Any]:
    """A task: search the subtrees under ``seeds`` until done, stopped, or out of memory."""
    from distributed import Queue, Variable, get_client

    client = get_client()
    control = Variable(config.names["control"], client=client)
    messages = Queue(config.names["queue"], client=client)
    search = engine.make_search(config.units, config.regularization, **config.options)
    with worker_spill_space(search, config):
        return _search_seeded(search, config, task_id, seeds, control, messages)


def worker_memory(config: SearchConfig) -> int | None:
    """The memory ``spill: auto`` takes its share of on this worker: the run's ``limits.memory``,
    else the worker's Dask memory limit, else the machine's, split among the tasks the worker
    runs at once (each has its own search)."""
    from distributed import get_worker

    total = config.memory
    threads = 1
    with contextlib.suppress(Exception):  # outside a worker (a test calling the task directly)
        worker = get_worker()
        threads = max(1, int(getattr(worker.state, "nthreads", 1)))
        if total is None:
            total = getattr(worker.memory_manager, "memory_limit", None) or None
    if total is None:
        total = physical_memory()
    return None if total is None else total // threads


@contextlib.contextmanager
def worker_spill_space(search: Any, config: SearchConfig) -> Any:
    """The task's search spills its queue to a fresh directory in the WORKER's temporary
    directory, removed on the way out whatever ends the task (the files themselves are unlinked
    as soon as they are opened); ``auto`` is resolved here, against this worker's memory."""
    if config.spill == "off":
        yield
        return
    total = worker_memory(config) if config.spill == "auto" else None
    budget = spill_budget(config.spill, total, resident_memory()) if config.spill != "auto" or total else 0
    with engine.spill_directory(
        search, budget, auto=config.spill == "auto", where=f" on worker {_worker_name()}",
        min_entries=config.spill_min_entries,
    ):  # fmt: skip
        yield


def _worker_name() -> str:
    with contextlib.suppress(Exception):
        from distributed import get_worker

        return str(get_worker().address)
    return f"pid {os.getpid()}"


def _search_seeded(
    search: Any, config: SearchConfig, task_id: int, seeds: list[list[int]], control: Any, messages: Any
) -> dict[str, Any]:
    """The task's search loop, its spill directory (if any) already set."""
    objective, prefix, _, _ = control.get(timeout=CONTROL_TIMEOUT_SECONDS)
    if objective < search.objective:
        search.offer_incumbent(prefix)
    search.seed(seeds)
    published = search.objective
    stop = np.zeros(1, dtype=np.uint8)
    code = _corels.SLICE
    stopped = memory = False
    last_sync = time.monotonic()
    while True:
        code = search.run(SYNC_SECONDS / 4, stop, -1)
        if code == _corels.SPILL_ERROR:
            raise SpillError(
                f"corels: the queue's spill files failed on worker {_worker_name()}: {search.spill_error}; "
                "free space there, point TMPDIR at a disk with room on the workers, or set search.spill: off "
                "(the run has no certificate)"
            )
        if code != _corels.SLICE:
            break
        if time.monotonic() - last_sync < SYNC_SECONDS:
            continue
        last_sync = time.monotonic()
        try:  # one round trip: the driver's whole word
            objective, prefix, idle, stop_now = control.get(timeout=CONTROL_TIMEOUT_SECONDS)
        except TimeoutError:  # the run is over and its Variable released
            stop_now = True
        if stop_now:
            stopped = True
            break
        if memory_reached(config.memory):
            memory = True
            break
        if objective < search.objective:
            search.offer_incumbent(prefix)
        if idle and search.queue_size >= SPLIT_MIN_QUEUE:
            taken = search.take(min(search.queue_size // 2, SPLIT_MAX))
            if taken:  # before the status that no longer bounds them: the driver reads in order
                messages.put(("split", task_id, [p for p, _ in taken], min(b for _, b in taken)))
        found = None
        if search.objective < published:
            published = search.objective
            found = (published, search.best_prefix)
        messages.put(("status", task_id, search.lower_bound(), search.n_evaluated, found))
    if search.objective < published:
        messages.put(("incumbent", task_id, search.objective, search.best_prefix))
    return {
        "task": task_id,
        "done": code == _corels.DONE,
        "out_of_memory": code == _corels.OUT_OF_MEMORY or memory,
        "stopped": stopped,
        "objective": search.objective,
        "prefix": search.best_prefix,
        "lower_bound": search.lower_bound(),
        "counters": search.counters(),
        "spilled_at_end": search.spilled_size,  # prefixes still on disk (bounded by lower_bound)
    }


class SearchDriver(Driver[SearchSubtree]):
    """Keeps the incumbent and the global bound, tells the tasks which workers are idle, and
    deals a task's handed-back prefixes as a new subtree."""

    key = "glasswork-corels"
    period = SYNC_SECONDS
    failed_when_stopping_is_lost = True  # its bound is kept: the stopped run's bound stays valid

    def __init__(
        self,
        connection: Connection,
        config: SearchConfig,
        ctx: SolveContext,
        on_incumbent: Callable[[float, list[int], int], None],
        on_progress: Callable[[float, float, int, int], None],
        progress_interval: float,
    ) -> None:
        super().__init__(connection, config, ctx)
        from distributed import Variable

        self.on_incumbent, self.on_progress, self.progress_interval = on_incumbent, on_progress, progress_interval
        self.last_progress = -1.0
        self.n_workers = workers(self.client)
        self.control = Variable(config.names["control"], client=self.client)
        self.idle = 0  # workers without a task: a task with enough open prefixes hands half back
        self.asked = -1  # the idle count last published
        self.stop = False
        self.closed_bounds: list[float] = []  # lower bounds of tasks that stopped before done
        self.best: tuple[float, list[int]] = (float("inf"), [])
        self.incomplete = False  # a task ran out of memory: the run cannot certify
        self.splits = 0
        self.spill: dict[str, int] = {}  # the tasks' spill counters: summed, maxed (SPILL_SUMMED, SPILL_MAXED)

    def task(self, tree: SearchSubtree) -> tuple[Callable[..., dict[str, Any]], tuple[Any, ...]]:
        return search_subtree, (tree.seeds,)

    def halt(self) -> None:
        """Stop every task (the control word's stop), whatever the driver was doing."""
        self.stop, self.idle = True, 0
        self.publish()

    def publish(self) -> None:
        """Write the control word every task reads each period: incumbent, idle workers, stop."""
        self.control.set((self.best[0], list(self.best[1]), self.idle, self.stop))

    def offer(self, objective: float, prefix: list[int]) -> None:
        if objective < self.best[0]:
            self.best = (objective, list(prefix))
            self.publish()
            self.on_incumbent(objective, list(prefix), self.evaluations())

    def lower_bound(self) -> float:
        """The smallest bound over every open subtree and the incumbent (valid at any moment the
        message queue has been drained)."""
        lo = self.best[0]
        for tree in self.running.values():
            lo = min(lo, tree.bound if tree.reported is None else tree.reported)
        return min([lo, *self.closed_bounds])

    def add_spill(self, out: dict[str, Any]) -> None:
        """Fold one finished task's spill figures into the run's: prefixes written and spills add
        up; the most one task held on disk is a max, and the sum of those maxima bounds what the
        run held on disk at once (tasks overlap in time)."""
        counters = out["counters"]
        if not counters.get("spills"):
            return
        for key in SPILL_SUMMED:
            self.spill[key] = self.spill.get(key, 0) + int(counters[key])
        for key in SPILL_MAXED:
            self.spill[key] = max(self.spill.get(key, 0), int(counters[key]))
        self.spill["spill_bytes_at_most"] = self.spill.get("spill_bytes_at_most", 0) + int(counters["max_spill_bytes"])
        self.spill["spilled_tasks"] = self.spill.get("spilled_tasks", 0) + 1
        if out.get("spilled_at_end"):
            self.spill["spilled_at_stop"] = self.spill.get("spilled_at_stop", 0) + int(out["spilled_at_end"])

    def read(self, message: tuple[Any, ...], tree: SearchSubtree | None) -> None:
        kind = message[0]
        if kind == "incumbent":
            self.offer(message[2], message[3])
        elif kind == "split":
            self.splits += 1
            split = SearchSubtree(message[2], message[3])
            if self.stopping or self.over:
                self.closed_bounds.append(split.bound)
            else:
                self.submit(split)
        elif kind == "status":
            if message[4] is not None:
                self.offer(*message[4])
            if tree is not None:
                tree.reported, tree.evaluations = message[2], message[3]

    def lost(self, tree: SearchSubtree) -> None:
        self.closed_bounds.append(tree.bound if tree.reported is None else tree.reported)
        self.incomplete = True

    def finished(self, tree: SearchSubtree, out: dict[str, Any]) -> None:
        self.evaluated += out["counters"]["evaluated"]
        self.add_spill(out)
        self.offer(out["objective"], out["prefix"])
        if out["out_of_memory"]:
            self.incomplete = True
        if not out["done"]:
            self.closed_bounds.append(out["lower_bound"])

    def polled(self, done: list[Any]) -> None:
        idle = 0 if self.stopping else max(0, self.n_workers - len(self.running))
        if idle != self.asked:
            self.idle = self.asked = idle
            self.publish()
        if self.ctx.elapsed() - self.last_progress >= self.progress_interval:
            self.last_progress = self.ctx.elapsed()
            self.on_progress(self.best[0], self.lower_bound(), self.evaluations(), len(self.running))


@dataclass
class HeadStart:
    """What the search did in this process while the cluster started: its outcome when it ended
    there (``ended``), else its incumbent and evaluations, which the cluster's search takes on."""

    objective: float
    prefix: list[int]
    evaluations: int
    ended: Outcome | None


def search_while_the_cluster_starts(
    units: engine.Units,
    regularization: float,
    options: dict[str, Any],
    ctx: SolveContext,
    on_incumbent: Callable[[float, list[int], int], None],
) -> HeadStart | None:
    """Search in this process while ``ctx.executor``'s local cluster is still starting (started
    early by ``glasswork run``: ``ClusterExecutor.starting``), where the driver would only wait
    for it (0.4 to 0.7 s on two cores). A search that ends meanwhile needs no cluster (COMPAS at
    lambda 0.01: 5.9 M evaluations, 0.5 s beside the starting cluster): its outcome is one
    process's. One that does not hands its incumbent and its evaluations to the cluster's search,
    which starts from the root (handing over its open prefixes as seeds cost 9 % more evaluations at lambda 0.005,
    docs/maintainers/corels-measurements.md). None when no cluster is starting."""
    from glasswork.plugins.corels.search.one_process import SLICE_SECONDS, ended

    executor = ctx.executor
    if executor is None or not executor.starting:
        return None
    started = time.perf_counter()
    search = engine.make_search(units, regularization, **options)
    node_limit = -1 if ctx.limits.nodes is None else int(ctx.limits.nodes)
    best = search.objective
    code = _corels.SLICE
    while executor.starting:
        code = search.run(SLICE_SECONDS, ctx.stop_flag, node_limit)
        if search.objective < best:
            best = search.objective
            on_incumbent(best, list(search.best_prefix), int(search.n_evaluated))
        if code != _corels.SLICE:
            break
        if ctx.check(search.n_evaluated) is not None:
            code = _corels.STOPPED
            break
    evaluations = int(search.n_evaluated)
    objective = float(search.objective) if search.feasible else float("inf")
    prefix = list(search.best_prefix) if search.feasible else []
    if code == _corels.SLICE:  # the cluster is up: it searches, with this incumbent
        return HeadStart(objective, prefix, evaluations, None)
    status, lower = ended(search, code, ctx)
    stats = {
        "evaluated": evaluations,
        "searched_here_while_the_cluster_started": evaluations,
        "head_start_seconds": time.perf_counter() - started,
        "threads": int(search.threads),
    }
    return HeadStart(objective, prefix, evaluations, Outcome(objective, prefix, status, min(lower, objective), stats))


def run_distributed(
    units: engine.Units,
    regularization: float,
    options: dict[str, Any],
    ctx: SolveContext,
    on_incumbent: Callable[[float, list[int], int], None],
    on_progress: Callable[[float, float, int, int], None],
    *,
    progress_interval: float = 1.0,
    spill: str | int = "off",
    spill_min_entries: int = SPILL_MIN_ENTRIES,
    head_start: HeadStart | None = None,
) -> Outcome:
    """Search on ``ctx.executor``'s cluster; the same certificate a single process gives.
    ``spill`` is ``search.spill``: every task's queue spills to its worker's temporary directory
    (``auto`` resolved on each worker); ``spill_min_entries`` is for tests only. ``head_start``:
    what this process searched while the cluster started (its incumbent is offered to every task,
    its evaluations counted in the run's)."""
    if head_start is not None and head_start.ended is not None:
        return head_start.ended
    started = time.perf_counter()
    with connected(ctx, "glasswork-corels", ("control",)) as connection:
        config = SearchConfig(
            units, regularization, {**options, "threads": 1}, connection.names, ctx.limits.memory, spill,
            spill_min_entries,
        )  # fmt: skip
        driver = SearchDriver(connection, config, ctx, on_incumbent, on_progress, progress_interval)
        n_workers = driver.n_workers
        # the root's first levels here, until there are a few open prefixes per worker to deal out
        root, trees = split_root(units, regularization, options, SEEDS_PER_WORKER * n_workers)
        driver.evaluated = root.n_evaluated + (head_start.evaluations if head_start is not None else 0)
        if head_start is not None and head_start.objective < driver.best[0]:  # announced when found
            driver.best = (head_start.objective, list(head_start.prefix))
        driver.offer(root.objective, root.best_prefix)
        driver.publish()
        for tree in trees:
            driver.submit(tree)
        driver.run()
        lower = driver.lower_bound()
        if not driver.closed_bounds and not driver.incomplete:
            status, lower = Status.OPTIMAL, driver.best[0]  # every subtree searched to its end
        elif driver.stopping:
            reason = ctx.stop_reason
            status = reason.status if reason is not StopReason.NONE else Status.STOPPED_TIME
        else:
            status = Status.STOPPED_MEMORY
        stats = {
            "evaluated": driver.evaluations(),
            "workers": n_workers,
            "subtrees": driver.next_id,
            "splits": driver.splits,
            "resubmitted": driver.resubmitted,
            "root_evaluations": root.n_evaluated,
            "searched_here_while_the_cluster_started": head_start.evaluations if head_start is not None else 0,
            "distributed_seconds": time.perf_counter() - started,
            **driver.spill,
        }
        on_progress(driver.best[0], min(lower, driver.best[0]), driver.evaluations(), 0)
        return Outcome(driver.best[0], driver.best[1], status, min(lower, driver.best[0]), stats)
