"""The run store's file: where it is, how it is opened (waiting out another process's lock), and
the schema with its migrations.

Every method opens the database only for the moment it works, so several runs and readers
share one file; a newer schema or a foreign DuckDB file is refused with a message, never
overwritten.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.result import Status

if TYPE_CHECKING:
    import duckdb

DEFAULT_DB = "glasswork.duckdb"
DB_ENV = "GLASSWORK_DB"
SCHEMA_VERSION = 3
FLUSH_SECONDS = 1.0
HEARTBEAT_SECONDS = 10.0
STALE_SECONDS = 60.0
LOCK_TIMEOUT = float(os.environ.get("GLASSWORK_DB_LOCK_TIMEOUT", "10"))
FINAL_LOCK_TIMEOUT = 60.0

STATE_OF_STATUS = {
    Status.OPTIMAL: "finished",
    Status.HEURISTIC: "finished",
    Status.STOPPED_TIME: "stopped",
    Status.STOPPED_NODES: "stopped",
    Status.STOPPED_MEMORY: "stopped",
    Status.CANCELLED: "cancelled",
}
STATES = ("running", "finished", "stopped", "cancelled", "failed")

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
]
assert len(MIGRATIONS) == SCHEMA_VERSION

EVENT_COLUMNS = ("run_id", "seq", "kind", "elapsed", "objective", "lower_bound", "gap", "nodes",
                 "queue", "counters", "message")


class StoreError(RuntimeError):
    """The run store cannot be used as asked; the message says why and what to do."""


class StoreLocked(StoreError):
    """Another process held the database for longer than we were willing to wait."""


class StoreDamaged(StoreError):
    """The file is a damaged DuckDB database: it is left untouched, the message says the way out."""


# What DuckDB says when a file's blocks, checksums or catalog cannot be trusted.
_DAMAGE_MARKERS = ("corrupt", "checksum", "invalidated", "serializ", "internal error", "not a valid duckdb",
                   "unable to read", "failed to read", "could not read", "deserializ", "invalid block",
                   "magic bytes", "truncated")


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


def default_db_path(explicit: str | Path | None = None, spec_store_path: str | None = None,
                    base_dir: Path | None = None) -> Path:
    """``--db`` beats ``GLASSWORK_DB`` beats the spec's ``store.path`` beats ``./glasswork.duckdb``."""
    if explicit:
        return Path(explicit)
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV])
    if spec_store_path:
        path = Path(spec_store_path)
        return path if path.is_absolute() or base_dir is None else base_dir / path
    return Path(DEFAULT_DB)


def _now() -> datetime:
    """Naive UTC: the store's timestamps are UTC ``TIMESTAMP`` columns (no time-zone module needed)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _utc(value: str | datetime) -> datetime:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, allow_nan=False, default=str)


def _disk_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "no space left" in text or "disk is full" in text or "errno 28" in text


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first row or None. (DuckDB 2 keeps a half-read result open and refuses the next
    statement on that connection, so never use fetchone.)"""
    rows = con.execute(sql, params).fetchall()
    return rows[0] if rows else None


def _sql_string(path: Path) -> str:
    return str(path).replace("'", "''")


class Database:
    """A DuckDB run-history file and its connections; the run store builds on it."""

    def __init__(self, path: str | Path, *, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self.events_dir = self.path.with_name(self.path.name + ".events")
        self._ready = False

    def log_path(self, run_id: str) -> Path:
        """The write-ahead log of a live run (``<db>.events/<run_id>.jsonl``)."""
        return self.events_dir / f"{run_id}.jsonl"

    # -- connections --------------------------------------------------------------------------

    @contextmanager
    def connect(self, *, timeout: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the database, waiting for another process's lock to clear, then prepare it."""
        import duckdb

        timeout = self.lock_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                con = duckdb.connect(str(self.path))
                break
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower():
                    if is_damage(exc):
                        raise damaged(self.path, exc) from exc
                    raise StoreError(f"cannot open the run store {self.path}: {exc}") from exc
                if time.monotonic() >= deadline:
                    holder = re.search(r"\(PID (\d+)\)", str(exc))
                    who = f"process {holder.group(1)}" if holder else "another process"
                    raise StoreLocked(
                        f"the run store {self.path} is locked by {who}; waited {timeout:.0f} s. "
                        "Close the program holding it, or record elsewhere with --db PATH "
                        "(or not at all with --no-store)"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except duckdb.Error as exc:
                if is_damage(exc):
                    raise damaged(self.path, exc) from exc
                raise StoreError(f"cannot open the run store {self.path}: {exc}") from exc
        try:
            if not self._ready:
                self._migrate(con)
                self._ready = True
            yield con
        except duckdb.Error as exc:
            if is_damage(exc):
                raise damaged(self.path, exc) from exc
            if _disk_full(exc):
                raise StoreError(f"the disk holding the run store {self.path} is full ({exc}); "
                                 "free some space, or record elsewhere with --db") from exc
            raise
        finally:
            try:
                con.close()
            except duckdb.Error:
                pass  # closing an invalidated database: the error above says why

    # -- schema -------------------------------------------------------------------------------

    def _migrate(self, con: duckdb.DuckDBPyConnection) -> None:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        version = 0
        if "meta" in tables:
            row = _one(con, "SELECT value FROM meta WHERE key = 'schema_version'")
            version = int(row[0]) if row else 0
        elif tables:
            raise StoreError(f"{self.path} is a DuckDB file but not a glasswork run store; use another --db")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the run store {self.path} has schema version {version}, newer than this glasswork "
                f"understands ({SCHEMA_VERSION}); upgrade glasswork, or use another --db"
            )
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
