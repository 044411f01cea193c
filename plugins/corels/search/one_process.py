"""The CORELS search in this one process: the compiled search runs in slices of a few milliseconds
with the GIL released; between slices the run's progress is reported, new incumbents announced,
and the runner's stop flag (cancel, time, memory) or the node limit ends the search. ``nodes``
counts prefixes evaluated (lower-bound evaluations, as the paper's tables do)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glasswork.contract.result import Status
from glasswork.contract.solver import SolveContext
from glasswork.cython_ext import corels as _corels
from glasswork.memory import resident_memory
from glasswork.plugins.corels.model import RuleList
from glasswork.plugins.corels.search import engine
from glasswork.plugins.corels.search.engine import SpillError, spill_budget
from glasswork.plugins.corels.spec import CorelsSearch

SLICE_SECONDS = 0.005


def search_here(
    search: Any, search_opts: CorelsSearch, ctx: SolveContext, build: Callable[[list[int]], RuleList], M: int
) -> tuple[Status, float]:
    """Run ``search`` to its end or a limit, spilling its queue per ``search.spill``; its status and
    lower bound (the optimum when it ended)."""
    node_limit = -1 if ctx.limits.nodes is None else int(ctx.limits.nodes)
    best_seen = search.objective
    if search.feasible:  # under a fairness constraint the empty list may not meet it
        ctx.incumbent(best_seen, build(search.best_prefix), nodes=0)
    last_progress = -1.0
    code = _corels.SLICE
    with spill_space(search, search_opts.spill, ctx):
        while True:
            code = search.run(SLICE_SECONDS, ctx.stop_flag, node_limit)
            if search.objective < best_seen:
                best_seen = search.objective
                ctx.incumbent(best_seen, build(search.best_prefix), nodes=search.n_evaluated)
            if code == _corels.SPILL_ERROR:
                raise SpillError(
                    f"corels: the queue's spill files failed: {search.spill_error}; free space there, point "
                    "TMPDIR at a disk with room, or set search.spill: off (the run has no certificate)"
                )
            if code != _corels.SLICE:
                break
            if ctx.check(search.n_evaluated) is not None:
                code = _corels.STOPPED
                break
            now = ctx.elapsed()
            if now - last_progress >= search_opts.progress_interval:
                last_progress = now
                report_progress(ctx, search, M)
        report_progress(ctx, search, M)

    return ended(search, code, ctx)


def ended(search: Any, code: int, ctx: SolveContext) -> tuple[Status, float]:
    """What a search that returned ``code`` (not ``SLICE``) ends with: its status and lower bound
    (the optimum when it ended)."""
    if code == _corels.DONE:
        return Status.OPTIMAL, search.objective
    if code == _corels.NODE_LIMIT:
        status = Status.STOPPED_NODES
    elif code == _corels.OUT_OF_MEMORY:
        status = Status.STOPPED_MEMORY
    else:
        reason = ctx.stop_reason
        status = reason.status if reason.value != 0 else Status.STOPPED_TIME
    return status, min(search.lower_bound(), search.objective)


def spill_space(search: Any, setting: str | int, ctx: SolveContext) -> Any:
    """The block in which ``search`` spills its queue per ``search.spill`` (engine.spill_directory)."""
    budget = spill_budget(setting, ctx.limits.memory, resident_memory())
    return engine.spill_directory(
        search, budget, auto=setting == "auto", warn=lambda message: ctx.log(message, level="warning")
    )


def report_progress(ctx: SolveContext, search: Any, M: int) -> None:
    """One progress event: the incumbent and bound, and the queue, trie, map and memory the monitor draws."""
    lengths, pairs = search.queue_summary()
    spilled = {"spilled": search.spilled_size, "spill_bytes": search.spill_bytes} if search.spilled_size else {}
    ctx.progress(
        objective=search.objective,
        lower_bound=min(search.lower_bound(), search.objective),
        nodes=search.n_evaluated,
        queue=search.queue_size,
        trie=search.trie_size,
        map=search.map_size,
        log10_remaining=engine.log10_remaining(pairs, M),
        queue_lengths={str(k): v for k, v in sorted(lengths.items())},
        search_bytes=search.memory_bytes(),
        **spilled,
    )
