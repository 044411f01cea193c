"""The CORELS Rashomon set enumerated on a Dask cluster (``glasswork run SPEC --executor dask:...``).

Once the optimum is certified the threshold is fixed, so the prefix space splits into independent
subtrees by first rule (``make_enumerator(..., roots=..., include_empty=...)``: the counts of
disjoint root sets add up). The driver scores every one-rule prefix here (``b + b0`` of
``Search.evaluate``: a lower bound on every list that starts with it), drops the roots whose bound
is above the threshold, deals the rest round-robin in bound order into a few subtrees per worker
(each gets good and poor roots alike; the best root split by its second rule when workers would
otherwise sit idle) and submits them best bound first. Two-rule prefixes ``(p, t)`` whose swap
``(t, p)`` lives in another subtree with the same error are left out in one and counted through the
other (``mirror_pairs``): their lists mirror one for one. A task is an
``Enumerator`` over its roots run in slices; every ``SYNC_SECONDS`` it reports on a Dask ``Queue``
its running count, evaluations, the bound on what it has not enumerated and, in objective order,
the members it kept since the last report (a count, every ``COUNT_REPORT_SECONDS``), and it
stops on the driver's stop ``Event`` (time, nodes, Ctrl-C), which a thread of the task waits on
(``StopWatch``), or at the run's memory limit (the worker's resident memory).

**Listed or counted, decided per run.** The driver first lists the set here in objective order on
one thread, for at most ``PROBE_EVALUATIONS`` evaluations (``table_counts``). If that listing ends
with at most ``max_models`` lists, the set is small: the tasks list it whole, as described above
(pieces and mirrored pairs included). Otherwise (more than ``max_models`` lists, the best
``max_models`` proven, or the probe's budget spent) the tail table counts, in **one task over
every first rule**: a table depends on the rows it covers, not on the prefix that left them, so
tasks split by first rule needed the same tables and scored 1.73 times one process's rules on
COMPAS at epsilon 0.05. That task is one process's count on a worker: it lists in objective order
(the ``lower_bound`` policy when the spec's is not ordered: the set and its best do not depend on
it) until its kept lists are provably the best ``max_models`` (``best_proven``) or its queue
outgrows one process's budget (``queue_budget_for(memory, max_models)``), then counts with a
``TableCount`` on ``search.threads`` threads sharing one memo (half of ``limits.memory``). When it
went depth first before its best were proven, it returns the objective of the ``max_models``-th
(``nth_objective``) and the first rules the table found a list within it under
(``first_rules_within``), and the driver lists the set again up to it under those, in one task (one
map: split over two workers the relisting evaluated twice the prefixes): the best ``max_models``
and their ties. A count stopped
by a limit is no count: the set then gives what the listing proved (its listed count, or the
members under the first rules the table finished if more, ``complete`` false, its listing's
bound), as one process does.

The driver merges: the count is the sum of the subtrees' counts, the set is complete when every
subtree is, the kept members are the best ``max_models`` over all (a bounded dict, never every
member), and the bound on what is not enumerated is the smallest over the subtrees that stopped,
were lost or never started. With an ordered policy a kept member whose objective is below every
unfinished subtree's bound is final, so it is streamed through ``ctx.rashomon`` best first, as in
one process. A task whose worker dies is run again from its roots (Dask reruns it; the driver
resubmits it when Dask gives up), and its members are merged by prefix, so none counts twice. On
every way out the driver stops the running tasks and drops its named Dask objects from the scheduler.
The dealing, the reruns and the stop are ``cluster/driver.py``'s, shared with the search;
``EnumerationDriver`` adds the merge and the stream of final members.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from glasswork.contract.solver import SolveContext
from glasswork.cython_ext import corels_rashomon as _enum
from glasswork.plugins.corels.search import engine
from glasswork.memory import memory_reached
from glasswork.plugins.corels.cluster.driver import Connection, Driver, Subtree, TaskConfig, connected, workers
from glasswork.plugins.corels.rashomon.enumeration import (
    KeptStream,
    Listing,
    TableCount,
    best_proven,
    count_memory_for,
    make_enumerator,
    queue_budget_for,
)
from glasswork.rashomon import RashomonSet

ORDERED_POLICIES = ("lower_bound", "objective")  # the policies that list in objective order
SYNC_SECONDS = 0.1  # a task's period for reporting (and for reading its memory)
COUNT_REPORT_SECONDS = 1.0  # the count's period for reporting: its reports carry a running count only
WATCH_SECONDS = 10.0  # how long one wait on the stop event lasts before the watcher waits again
# subtrees the roots are dealt into, per worker: each has its own map (docs/maintainers/corels-proofs.md)
SUBTREES_PER_WORKER = 1
PROBE_EVALUATIONS = 200_000  # the driver's listing that decides whether the table counts


@dataclass(frozen=True)
class EnumerationConfig(TaskConfig):
    """What every task needs to rebuild the enumerator (pickled with each task): ``options`` are
    make_enumerator's policy, max_prefix_length, max_models and ablation; ``names`` holds the stop
    Event's name besides the report Queue's."""

    threshold: float
    floor: float
    threads: int = 1  # the enumerator's threads in each task (``search.threads``)
    count: bool = False  # list until the best max_models are proven, then count by the tail table
    queue_budget: int | None = None  # best first's queue entries before depth first (None: from ``memory``)


@dataclass
class EnumerationSubtree(Subtree):
    """Lists whose first rule is one of ``roots`` (and the empty list when ``include_empty``); a
    piece of one first rule when ``seconds`` restricts the second rule (the one-rule lists only
    when ``include_short``)."""

    roots: list[int]
    include_empty: bool
    bound: float  # a lower bound on every list in it, before any enumeration
    seconds: list[int] | None = None
    include_short: bool = True
    skip_pairs: list[tuple[int, int]] = field(default_factory=list)  # (p, t): mirrored by (t, p) elsewhere
    report_pairs: list[tuple[int, int]] = field(default_factory=list)  # (t, p): its count is asked for
    emitted: int = 0  # its running task's last reported count (``reported``: its bound on what it has not enumerated)

    @property
    def open_bound(self) -> float:
        """A lower bound on every list of the subtree not enumerated yet (both bounds hold: the larger)."""
        return self.bound if self.reported is None else max(self.reported, self.bound)


@dataclass(frozen=True)
class Relisting:
    """What a counting task gone depth first leaves the driver: its best are listed again up to
    ``up_to`` (the ``max_models``-th objective) under ``first_rules`` (the roots, and whether the
    empty list, the table found a list within it under; None: every one). Until then its kept
    lists are ``held_back`` (not its best) with the bound its listing had proven."""

    up_to: float
    first_rules: tuple[list[int], bool] | None
    held_back: list[tuple[float, tuple[int, ...]]]
    bound: float


@dataclass
class Merged:
    """The subtrees' results folded together, holding at most ``max_models`` members."""

    max_models: int
    count: int = 0
    open_bounds: list[float] = field(default_factory=list)  # subtrees left incomplete
    best: dict[tuple[int, ...], float] = field(default_factory=dict)

    def keep(self, members: list[tuple[float, tuple[int, ...]]]) -> None:
        for objective, prefix in members:
            self.best[tuple(prefix)] = float(objective)
        if len(self.best) > self.max_models:
            ranked = sorted(self.best.items(), key=lambda item: (item[1], item[0]))[: self.max_models]
            self.best = dict(ranked)

    def ranked(self) -> list[tuple[float, tuple[int, ...]]]:
        return sorted(((objective, prefix) for prefix, objective in self.best.items()), key=lambda m: (m[0], m[1]))


def mirror_pairs(units: engine.Units, trees: list[EnumerationSubtree]) -> int:
    """Give every subtree the two-rule prefixes it leaves out and those whose count it reports.

    For two first rules ``t < p`` in different subtrees (whole roots, not pieces) such that
    ``(p, t)`` and ``(t, p)`` are both valid (each captures a row the other does not), have the
    same errors (exact: integer class weights, counts in doubles): they leave the
    same rows with the same error, so (7) every tail is valid after one iff after the other, with
    the same objective, and the lists through ``(p, t)`` are those through ``(t, p)``, one for one.
    The subtree of ``p`` leaves ``(p, t)`` out (``skip_pairs``), the subtree of ``t`` reports how
    many lists it counted through ``(t, p)`` (``report_pairs``), and the driver adds that and mirrors
    the kept members. Each pair is decided by the data alone, once, so nothing is counted twice or
    lost (docs/maintainers/corels-proofs.md, "The set on a Dask cluster"). A rule with a copy (the same rows) takes no
    part: its one-rule prefix may be a twin of the copy's, and then ``(t, p)`` is not a node.
    Returns the number of pairs."""
    weights = np.asarray(units.weights, dtype=np.float64)
    if not np.all(weights == np.round(weights)):  # ties exact only with integer weights
        return 0
    caps = units.caps
    _, first, seen = np.unique(caps, axis=0, return_index=True, return_counts=True)
    unique = {int(i) for i, c in zip(first, seen) if c == 1}  # a copy of a root may be its twin (7)
    side = {r: i for i, tree in enumerate(trees) if tree.seconds is None for r in tree.roots if r in unique}
    if len({*side.values()}) < 2:
        return 0
    ids = np.array(sorted(side))
    shifts = np.arange(64, dtype=np.uint64)
    rows = ((caps[ids][:, :, None] >> shifts) & np.uint64(1)).reshape(len(ids), -1)[:, : units.n_units]
    rows = rows.astype(np.float64)  # (roots, units): 0/1, counts below 2^53 stay exact
    both = rows @ rows.T  # units captured by both
    size = np.diag(both)
    counts = units.counts.astype(np.float64)  # (units, classes)
    alone = rows @ counts  # (roots, classes): what each captures
    shared = np.stack([(rows * counts[:, c]) @ rows.T for c in range(counts.shape[1])], axis=-1)  # by both

    def errors(n: np.ndarray) -> np.ndarray:  # the weighted errors of a rule capturing n
        weighted = n * weights
        return weighted.sum(axis=-1) - weighted.max(axis=-1)

    # err(p, t) = E(p) + E(t minus p); err(t, p) = E(t) + E(p minus t)
    err_p = errors(alone)
    first_p = err_p[:, None] + errors(alone[None, :, :] - shared)
    valid = (both < size[None, :]) & (both < size[:, None])  # each captures a unit the other does not
    side_of = np.array([side[int(r)] for r in ids])
    n = 0
    for i, j in zip(*np.nonzero(valid & (first_p == first_p.T) & (side_of[:, None] != side_of[None, :]))):
        p, t = int(ids[i]), int(ids[j])
        if t < p:
            trees[side[p]].skip_pairs.append((p, t))
            trees[side[t]].report_pairs.append((t, p))
            n += 1
    return n


def mirrored(
    tree: EnumerationSubtree, members: list[tuple[float, tuple[int, ...]]]
) -> list[tuple[float, tuple[int, ...]]]:
    """The kept members of ``tree``, each followed by its mirror ``(p, t, ...)`` when it starts
    with a reported pair ``(t, p)``."""
    if not tree.report_pairs:
        return members
    asked = set(tree.report_pairs)
    out = []
    for objective, prefix in members:
        out.append((objective, prefix))
        if len(prefix) >= 2 and (prefix[0], prefix[1]) in asked:
            out.append((objective, (prefix[1], prefix[0], *prefix[2:])))
    return out


class StopWatch:
    """The driver's stop ``Event``, waited on by a thread of the task: the scheduler answers the
    wait as soon as the event is set, so a task learns of a stop at once, where asking every
    ``SYNC_SECONDS`` took a round trip to the scheduler each time (300 in a 30 s count, each waking
    the worker's event loop and the scheduler on the cores the counting threads run on: the count
    took 30.7 s on a worker against 29.4 s with one look a second). ``on_stop`` runs on the
    watcher's thread once the event is set; ``close`` ends the watch when the task is over (a
    wait still open then is answered when the driver releases the run's objects,
    ``release_named``)."""

    def __init__(self, event: Any, on_stop: Callable[[], None]) -> None:
        self._event, self._on_stop = event, on_stop
        self._over = threading.Event()
        self.stopped = False
        self._thread = threading.Thread(target=self._watch, name="glasswork-stop-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._over.is_set():
            try:
                fired = self._event.wait(timeout=WATCH_SECONDS)
            except Exception:  # the connection is going (the worker or the run is closing): look again
                if self._over.wait(SYNC_SECONDS):
                    return
                continue
            if fired and not self._over.is_set():  # (set after the task: the run's objects being released)
                self.stopped = True
                self._on_stop()
                return

    def close(self) -> None:
        self._over.set()

    def __enter__(self) -> StopWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def enumerate_subtree(
    config: EnumerationConfig,
    task_id: int,
    roots: list[int],
    include_empty: bool,
    seconds: list[int] | None = None,
    include_short: bool = True,
    skip_pairs: list[tuple[int, int]] | None = None,
    report_pairs: list[tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """A task: enumerate the lists under ``roots`` (and ``seconds``) until done, stopped, or out
    of memory. With ``config.count`` the listing (in objective order) stops once its kept lists
    are provably the subtree's best ``max_models`` or its queue outgrows ``config.queue_budget``,
    and the tail table counts the subtree; gone depth first, it returns what the driver's
    relisting needs (``relist_up_to``, ``relist_first_rules``) and holds its kept lists back."""
    from distributed import Event, Queue, get_client

    client = get_client()
    stop_event = Event(config.names["stop"], client=client)
    reports = Queue(config.names["queue"], client=client)

    enumerator = make_enumerator(
        config.units,
        config.regularization,
        config.threshold,
        floor=config.floor,
        threads=config.threads,
        roots=roots,
        include_empty=include_empty,
        seconds=seconds,
        include_short=include_short,
        skip_pairs=skip_pairs or None,
        # depth first past it, as in one process
        queue_budget=queue_budget_for(config.memory) if config.queue_budget is None else config.queue_budget,
        **config.options,
    )
    started = time.perf_counter()
    stop = np.zeros(1, dtype=np.uint8)
    code = _enum.SLICE
    stopped = stop_event.is_set()  # started after the stop: nothing enumerated, its bound returned
    out_of_memory = False
    last_sync = time.monotonic()
    for_table = False
    checked = time.monotonic()
    enumerator.stop_when_kept = config.count  # (a piece never counts: the table has no second-rule split)
    count_here = config.count and seconds is None and not skip_pairs and not report_pairs

    stream = KeptStream(enumerator)

    def report(phase: str) -> None:
        fresh = stream.fresh(whole=phase != "listing")  # then every list not sent is at least the bound
        bound = streamed_bound(enumerator, stream)
        reports.put(("status", task_id, enumerator.n_emitted, enumerator.n_evaluated, bound, fresh, phase))

    with StopWatch(stop_event, lambda: stop.fill(1)) as watch:  # a stop ends the running slice too
        while not stopped:
            if count_here and not enumerator.complete and enumerator.switched_at >= 0:
                for_table = True  # gone depth first: count first, list the best again after, as one process
                break
            if count_here and not enumerator.complete and enumerator.kept_worst < np.inf:
                # in objective order the bound is the queue's top; gone depth first, a scan: now and then
                if enumerator.ordered_order or time.monotonic() - checked >= SYNC_SECONDS:
                    checked = time.monotonic()
                    if best_proven(enumerator):
                        for_table = True
                        break
            code = enumerator.run(SYNC_SECONDS / 4, stop, -1)
            if watch.stopped:
                stopped = True
                break
            if code != _enum.SLICE:
                break
            if time.monotonic() - last_sync < SYNC_SECONDS:
                continue
            last_sync = time.monotonic()
            if memory_reached(config.memory):
                out_of_memory = True
                break
            report("listing")
        out: dict[str, Any] = {
            "task": task_id,
            "complete": bool(enumerator.complete),
            "count": int(enumerator.count),
            "needed_table": for_table,
            "counted_by_table": False,
            "table": {},
            "count_threads": 0,
        }
        if for_table:
            report("counting")  # every kept list below the bound the driver now holds
            out.update(_count_subtree(config, enumerator, streamed_bound(enumerator, stream), task_id, reports, watch))
            stopped, out_of_memory = bool(out.pop("stopped")), bool(out.pop("out_of_memory"))
    table_bytes = int(out["table"].get("memo_peak_bytes", 0))
    listing_bytes = int(out.pop("listing_bytes", 0))  # freed before the table began
    evaluated = int(enumerator.n_evaluated) + int(out["table"].get("count_evaluated", 0))
    # counted with its best not proven (gone depth first): the driver lists the best again in
    # another task, up to the objective of the max_models-th (``relist_up_to``; ties too), under
    # the first rules the table found a list within it under (``relist_first_rules``)
    nth, within = out.pop("nth", None), out.pop("first_rules_within", None)
    relist = bool(out["counted_by_table"]) and not best_proven(enumerator)
    return {
        **out,
        "relist_up_to": (config.threshold if nth is None else float(nth)) if relist else None,
        "relist_first_rules": within,  # (roots, empty list) the table found a list within it under
        "stopped": stopped,
        "out_of_memory": out_of_memory or code == _enum.OUT_OF_MEMORY,
        "lower_bound": float(enumerator.lower_bound()),
        "kept": enumerator.kept_members(),
        "evaluated": evaluated,
        "bytes": max(listing_bytes, int(enumerator.memory_bytes()) + table_bytes),
        "counters": enumerator.counters(),
        "threads": int(enumerator.threads),
        "seconds": time.perf_counter() - started,
        "through": enumerator.counts_through(report_pairs or []) if not for_table else [],
    }


def streamed_bound(enumerator: Any, stream: KeptStream) -> float:
    """The bound a task reports: below it the driver takes merged members as final. In objective
    order, the stream's (every kept list below it was reported); gone depth first, the kept lists
    are not streamed, so no larger than the best of them (``kept_best``: read in O(1), where
    reading the kept lists whole took 0.27 s a report at ``max_models`` 100,000)."""
    bound = stream.bound()
    if enumerator.ordered_order:
        return bound
    return min(bound, float(enumerator.kept_best))


def _count_subtree(
    config: EnumerationConfig, enumerator: Any, bound: float, task_id: int, reports: Any, watch: StopWatch
) -> dict[str, Any]:
    """Count the task's subtree with a ``TableCount`` on ``config.threads`` threads (the
    enumerator's roots and empty list), reading the stop watch and the memory limit every
    ``SYNC_SECONDS`` and reporting every ``COUNT_REPORT_SECONDS`` as the listing does (its count:
    the listed lists, and ``bound``, the listing's last; the exact count comes with the result).
    A stopped count is no count: the subtree then says what its listing proved, or the members
    under the first rules the table finished if they are more."""
    listed = int(enumerator.count)
    listing_bytes = int(enumerator.memory_bytes())
    enumerator.release_search()  # its queue and nodes: the table needs only the data
    table = TableCount(enumerator, count_memory_for(config.memory), config.threads)
    stopped = out_of_memory = False

    def should_stop() -> bool:
        nonlocal stopped, out_of_memory
        stopped = watch.stopped
        out_of_memory = not stopped and memory_reached(config.memory)
        return stopped or out_of_memory

    def report() -> None:
        found = max(listed, table.counted)  # both are members found so far, as in one process
        reports.put(("status", task_id, found, enumerator.n_evaluated + table.n_evaluated, bound, [], "counting"))

    # an error (or the worker shutting down): counters stopped first
    table.wait(COUNT_REPORT_SECONDS, should_stop, report, poll=SYNC_SECONDS)
    counted = table.count
    nth = table.nth_objective(max(int(config.options.get("max_models", 1000)), 1))
    return {
        "complete": counted is not None,
        "count": max(listed, table.counted) if counted is None else int(counted),
        "counted_by_table": counted is not None,
        "table": table.counters_summed(),
        "count_threads": len(table.counters),
        "listing_bytes": listing_bytes,
        "nth": nth,
        "first_rules_within": None
        if counted is None
        else table.first_rules_within(config.threshold if nth is None else nth),
        "stopped": stopped,
        "out_of_memory": out_of_memory or table.code == _enum.OUT_OF_MEMORY,
    }


def table_counts(
    units: engine.Units,
    regularization: float,
    threshold: float,
    floor: float,
    options: dict[str, Any],
    memory: int | None,
    stop_flag: np.ndarray,
) -> bool:
    """Whether the run counts by the tail table: when the set holds more than ``max_models``
    lists. Listed here in objective order on one thread for at most ``PROBE_EVALUATIONS``
    evaluations: it ends (a small set: listed on the cluster as before, mirrored pairs and pieces
    included) or it shows more than ``max_models`` lists, or the bound is not reached (a large
    set: counted)."""
    probe = make_enumerator(
        units, regularization, threshold, floor=floor, **{**options, "policy": "lower_bound"},
        queue_budget=queue_budget_for(memory),
    )  # fmt: skip
    probe.stop_when_kept = True
    max_models = int(options.get("max_models", 1000))
    while True:
        code = probe.run(0.05, stop_flag, PROBE_EVALUATIONS)
        if code == _enum.DONE:
            return int(probe.count) > max_models
        if code != _enum.SLICE or int(probe.count) > max_models or best_proven(probe):
            return True


def split_roots(
    units: engine.Units,
    regularization: float,
    threshold: float,
    max_len: int,
    n_subtrees: int,
    best_pieces: int | None = None,
    only: list[int] | None = None,
    include_empty: bool = True,
) -> list[EnumerationSubtree]:
    """The subtrees to enumerate, best bound first: the live roots dealt round-robin in bound order,
    and the best root first split into ``best_pieces`` pieces by its second rule (``None``: into
    as many as there would be idle workers, when fewer roots are live than ``n_subtrees``).
    ``only`` keeps the first rules among it, and ``include_empty`` the empty list (a relisting
    deals only those the table found a list within its threshold under).

    A prefix's bound is ``b + b0`` (its errors and penalty, plus the equivalent-points minority
    of what it leaves): every list starting with it is at least that, so a root, or a best root's
    second rule, above the threshold (with a margin for rounding) holds no member. A piece holds
    the lists whose second rule is one of its ``seconds`` (dealt round-robin in bound order), the
    first piece the one-rule list too: every list through the root is in exactly one piece. The
    empty list goes with the best subtree of whole roots (the first piece when there is none)."""
    search = engine.make_search(units, regularization)
    empty = float(search.evaluate([])["objective"])
    margin = 1e-7 * max(1.0, threshold)
    n_ants = units.caps.shape[0]

    def live(prefixes: list[list[int]]) -> list[tuple[float, int]]:
        scored = []
        for prefix in prefixes:
            scores = search.evaluate(prefix)
            bound = float(scores["b"] + scores["b0"])
            if bound <= threshold + margin:
                scored.append((bound, prefix[-1]))
        return sorted(scored)

    candidates = range(n_ants) if only is None else sorted(set(only))
    roots = live([[root] for root in candidates]) if max_len > 0 else []
    if best_pieces is None:
        best_pieces = n_subtrees - len(roots) + 1 if len(roots) < n_subtrees else 0
    pieces: list[EnumerationSubtree] = []
    if best_pieces > 1 and max_len > 1 and roots:
        bound, best = roots.pop(0)
        seconds = live([[best, s] for s in range(n_ants) if s != best])
        k = max(1, min(best_pieces, len(seconds)))
        for i in range(k):
            part = seconds[i::k]
            pieces.append(EnumerationSubtree([best], False, bound, seconds=[s for _, s in part], include_short=i == 0))
    n = max(1, min(n_subtrees, len(roots)))
    trees = []
    for i in range(n if roots or not pieces else 0):
        part = roots[i::n]
        with_empty = include_empty and i == 0
        bounds = [b for b, _ in part] + ([empty] if with_empty else [])
        trees.append(EnumerationSubtree([r for _, r in part], with_empty, bound=min(bounds, default=threshold)))
    if not trees and include_empty:
        pieces[0].include_empty, pieces[0].bound = True, min(pieces[0].bound, empty)
    return sorted(trees + pieces, key=lambda t: t.bound)


def enumerate_split_here(
    units: engine.Units,
    regularization: float,
    threshold: float,
    optimum: float,
    options: dict[str, Any],
    trees: list[EnumerationSubtree],
) -> list[tuple[int, int, float]]:
    """The subtrees enumerated one after another in this one process, each with its own
    enumerator (its own map), as the tasks do: what a split costs with no network, the reference
    the benchmark compares the cluster with. Returns each subtree's count, evaluations and
    seconds."""
    out = []
    stop = np.zeros(1, dtype=np.uint8)
    for tree in trees:
        started = time.perf_counter()
        enumerator = make_enumerator(
            units, regularization, threshold, floor=optimum, roots=tree.roots, include_empty=tree.include_empty,
            seconds=tree.seconds, include_short=tree.include_short, skip_pairs=tree.skip_pairs or None, **options,
        )  # fmt: skip
        while enumerator.run(5.0, stop, -1) == _enum.SLICE:
            pass
        count = int(enumerator.count) + sum(enumerator.counts_through(tree.report_pairs))
        out.append((count, int(enumerator.n_evaluated), time.perf_counter() - started))
    return out


class EnumerationDriver(Driver[EnumerationSubtree]):
    """Merges the subtrees' counts and kept members, and streams the members that are final."""

    key = "glasswork-rashomon"
    period = SYNC_SECONDS

    def __init__(
        self,
        connection: Connection,
        config: EnumerationConfig,
        ctx: SolveContext,
        merged: Merged,
        stream: Callable[[list[tuple[float, tuple[int, ...]]], float], None],
        ordered: bool,
        progress_interval: float,
        sent: set[tuple[int, ...]] | None = None,
    ) -> None:
        super().__init__(connection, config, ctx)
        from distributed import Event

        self.merged, self.stream, self.ordered, self.progress_interval = merged, stream, ordered, progress_interval
        self.stop_event = Event(config.names["stop"], client=self.client)
        self.peak_bytes = 0
        self.threads = 0  # the most threads a finished task ran with
        self.tasks: list[tuple[float, int, int]] = []  # each finished task's seconds, evaluations, bytes
        self.counters: dict[str, float] = {}
        self.table: dict[str, Any] = {}  # the tail tables' figures, summed over tasks
        self.needed_table = 0  # tasks whose listing stopped for the table
        self.counted_by_table = 0  # and those the table counted to the end
        self.count_threads = 0
        self.counting = False  # a task reported its table count running
        self.said_counting = False
        self.sent = set() if sent is None else sent  # the members streamed as final (shared by a run's phases)
        self.relisting: Relisting | None = None  # a counted task's best, to list again
        self.last_progress = -1.0

    def task(self, tree: EnumerationSubtree) -> tuple[Callable[..., dict[str, Any]], tuple[Any, ...]]:
        # ``emitted`` stays over a rerun: members already merged
        pieces = (tree.seconds, tree.include_short, tree.skip_pairs, tree.report_pairs)
        return enumerate_subtree, (tree.roots, tree.include_empty, *pieces)

    def halt(self) -> None:
        self.stop_event.set()

    def read(self, message: tuple[Any, ...], tree: EnumerationSubtree | None) -> None:
        _, _, emitted, evaluations, bound, fresh, phase = message
        self.counting = self.counting or phase == "counting"
        if tree is None:
            return  # a report of an earlier run of a resubmitted subtree
        tree.emitted, tree.evaluations, tree.reported = max(tree.emitted, emitted), evaluations, bound
        self.merged.keep(mirrored(tree, [(o, tuple(p)) for o, p in fresh]))

    def lost(self, tree: EnumerationSubtree) -> None:
        """What it reported, and its bound."""
        self.merged.count += tree.emitted
        self.merged.open_bounds.append(tree.open_bound)

    def finished(self, tree: EnumerationSubtree, out: dict[str, Any]) -> None:
        self.merged.count += out["count"] + sum(out["through"])  # and the lists left out elsewhere
        self.evaluated += out["evaluated"]
        kept = [(o, tuple(p)) for o, p in out["kept"]]
        if out.get("relist_up_to") is None:
            self.merged.keep(mirrored(tree, kept))
        else:  # its kept lists are not its best: held back, not streamed
            self.relisting = Relisting(
                float(out["relist_up_to"]), out["relist_first_rules"], kept, max(out["lower_bound"], tree.bound)
            )
        self.peak_bytes = max(self.peak_bytes, out["bytes"])
        self.threads = max(self.threads, out["threads"])
        self.tasks.append((round(out["seconds"], 3), out["evaluated"], out["bytes"]))
        self.needed_table += out["needed_table"]
        self.counted_by_table += out["counted_by_table"]
        self.count_threads = max(self.count_threads, out["count_threads"])
        for name, value in out["table"].items():
            self.table[name] = self.table.get(name, 0) + value
        for name, value in out["counters"].items():
            if name == "depth_first_from":  # -1: no task went depth first; else the latest switch
                self.counters[name] = max(self.counters.get(name, -1), int(value))
            elif name in ("tail_table_blocks", "tail_table_rules"):  # each task's table is of the same units
                self.counters[name] = max(self.counters.get(name, 0), int(value))
            elif name == "tail_table_seconds":  # the tasks' builds, added up
                self.counters[name] = self.counters.get(name, 0) + float(value)
            elif name not in ("max_queue", "nodes"):
                self.counters[name] = self.counters.get(name, 0) + int(value)
        if not out["complete"]:
            self.merged.open_bounds.append(max(out["lower_bound"], tree.bound))

    def polled(self, done: list[Any]) -> None:
        if self.counting and not self.said_counting:
            self.said_counting = True
            self.ctx.log("corels: a subtree's best lists are proven; the tail table counts the rest on the workers")
        if done or self.ctx.elapsed() - self.last_progress >= self.progress_interval:
            self.last_progress = self.ctx.elapsed()
            bound = self.open_bound()
            fresh = []
            if self.ordered:  # below every unfinished subtree's bound: final, and best first
                fresh = [(o, p) for o, p in self.merged.ranked() if o < bound and p not in self.sent]
                self.sent.update(p for _, p in fresh)
            self.stream(fresh, bound)

    def open_bound(self) -> float:
        """The smallest bound over what is not enumerated yet (inf when nothing is left)."""
        bounds = [tree.open_bound for tree in self.running.values()] + self.merged.open_bounds
        return min(bounds, default=float("inf"))

    def running_count(self) -> int:
        return self.merged.count + sum(tree.emitted for tree in self.running.values())


def enumerate_on_cluster(
    units: engine.Units,
    regularization: float,
    listing: Listing,
    *,
    options: dict[str, Any],
    threads: int = 1,
) -> tuple[RashomonSet, dict[str, Any]]:
    """Enumerate the set on ``ctx.executor``'s cluster; the set one process gives (same count,
    same members when ``max_models`` holds them all), and the run's statistics. ``threads``
    is each task's (``search.threads``: the enumerator's threads share its queue, and the table's
    counters its memo, as in one process).

    A set larger than ``max_models`` (``table_counts``) is counted by one task over every first
    rule: split by first rule, the tasks needed the same tables (a table depends on the rows it
    covers, not on the prefix that left them) and scored 1.73 times one process's rules on COMPAS.
    The best ``max_models`` are then listed again in a second task, up to the ``max_models``-th
    objective the table gives, under the first rules that reach it. A small set is listed split
    over every worker, with pieces and mirrored pairs."""
    started = time.perf_counter()
    request, threshold, optimum, ctx = listing.request, listing.threshold, listing.optimum, listing.ctx
    member = listing.member_builder({})

    with connected(ctx, "glasswork-rashomon", ("stop",)) as connection:
        n_workers = workers(connection.client)
        count = table_counts(units, regularization, threshold, optimum, options, ctx.limits.memory, ctx.stop_flag)
        ordered = options.get("policy", "lower_bound") in ORDERED_POLICIES
        task_options = options if ordered or not count else {**options, "policy": "lower_bound"}
        max_models = int(options.get("max_models", 1000))
        config = EnumerationConfig(
            units, regularization, task_options, connection.names, ctx.limits.memory, threshold, optimum,
            max(1, int(threads)), count,
            # counted: the listing before the table gives way as soon as one process's does
            queue_budget=queue_budget_for(ctx.limits.memory, max_models) if count else None,
        )  # fmt: skip
        max_len = int(options.get("max_prefix_length", 255))
        phases = _Phases(connection, ctx, member, listing, threshold, ordered or count, max_models)
        if count:  # one task, every first rule: its table is shared by its threads
            trees = split_roots(units, regularization, threshold, max_len, 1, 0)
            n_pairs = 0
        else:
            trees = split_roots(units, regularization, threshold, max_len, SUBTREES_PER_WORKER * n_workers)
            n_pairs = mirror_pairs(units, trees) if max_len > 1 else 0
        driver = phases.run(config, trees)
        relisting = driver.relisting
        counted, count_complete = driver.merged.count, not driver.merged.open_bounds
        listing_driver = driver
        if relisting is not None and not driver.stopping:
            # the count is exact; its best max_models are listed again in one task (one map: split
            # over two workers it evaluated twice the prefixes at COMPAS epsilon 0.01, 112 M)
            # its task builds the tail table at its first slice, as one process reads the count's
            # (the count's is in another process: building it again costs 0.15 s, sending it 58 MB)
            relist = dataclasses.replace(
                config,
                threshold=relisting.up_to,
                count=False,
                queue_budget=None,
                options={**config.options, "tail_after": 0},
            )
            only, empty = relisting.first_rules or (None, True)
            trees = split_roots(units, regularization, relisting.up_to, max_len, 1, 0, only, empty)
            listing_driver = phases.run(relist, trees, count_known=counted)
        elif relisting is not None:  # stopped before listing them: the count stays, the best are unproven
            driver.merged.keep(relisting.held_back)
            driver.merged.open_bounds.append(relisting.bound)
        merged = listing_driver.merged
        kept = [member(o, p) for o, p in merged.ranked()]
        open_bounds = driver.merged.open_bounds + (merged.open_bounds if listing_driver is not driver else [])
        complete = count_complete and not open_bounds
        # no list is below the certified optimum, and every member not enumerated is within the threshold
        bound = None if complete else float(min(max(min(open_bounds), optimum), threshold))
        ctx.rashomon(  # the exact count, and the kept lists not sent yet
            counted,
            [m for m, (_, p) in zip(kept, merged.ranked()) if p not in phases.sent],
            threshold=threshold,
            lower_bound=bound,
            nodes=phases.nodes(),
        )
        rset = RashomonSet(
            threshold=threshold,
            optimum=optimum,
            epsilon=request.epsilon,
            count=counted,
            complete=complete,
            members=kept,
            unenumerated_bound=bound,
        )
        stats = {
            **{f"rashomon_{k}": v for k, v in driver.counters.items()},
            "rashomon_evaluated": phases.evaluated,
            "rashomon_workers": n_workers,
            "rashomon_threads": max(d.threads for d in phases.drivers),
            "rashomon_subtrees": len(trees),
            "rashomon_mirrored_pairs": n_pairs,
            "rashomon_resubmitted": sum(d.resubmitted for d in phases.drivers),
            "rashomon_bytes": max(d.peak_bytes for d in phases.drivers),
            # the balance: (seconds, evaluations, bytes) per task, the count's first
            "rashomon_tasks": [t for d in phases.drivers for t in d.tasks],
            **{f"rashomon_{k}": v for k, v in driver.table.items()},
            "rashomon_count_method": (
                "tail table" if driver.needed_table and driver.counted_by_table == driver.needed_table else "listed"
            ),
            "rashomon_count_threads": driver.count_threads,
            "rashomon_seconds": time.perf_counter() - started,
        }
        if relisting is not None:
            stats["rashomon_relisted_up_to"] = relisting.up_to
            if relisting.first_rules is not None:
                stats["rashomon_relisted_first_rules"] = len(relisting.first_rules[0])
        return rset, stats


class _Phases:
    """The drivers of one enumeration run one after another on one connection (the count's task,
    then the listing of its best): what they streamed, their evaluations, and the stream itself."""

    def __init__(
        self,
        connection: Connection,
        ctx: SolveContext,
        member: Callable[[float, tuple[int, ...]], Any],
        listing: Listing,
        threshold: float,
        ordered: bool,
        max_models: int,
    ) -> None:
        self.connection, self.ctx, self.member, self.listing = connection, ctx, member, listing
        self.threshold, self.ordered, self.max_models = threshold, ordered, max_models
        self.sent: set[tuple[int, ...]] = set()  # the members streamed as final, by either phase
        self.drivers: list[EnumerationDriver] = []
        self.evaluated = 0  # the evaluations of the phases over

    def nodes(self) -> int:
        running = self.drivers[-1].evaluations() if self.drivers and not self.drivers[-1].over else 0
        return self.listing.nodes_before + self.evaluated + running

    def run(
        self, config: EnumerationConfig, trees: list[EnumerationSubtree], count_known: int | None = None
    ) -> EnumerationDriver:
        """Deal ``trees`` and run them to the end; streamed with the running count, or the count
        already known (the relisting's own count is of the lists it relists, not of the set)."""

        def stream(fresh: list[tuple[float, tuple[int, ...]]], bound: float) -> None:
            self.ctx.rashomon(
                driver.running_count() if count_known is None else count_known,
                [self.member(o, p) for o, p in fresh],
                threshold=self.threshold,
                lower_bound=None if not np.isfinite(bound) else bound,
                nodes=self.nodes(),
            )

        merged = Merged(self.max_models)
        driver = EnumerationDriver(
            self.connection, config, self.ctx, merged, stream, self.ordered, self.listing.progress_interval, self.sent
        )
        driver.nodes_before = self.listing.nodes_before + self.evaluated
        self.drivers.append(driver)
        for tree in trees:
            driver.submit(tree)
        driver.run()
        self.evaluated += driver.evaluated
        return driver
