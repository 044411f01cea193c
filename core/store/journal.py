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
import math
import os
import re
import socket
import stat
import uuid
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from glasswork.record import RunInfo, RunOutcome, finish_record, start_record
from glasswork.store.schema import StoreFull, StoreLocked, try_lock, utc_now

if TYPE_CHECKING:
    from glasswork.events import Event
    from glasswork.store import RunStore

SUFFIX = ".jsonl"
NEW_SUFFIX = ".jsonl.new"  # a journal being created: its start line is not written yet
# A run id names its journal's file: letters, digits, '_' and '-' only (glasswork's are 32 hex
# digits), so no id can lead out of the journals' folder or name a hidden file.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
# The largest journal read whole (the longest runs' journals are a few MB; a Rashomon set's
# finish record with its kept members, tens of MB); a larger file is set aside unread.
MAX_JOURNAL_BYTES = int(os.environ.get("GLASSWORK_JOURNAL_MAX_BYTES", str(256 * 2**20)))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def valid_run_id(run_id: Any) -> bool:
    """Whether ``run_id`` can name a journal file (``RUN_ID``)."""
    return isinstance(run_id, str) and RUN_ID.fullmatch(run_id) is not None


class JournalRefused(ValueError):
    """A file in the journals' folder that is not a journal glasswork can trust; says why."""

    def reason(self) -> str:
        """Why, as a clause: "it is a FIFO", "record 3 has no known kind"."""
        text = str(self)
        return f"it {text}" if text.startswith(("is ", "cannot ", "holds ")) else text


def _kind_of(mode: int) -> str:
    for test, what in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened to read when it is a regular file, never following a link nor waiting on
    a FIFO or device; ``JournalRefused`` says what else it is, ``FileNotFoundError`` when gone."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(exc.errno, exc.strerror, str(path)) from None
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            raise JournalRefused(f"cannot be opened ({exc.strerror})") from None
        raise JournalRefused(
            f"is {_kind_of(mode)}" if not stat.S_ISREG(mode) else f"cannot be opened ({exc.strerror})"
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise JournalRefused(f"is {_kind_of(mode)}")
    return os.fdopen(fd, "rb")


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
            with open_regular(self.path) as fh:
                fh.seek(self._offset)
                chunk = fh.read(max(MAX_JOURNAL_BYTES - self._offset, 0))
        except FileNotFoundError:
            if self.seen:
                self.vanished = True
            return []
        except (JournalRefused, OSError):  # not a journal at all: nothing to read (the fold sets it aside)
            return []
        self.seen = True
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()  # b"" when the data ended with a newline
        records = []
        for line in lines:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past Python's stack
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
    """Whether a process still writes this journal (holds its lock). A journal that is gone, or
    anything but a regular file (a link, a FIFO: never opened so as to wait), is not being written."""
    try:
        fh = open_regular(path)
    except (JournalRefused, OSError):
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


def vet(path: Path, records: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """An ended journal's records once they can be trusted to fold: a regular file named after
    its run id, no larger than ``MAX_JOURNAL_BYTES``, whose every record has the shape glasswork
    writes (a start record, events, at most one finish record at the end). ``JournalRefused``
    says why not."""
    name = path.name
    if not name.endswith(SUFFIX) or not valid_run_id(name[: -len(SUFFIX)]):
        raise JournalRefused("its name is not a run id followed by .jsonl")
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_JOURNAL_BYTES:
            raise JournalRefused(
                f"holds {size:,} bytes, more than the {MAX_JOURNAL_BYTES:,} a journal may "
                "($GLASSWORK_JOURNAL_MAX_BYTES)"
            )
    reader = JournalReader(path)
    records = reader.poll() if records is None else records
    if not records:
        raise JournalRefused("holds no complete record")
    _check_start(records[0], name[: -len(SUFFIX)])
    for number, record in enumerate(records[1:], start=2):
        last = number == len(records)
        try:
            if record.get("kind") == "finish" and last:
                _check_finish(record, records[0]["run_id"])
            else:
                _check_event(record)
        except JournalRefused as exc:
            raise JournalRefused(f"record {number} {exc}") from None
    return records


_START_TEXT = ("name", "solver", "solver_version", "spec_hash", "data_fingerprint", "started_at")
_START_OPTIONAL_TEXT = ("spec_path", "sweep_id", "host")
_START_COUNTS = ("n_train", "n_test", "n_features")
_START_OPTIONAL_OBJECTS = ("split", "sweep_point", "inputs")
_EVENT_KINDS = ("progress", "incumbent", "log", "rashomon")
_EVENT_FIGURES = ("elapsed", "objective", "lower_bound", "gap")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _is_moment(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _check_start(record: dict[str, Any], run_id: str) -> None:
    def refuse(why: str) -> JournalRefused:
        return JournalRefused(f"record 1 (the start record) {why}")

    if record.get("kind") != "start":
        raise refuse("is not a start record")
    if record.get("run_id") != run_id:
        raise refuse(f"names run {str(record.get('run_id'))[:40]!r}, not the file's {run_id!r}")
    for key in _START_TEXT:
        if not isinstance(record.get(key), str):
            raise refuse(f"has no text {key!r}")
    if not _is_moment(record["started_at"]):
        raise refuse("has a started_at that is not a date and time")
    for key in _START_OPTIONAL_TEXT:
        if record.get(key) is not None and not isinstance(record[key], str):
            raise refuse(f"has a {key!r} that is not text")
    for key in _START_COUNTS:
        if not _is_count(record.get(key)):
            raise refuse(f"has no count {key!r}")
    if not isinstance(record.get("spec"), dict):
        raise refuse("has no spec")
    for key in _START_OPTIONAL_OBJECTS:
        if record.get(key) is not None and not isinstance(record[key], dict):
            raise refuse(f"has a {key!r} that is not an object")
    pid = record.get("pid")
    if pid is not None and not _is_count(pid):
        raise refuse("has a pid that is not a process id")


def _check_figures(record: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        value = record.get(key)
        if value is not None and not (_is_number(value) and math.isfinite(value)):
            raise JournalRefused(f"has a {key!r} that is not a number")


def _check_event(record: dict[str, Any]) -> None:
    kind = record.get("kind")
    if kind not in _EVENT_KINDS:
        raise JournalRefused(f"is of no known kind ({str(kind)[:40]!r})")
    _check_figures(record, _EVENT_FIGURES)
    if record.get("nodes") is not None and not _is_count(record["nodes"]):
        raise JournalRefused("has a 'nodes' that is not a count")
    counters = record.get("counters")
    if counters is not None:
        if not isinstance(counters, dict):
            raise JournalRefused("has counters that are not an object")
        if counters.get("queue") is not None and not _is_count(counters["queue"]):
            raise JournalRefused("has a queue counter that is not a count")
    for key in ("message", "model_text", "level"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise JournalRefused(f"has a {key!r} that is not text")
    if record.get("model") is not None and not isinstance(record["model"], dict):
        raise JournalRefused("has a model that is not an object")
    if record.get("members") is not None and not isinstance(record["members"], list):
        raise JournalRefused("has members that are not a list")
    if record.get("rashomon") is not None and not isinstance(record["rashomon"], dict):  # SetProgress.to_dict
        raise JournalRefused("has a 'rashomon' that is not an object")


def _check_finish(record: dict[str, Any], run_id: str) -> None:
    from glasswork.result import NO_MODEL_STATUSES, Status

    if record.get("run_id") != run_id:
        raise JournalRefused(f"(the finish record) names run {str(record.get('run_id'))[:40]!r}, not {run_id!r}")
    if record.get("ended_at") is not None and not _is_moment(record["ended_at"]):
        raise JournalRefused("(the finish record) has an ended_at that is not a date and time")
    if record.get("error") is not None and not isinstance(record["error"], str):
        raise JournalRefused("(the finish record) has an error that is not text")
    result = record.get("result")
    if result is None:
        return
    if not isinstance(result, dict):
        raise JournalRefused("(the finish record) has a result that is not an object")
    if result.get("status") not in {s.value for s in Status}:
        raise JournalRefused(f"(the finish record) has no known status ({str(result.get('status'))[:40]!r})")
    for key in ("objective", "lower_bound", "gap"):
        value = result.get(key)
        if value is not None and not _is_number(value):
            raise JournalRefused(f"(the finish record) has a {key!r} that is not a number")
    if result.get("model") is None:  # only a run that ended with no model meeting its constraints has none
        if result["status"] not in {s.value for s in NO_MODEL_STATUSES}:
            raise JournalRefused("(the finish record) has no model")
    elif not isinstance(result["model"], dict):
        raise JournalRefused("(the finish record) has a model that is not an object")
    if result.get("model_text") is not None and not isinstance(result["model_text"], str):
        raise JournalRefused("(the finish record) has a model_text that is not text")
    stats = result.get("stats", {})
    if not isinstance(stats, dict) or not all(
        stats.get(k) is None or _is_number(stats[k]) for k in ("elapsed", "peak_memory")
    ):
        raise JournalRefused("(the finish record) has stats that are not figures")
    if stats.get("peak_memory") is not None and not _is_count(stats["peak_memory"]):
        raise JournalRefused("(the finish record) has a peak_memory that is not a count")
    if not isinstance(result.get("metrics", {}), dict):
        raise JournalRefused("(the finish record) has metrics that are not an object")
    if result.get("rashomon") is not None and not isinstance(result["rashomon"], dict):
        raise JournalRefused("(the finish record) has a Rashomon set that is not an object")


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
        self.disk_full = False  # the run is not (yet) in the store because its disk is full

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
        if journal is not None and journal.error is not None and journal.error.errno in (errno.ENOSPC, errno.EDQUOT):
            self.disk_full = True
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
            self.disk_full = self.disk_full or isinstance(exc, StoreFull)
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
