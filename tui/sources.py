"""Where the monitor's records come from: a spec this process runs (``OwnedRun``, through the
shared run path ``glasswork.running.launch``), or a run another process owns (``FollowedRun``: its events
file, then its rows in DuckDB once the owner has recorded it and removed the file).

Neither imports Textual: the monitor screen drains a source a few times a second.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.contract.events import RecordSink
from glasswork.contract.record import event_of_stored, finish_of_stored, start_of_stored
from glasswork.running.exits import EXIT_INTERRUPTED
from glasswork.tui.state import MEMBERS_HELD, LogFollower

if TYPE_CHECKING:
    from glasswork.contract.record import RunInfo, RunOutcome
    from glasswork.running.launch import Launch

OWNER_CHECK_SECONDS = 3.0  # a followed run silent this long: check that its process still lives


class OwnedRun:
    """A spec run by this process through the shared run path; the monitor owns it and can
    cancel it. ``exit_code`` is what ``glasswork run`` would exit with: 130 for a run a cancel
    (``c``, Ctrl-C, ``q`` while it runs) interrupted, the failure's code, else 0."""

    owned = True

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.records: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.exit_code = 0
        self.done = False

    @property
    def title(self) -> str:
        return str(self.launch.loaded.path or self.launch.loaded.spec.name)

    def run(self) -> None:
        """Blocks until the run ends; call it from a thread worker. Never raises: every error
        (also a bug, which the UI must survive) is shown as ``glasswork.running.exits.run_failure`` says."""
        from glasswork.running.exits import run_failure

        try:
            self.launch.run([_OwnedSink(self)])  # after the store's sink: recorded first
        except (Exception, KeyboardInterrupt) as exc:  # a KeyboardInterrupt here: RunAborted
            failure = run_failure(exc)
            self._fail(failure.title, failure.message(self.title), failure.code)
        finally:
            for warning in self.launch.warnings:
                self.records.put({"kind": "log", "elapsed": 0.0, "level": "warning", "message": warning})
            self.done = True

    def _fail(self, title: str, message: str, code: int) -> None:
        self.exit_code = code
        self.records.put({"kind": "failed", "title": title, "message": message})

    def cancel(self) -> str:
        self.launch.cancel()  # also before the search starts: it stops as soon as it does
        return "cancelling: the solver keeps its best model (status cancelled)"

    def poll(self) -> list[dict[str, Any]]:
        return _drain(self.records)


class _OwnedSink(RecordSink):
    """The owned run's records into its queue; an interrupted run's exit code set before its
    finish record is queued, so a monitor that ends on that record exits with it."""

    def __init__(self, owner: OwnedRun) -> None:
        super().__init__(owner.records.put)
        self.owner = owner

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        if outcome is not None and outcome.interrupted:
            self.owner.exit_code = EXIT_INTERRUPTED  # as `glasswork run` exits after a Ctrl-C
        super().on_finish(run, outcome, error)


class FollowedRun:
    """A run another process owns, followed through its events file and then its DuckDB rows.
    Cancelled from the monitor, it exits 130 as its owner does."""

    owned = False

    def __init__(self, store: Any, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.follower = LogFollower(store.log_path(run_id))
        self.exit_code = 0
        self.done = False
        self.n_events = 0  # events read from the log (their seq are 0 .. n_events - 1)
        self.info: dict[str, Any] = {}
        self.pending: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.need_store = not self.follower.path.exists()
        self.store_reading = False
        self.recover = False
        self._last_data = time.monotonic()

    @property
    def title(self) -> str:
        return f"run {self.run_id[:12]}"

    def poll(self) -> list[dict[str, Any]]:
        out = _drain(self.pending)
        if self.done or self.need_store:
            return out
        records = self.follower.poll()
        for record in records:
            kind = record.get("kind")
            if kind == "start":
                self.info = record
            elif kind != "finish":
                self.n_events += 1
        out.extend(records)
        now = time.monotonic()
        if records:
            self._last_data = now
        if self.follower.finished:
            self.done = True
        elif self.follower.vanished:
            self.need_store = True
        elif now - self._last_data > OWNER_CHECK_SECONDS:
            self._last_data = now
            if not self._owner_alive():
                self.need_store = self.recover = True  # opening the store imports its log
        return out

    def _owner_alive(self) -> bool:
        """Its process still writes the journal (holds its lock), or it is not known to be gone."""
        from glasswork.store import pid_alive, writer_alive

        return writer_alive(self.follower.path) or (
            not self.follower.path.exists() and pid_alive(self.info.get("pid"), self.info.get("host"))
        )

    def read_store(self) -> None:
        """The rest of the run from DuckDB (blocks on the lock; call from a thread worker)."""
        from glasswork.store import StoreError

        try:
            if self.recover:
                self.store.open()  # the owner died: recovery records its run as failed
            details = self.store.details(self.run_id)
            events = self.store.events(self.run_id)
            members = self.store.rashomon_members(self.run_id, limit=MEMBERS_HELD) if details.get("rashomon") else []
        except StoreError as exc:
            self.pending.put({"kind": "failed", "title": "Cannot read the run store", "message": str(exc)})
            self.done = True
            return
        if not self.info:
            self.pending.put(start_of_stored(details))
        for row in events:
            if row.get("seq", 0) >= self.n_events:
                self.pending.put(event_of_stored(row))
        self.n_events = max(self.n_events, len(events))
        finish = finish_of_stored(details)
        if finish and finish.get("result") and details.get("rashomon"):
            # the store's summary of the set and its best kept members (the events hold none)
            finish["result"]["rashomon"] = {**details["rashomon"], "models": [m.to_dict() for m in members]}
        if finish:
            self.pending.put(finish)
            self.done = True
        elif self.follower.path.exists():
            self.need_store = False  # the log (re)appeared: follow it again
        else:
            self.pending.put(
                {
                    "kind": "log",
                    "elapsed": 0.0,
                    "level": "warning",
                    "message": (
                        f"run {self.run_id[:12]} is marked running but has no events file here "
                        "(another machine?); showing what the store holds"
                    ),
                }
            )
            self.done = True

    def cancel(self) -> str:
        """Ask the owner process to stop, as Ctrl-C in its terminal would."""
        pid, host = self.info.get("pid"), self.info.get("host")
        if self.done or pid is None:
            return "the run is not live"
        if host != socket.gethostname():
            return f"the run belongs to a process on {host}; cancel it there"
        try:
            os.kill(int(pid), signal.SIGINT)
        except OSError as exc:
            return f"cannot signal process {pid}: {exc}"
        self.exit_code = EXIT_INTERRUPTED
        return f"asked process {pid} to stop (it keeps its best model, status cancelled)"


def _drain(records: queue.SimpleQueue[dict[str, Any]]) -> list[dict[str, Any]]:
    """Everything queued so far, without waiting."""
    out = []
    while True:
        try:
            out.append(records.get_nowait())
        except queue.Empty:
            return out


def load_spec_or_error(
    spec_path: str,
    overrides: tuple[str, ...] = (),
    *,
    db: str | None = None,
    no_store: bool = False,
    follow_spec_store: bool = False,
) -> Launch | tuple[str, str]:
    """The spec file ready to run (a ``Launch``), or ``(title, message)`` saying readably why it
    cannot run. With ``follow_spec_store`` the run goes to ``db`` unless the spec turns recording
    off (the history records launched specs in the store it shows)."""
    from glasswork.running.exits import run_failure
    from glasswork.running.launch import Launch
    from glasswork.spec.document import SpecError

    path = Path(spec_path).expanduser()
    if not path.is_file():
        return ("No such spec file", f"{spec_path}: not a file")
    try:
        launch = Launch.from_file(path, overrides, db=db, no_store=no_store)
    except SpecError as exc:
        failure = run_failure(exc)
        return (failure.title, "\n".join(failure.details) + "\n\n" + failure.message(spec_path))
    except Exception as exc:
        return ("Cannot read the spec", run_failure(exc).message(spec_path))
    if follow_spec_store and not launch.loaded.spec.store.enabled:
        launch.no_store = True
    return launch
