"""The run store: every run, its spec, bound trajectory, models and metrics, in one DuckDB file
that any number of processes share.

A live run writes only its journal, ``<db>.events/<run_id>.jsonl`` (``journal``): it never
opens DuckDB, so a busy store never slows or refuses it. Journals of runs that ended are folded
into DuckDB by whichever process takes the store's exclusive lock (``<db>.lock``, ``schema``)
first; a process that finds it taken leaves its journal to the holder, which looks again before
it lets go. Readers take the lock shared and merge the journals not folded yet into what they
read (live runs show as ``running``), so they see every run at once. docs/run-store.md says why
(the measurements) and how it stays consistent.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from glasswork.store import rashomon, recovery, runs
from glasswork.store.journal import (
    Journal,
    JournalReader,
    JournalRefused,
    StoreSink,
    pid_alive,
    read_journal,
    valid_run_id,
    vet,
    writer_alive,
)
from glasswork.store.rashomon import RashomonMemberRow
from glasswork.store.runs import RunRow, SweepRow
from glasswork.store.schema import (
    DB_ENV,
    DEFAULT_DB,
    EVENT_COLUMNS,
    LOCK_TIMEOUT,
    MIGRATIONS,
    RUN_TABLES,
    SCHEMA_VERSION,
    STALE_SECONDS,
    STATE_OF_STATUS,
    STATES,
    StoreDamaged,
    StoreError,
    StoreFile,
    StoreFull,
    StoreLocked,
    StorePathError,
    default_db_path,
    schema_version,
)

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "DB_ENV",
    "DEFAULT_DB",
    "EVENT_COLUMNS",
    "LOCK_TIMEOUT",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "STALE_SECONDS",
    "STATES",
    "STATE_OF_STATUS",
    "JournalReader",
    "RunRow",
    "RunStore",
    "StoreDamaged",
    "StoreError",
    "StoreFull",
    "StoreLocked",
    "StorePathError",
    "StoreSink",
    "SweepRow",
    "RashomonMemberRow",
    "default_db_path",
    "pid_alive",
    "read_journal",
    "writer_alive",
]

_TABLES = RUN_TABLES
# Free space a fold wants beyond its journals and write-ahead log: DuckDB's checkpoint writes whole
# 256 KiB blocks for every table it touches (one run's fold of 33 KB grew a 2 MB store by 1 MB).
FOLD_HEADROOM = 4 * 2**20
FOLD_JOURNAL_FACTOR = 3


def say_warning(text: str) -> None:
    """How the store says what it did on its own (a journal set aside): one line on stderr."""
    print(f"warning: {text}", file=sys.stderr, flush=True)


Query = ParamSpec("Query")
Answer = TypeVar("Answer")


def _reading(
    query: Callable[Concatenate[duckdb.DuckDBPyConnection, Query], Answer],
) -> Callable[Concatenate[RunStore, Query], Answer]:
    """The store's method for a read query of ``runs`` or ``rashomon`` (its connection first): the
    same arguments, answered on a ``reading()`` connection, so the query's signature is written once."""

    def method(self: RunStore, /, *args: Query.args, **kwargs: Query.kwargs) -> Answer:
        with self.reading() as con:
            return query(con, *args, **kwargs)

    method.__name__ = method.__qualname__ = query.__name__
    method.__doc__ = query.__doc__
    return method


class RunStore:
    """One run store: its file (``StoreFile``: the lock, DuckDB, the schema), its journals, and
    the runs read from both (``runs``' queries) or written by folding (``recovery``)."""

    def __init__(
        self, path: str | Path, *, lock_timeout: float | None = None, warn: Callable[[str], None] = say_warning
    ) -> None:
        self.path = Path(path)
        self.lock_timeout = LOCK_TIMEOUT if lock_timeout is None else lock_timeout
        self.file = StoreFile(self.path, self.lock_timeout)
        self.events_dir = self.path.with_name(self.path.name + ".events")
        self._warn = warn
        self._said: set[str] = set()

    def warn(self, text: str) -> None:
        """Say something the store did or could not do on its own, once per store object."""
        if text not in self._said:
            self._said.add(text)
            self._warn(text)

    def log_path(self, run_id: str) -> Path:
        """The journal of a run (``<db>.events/<run_id>.jsonl``); ``StoreError`` for an id that
        cannot name a file there (``journal.RUN_ID``: no ``/``, no ``..``)."""
        if not valid_run_id(run_id):
            raise StoreError(f"{str(run_id)[:80]!r} is not a run id (letters, digits, '_' and '-')")
        return self.events_dir / f"{run_id}.jsonl"

    def live(self, run_id: str) -> bool:
        """Whether a process is still writing this run's journal."""
        return valid_run_id(run_id) and writer_alive(self.log_path(run_id))

    # -- writing --------------------------------------------------------------------------------

    def open(self, *, wait: bool = True, quick: bool = False) -> RunStore:
        """Check the store can be used (created or migrated, not damaged) and fold the journals of
        runs that ended. It never waits for another glasswork process: one that holds the store
        is doing the same. A program outside glasswork holding the DuckDB file is waited for up
        to the lock timeout with ``wait``, else raises ``StoreLocked`` at once. Raises
        ``StoreError``.

        ``quick`` (a run about to start): when no ended journal waits and the file is exactly as
        a glasswork process left it after checking it (``StoreFile.unchanged``), DuckDB is not
        opened (nor imported): the run's own fold at its end opens it once."""
        if quick and self.file.unchanged() and not self._ended():
            return self
        try:
            self.fold(wait=False, always=True, outside_timeout=None if wait else 0.0)
        except StoreFull as exc:  # what the store holds stays readable, the journals included
            self.warn(str(exc))
        return self

    def fold(self, *, wait: bool = False, always: bool = False, outside_timeout: float | None = 0.0) -> list[str]:
        """Fold ended journals into DuckDB if this process can take the store's lock (``wait``:
        for up to the lock timeout); else leave them to the process that holds it. After letting
        go, look again: a run that ended meanwhile may have left its journal to us.
        ``outside_timeout``: how long to wait for a program outside glasswork holding the file
        (None: the lock timeout)."""
        folded: list[str] = []
        tried: set[str] = set()
        while always or self._ended() - tried:
            always = False
            outside = self.lock_timeout if outside_timeout is None else outside_timeout
            done: list[Path] = []
            with self.file.writing(
                wait=wait, timeout=None if wait else 0.0, outside_timeout=outside, before=self._check_space
            ) as con:
                if con is None:
                    break
                pending = self._ended()
                got, done = recovery.fold_journals(con, self.events_dir, self.warn)
                folded += got
                tried |= pending
            for path in done:  # only now: the store's checkpoint has them on disk (StoreFile.writing)
                path.unlink(missing_ok=True)
            wait = False
        return folded

    def _check_space(self) -> None:
        """Before a fold writes anything (under the lock): refuse when the disk lacks the room
        the fold may take, so a full disk leaves the store as it was and the journals waiting."""
        ended = [p for p in recovery.journals(self.events_dir) if not writer_alive(p)]  # sizes only: not read
        if not ended:
            return
        sizes = 0
        for path in [*ended, self.path.with_name(self.path.name + ".wal")]:
            try:
                sizes += path.lstat().st_size * (FOLD_JOURNAL_FACTOR if path.suffix == ".jsonl" else 1)
            except OSError:
                pass
        need = sizes + FOLD_HEADROOM
        try:
            fs = os.statvfs(self.path.parent)
        except (OSError, AttributeError):  # no statvfs (Windows): the checkpoint's error says it
            return
        free = fs.f_bavail * fs.f_frsize
        if free < need:
            raise StoreFull(
                f"the disk holding the run store {self.path} is nearly full: {free / 2**20:.1f} MB free, and "
                f"folding {len(ended)} journal(s) may take {need / 2**20:.1f} MB. The store is left as it was "
                f"and the journals are kept in {self.events_dir}; free some space (any command that opens "
                "the store then records them), or record elsewhere with --db"
            )

    def _ended(self) -> set[str]:
        """Journals the fold has work with: ended runs', and anything else named ``*.jsonl`` (set aside)."""
        return {p.name for p in recovery.journals(self.events_dir) if recovery.foldable(p)}

    def write_records(self, records: list[dict[str, Any]]) -> None:
        """Record a whole run at once from its records (start, events..., finish): it becomes a
        journal, folded now if the store is free. Sweeps use it (their workers never open it)."""
        journal = Journal(self.log_path(records[0]["run_id"]))
        try:
            journal.create(records[0])
        except OSError as exc:
            raise StoreError(f"cannot write {journal.path}: {exc}") from exc
        for record in records[1:]:
            journal.write(record)
        journal.close()
        if journal.error is not None:
            raise StoreError(f"cannot write {journal.path}: {journal.error}")
        self.fold(wait=False)

    def delete(self, run_ids: Sequence[str]) -> int:
        busy = [r for r in run_ids if self.live(r)]
        if busy:
            raise StoreError(
                f"run {busy[0][:12]} is still running; stop it first (Ctrl-C in its terminal, "
                "or c in 'glasswork monitor')"
            )
        done: list[Path] = []
        with self.file.writing() as con:
            assert con is not None
            _, done = recovery.fold_journals(con, self.events_dir, self.warn)
            runs.delete(con, run_ids)
        for path in done:
            path.unlink(missing_ok=True)
        for run_id in run_ids:
            if valid_run_id(run_id):  # a stored id that could not name a journal has none
                self.log_path(run_id).unlink(missing_ok=True)
        return len(run_ids)

    # -- reading --------------------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection whose ``runs``, ``events``, ``artifacts`` and ``metrics`` are the store's
        merged with the journals not folded yet (a live run reads as ``running``, one whose
        process died as a fold would record it). Ended journals are folded first if the lock is
        free. Never writes when it cannot take the lock."""
        try:
            self.fold(wait=False)
        except StoreLocked:
            pass  # a program outside glasswork holds the file: reading waits for it below
        except StoreFull as exc:  # read as it is, with the journals that wait for room
            self.warn(str(exc))
        for attempt in range(2):
            with self.file.reading() as con:
                version = schema_version(con, self.path, "store") if self.path.exists() else None
                if version is None or version == SCHEMA_VERSION:
                    self._merge(con, attached=version is not None)
                    yield con
                    return
            if attempt == 0:
                self.fold(wait=True, always=True, outside_timeout=None)  # an older schema: migrate it, then read
        raise StoreError(f"the run store {self.path} could not be migrated to schema version {SCHEMA_VERSION}")

    def _merge(self, con: duckdb.DuckDBPyConnection, *, attached: bool) -> None:
        con.execute("CREATE SCHEMA pending")
        con.execute("USE memory.pending")
        for step in MIGRATIONS:
            for statement in step:
                con.execute(statement)
        ended = (
            {r[0] for r in con.execute("SELECT run_id FROM store.main.runs WHERE state <> 'running'").fetchall()}
            if attached
            else set()
        )
        for path in recovery.journals(self.events_dir):
            records = read_journal(path)
            try:  # a journal the fold would set aside is not read either; a stored run is never rewritten
                records = vet(path, records)
            except (JournalRefused, OSError):
                continue
            if records[0]["run_id"] in ended:
                continue
            live = not recovery.journal_ended(path, records)
            con.execute("BEGIN TRANSACTION")
            try:
                runs.write_run(con, records, live=live, ended_at=recovery.modified(path))
                con.execute("COMMIT")
            except BaseException as exc:
                recovery.rollback(con)
                if not isinstance(exc, Exception) or recovery.store_fault(exc):
                    raise
        con.execute("USE memory.main")
        for table in _TABLES:
            stored = (
                f"SELECT * FROM store.main.{table} WHERE run_id NOT IN (SELECT run_id FROM pending.runs) "
                "UNION ALL BY NAME "
                if attached
                else ""
            )
            con.execute(f"CREATE VIEW main.{table} AS {stored}SELECT * FROM pending.{table}")

    # each reads the store through ``reading()``: the query of ``runs`` or ``rashomon`` it names
    list_runs = _reading(runs.list_runs)
    sweeps = _reading(runs.sweeps)
    sweep_points = _reading(runs.sweep_points)
    events = _reading(runs.events)
    export = _reading(runs.export)
    rashomon_summary = _reading(rashomon.set_summary)
    rashomon_points = _reading(rashomon.point_sets)
    rashomon_members = _reading(rashomon.members)
    rashomon_decisions = _reading(rashomon.decisions)
    rashomon_features = _reading(rashomon.features)

    def resolve(self, refs: Sequence[str]) -> list[str]:
        """Run ids for ``latest`` or unique id prefixes; a clear error otherwise."""
        with self.reading() as con:
            return runs.resolve(con, refs, self.path)

    def get_run(self, run_id: str) -> RunRow:
        with self.reading() as con:
            return runs.get_run(con, run_id, self.path)

    def details(self, run_id: str) -> dict[str, Any]:
        """Everything ``runs show`` prints: the run, its model, metrics and split."""
        with self.reading() as con:
            return runs.details(con, run_id, self.path)

    # -- checking -------------------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Read every table to its last block, read-only (``glasswork runs check``); see
        ``recovery.check``."""
        import duckdb

        try:
            with self.file.locked(shared=True, wait=True, timeout=self.lock_timeout):
                try:
                    self.file.check_size()
                    con = duckdb.connect(str(self.path), read_only=True)
                except (duckdb.Error, StoreError) as exc:
                    return recovery.check(self.path, None, exc, self.events_dir)
                try:
                    return recovery.check(self.path, con, None, self.events_dir)
                finally:
                    try:
                        con.close()
                    except duckdb.Error:
                        pass
        except StoreError as exc:
            return recovery.check(self.path, None, exc, self.events_dir)

    def salvage(self, target: Path) -> dict[str, int]:
        """Copy every readable run of this (damaged) store, and its unfolded journals, into a new
        store at ``target``. The damaged file is only read."""
        return recovery.salvage(self.path, target, self.events_dir)
