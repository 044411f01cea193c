"""Journals: how a live run reaches the store without ever waiting for it.

Each run appends its records (the run record: start, events, finish) to its own file,
``<db>.events/<run_id>.jsonl``, one flushed line each, and holds an exclusive ``flock`` on that
file for as long as it writes: a journal whose lock can be taken belongs to a run that ended
(finished, or killed: the kernel drops the lock with the process). The journal is the run's only
write while it runs; ``RunStore.fold`` copies ended journals into DuckDB under the store's lock
and deletes each only once its rows are committed. This module is also the one reader of the
format (recovery, the store's readers and the terminal UI's follower all use ``JournalReader``)
and the one place that tells whether a run's process is alive.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import uuid
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from glasswork.record import RunInfo, RunOutcome, finish_record, start_record
from glasswork.store.schema import StoreLocked, try_lock, utc_now

if TYPE_CHECKING:
    from glasswork.events import Event
    from glasswork.store import RunStore

SUFFIX = ".jsonl"
NEW_SUFFIX = ".jsonl.new"  # a journal being created: its start line is not written yet


class JournalReader:
    """Reads the complete records appended to a journal since the last call.

    A torn last line (a write in progress, or a kill mid-write) is kept back until it is
    complete; a complete line that is not a JSON object (a damaged disk block) is skipped and
    counted in ``skipped``, so every reader numbers the events the same way. ``vanished`` turns
    true once the file existed and is gone (folded into DuckDB); ``finished`` once its finish record is read.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._partial = b""
        self.seen = False
        self.vanished = False
        self.finished = False
        self.skipped = 0

    def poll(self) -> list[dict[str, Any]]:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read()
        except FileNotFoundError:
            if self.seen:
                self.vanished = True
            return []
        self.seen = True
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()  # b"" when the data ended with a newline
        records = []
        for line in lines:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                record = None
            if not isinstance(record, dict):
                self.skipped += bool(line.strip())
                continue
            records.append(record)
            if record.get("kind") == "finish":
                self.finished = True
        return records


def read_journal(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a journal ([] when it is gone)."""
    return JournalReader(path).poll()


def writer_alive(path: Path) -> bool:
    """Whether a process still writes this journal (holds its lock). A journal that is gone is
    not being written."""
    try:
        fh = path.open("rb")
    except OSError:
        return False
    try:
        return not try_lock(fh, shared=True)
    finally:
        fh.close()


def pid_alive(pid: int | None, host: str | None) -> bool:
    """Whether process ``pid`` on ``host`` may still be running: True when it cannot be told
    from here (another machine, no pid), since only a dead run may be closed on its behalf."""
    if pid is None or not host or host != socket.gethostname():
        return True
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


class Journal:
    """One live run's journal file, created under its lock (so nobody folds a journal that is
    still being written), written a flushed line at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: OSError | None = None
        self._fh: IO[str] | None = None

    def create(self, first: dict[str, Any]) -> None:
        """Create the file under a temporary name, lock it, write the start record, then give it
        its name: a ``*.jsonl`` file always has its start line and, while live, its lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = self.path.with_name(f"{self.path.stem}.{uuid.uuid4().hex[:8]}{NEW_SUFFIX}")
        fh = new.open("w", encoding="utf-8")
        try_lock(fh)
        self._fh = fh
        self.write(first)
        os.replace(new, self.path)

    def write(self, record: dict[str, Any]) -> None:
        """Append one line; a write error (a full disk) is kept in ``error``, never raised: the
        search goes on and the result is still printed."""
        if self.error is not None or self._fh is None:
            return
        try:
            self._fh.write(json.dumps(record, allow_nan=False, default=str) + "\n")
            self._fh.flush()
        except OSError as exc:
            self.error = exc

    def close(self) -> None:
        """Make the journal durable and release its lock (the run has ended)."""
        if self._fh is None:
            return
        fh, self._fh = self._fh, None
        try:
            if self.error is None:
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            self.error = self.error or exc
        try:
            fh.close()
        except OSError as exc:  # the last buffered bytes could not be written (full disk)
            self.error = self.error or exc


class StoreSink:
    """Records one run at a time: its journal while it runs (never DuckDB, so a busy store
    never slows or refuses it), then one attempt to fold ended journals into DuckDB; when
    another process holds the store, that process (or the next one to open it) folds it."""

    def __init__(self, store: RunStore, *, held_noted: bool = False) -> None:
        self.store = store
        self.held_noted = held_noted  # the caller already said the store is held: say it once
        self.warnings: list[str] = []
        self.journal: Journal | None = None

    def on_start(self, run: RunInfo) -> None:
        self.journal = Journal(self.store.log_path(run.run_id))
        try:
            self.journal.create(start_record(run, full=True))
        except OSError as exc:
            self.journal.error = exc
        self._check_write()

    def on_event(self, event: Event) -> None:
        if self.journal is not None:
            self.journal.write(event.to_dict())
            self._check_write()

    def _check_write(self) -> None:
        journal = self.journal
        if journal is not None and journal.error is not None and not any("cannot write" in w for w in self.warnings):
            self.warnings.append(
                f"cannot write the run's journal {journal.path}: {journal.error.strerror or journal.error}"
                + (
                    " (No space left on device: the disk is full; free some space)"
                    if journal.error.errno == errno.ENOSPC
                    else ""
                )
                + "; this run's result is printed but NOT recorded"
            )

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        journal = self.journal
        if journal is None:
            return
        journal.write({**finish_record(run.run_id, outcome, error), "ended_at": utc_now().isoformat()})
        journal.close()
        self._check_write()
        if journal.error is not None:
            self._drop_incomplete(journal.path)
            return
        try:
            self.store.fold(wait=False)
        except Exception as exc:  # the journal is safe; whoever opens the store next folds it
            if self.held_noted and isinstance(exc, StoreLocked):
                return
            self.warnings.append(
                f"{exc}. This run is kept in its journal {journal.path} and recorded the next time the store is opened"
            )

    @staticmethod
    def _drop_incomplete(path: Path) -> None:
        """A journal whose writing failed keeps what it has (recovery records the run as failed
        with those events), unless it lacks even its start line."""
        try:
            if not read_journal(path):
                path.unlink(missing_ok=True)
        except OSError:
            pass
