"""The CORELS Rashomon set: every rule list within a threshold of the certified optimum.

The plain search runs first and certifies the optimum ``R*`` (so the threshold
``(1 + epsilon) R*`` is known, and ``R*`` is the floor the restated support bounds use); then the
compiled enumerator (``cython_ext/corels_rashomon.pyx``) lists every rule list with objective at
most the threshold, in slices, like the search. Members come out best first with the
``lower_bound`` and ``objective`` policies (until the queue outgrows its budget; then depth first,
same set), so a run stopped by a limit still holds the best ones and an exact bound on the rest.
docs/maintainers/corels-proofs.md, "Which bounds stay, and why", proves them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from glasswork.contract.model import prediction_fingerprint
from glasswork.contract.solver import SolveContext, StopReason
from glasswork.cython_ext import corels_rashomon as _enum
from glasswork.data import Problem
from glasswork.plugins.corels.bounds import KEPT_BOUNDS  # ablations that apply to the set
from glasswork.plugins.corels.model import RuleList
from glasswork.plugins.corels.search.engine import Units
from glasswork.rashomon import RashomonMember, RashomonSet
from glasswork.spec.models import RashomonSpec

SLICE_SECONDS = 0.005

# best first holds every open prefix (32 bytes a queue entry): past this many entries the
# enumerator goes on depth first (a queue of about depth x antecedents), so a large set costs
# time, not all the memory; a quarter of ``limits.memory`` when that is smaller
QUEUE_BUDGET_ENTRIES = 1 << 25
QUEUE_ENTRY_BYTES = 32
# the listing's queue per member kept (8 KiB a member), at least QUEUE_ENTRIES_MIN: past it the
# table counts and the best are listed again under the first rules it found them under, which
# costs less than a longer listing at every COMPAS epsilon measured (0.01 to 0.05; 4,096 before)
QUEUE_ENTRIES_PER_MODEL = 256
QUEUE_ENTRIES_MIN = 1 << 16

# the tail table's memory (TailCounter): past it, entries are dropped and recomputed when asked
TABLE_BUDGET_BYTES = 2 << 30
# a listing not in objective order (bfs, dfs, curiosity) that has not ended after this long gives
# way to the table (best first gone depth first gives way at once): small sets stay listed
UNORDERED_LISTING_SECONDS = 1.0


def make_enumerator(
    units: Units,
    regularization: float,
    threshold: float,
    *,
    floor: float = 0.0,
    policy: str = "lower_bound",
    max_prefix_length: int = 255,
    threads: int = 1,
    max_models: int = 1000,
    roots: Iterable[int] | None = None,
    include_empty: bool = True,
    ablation: Iterable[str] = (),
    symmetry_map: bool = True,
    collapse_orderings: bool = True,
    queue_budget: int | None = None,
    seconds: Iterable[int] | None = None,
    include_short: bool = True,
    skip_pairs: Iterable[tuple[int, int]] | None = None,
    tail_after: int | None = None,
) -> Any:
    """A ready ``Enumerator`` of every list with objective ``<= threshold``.

    ``floor`` is a lower bound on the optimum over the same antecedents and length cap (the
    certified optimum, or a stopped search's lower bound); ``roots`` keeps only lists whose first
    rule is one of them (with ``include_empty`` deciding the list without rules), so the prefix
    space can be split into subtrees enumerated apart (``seconds`` and ``include_short`` split
    one first rule further, by its second; ``skip_pairs`` leaves out the lists starting with those
    two rules); ``ablation`` names bounds to switch off
    and ``symmetry_map=False`` the map of prefixes by the rows they leave (each restated against
    the threshold);
    ``collapse_orderings=False`` expands every ordering of equal error instead of counting it
    with the one it mirrors. ``queue_budget`` (queue entries; ``None``: none) turns the
    ``lower_bound``/``objective`` order into depth first once the queue outgrows it: the count,
    the set and the best ``max_models`` are the same, only the streaming in objective order stops.
    ``tail_after``: the children scored before the tail table is built (None: as many as its build
    costs; 0: at the first slice).
    """
    off = {KEPT_BOUNDS[name] for name in ablation if name in KEPT_BOUNDS}
    return _enum.Enumerator(
        *units.problem(),
        float(regularization),
        float(threshold),
        floor=float(floor),
        policy=policy,
        max_prefix_length=int(max_prefix_length),
        threads=int(threads),
        max_models=int(max_models),
        roots=None if roots is None else [int(r) for r in roots],
        include_empty=include_empty,
        **{switch: switch not in off for switch in set(KEPT_BOUNDS.values())},
        symmetry_map=symmetry_map,
        collapse_orderings=collapse_orderings,
        queue_budget=-1 if queue_budget is None else int(queue_budget),
        seconds=None if seconds is None else [int(r) for r in seconds],
        include_short=include_short,
        skip_pairs=None if skip_pairs is None else [(int(a), int(b)) for a, b in skip_pairs],
        **({} if tail_after is None else {"tail_after": int(tail_after)}),
    )


def queue_budget_for(memory_limit: float | None, max_models: int | None = None) -> int:
    """The plugin's choice of queue budget (entries): no knob for the user. With ``max_models``,
    at most ``QUEUE_ENTRIES_PER_MODEL`` entries per member kept (at least 2^16): a set larger
    than that gives way to the table (which counts it in its own, small memory) and its best
    ``max_models`` are listed again up to the table's ``max_models``-th objective, so the listing
    holds about ``max_models``, not the set's frontier."""
    budget = QUEUE_BUDGET_ENTRIES
    if memory_limit is not None:
        budget = max(1024, min(budget, int(memory_limit) // 4 // QUEUE_ENTRY_BYTES))
    if max_models is not None:
        budget = min(budget, max(QUEUE_ENTRIES_MIN, QUEUE_ENTRIES_PER_MODEL * max(int(max_models), 1)))
    return budget


def threshold_for(request: RashomonSpec, optimum: float) -> float:
    """The absolute threshold: ``(1 + epsilon) * optimum`` or the spec's own."""
    if request.threshold is not None:
        return float(request.threshold)
    assert request.epsilon is not None
    return (1.0 + float(request.epsilon)) * optimum


def member_builder(
    request: RashomonSpec,
    build: Callable[[list[int]], RuleList],
    problem: Problem,
    feature_names: Callable[[list[int]], tuple[str, ...]],
    members: dict[tuple[int, ...], RashomonMember],
) -> Callable[[float, tuple[int, ...]], RashomonMember]:
    """The member of a list given by its antecedent ids, built once and cached in ``members``
    (a list is streamed once and kept at the end: it must be one object)."""

    def member(objective: float, prefix: tuple[int, ...]) -> RashomonMember:
        if prefix not in members:
            rules = build(list(prefix))
            members[prefix] = RashomonMember(
                objective=float(objective),
                features=feature_names(list(prefix)),
                fingerprint=prediction_fingerprint(rules.predict(problem.X)),
                model=rules if request.keep == "model" else None,
            )
        return members[prefix]

    return member


@dataclass(frozen=True)
class Listing:
    """What an enumeration needs to stream the set's members, in one process or on the cluster:
    the request, its threshold and the optimum, the run's context, how a list and the features it
    uses are built, the search's node count so far and how often progress is reported."""

    request: RashomonSpec
    threshold: float
    optimum: float
    ctx: SolveContext
    build: Callable[[list[int]], RuleList]
    problem: Problem
    feature_names: Callable[[list[int]], tuple[str, ...]]
    nodes_before: int = 0
    progress_interval: float = 0.25

    def member_builder(
        self, members: dict[tuple[int, ...], RashomonMember]
    ) -> Callable[[float, tuple[int, ...]], RashomonMember]:
        return member_builder(self.request, self.build, self.problem, self.feature_names, members)


class KeptStream:
    """What a listing in objective order has newly kept, to stream, and the bound to send with it.

    Each ``fresh()`` returns the kept lists not returned before: the emitted ones, in objective
    order, and the orderings collapsed onto a kept list (twins: counted, never emitted), which the
    enumerator finds later and which take that list's objective. A twin is found under an expansion
    whose key bounds it (keys only grow down a path), so one found after a time ``t`` is at least
    the enumerator's bound at ``t``. Finding them means reading the kept lists whole (0.26 s at
    ``max_models`` 100,000), so that is done at most once per ``READ_RATIO`` times its cost; in
    between, ``bound()`` is capped at the bound of the last read, and an emitted list may be
    returned that twins found since push out of the best ``max_models`` (a consumer holding the
    best ``max_models`` drops it). Every list not returned yet is at least ``bound()``, so a
    consumer may take what it holds below it as final."""

    READ_RATIO = 25  # a whole read at most every 25 times its own duration: at most 4 % of the time

    def __init__(self, enumerator: Any, sent: set[tuple[int, ...]] | None = None) -> None:
        self.enumerator = enumerator
        self.sent = set() if sent is None else sent  # shared with a later listing of the same set
        self._emitted = 0  # kept_since's position
        self._collapsed = 0  # the twins there were at the last whole read
        self._clean_bound = -np.inf  # the bound when no twin was unread
        self._next_read = 0.0  # monotonic time after which a whole read is due

    def fresh(self, *, whole: bool = False) -> list[tuple[float, tuple[int, ...]]]:
        """The kept lists not returned yet (``whole``: read every kept list now, unthrottled)."""
        enumerator = self.enumerator
        if not enumerator.ordered_order:
            return []
        new = enumerator.kept_since(self._emitted)
        self._emitted += len(new)
        collapsed = int(enumerator.n_collapsed)
        if collapsed != self._collapsed and (whole or time.monotonic() >= self._next_read):
            started = time.monotonic()
            new = enumerator.kept_members()  # the emitted ones too, less any twins pushed out
            self._collapsed = collapsed
            self._next_read = time.monotonic() + self.READ_RATIO * (time.monotonic() - started)
        if collapsed == self._collapsed:
            self._clean_bound = float(enumerator.lower_bound())
        fresh = [(o, p) for o, p in new if p not in self.sent]
        self.sent.update(p for _, p in fresh)
        return fresh

    def bound(self) -> float:
        """The enumerator's bound, capped by the last one with no twin unread: every kept list
        not returned by ``fresh`` yet is at least this."""
        bound = float(self.enumerator.lower_bound())
        return bound if int(self.enumerator.n_collapsed) == self._collapsed else min(bound, self._clean_bound)


def best_proven(enumerator: Any) -> bool:
    """Are the enumerator's kept lists provably the best ``max_models`` of its set (the heap full
    and its worst at most the bound on everything not listed)? Then the table may count the rest.
    Out of objective order ``lower_bound()`` scans the queue: ask it now and then, not every slice."""
    worst = enumerator.kept_worst  # inf until max_models are kept
    return bool(worst < np.inf and worst <= enumerator.lower_bound())


def count_memory_for(memory_limit: float | None) -> int:
    """The tail table's memory budget (bytes): half of ``limits.memory``, 2 GiB without one."""
    if memory_limit is None:
        return TABLE_BUDGET_BYTES
    return max(1 << 20, int(memory_limit) // 2)


def enumerate_rashomon(
    enumerator: Any,
    listing: Listing,
    *,
    count_memory: int | None = None,
    relist: Callable[[float, list[int], bool], Any] | None = None,
    stats: dict[str, Any] | None = None,
) -> tuple[RashomonSet, int]:
    """Run ``enumerator`` to the end or to a limit, streaming members (best first, when the
    policy enumerates in objective order) through ``ctx.rashomon``; returns the set and the
    enumerator's last return code.

    With ``count_memory`` (bytes for the tail table) the set is counted, not listed, once listing it
    would not pay: the listing stops as soon as the kept lists are provably the best ``max_models``
    (the worst kept is at most the bound on everything not listed), or, with ``relist``, as soon as
    it is not in objective order (another policy, or best first gone depth first); a ``TailCounter``
    counts the whole set, and ``relist(t, roots, empty)`` (an enumerator of the lists within ``t``
    whose first rule is among ``roots``, and the empty list when ``empty``: those the table found
    one within ``t`` under) then lists the best ``max_models`` again up to the objective of the
    ``max_models``-th, which the table gives. If the listing ends first, its own count is exact and
    nothing else runs. A count stopped by a limit is no count: the set then says what the listing
    proved (``complete`` false, the listed members, the listing's bound), or the members under the
    first rules the table finished if they are more (each finished part is exact; an unfinished one
    adds nothing)."""
    request, threshold, optimum, ctx = listing.request, listing.threshold, listing.optimum, listing.ctx
    nodes_before, progress_interval = listing.nodes_before, listing.progress_interval
    members: dict[tuple[int, ...], RashomonMember] = {}
    member = listing.member_builder(members)
    info = stats if stats is not None else {}
    info["rashomon_count_method"] = "listed"
    sent: set[tuple[int, ...]] = set()
    started = time.perf_counter()
    code, stopped_early = _list(
        enumerator, ctx, threshold, nodes_before, progress_interval, member, sent, count_memory, relist is not None
    )
    info["rashomon_listing_seconds"] = time.perf_counter() - started
    counted: int | None = None
    partial = 0
    info["rashomon_listed"] = int(enumerator.count)
    listed_best = True
    if stopped_early:
        info["rashomon_listing_bytes"] = int(enumerator.memory_bytes())
        enumerator.release_search()  # its queue and nodes (GBs at COMPAS 0.05): the table needs only the data
        code, counter = _count_by_table(
            enumerator, count_memory or 0, ctx, threshold, nodes_before, progress_interval, info
        )
        counted, partial = counter.count, counter.counted
        proven = enumerator.kept_worst <= enumerator.lower_bound()
        if counted is not None and not proven and relist is not None:
            # list the best max_models again, up to the objective of the max_models-th (ties too)
            nth = counter.nth_objective(max(int(request.max_models), 1))
            before = nodes_before + enumerator.n_evaluated + counter.n_evaluated
            upto = threshold if nth is None else nth
            roots, empty = counter.first_rules_within(upto)
            tails = enumerator.tail_table  # the count's: the relisting reads it from its first child
            enumerator = relist(upto, roots, empty)
            if tails is not None:
                enumerator.use_tail_table(tails)
            info["rashomon_relisted_up_to"] = upto
            info["rashomon_relisted_first_rules"] = len(roots)
            started = time.perf_counter()
            code, _ = _list(enumerator, ctx, threshold, before, progress_interval, member, sent, None, False)
            info["rashomon_relisting_seconds"] = time.perf_counter() - started
            info["rashomon_relisting_evaluated"] = int(enumerator.n_evaluated)
            info["rashomon_relisting_pruned_tail_table"] = int(enumerator.counters()["pruned_tail_table"])
            listed_best = bool(enumerator.complete)
        elif not proven:
            listed_best = False
    kept = [member(obj, prefix) for obj, prefix in enumerator.kept_members()]
    complete = (counted is not None and listed_best) or (not stopped_early and bool(enumerator.complete))
    # a stopped count: the members of the first rules it finished, or the listed ones if more
    count = counted if counted is not None else max(int(enumerator.count), partial)
    bound = enumerator.lower_bound()
    ctx.rashomon(  # the exact count, and the kept lists not sent yet (the orderings collapsed)
        count,
        [m for m, (_, prefix) in zip(kept, enumerator.kept_members()) if prefix not in sent],
        threshold=threshold,
        lower_bound=None if complete or not np.isfinite(bound) else bound,
        nodes=nodes_before + enumerator.n_evaluated + int(info.get("rashomon_count_evaluated", 0)),
    )
    return (
        RashomonSet(
            threshold=threshold,
            optimum=optimum,
            epsilon=request.epsilon,
            count=count,
            complete=complete,
            members=kept,
            # no list is below the certified optimum: a bound under it says less than it
            unenumerated_bound=None if complete else float(min(max(bound, optimum), threshold)),
        ),
        int(code),
    )


def _list(
    enumerator: Any,
    ctx: SolveContext,
    threshold: float,
    nodes_before: int,
    progress_interval: float,
    member: Callable[[float, tuple[int, ...]], RashomonMember],
    sent: set[tuple[int, ...]],
    count_memory: int | None,
    count_unordered: bool,
) -> tuple[int, bool]:
    """Run the listing in slices until it ends, a limit stops it, or (with ``count_memory``) the
    table should count the rest; the enumerator's code and whether it stopped for the table."""
    node_limit = -1 if ctx.limits.nodes is None else max(int(ctx.limits.nodes) - nodes_before, 0)
    last = -1.0
    checked = -1.0
    stream = KeptStream(enumerator, sent)
    started = ctx.elapsed()
    enumerator.stop_when_kept = count_memory is not None
    while True:
        if count_memory is not None and not enumerator.complete:
            if (
                count_unordered
                and not enumerator.ordered_order
                and (enumerator.switched_at >= 0 or ctx.elapsed() - started >= UNORDERED_LISTING_SECONDS)
            ):
                return _enum.SLICE, True  # not in objective order: count first, list the best after
            if enumerator.kept_worst < np.inf and (enumerator.ordered_order or ctx.elapsed() - checked >= 0.05):
                checked = ctx.elapsed()  # (unordered: a scan of the queue)
                if best_proven(enumerator):
                    return _enum.SLICE, True  # the kept lists are the best max_models
        code = enumerator.run(SLICE_SECONDS, ctx.stop_flag, node_limit)
        if code == _enum.SLICE and ctx.check(nodes_before + enumerator.n_evaluated) is not None:
            code = _enum.STOPPED
        now = ctx.elapsed()
        if code != _enum.SLICE or now - last >= progress_interval:
            last = now
            fresh = stream.fresh(whole=code != _enum.SLICE)
            bound = stream.bound()
            ctx.rashomon(
                enumerator.n_emitted,  # the orderings collapsed onto them are counted at the end
                [member(obj, prefix) for obj, prefix in fresh],
                threshold=threshold,
                lower_bound=None if not np.isfinite(bound) else bound,
                nodes=nodes_before + enumerator.n_evaluated,
            )
        if code != _enum.SLICE:
            return code, False


class TableCount:
    """A set counted by tail tables on ``threads`` threads: one ``TailCounter`` per thread, all
    sharing one memo of ``memory`` bytes (a table depends on the rows it covers, not on the first
    rule, so one thread's tables serve the others), each taking the next first rule from a shared
    list, heaviest first. A list is in the part of its first rule, so the parts' counts add up.
    ``count`` is None unless every part was counted. Each part's best objective is kept
    (``first_rules_within``): listing the best again needs only the first rules that reach them."""

    def __init__(self, enumerator: Any, memory: int, threads: int, max_evaluations: int = -1) -> None:
        threads = max(int(threads), 1)
        # the search's tail table over the set's units: every counter reads it (a count is long: the
        # set outgrew its listing), and so does the enumerator that lists the best again
        enumerator.build_tail_table(threads)
        self.max_evaluations = max_evaluations  # rules scored by all counters (-1: no limit)
        self.memo = _enum.TailMemo(max(int(memory), 0), 64 if threads > 1 else 1)
        self.counters = [_enum.TailCounter(enumerator, memo=self.memo) for _ in range(threads)]
        self._parts: deque[tuple[list[int], bool]] = deque(([r], False) for r in self.counters[0].root_order())
        self._parts.append(([], True))  # the empty list (counted when the enumerator holds it)
        self.flag = np.zeros(1, dtype=np.uint8)  # stops every counter: set by ``stop`` or a failed part
        self._failed: list[int] = []
        self._counted = [0] * threads  # each counter's members in the parts it finished
        self._best: dict[int, float] = {}  # a finished part's best objective, by first rule (-1: the empty list)
        self._lock = threading.Lock()
        self._workers = [
            threading.Thread(target=self._work, args=(i, c), name=f"rashomon-count-{i}", daemon=True)
            for i, c in enumerate(self.counters)
        ]
        for worker in self._workers:
            worker.start()

    def _work(self, index: int, counter: Any) -> None:
        while not self.flag[0]:
            with self._lock:
                if not self._parts:
                    return
                roots, empty = self._parts.popleft()
            limit = -1  # a part may use what the others left (exact on one thread)
            if self.max_evaluations >= 0:
                limit = counter.n_evaluated + max(self.max_evaluations - self.n_evaluated, 0)
            before = dict(counter.cells())  # (objective, how many) over the parts this counter finished
            code = counter.count_part(roots, empty, 1e12, self.flag, limit)  # releases the GIL
            if code != _enum.DONE:
                with self._lock:
                    self._failed.append(int(code))
                self.flag[0] = 1
            else:
                self._counted[index] = int(counter.count)
                grown = [objective for objective, n in counter.cells() if n > before.get(objective, 0)]
                if grown:  # the part's members: the cells it added to
                    self._best[roots[0] if roots else -1] = min(grown)

    def alive(self) -> bool:
        return any(worker.is_alive() for worker in self._workers)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the counters (at most about ``timeout`` seconds)."""
        until = None if timeout is None else time.monotonic() + timeout
        for worker in self._workers:
            worker.join(None if until is None else max(until - time.monotonic(), 0.0))

    def stop(self) -> None:
        self.flag[0] = 1

    def wait(
        self,
        period: float,
        should_stop: Callable[[], bool],
        tick: Callable[[], None],
        *,
        poll: float | None = None,
    ) -> int:
        """Wait for the counters, joining them in slices of ``poll`` seconds (``period`` when
        None): after each, stop them once ``should_stop()`` says so (asked until it does), and
        call ``tick()`` every ``period`` seconds. Whatever leaves the loop by an exception (one
        from ``should_stop`` or ``tick``, a Ctrl-C) stops and joins the counters before it goes
        on, so no thread outlives the count. Returns ``code``."""
        poll = period if poll is None else poll
        last = time.monotonic()
        stopping = False
        try:
            while self.alive():
                self.join(poll)
                if not stopping and should_stop():
                    stopping = True
                    self.stop()
                if time.monotonic() - last >= period:
                    last = time.monotonic()
                    tick()
        except BaseException:
            self.stop()
            self.join()
            raise
        return self.code

    @property
    def code(self) -> int:
        """DONE once every part is counted; else why not (STOPPED when stopped between parts)."""
        if self._failed:
            return self._failed[0]
        if self._parts or self.alive():
            return _enum.STOPPED
        return _enum.OVERFLOW if sum(int(c.count or 0) for c in self.counters) >= 1 << 64 else _enum.DONE

    @property
    def count(self) -> int | None:
        """The exact size of the set (below 2^64, as one counter's) once every part is counted."""
        if self.code != _enum.DONE:
            return None
        return sum(int(c.count or 0) for c in self.counters)

    @property
    def counted(self) -> int:
        """The members in the parts finished so far: exact for them, so a lower bound on the
        count while counting or after a stop."""
        return sum(self._counted)

    @property
    def n_evaluated(self) -> int:
        return sum(int(c.n_evaluated) for c in self.counters)

    def nth_objective(self, n: int) -> float | None:
        """The objective of the ``n``-th best member (1-based), from every counter's cells."""
        if self.count is None:
            return None
        return _enum.nth_objective([cell for c in self.counters for cell in c.cells()], n)

    def first_rules_within(self, objective: float) -> tuple[list[int], bool]:
        """The first rules whose lists include one within ``objective`` (with the member test's
        tolerance), and whether the empty list is within it, once every part is counted: a
        listing up to ``objective`` needs no other first rule (its parts hold no such list)."""
        assert self.count is not None
        within = objective + 1e-9 * max(1.0, abs(objective))
        roots = sorted(r for r, best in self._best.items() if r >= 0 and best <= within)
        return roots, self._best.get(-1, np.inf) <= within

    def counters_summed(self) -> dict[str, Any]:
        """The counters' figures added up (their seconds: the longest, as the threads overlap; the
        memo's peak: the shared memo's)."""
        out: dict[str, Any] = {}
        for counter in self.counters:
            for name, value in counter.counters().items():
                if name in ("count_seconds", "memo_peak_bytes"):
                    out[name] = max(out.get(name, 0), value)
                else:
                    out[name] = out.get(name, 0) + value
        return out


def _count_by_table(
    enumerator: Any,
    memory: int,
    ctx: SolveContext,
    threshold: float,
    nodes_before: int,
    progress_interval: float,
    info: dict[str, Any],
) -> tuple[int, TableCount]:
    """Count the set with a ``TableCount`` on the enumerator's threads while this one polls the
    limits (stopping the counters when one is reached) and keeps the ``rashomon`` events flowing
    (the listed count; the exact count comes at the end). Returns the count's code and the count
    (its ``count`` None unless it finished)."""
    listed = int(enumerator.count)
    before = nodes_before + enumerator.n_evaluated
    node_limit = -1 if ctx.limits.nodes is None else max(int(ctx.limits.nodes) - before, 0)
    table = TableCount(enumerator, memory, int(enumerator.threads), node_limit)
    bound = enumerator.lower_bound()

    def limit_reached() -> bool:
        return ctx.check(before + table.n_evaluated) is not None or bool(ctx.stop_flag[0])

    def progress() -> None:
        ctx.rashomon(
            max(listed, table.counted),  # both are members found so far
            [],
            threshold=threshold,
            lower_bound=None if not np.isfinite(bound) else bound,
            nodes=before + table.n_evaluated,
        )

    try:
        code = table.wait(progress_interval, limit_reached, progress, poll=min(progress_interval, 0.05))
    except BaseException:  # a Ctrl-C here: the counters are stopped; the run stops too
        ctx.request_stop(StopReason.CANCEL)
        raise
    table.memo.clear()  # the count is over (its cells stay with the counters)
    info["rashomon_count_method"] = "tail table" if code == _enum.DONE else "listed"
    info.update({f"rashomon_{k}": v for k, v in table.counters_summed().items()})
    info["rashomon_count_threads"] = len(table.counters)
    given = (  # what enumerate_rashomon then reports: max(listed, counted), both members found
        "the count given is a lower bound: the lists listed, or the members under the first rules "
        "the table finished if they are more"
    )
    if code == _enum.OVERFLOW:
        ctx.log(f"corels: the Rashomon set has more than 2^64 lists, too many to count; {given}", level="warning")
    elif code == _enum.OUT_OF_MEMORY:
        ctx.log(
            f"corels: the Rashomon count ran out of memory; {given}. Raise limits.memory (the table gets half of it)",
            level="warning",
        )
    return code, table


def unproven_set(request: RashomonSpec, objective: float, lower_bound: float, incumbent: RashomonMember) -> RashomonSet:
    """The set a stopped search gives (core's rule, ``RashomonSet.unproven``): its incumbent."""
    return RashomonSet.unproven(incumbent, threshold_for(request, objective), lower_bound, epsilon=request.epsilon)
