"""Events a solver emits while it searches, and the sinks that receive them.

A solver never talks to a progress bar, a database or a terminal UI: it calls ``ctx.emit`` (or the
``progress`` / ``incumbent`` / ``log`` helpers) from its worker thread, the runner queues the
events and delivers them, on the runner's thread, to every sink through the one ``EventSink``
interface. A sink that raises is detached and reported; it never stops the search.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from glasswork.contract.model import jsonable
from glasswork.contract.record import Record, RunInfo, RunOutcome, finish_record, start_record
from glasswork.contract.result import relative_gap

if TYPE_CHECKING:
    from glasswork.contract.model import Model
    from glasswork.rashomon import RashomonMember, SetProgress

EventKind = Literal["progress", "incumbent", "log", "rashomon"]


@dataclass(frozen=True, slots=True)
class Event:
    """One observation of a running search.

    ``progress`` carries the bounds and counters; ``incumbent`` a newly found best model;
    ``log`` a message; ``rashomon`` members of the Rashomon set just enumerated (``members``,
    best first) with where the set stands in ``rashomon`` (``SetProgress``: the running count,
    the threshold, ...). ``counters`` holds solver-specific
    figures (queue size, cuts, log10 of the remaining search space, a histogram, ...) under names
    the monitor can show as they are.
    """

    kind: EventKind
    elapsed: float
    objective: float | None = None
    lower_bound: float | None = None
    nodes: int | None = None
    counters: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    level: Literal["debug", "info", "warning", "error"] = "info"
    model: Model | None = None
    members: tuple[RashomonMember, ...] = ()
    rashomon: SetProgress | None = None

    @property
    def gap(self) -> float | None:
        """Relative gap, with the same convention as ``Certificate.gap``."""
        return relative_gap(self.objective, self.lower_bound)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the events file and the run store keep this form)."""
        out: dict[str, Any] = {"kind": self.kind, "elapsed": round(self.elapsed, 6)}
        for name in ("objective", "lower_bound", "nodes", "message"):
            value = getattr(self, name)
            if value is not None:
                out[name] = jsonable(value)
        if self.gap is not None:
            out["gap"] = self.gap
        if self.kind == "log":
            out["level"] = self.level
        if self.counters:
            out["counters"] = jsonable(self.counters)
        if self.model is not None:
            out["model"] = self.model.to_dict()
            out["model_text"] = self.model.to_text()
        if self.members:
            out["members"] = [member.to_dict() for member in self.members]
        if self.rashomon is not None:  # record form 2; form 1 had its figures among the counters
            out["rashomon"] = self.rashomon.to_dict()
        return out


@runtime_checkable
class EventSink(Protocol):
    """Anything that follows a run: progress bar, events file, run store, terminal UI.

    The runner calls ``on_start`` once, ``on_event`` for every event in order, and
    ``on_finish`` exactly once, also when the run fails (then ``outcome`` is ``None`` and
    ``error`` says why).
    """

    def on_start(self, run: RunInfo) -> None: ...

    def on_event(self, event: Event) -> None: ...

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None: ...


class CollectingSink:
    """Keeps every event in memory; for tests, notebooks and the contract suite."""

    def __init__(self) -> None:
        self.run: RunInfo | None = None
        self.events: list[Event] = []
        self.outcome: RunOutcome | None = None
        self.error: BaseException | None = None
        self.finished = False

    def on_start(self, run: RunInfo) -> None:
        self.run = run

    def on_event(self, event: Event) -> None:
        self.events.append(event)

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        self.outcome, self.error, self.finished = outcome, error, True

    def of_kind(self, kind: EventKind) -> list[Event]:
        return [e for e in self.events if e.kind == kind]


class RecordSink:
    """An ``EventSink`` that turns a run into records and hands each, in order, to ``emit``.

    ``full`` keeps the split's row indices in the start record (the store's log and the sweep
    replies keep them, so a run can be reproduced; the events file and the UI do not need them).
    """

    def __init__(self, emit: Callable[[Record], None], *, full: bool = False) -> None:
        self.emit = emit
        self.full = full

    def on_start(self, run: RunInfo) -> None:
        self.emit(start_record(run, full=self.full))

    def on_event(self, event: Event) -> None:
        self.emit(event.to_dict())

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        self.emit(finish_record(run.run_id, outcome, error))


class JsonLinesSink(RecordSink):
    """Appends every record of a run to a JSON-lines file, flushed per line, so another process
    can tail it.

    The first line describes the run and the last one its end, so a follower knows both what it
    is watching and when to stop.
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__(self._write)
        self.path = Path(path)
        self._fh: IO[str] | None = None

    def _write(self, record: dict[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps(record, allow_nan=False) + "\n")
            self._fh.flush()

    def on_start(self, run: RunInfo) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a", encoding="utf-8")
        super().on_start(run)

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        super().on_finish(run, outcome, error)
        if self._fh is not None:
            self._fh.close()
            self._fh = None
