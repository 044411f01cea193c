"""The journal sink: how a live run reaches the store.

The log file is written synchronously, one flushed line per record (the run's write-ahead log,
which other processes follow); DuckDB is written in background batches that also refresh the
run's heartbeat, opening the database only while it writes. When the run ends and its last batch
is in, the log is removed; if the database stayed locked, the log stays for recovery.
"""

from __future__ import annotations

import errno
import json
import threading
import time
from typing import TYPE_CHECKING, Any

from glasswork.record import RunInfo, finish_record, start_record
from glasswork.store.schema import FINAL_LOCK_TIMEOUT, FLUSH_SECONDS, HEARTBEAT_SECONDS, StoreError

if TYPE_CHECKING:
    from glasswork.events import Event
    from glasswork.runner import RunOutcome
    from glasswork.store import RunStore


class StoreSink:
    """Records one run at a time: the log file synchronously, DuckDB in background batches."""

    def __init__(self, store: RunStore, *, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.store = store
        self.flush_seconds = flush_seconds
        self.warnings: list[str] = []
        self._log: Any = None
        self._run_id: str | None = None
        self._pending: list[tuple[int, dict[str, Any]]] = []
        self._seq = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._begun = False
        self._log_error: OSError | None = None

    def _write_log(self, record: dict[str, Any]) -> None:
        """Append one line; a full disk (or any write error) is reported once, never raised: the
        search goes on, its events still go to DuckDB if it can take them, the result is printed."""
        if self._log_error is not None:
            return
        try:
            self._log.write(json.dumps(record, allow_nan=False, default=str) + "\n")
            self._log.flush()
        except OSError as exc:
            self._log_error = exc
            self.warnings.append(
                f"cannot write the run log {self.store.log_path(self._info.run_id)}: {exc}"
                + (" (the disk is full; free some space)" if exc.errno == errno.ENOSPC else "")
                + "; events from here on are kept only if the database can take them")

    def _warn(self, text: str) -> None:
        if text not in self.warnings:  # a store that keeps failing says so once
            self.warnings.append(text)

    def on_start(self, run: RunInfo) -> None:
        self._run_id = run.run_id
        self._info = run
        self.store.events_dir.mkdir(parents=True, exist_ok=True)
        self._log = self.store.log_path(run.run_id).open("a", encoding="utf-8")
        self._write_log(start_record(run, full=True))
        self._stop.clear()
        self._thread = threading.Thread(target=self._flusher, name="glasswork-store", daemon=True)
        self._thread.start()

    def on_event(self, event: Event) -> None:
        record = event.to_dict()
        self._write_log(record)
        with self._lock:
            self._pending.append((self._seq, record))
            self._seq += 1

    def _flush(self, timeout: float | None = None, finish: dict[str, Any] | None = None) -> None:
        """Write what is pending (and, at the end, the run's result) in one connection."""
        with self._lock:
            batch, self._pending = self._pending, []
        try:
            with self.store.connect(timeout=timeout) as con:
                if not self._begun:
                    self.store.begin(self._info, con)
                    self._begun = True
                self.store.append_events(con, self._info.run_id, batch)
                if finish is not None:
                    self.store.finish(con, self._info.run_id, finish["result"], finish.get("error"))
        except BaseException:
            with self._lock:
                self._pending = batch + self._pending  # try again next time; the log has them
            raise

    def _flusher(self) -> None:
        last = time.monotonic()
        try:
            self._flush(timeout=self.flush_seconds)  # at once: the run shows in 'runs list'
        except StoreError:
            pass  # locked for now: the next round, or the final flush, retries
        except Exception as exc:
            self._warn(f"run store: {exc}")
        while not self._stop.wait(self.flush_seconds):
            with self._lock:
                idle = not self._pending
            if idle and self._begun and time.monotonic() - last < HEARTBEAT_SECONDS:
                continue
            try:
                self._flush(timeout=self.flush_seconds)
                last = time.monotonic()
            except StoreError:
                continue  # locked for now: the next round, or the final flush, retries
            except Exception as exc:  # never take the search down with us
                self._warn(f"run store: {exc}")

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        finish = finish_record(run.run_id, outcome, error)
        self._write_log(finish)
        try:
            self._log.close()
        except OSError as exc:  # the last buffered bytes could not be written (full disk)
            self._log_error = self._log_error or exc
        try:
            self._flush(timeout=FINAL_LOCK_TIMEOUT, finish=finish)
        except StoreError as exc:
            if self._log_error is None:
                self.warnings.append(
                    f"{exc}. The run is safe in {self.store.log_path(run.run_id)} and will be imported "
                    "the next time the store is opened."
                )
            else:
                self.warnings.append(f"{exc}. This run's result is printed but NOT recorded (neither its "
                                     "log nor the database could be written); the store keeps what it had")
                log = self.store.log_path(run.run_id)
                try:
                    if log.stat().st_size == 0 or not log.read_bytes().split(b"\n", 1)[0].endswith(b"}"):
                        log.unlink()  # not even its start line: nothing to recover, nothing to keep
                except OSError:
                    pass
            return
        self.store.log_path(run.run_id).unlink(missing_ok=True)
