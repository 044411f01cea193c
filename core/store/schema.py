"""The run store's file: where it is, the one lock every glasswork process takes before DuckDB
touches it, and the schema with its migrations.

DuckDB is safe for one writing process at a time, and DuckDB 2.0's own file lock is not enough
for that (bench/duckdb_multiprocess_repro.py: it reads the database headers before it takes its
lock, so two processes that connect, write and close in turn lose commits). So a process that
writes holds ``<db>.lock`` exclusively (``flock``), a process that reads holds it shared; the
kernel releases it when the process dies, so a ``kill -9`` never wedges it. A newer schema or a
foreign DuckDB file is refused with a message, never overwritten.
"""

from __future__ import annotations

import errno
import importlib
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from glasswork.duckdb_rows import first_row
from glasswork.quoting import sql_name as quote_name
from glasswork.result import Status

if TYPE_CHECKING:
    import duckdb

DEFAULT_DB = "glasswork.duckdb"
DB_ENV = "GLASSWORK_DB"
SCHEMA_VERSION = 7
STALE_SECONDS = 60.0  # a sweep with no run recorded for this long is no longer shown as active
LOCK_TIMEOUT = float(os.environ.get("GLASSWORK_DB_LOCK_TIMEOUT", "30"))
HEADER_BYTES = 12288  # DuckDB's file: three 4 KiB headers, then whole blocks
BLOCK_BYTES = 262144  # DuckDB's default block size, which glasswork never changes

STATE_OF_STATUS = {
    Status.OPTIMAL: "finished",
    Status.INFEASIBLE: "finished",  # a proof that no model meets the constraints: a finished run
    Status.HEURISTIC: "finished",
    Status.STOPPED_TIME: "stopped",
    Status.STOPPED_NODES: "stopped",
    Status.STOPPED_MEMORY: "stopped",
    Status.CANCELLED: "cancelled",
}
STATES = ("running", "finished", "stopped", "cancelled", "failed")

# A kept member's stored columns, which tell two stored members apart (rank included).
MEMBER_ROW = "rank, objective, features, fingerprint, kind, model::VARCHAR, model_text"

# Each entry upgrades the schema from version i to i + 1; version 0 is an empty file.
MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
        """CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, name VARCHAR, solver VARCHAR, solver_version VARCHAR,
            spec_hash VARCHAR, spec JSON, spec_path VARCHAR, data_fingerprint VARCHAR, split JSON,
            n_train BIGINT, n_test BIGINT, n_features BIGINT, host VARCHAR, pid BIGINT,
            started_at TIMESTAMP, ended_at TIMESTAMP, heartbeat_at TIMESTAMP,
            state VARCHAR, status VARCHAR, objective DOUBLE, lower_bound DOUBLE, gap DOUBLE,
            elapsed DOUBLE, peak_memory BIGINT, stats JSON, error VARCHAR)""",
        """CREATE TABLE events (
            run_id VARCHAR, seq BIGINT, kind VARCHAR, elapsed DOUBLE, objective DOUBLE,
            lower_bound DOUBLE, gap DOUBLE, nodes BIGINT, queue BIGINT, counters JSON,
            message VARCHAR)""",
        "CREATE TABLE artifacts (run_id VARCHAR, name VARCHAR, kind VARCHAR, body JSON, text VARCHAR)",
        "CREATE TABLE metrics (run_id VARCHAR, name VARCHAR, value DOUBLE)",
    ],
    [
        # Sweeps (many runs of one spec over a grid) group their runs.
        "ALTER TABLE runs ADD COLUMN sweep_id VARCHAR",
        "ALTER TABLE runs ADD COLUMN sweep_point JSON",
    ],
    [
        # How the model's features come from the raw columns (glasswork.export); NULL for older runs.
        "ALTER TABLE runs ADD COLUMN inputs JSON",
    ],
    [
        # A run's Rashomon set: its summary and multiplicity figures (one row), and one row per kept
        # member, best first (rank 1 is the best); no rows for runs without a set.
        """CREATE TABLE rashomon_sets (
            run_id VARCHAR, count BIGINT, complete BOOLEAN, exhaustive BOOLEAN, threshold DOUBLE,
            epsilon DOUBLE, optimum DOUBLE, optimum_proven BOOLEAN, unenumerated_bound DOUBLE,
            kept BIGINT, multiplicity JSON)""",
        """CREATE TABLE rashomon_members (
            run_id VARCHAR, rank BIGINT, objective DOUBLE, features VARCHAR[], fingerprint VARCHAR,
            kind VARCHAR, model JSON, model_text VARCHAR)""",
    ],
    [
        # The kept members of each point's set of a sweep a run's search ran (a MOSS frontier's
        # points, from 1), as rashomon_members holds the run's own set; the summaries stay events.
        """CREATE TABLE rashomon_point_members (
            run_id VARCHAR, point BIGINT, rank BIGINT, objective DOUBLE, features VARCHAR[],
            fingerprint VARCHAR, kind VARCHAR, model JSON, model_text VARCHAR)""",
    ],
    [
        # A point whose kept members are the run's own set's (the chosen point of a frontier) keeps
        # no rows of its own: rashomon_sets.shared_points names it, and its members are read from
        # rashomon_members. Older files drop such a point's rows, member for member the run's.
        "ALTER TABLE rashomon_sets ADD COLUMN shared_points BIGINT[]",
        f"""UPDATE rashomon_sets SET shared_points = (
            SELECT list(p.point ORDER BY p.point) FROM (
                SELECT DISTINCT point FROM rashomon_point_members q WHERE q.run_id = rashomon_sets.run_id
            ) p
            WHERE NOT EXISTS (
                SELECT {MEMBER_ROW} FROM rashomon_point_members q
                WHERE q.run_id = rashomon_sets.run_id AND q.point = p.point
                EXCEPT ALL SELECT {MEMBER_ROW} FROM rashomon_members m WHERE m.run_id = rashomon_sets.run_id
            ) AND NOT EXISTS (
                SELECT {MEMBER_ROW} FROM rashomon_members m WHERE m.run_id = rashomon_sets.run_id
                EXCEPT ALL SELECT {MEMBER_ROW} FROM rashomon_point_members q
                WHERE q.run_id = rashomon_sets.run_id AND q.point = p.point
            ))""",
        """DELETE FROM rashomon_point_members WHERE list_contains(
            (SELECT s.shared_points FROM rashomon_sets s WHERE s.run_id = rashomon_point_members.run_id), point)""",
    ],
    [
        # The fairness audit of a run's model (glasswork.audit: each metric on the training and test
        # rows, the groups' sizes and rates); NULL for runs without a ``fairness:`` section and older runs.
        "ALTER TABLE runs ADD COLUMN fairness JSON",
    ],
]
assert len(MIGRATIONS) == SCHEMA_VERSION

# Every table holding a run's rows (keyed by run_id); the Rashomon tables are absent before version 4
# (rashomon_point_members before version 5).
RUN_TABLES = (
    "runs",
    "events",
    "artifacts",
    "metrics",
    "rashomon_sets",
    "rashomon_members",
    "rashomon_point_members",
)
RASHOMON_TABLES = ("rashomon_sets", "rashomon_members", "rashomon_point_members")

EVENT_COLUMNS = (
    "run_id",
    "seq",
    "kind",
    "elapsed",
    "objective",
    "lower_bound",
    "gap",
    "nodes",
    "queue",
    "counters",
    "message",
)


class StoreError(RuntimeError):
    """The run store cannot be used as asked; the message says why and what to do."""


class StoreLocked(StoreError):
    """Another process held the database for longer than we were willing to wait."""


class StoreFull(StoreError):
    """The disk holding the store is (nearly) full: nothing was written, or what was written is
    readable; the journals wait for room."""


class StoreBusy(StoreLocked):
    """Another glasswork process has the DuckDB file open although this one holds the lock: the
    lock file was deleted or replaced while both ran. Not a program to close: it lets go in
    milliseconds, and folds what is left for it."""


class StoreDamaged(StoreError):
    """The file is a damaged DuckDB database: it is left untouched, the message says the way out."""


# What DuckDB says when a file's blocks, checksums or catalog cannot be trusted.
_DAMAGE_MARKERS = (
    "corrupt",
    "checksum",
    "invalidated",
    "serializ",
    "internal error",
    "not a valid duckdb",
    "unable to read",
    "failed to read",
    "could not read",
    "deserializ",
    "invalid block",
    "magic bytes",
    "truncated",
)


def is_damage(exc: BaseException) -> bool:
    """Whether a DuckDB error means the file itself is damaged (not locked, not our query)."""
    text = f"{type(exc).__name__} {exc}".lower()
    return any(marker in text for marker in _DAMAGE_MARKERS)


def damaged(path: Path, exc: BaseException) -> StoreDamaged:
    """The message for a damaged store: the file, what is wrong, and the ways out."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return StoreDamaged(
        f"the run store {path} is damaged ({first}). It is left exactly as it is: nothing is written "
        f"to a damaged store. Record elsewhere with --db OTHER.duckdb, or not at all with --no-store; "
        f"'glasswork runs check --db {path}' lists what is still readable, and "
        f"'glasswork runs check --db {path} --salvage NEW.duckdb' copies it into a new store "
        f"(then 'glasswork runs export --db NEW.duckdb ...')"
    )


class StorePathError(StoreError):
    """A spec's ``store.path`` that leads outside the spec's folder (through a symbolic link):
    a mistake in the spec, so the command exits 2."""


def default_db_path(
    explicit: str | Path | None = None, spec_store_path: str | None = None, base_dir: Path | None = None
) -> Path:
    """``--db`` beats ``GLASSWORK_DB`` beats the spec's ``store.path`` beats ``./glasswork.duckdb``.

    ``--db`` and ``$GLASSWORK_DB`` are the user's own choice and may point anywhere; a spec's
    ``store.path`` is data from anyone, so it must stay inside the spec's folder once symbolic
    links are followed (``StorePathError`` otherwise; the spec's validator already refuses
    ``..``, ``~``, ``$`` and absolute paths)."""
    if explicit:
        return Path(explicit)
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV])
    if spec_store_path:
        path = Path(spec_store_path)
        if path.is_absolute() or base_dir is None:
            return path
        folder = base_dir.resolve()
        resolved = (folder / path).resolve()
        if not resolved.is_relative_to(folder):
            raise StorePathError(
                f"store.path {spec_store_path!r} leads outside the spec's folder {folder} (to {resolved}) "
                "through a symbolic link; a spec may only name a store inside its own folder. Choose any "
                "other place with --db PATH or $GLASSWORK_DB"
            )
        return base_dir / path
    return Path(DEFAULT_DB)


def utc_now() -> datetime:
    """Naive UTC: the store's timestamps are UTC ``TIMESTAMP`` columns (no time-zone module needed)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def as_utc(value: str | datetime) -> datetime:
    """A stored or given moment as naive UTC, the form the store's columns hold."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def finite_or_none(value: Any) -> float | None:
    """A figure for a DOUBLE column: ``None`` for a missing or non-finite one."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def json_text(value: Any) -> str | None:
    """A value for a JSON column (strict JSON: no NaN), ``None`` kept as NULL."""
    return None if value is None else json.dumps(value, allow_nan=False, default=str)


def disk_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "no space left" in text or "disk is full" in text or "errno 28" in text


def sql_string_body(path: Path) -> str:
    """A path inside a SQL string literal (its quotes doubled), for statements such as ATTACH that
    take no parameters."""
    return str(path).replace("'", "''")


# -- the store's lock ---------------------------------------------------------------------------

try:
    import fcntl
except ImportError:  # Windows: msvcrt's byte lock, exclusive only (readers then take turns)
    fcntl = None  # type: ignore[assignment]
    import msvcrt


def try_lock(fh: IO[Any], *, shared: bool = False) -> bool:
    """Take an advisory lock on an open file without waiting; False when another process holds
    it. The lock belongs to this open file and ends when it is closed or the process dies."""
    try:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        else:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    except (BlockingIOError, PermissionError):
        return False
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EDEADLK):
            return False
        raise
    return True


def lock_path(path: Path) -> Path:
    """The file every glasswork process locks before DuckDB opens ``path``."""
    return path.with_name(path.name + ".lock")


class StoreFile:
    """The DuckDB file and its lock: ``writing`` (exclusive, the schema migrated) and ``reading``
    (shared, read-only). DuckDB never sees two glasswork processes that could write at once."""

    def __init__(self, path: Path, lock_timeout: float) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self._checked = False
        self._held: IO[Any] | None = None  # the lock file while this process holds it exclusively

    # -- the lock -----------------------------------------------------------------------------

    @contextmanager
    def locked(self, *, shared: bool, wait: bool, timeout: float) -> Iterator[bool]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = lock_path(self.path).open("a+")
        except OSError as exc:
            blocker = next((p for p in (self.path.parent, *self.path.parent.parents) if p.exists()), None)
            if blocker is not None and not blocker.is_dir():
                raise StoreError(
                    f"cannot use {self.path} as the run store: {blocker} is a file, not a folder "
                    "(Not a directory); point --db at a .duckdb file in a folder you can "
                    "write"
                ) from exc
            raise _unusable(self.path, exc) from exc
        try:
            deadline = time.monotonic() + timeout
            seen = self._holder(fh)
            while True:
                if try_lock(fh, shared=shared):
                    if self._is_current(fh):
                        break
                    fh.close()  # deleted or replaced meanwhile: lock the file now at that name
                    fh = lock_path(self.path).open("a+")
                    continue
                if not wait:
                    yield False
                    return
                holder = self._holder(fh)
                if holder != seen:  # another fold took its turn: the store is busy, not stuck
                    seen, deadline = holder, time.monotonic() + timeout
                elif time.monotonic() >= deadline:
                    pid = holder.split()[0] if holder else ""
                    raise StoreLocked(
                        f"the run store {self.path} is busy: "
                        f"{'process ' + pid if pid.isdigit() else 'another process'} "
                        f"has held {lock_path(self.path).name} for over {timeout:.0f} s. Close the program holding it, "
                        "or record elsewhere with --db PATH (or not at all with --no-store)"
                    )
                time.sleep(random.uniform(0.001, 0.01))  # short and jittered: folds take milliseconds
            if not shared:  # who holds it and since when: waiters tell a busy store from a stuck one
                try:
                    fh.seek(0)
                    fh.truncate()
                    fh.write(f"{os.getpid()} {time.monotonic_ns()}")
                    fh.flush()
                except OSError:
                    pass
                self._held = fh
            yield True
        finally:
            self._held = None
            fh.close()

    def _is_current(self, fh: IO[Any]) -> bool:
        """Whether ``fh`` is still the file named ``<db>.lock``: one deleted or replaced while it
        was open (by hand, a clean-up tool) no longer keeps out the processes that open the
        name afresh, so a lock on it is let go and taken again on the file at that name."""
        try:
            return os.stat(lock_path(self.path)).st_ino == os.fstat(fh.fileno()).st_ino
        except OSError:
            return False

    @staticmethod
    def _holder(fh: IO[Any]) -> str:
        """What the last exclusive holder wrote on the lock file's first line: its pid and when
        it took the lock."""
        try:
            fh.seek(0)
            return fh.read(64).partition("\n")[0].strip()
        except OSError:
            return ""

    # -- the stamp: the file as glasswork last left it ----------------------------------------

    def _stamp(self) -> str | None:
        """The DuckDB file's (and its write-ahead log's) size, times and inode: they change with
        every write by anyone (another program, a stray write, a copy over it, a truncation)."""
        parts = []
        for path in (self.path, self.path.with_name(self.path.name + ".wal")):
            try:
                st = path.stat()
            except FileNotFoundError:
                if path == self.path:
                    return None
                parts.append("-")
                continue
            except OSError:
                return None
            parts.append(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
        return f"schema {SCHEMA_VERSION} " + " ".join(parts)

    def _write_stamp(self) -> None:
        """After DuckDB closed the file cleanly under the exclusive lock (its schema checked or
        migrated, nothing found damaged): note how the file was left, on the lock file's second
        line, for ``unchanged``."""
        stamp = self._stamp()
        if self._held is None or stamp is None:
            return
        try:
            self._held.write("\n" + stamp)  # the lock file is open to append, after the holder's line
            self._held.flush()
        except OSError:
            pass

    def unchanged(self) -> bool:
        """Whether the file is exactly as a glasswork process left it after its last check (its
        schema current, nothing damaged found): then a run about to start needs no DuckDB to know
        the store is usable. Any write since (by anyone), or no stamp, is False."""
        try:
            noted = lock_path(self.path).read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            return False
        stamp = self._stamp()
        return stamp is not None and len(noted) > 1 and noted[1] == stamp

    # -- DuckDB -------------------------------------------------------------------------------

    def _open(self, deadline: float, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        """DuckDB's connection, waiting while a process outside glasswork holds the file."""
        duckdb = engine()

        delay = 0.02
        started = time.monotonic()
        while True:
            try:
                return duckdb.connect(str(self.path), **kwargs)
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower():
                    raise _unusable(self.path, exc) from exc
                if time.monotonic() >= deadline:
                    holder = re.search(r"\(PID (\d+)\)", str(exc))
                    if holder and shares_lock(int(holder.group(1)), lock_path(self.path)):
                        raise StoreBusy(
                            f"the run store {self.path} is being written by glasswork process {holder.group(1)}, "
                            f"which took {lock_path(self.path).name} before that file was deleted or replaced; "
                            "try again in a moment"
                        ) from exc
                    who = f"process {holder.group(1)}" if holder else "another process"
                    waited = time.monotonic() - started
                    raise StoreLocked(
                        f"the run store {self.path} is locked by {who}"
                        + (f"; waited {waited:.0f} s. " if waited >= 1 else ". ")
                        + "Close the program holding it, or record elsewhere with --db PATH "
                        "(or not at all with --no-store)"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except duckdb.Error as exc:
                raise _unusable(self.path, exc) from exc

    @contextmanager
    def writing(
        self,
        *,
        wait: bool = True,
        timeout: float | None = None,
        outside_timeout: float | None = None,
        before: Callable[[], None] | None = None,
    ) -> Iterator[duckdb.DuckDBPyConnection | None]:
        """The file opened for writing under the exclusive lock, its schema migrated. Without
        ``wait``, yields None at once when another glasswork process holds the lock.
        ``outside_timeout`` bounds the wait for a program outside glasswork holding the file;
        ``before`` runs under the lock before DuckDB opens it (and may refuse, raising).
        The session ends with a checkpoint: once this returns, what it wrote is in the file
        itself, and a checkpoint that fails (a full disk) is a ``StoreError``, never silent."""
        timeout = self.lock_timeout if timeout is None else timeout
        with self.locked(shared=False, wait=wait, timeout=timeout) as got:
            if not got:
                yield None
                return
            self.check_size(writing=True)
            if before is not None:
                before()
            try:
                con = self._open(time.monotonic() + (timeout if outside_timeout is None else outside_timeout))
            except StoreBusy:
                if wait:
                    raise
                yield None  # as when the lock is taken: the other glasswork process folds for us
                return
            with _mapped(self.path, con):
                migrate(con, self.path)
                yield con
                con.execute("CHECKPOINT")  # DuckDB's own, on close, fails without a word
            self._write_stamp()  # closed cleanly: how glasswork left the file

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """An in-memory connection with the file attached read-only as ``store`` (when it exists),
        under the shared lock."""
        import duckdb

        with self.locked(shared=True, wait=True, timeout=self.lock_timeout):
            con = duckdb.connect()
            with _mapped(self.path, con):
                if self.path.exists():
                    self.check_size()
                    deadline = time.monotonic() + self.lock_timeout
                    delay = 0.02
                    while True:
                        try:
                            con.execute(f"ATTACH '{sql_string_body(self.path)}' AS store (READ_ONLY)")
                            break
                        except duckdb.IOException as exc:
                            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                                raise
                            time.sleep(delay)
                            delay = min(delay * 2, 0.5)
                yield con

    def check_size(self, *, writing: bool = False) -> None:
        """A file cut at an odd length (a copy that stopped, a bad truncate) is damage: DuckDB
        would otherwise open it, write past the cut and leave blocks that fail their checksum,
        losing the run it was recording. Its size must be the headers plus whole blocks, unless
        DuckDB reads every table of it whole: then the odd tail is a checkpoint a full disk cut
        short (its blocks unused), and the file is padded to whole blocks before it is written."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _unusable(self.path, exc) from exc
        if size and (size < HEADER_BYTES or (size - HEADER_BYTES) % BLOCK_BYTES):
            if size > HEADER_BYTES and self._reads_whole():
                if writing:
                    whole = HEADER_BYTES + -(-(size - HEADER_BYTES) // BLOCK_BYTES) * BLOCK_BYTES
                    try:
                        os.truncate(self.path, whole)  # zeros: blocks DuckDB's headers do not name
                    except OSError as exc:
                        raise StoreFull(
                            f"the disk holding the run store {self.path} is full ({exc.strerror}); the store is "
                            "readable and left as it is; free some space, or record elsewhere with --db"
                        ) from exc
                return
            raise damaged(
                self.path,
                RuntimeError(
                    f"the file is truncated: {size:,} bytes is not its headers plus whole "
                    f"{BLOCK_BYTES // 1024} KiB blocks"
                ),
            )

    def _reads_whole(self) -> bool:
        """Whether DuckDB opens the file read-only and reads every row of every table."""
        duckdb = engine()
        try:
            con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error:
            return False
        try:
            for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
                cursor = con.execute(f"SELECT * FROM {quote_name(table)}")
                while cursor.fetchmany(10_000):
                    pass
            return True
        except duckdb.Error:
            return False
        finally:
            try:
                con.close()
            except duckdb.Error:
                pass


def shares_lock(pid: int, lock: Path) -> bool:
    """Whether process ``pid`` holds ``lock`` open (a glasswork process using this store), even a
    deleted one: read from ``/proc`` where there is one (Linux), else False."""
    target = str(lock.resolve())
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link in (target, f"{target} (deleted)"):
            return True
    return False


def engine() -> Any:
    """The module that opens the store for writing (a run's fold): DuckDB's compiled engine,
    ``_duckdb``, which ``duckdb`` re-exports (the same connection and error classes). ``duckdb``
    2.0's Python layer only adds relational methods (``sql``, ``table``, ``read_csv``, ...) the
    store never calls, and importing it is 200 KB of Python: 0.1-0.2 CPU-s, most of what a run's
    fold cost (bench/startup.py). ``duckdb`` itself where the engine is not importable alone."""
    try:
        return importlib.import_module("_duckdb")
    except ImportError:  # a DuckDB whose engine is not the top-level ``_duckdb``
        return importlib.import_module("duckdb")


def _unusable(path: Path, exc: BaseException) -> StoreError:
    if is_damage(exc):
        return damaged(path, exc)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EROFS):
        return StoreError(
            f"cannot use {path} as the run store: {exc.strerror} ({exc.filename}); "
            "point --db at a .duckdb file in a folder you can write"
        )
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "not a directory" in text.lower() or "is a directory" in text.lower():
        return StoreError(
            f"cannot use {path} as the run store: {text}; point --db at a .duckdb file in a folder you can write"
        )
    return StoreError(f"cannot open the run store {path}: {text}")


@contextmanager
def _mapped(path: Path, con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB's errors as the store's (damage, a full disk), and the connection closed."""
    duckdb = engine()

    try:
        yield
    except duckdb.Error as exc:
        if is_damage(exc):
            raise damaged(path, exc) from exc
        if disk_full(exc):
            raise StoreFull(
                f"the disk holding the run store {path} is full ({str(exc).strip().splitlines()[0]}); what the store "
                "held stays readable and journals not yet recorded are kept; free some space, or record "
                "elsewhere with --db"
            ) from exc
        raise
    finally:
        try:
            con.close()
        except duckdb.Error:
            pass  # closing an invalidated database: the error above says why


# -- schema ---------------------------------------------------------------------------------------


def schema_version(con: duckdb.DuckDBPyConnection, path: Path, catalog: str = "") -> int:
    """The file's schema version (0: empty); a foreign or unreadable one is a ``StoreError``."""
    prefix = f"{catalog}." if catalog else ""
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = coalesce(?, current_database())",
            [catalog or None],
        ).fetchall()
    }
    if "meta" not in tables:
        if tables:
            raise StoreError(f"{path} is a DuckDB file but not a glasswork run store; use another --db")
        return 0
    row = first_row(con, f"SELECT value FROM {prefix}meta WHERE key = 'schema_version'")
    if row is None:
        return 0
    try:
        version = int(str(row[0]).strip())
        if version < 0:
            raise ValueError
    except ValueError:
        raise StoreError(
            f"the run store {path} has an unreadable schema version ({str(row[0])[:40]!r} in its meta table), "
            "so glasswork cannot tell what it holds and will not write to it; use another --db, or copy its "
            f"runs out with 'glasswork runs check --db {path} --salvage NEW.duckdb'"
        ) from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the run store {path} has schema version {version}, newer than this glasswork "
            f"understands ({SCHEMA_VERSION}); upgrade glasswork, or use another --db"
        )
    return version


def migrate(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Bring the schema to ``SCHEMA_VERSION`` in one transaction."""
    version = schema_version(con, path)
    if version == SCHEMA_VERSION:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for step in MIGRATIONS[version:]:
            for statement in step:
                con.execute(statement)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
