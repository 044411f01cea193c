"""What a sweep worker does: run one point through the shared run path and send its records
back (workers never open the database; the owner records what they return)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glasswork.contract.record import finish_record
from glasswork.hooks.registry import get_registry
from glasswork.spec.load import LoadedSpec, validate_spec
from glasswork.sweep.plan import SweepPoint


@dataclass
class PointOutcome:
    """What comes back from a worker: the run's records, ready to be stored and summarised."""

    point: SweepPoint
    records: list[dict[str, Any]]
    error: str | None = None
    # a point whose limit ended it while its data were read: its status (stopped_time or
    # stopped_memory), no model, nothing recorded, as ``glasswork run`` has it; not a failure
    stopped: str | None = None

    @property
    def message(self) -> str | None:
        """What the point's run was told: its error, or why it stopped before its search."""
        return self.error if self.stopped is None else (self.records[-1].get("message") if self.records else None)

    @property
    def result(self) -> dict[str, Any] | None:
        last = self.records[-1] if self.records else {}
        return last.get("result") if last.get("kind") == "finish" else None


def run_point(document: dict[str, Any], base_dir: str, cancel: Any = None) -> list[dict[str, Any]]:
    """Run one point in a worker process; returns the run's records (start, events, finish).

    ``cancel`` is a cross-process flag (``is_set()``): when the owner sets it, the solver is
    stopped as by Ctrl-C and its best model comes back with status ``cancelled``.
    """
    from glasswork.contract.events import RecordSink
    from glasswork.data import LimitReached
    from glasswork.running.exits import run_failure, stopped_before_search
    from glasswork.running.launch import Launch

    registry = get_registry()
    spec = validate_spec(document, registry)
    # workers never open the database: the owner records what they send back
    launch = Launch(LoadedSpec(spec, Path(base_dir) / "spec"), no_store=True, registry=registry)
    records: list[dict[str, Any]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.2):
            try:
                if cancel is not None and cancel.is_set():
                    launch.cancel()
                    return
            except Exception:  # the owner (and its flag) went away: finish on our own
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    error = None
    try:
        launch.run([RecordSink(records.append, full=True)])
    except LimitReached as exc:  # stopped at its limit while reading, before its search: a stopped point
        finish = finish_record(None, None)
        return [{**finish, "stopped": exc.status, "message": stopped_before_search(exc)}]
    except Exception as exc:
        failure = run_failure(exc)
        if not failure.expected:  # a bug: the executor reports it with its type
            raise
        error = failure.reason  # the point fails; the sweep goes on (and ends with exit 1)
    finally:
        stop.set()
    if not records:  # failed before the run began (e.g. unreadable data)
        return [finish_record(None, None, error or "the run did not start")]
    if error is not None and records[-1].get("kind") == "finish":
        records[-1]["error"] = error  # the message the user acts on, not the exception's repr
    return records


def failed_outcome(point: SweepPoint, message: str) -> PointOutcome:
    """A point that could not run at all (a worker lost, a reply unreadable): a finish record with
    the error, as a point that ran and failed has."""
    return PointOutcome(point, [finish_record(None, None, message)], message)


def outcome_of(point: SweepPoint, records: list[dict[str, Any]]) -> PointOutcome:
    """A point's outcome from the records its run made (its error from the finish record)."""
    finish = records[-1] if records else {}
    if finish.get("result") is None and finish.get("stopped"):
        return PointOutcome(point, records, None, stopped=str(finish["stopped"]))
    return PointOutcome(point, records, finish.get("error") if finish.get("result") is None else None)
