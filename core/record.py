"""The run record: one run as the records every producer and consumer of runs exchanges.

A run is a ``start`` record (who and what the run is: ``RunInfo``), its events in order
(``Event.to_dict()`` forms: ``progress``, ``incumbent``, ``log``, ``rashomon``) and a ``finish`` record (the
result document of the finished run, ``RunOutcome``, or the error that ended it). The events
file, the run store's write-ahead log, the sweep workers' replies, crash recovery and the terminal
UI all speak this one form, built and read by the functions below, so none of them builds a
record of its own.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.events import Event
    from glasswork.result import Result, Status


@dataclass
class RunInfo:
    """Who and what a run is; sinks receive it first, and it is the start record."""

    run_id: str
    name: str
    solver: str
    solver_version: str
    spec_hash: str
    spec: dict[str, Any]
    spec_path: str | None
    data_fingerprint: str
    n_train: int
    n_test: int
    n_features: int
    started_at: str
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    split: dict[str, list[int]] | None = field(default=None, repr=False)
    sweep_id: str | None = None
    sweep_point: dict[str, Any] | None = None
    # how the model's feature columns come from the raw columns (glasswork.export.ModelInputs)
    inputs: dict[str, Any] | None = field(default=None, repr=False)

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """JSON-ready; the split's row indices and the inputs (long) only with ``full``."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        if not full:
            out.pop("split")
            out.pop("inputs")
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunInfo:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass
class RunOutcome:
    """A finished run: its identity, the solver's result, and how long and how big it was.

    It lives here, with ``RunInfo``, so that every module naming it (the sinks in ``events``, the
    store's journal, the run path) imports it without importing the run path itself."""

    info: RunInfo
    result: Result
    elapsed: float
    peak_memory: int
    problem: Problem | None = None
    interrupted: bool = False  # a Ctrl-C (or SIGTERM, or a cancel) arrived while the solver ran
    # the Rashomon set's multiplicity figures (glasswork.rashomon.multiplicity), when the run has a set
    multiplicity: dict[str, Any] | None = None
    # the fairness audit (glasswork.audit), when the spec has a ``fairness:`` section
    fairness: dict[str, Any] | None = None

    @property
    def status(self) -> Status:
        return self.result.certificate.status

    @property
    def no_model(self) -> str | None:
        """Why the run has no model (``glasswork.result.no_model_reason``), ``None`` when it has one."""
        if self.result.model is not None:
            return None
        from glasswork.result import no_model_reason

        return no_model_reason(self.status, self.info.spec.get("constraints"))

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
                "model_size": None if self.result.model is None else self.result.model.size,
            },
            "spec_hash": self.info.spec_hash,
            "data_fingerprint": self.info.data_fingerprint,
            **self._rashomon(),
            **({} if self.fairness is None else {"fairness": self.fairness}),
            **({} if self.no_model is None else {"no_model": self.no_model}),
        }

    def _rashomon(self) -> dict[str, Any]:
        """``{"rashomon": ...}`` with every kept member and the multiplicity figures, or ``{}``
        for a run without a set (its document is as before the set existed)."""
        rashomon = self.result.rashomon
        if rashomon is None:
            return {}
        return {"rashomon": {**rashomon.to_dict(), "multiplicity": self.multiplicity}}


Record = dict[str, Any]  # one record; ``kind`` says which


def error_text(error: BaseException | str) -> str:
    """How a run's error reads in its finish record: ``Type: message``."""
    return error if isinstance(error, str) else f"{type(error).__name__}: {error}"


def start_record(info: RunInfo, *, full: bool = False) -> Record:
    """The first record of a run (with the split's row indices when ``full``)."""
    return {"kind": "start", **info.to_dict(full=full)}


def finish_record(run_id: str | None, outcome: RunOutcome | None, error: BaseException | str | None = None) -> Record:
    """The last record of a run: ``run_id``, ``result`` (``RunOutcome.to_dict()``, or ``None``
    when the run failed) and, when something went wrong, ``error``."""
    record: Record = {"kind": "finish", "run_id": run_id, "result": None if outcome is None else outcome.to_dict()}
    if error is not None:
        record["error"] = error_text(error)
    return record


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


@dataclass
class RunRecord:
    """A whole run's records: its start, its events and (unless it is still live) its finish."""

    start: Record | None = None
    events: list[Record] = field(default_factory=list)
    finish: Record | None = None

    @classmethod
    def of(cls, records: list[Record]) -> RunRecord:
        run = cls()
        for record in records:
            kind = record.get("kind")
            if kind == "start":
                run.start = record
            elif kind == "finish":
                run.finish = record
            else:
                run.events.append(record)
        return run

    def records(self) -> list[Record]:
        return [*([self.start] if self.start else []), *self.events, *([self.finish] if self.finish else [])]

    @property
    def result(self) -> dict[str, Any] | None:
        return None if self.finish is None else self.finish.get("result")

    @property
    def error(self) -> str | None:
        return None if self.finish is None else self.finish.get("error")


# -- a stored run back in record form ---------------------------------------------------------------


START_KEYS = (
    "run_id",
    "name",
    "solver",
    "solver_version",
    "spec_hash",
    "spec",
    "host",
    "pid",
    "n_train",
    "n_test",
    "n_features",
    "started_at",
)


def start_of_stored(details: dict[str, Any]) -> Record:
    """The start record of a run read back from the store (``RunStore.details``)."""
    return {"kind": "start", **{k: details.get(k) for k in START_KEYS}}


def event_of_stored(row: dict[str, Any]) -> Record:
    """A row of the store's ``events`` table back in ``Event.to_dict()`` form (record form 2)."""
    out: Record = {"kind": row.get("kind"), "elapsed": row.get("elapsed")}
    for key in ("objective", "lower_bound", "nodes", "message"):
        value = row.get(key)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            out[key] = value
    counters = row.get("counters") or {}
    if row.get("kind") == "rashomon":  # the store keeps the set's figures under their flat names
        from glasswork.rashomon import SetProgress

        progress = SetProgress.from_counters(counters)
        if progress is not None:
            out["rashomon"] = progress.to_dict()
            counters = SetProgress.without_flat_names(counters)
    if counters:
        out["counters"] = counters
    return out


def finish_of_stored(details: dict[str, Any]) -> Record | None:
    """The finish record of a stored run, or ``None`` while it is still running. A run with a
    Rashomon set carries its summary (``SetSummary.to_dict``: the figures of ``RashomonSet.to_dict``
    and ``multiplicity``, without ``models``), as a live finish record carries the whole set."""
    if details.get("state") == "running":
        return None
    if details.get("status") is None:
        return {
            "kind": "finish",
            "run_id": details.get("run_id"),
            "result": None,
            "error": details.get("error") or "the run failed",
        }
    model = next(iter(details.get("models") or []), None)
    result = {
        "status": details["status"],
        "objective": details.get("objective"),
        "lower_bound": details.get("lower_bound"),
        "gap": details.get("gap"),
        "model": None if model is None else model.get("model"),
        "model_text": None if model is None else model.get("text"),
        "metrics": details.get("metrics") or {},
        "stats": {**(details.get("stats") or {}), "elapsed": details.get("elapsed")},
    }
    if details.get("fairness") is not None:
        result["fairness"] = details["fairness"]
    if details.get("no_model") is not None:
        result["no_model"] = details["no_model"]
    if details.get("rashomon") is not None:  # the set in summary, its multiplicity figures included;
        result["rashomon"] = dict(details["rashomon"])  # the members are rows (RunStore.rashomon_members)
    return {"kind": "finish", "run_id": details.get("run_id"), "result": result}


def stored_run(details: dict[str, Any], events: list[dict[str, Any]]) -> RunRecord:
    """A run read back from the store (``RunStore.details`` and ``RunStore.events``)."""
    return RunRecord(start_of_stored(details), [event_of_stored(e) for e in events], finish_of_stored(details))
