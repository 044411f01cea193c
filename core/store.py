"""The run store: every run, its spec, bound trajectory, models and metrics, in one DuckDB file.

Durability comes from two layers. While a run is live, its ``StoreSink`` appends every event to
a JSON-lines file beside the database (``<db>.events/<run_id>.jsonl``): that file is the run's
write-ahead log, and what other processes follow without touching DuckDB. A background thread
copies events into DuckDB in batches and refreshes the run's heartbeat, opening the database
only for the moment it writes, so several runs (and readers) share one file. When the run ends
and its last batch is in the database, the log is removed.

Whenever the store is opened it recovers: a log whose writer is gone (killed with SIGKILL,
machine crash, a database that stayed locked) is imported, so its run becomes ``failed`` with
every event it wrote, or ``finished`` if its final result reached the log.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.events import Event
from glasswork.record import RunInfo, finish_record, start_record
from glasswork.result import Status

if TYPE_CHECKING:
    import duckdb

    from glasswork.runner import RunOutcome

DEFAULT_DB = "glasswork.duckdb"
DB_ENV = "GLASSWORK_DB"
SCHEMA_VERSION = 2
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
]
assert len(MIGRATIONS) == SCHEMA_VERSION

EVENT_COLUMNS = ("run_id", "seq", "kind", "elapsed", "objective", "lower_bound", "gap", "nodes",
                 "queue", "counters", "message")


class StoreError(RuntimeError):
    """The run store cannot be used as asked; the message says why and what to do."""


class StoreLocked(StoreError):
    """Another process held the database for longer than we were willing to wait."""


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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, allow_nan=False, default=str)


@dataclass
class RunRow:
    """A run as the store holds it (one row of ``runs`` with its JSON columns decoded)."""

    run_id: str
    name: str
    solver: str
    solver_version: str
    state: str
    status: str | None
    objective: float | None
    lower_bound: float | None
    gap: float | None
    started_at: datetime | None
    ended_at: datetime | None
    elapsed: float | None
    spec: dict[str, Any]
    spec_hash: str
    data_fingerprint: str
    host: str
    pid: int
    peak_memory: int | None
    stats: dict[str, Any]
    error: str | None
    n_train: int | None
    n_test: int | None
    n_features: int | None
    sweep_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("started_at", "ended_at"):
            if out[key] is not None:
                out[key] = out[key].isoformat()
        return out


@dataclass
class SweepRow:
    """A sweep as the store sees it: what its recorded runs add up to."""

    sweep_id: str
    name: str
    solver: str
    states: dict[str, int]
    total: int
    best_objective: float | None
    started_at: datetime
    last_at: datetime

    @property
    def runs(self) -> int:
        return sum(self.states.values())

    @property
    def done(self) -> int:
        """Points that ended with a result (finished or stopped at a limit)."""
        return self.states.get("finished", 0) + self.states.get("stopped", 0)

    @property
    def active(self) -> bool:
        """Still filling in: points missing and a run recorded in the last minute."""
        recent = datetime.now(timezone.utc) - self.last_at < timedelta(seconds=STALE_SECONDS)
        return self.done < self.total and recent

    def progress(self) -> str:
        text = f"{self.done}/{self.total} done"
        failed = self.states.get("failed", 0) + self.states.get("cancelled", 0)
        return text + (f", {failed} failed or cancelled" if failed else "")


_RUN_COLUMNS = ("run_id, name, solver, solver_version, state, status, objective, lower_bound, gap, "
                "started_at, ended_at, elapsed, spec, spec_hash, data_fingerprint, host, pid, "
                "peak_memory, stats, error, n_train, n_test, n_features, sweep_id")


def _row(values: Sequence[Any]) -> RunRow:
    names = [c.strip() for c in _RUN_COLUMNS.split(",")]
    data = dict(zip(names, values))
    for key in ("started_at", "ended_at"):
        if data[key] is not None:
            data[key] = data[key].replace(tzinfo=timezone.utc)
    data["spec"] = json.loads(data["spec"]) if data["spec"] else {}
    data["stats"] = json.loads(data["stats"]) if data["stats"] else {}
    return RunRow(**data)


class RunStore:
    """A DuckDB run-history file. Every method opens the database only while it works."""

    def __init__(self, path: str | Path, *, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self.events_dir = self.path.with_name(self.path.name + ".events")
        self._ready = False

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
                raise StoreError(f"cannot open the run store {self.path}: {exc}") from exc
        try:
            if not self._ready:
                self._migrate(con)
                self._ready = True
            yield con
        finally:
            con.close()

    def open(self) -> RunStore:
        """Check the database is usable now (migrating and recovering it); raises ``StoreError``."""
        with self.connect() as con:
            self._recover(con)
        return self

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

    # -- writing (the owner process only) ------------------------------------------------------

    def log_path(self, run_id: str) -> Path:
        return self.events_dir / f"{run_id}.jsonl"

    def begin(self, info: RunInfo, con: duckdb.DuckDBPyConnection | None = None) -> None:
        if con is None:
            with self.connect() as con:
                return self.begin(info, con)
        started = _utc(info.started_at)
        con.execute(
            "INSERT OR REPLACE INTO runs (run_id, name, solver, solver_version, spec_hash, spec, "
            "spec_path, data_fingerprint, split, n_train, n_test, n_features, host, pid, started_at, "
            "heartbeat_at, state, sweep_id, sweep_point) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "'running', ?, ?)",
            [info.run_id, info.name, info.solver, info.solver_version, info.spec_hash,
             _json(info.spec), info.spec_path, info.data_fingerprint, _json(info.split),
             info.n_train, info.n_test, info.n_features, info.host, info.pid, started, _now(),
             info.sweep_id, _json(info.sweep_point)],
        )

    def append_events(self, con: duckdb.DuckDBPyConnection, run_id: str,
                      records: Sequence[tuple[int, dict[str, Any]]]) -> None:
        """Insert ``(seq, event dict)`` records in one statement (a columnar batch)."""
        if records:
            con.register("glasswork_event_batch", _event_columns(run_id, records))
            try:
                con.execute(f"INSERT INTO events SELECT {', '.join(EVENT_COLUMNS)} FROM glasswork_event_batch")
            finally:
                con.unregister("glasswork_event_batch")
        con.execute("UPDATE runs SET heartbeat_at = ? WHERE run_id = ?", [_now(), run_id])

    def finish(self, con: duckdb.DuckDBPyConnection, run_id: str, result: dict[str, Any] | None,
               error: str | None, ended_at: datetime | None = None) -> None:
        """Record the end of a run: its certificate, model, metrics (or why it failed)."""
        ended_at = ended_at or _now()
        con.execute("DELETE FROM artifacts WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM metrics WHERE run_id = ?", [run_id])
        if result is None:
            con.execute("UPDATE runs SET state = 'failed', error = ?, ended_at = ? WHERE run_id = ?",
                        [error, ended_at, run_id])
            return
        state = STATE_OF_STATUS[Status(result["status"])]
        stats = result.get("stats", {})
        con.execute(
            "UPDATE runs SET state = ?, status = ?, objective = ?, lower_bound = ?, gap = ?, "
            "elapsed = ?, peak_memory = ?, stats = ?, ended_at = ?, error = NULL WHERE run_id = ?",
            [state, result["status"], _finite(result.get("objective")), _finite(result.get("lower_bound")),
             _finite(result.get("gap")), stats.get("elapsed"), stats.get("peak_memory"),
             _json(stats), ended_at, run_id],
        )
        con.execute("INSERT INTO artifacts VALUES (?, 'model', ?, ?, ?)",
                    [run_id, result["model"].get("kind"), _json(result["model"]), result.get("model_text")])
        metrics = [(run_id, k, _finite(v)) for k, v in result.get("metrics", {}).items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if metrics:
            con.register("glasswork_metric_batch", {
                "run_id": np.array([m[0] for m in metrics], dtype=object),
                "name": np.array([m[1] for m in metrics], dtype=object),
                "value": np.array([np.nan if m[2] is None else m[2] for m in metrics], dtype=np.float64),
            })
            try:
                con.execute("INSERT INTO metrics SELECT run_id, name, value FROM glasswork_metric_batch")
            finally:
                con.unregister("glasswork_metric_batch")

    # -- recovery -----------------------------------------------------------------------------

    def _recover(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        """Import the logs of runs whose writer is gone; mark silent 'running' rows failed."""
        recovered = []
        host = socket.gethostname()
        if self.events_dir.is_dir():
            for log in sorted(self.events_dir.glob("*.jsonl")):
                run_id = log.stem
                state = _one(con, "SELECT state, host, pid, heartbeat_at FROM runs WHERE run_id = ?",
                                    [run_id])
                if state is not None and state[0] != "running":
                    log.unlink(missing_ok=True)  # fully recorded; the owner died before tidying up
                    continue
                records = _read_log(log)
                if not records or records[0].get("kind") != "start":
                    continue
                start = records[0]
                if self._alive(start.get("host"), start.get("pid"), None if state is None else state[3], host):
                    continue
                self._import_log(con, records)
                log.unlink(missing_ok=True)
                recovered.append(run_id)
        for run_id, run_host, pid, heartbeat in con.execute(
            "SELECT run_id, host, pid, heartbeat_at FROM runs WHERE state = 'running'"
        ).fetchall():
            if not self._alive(run_host, pid, heartbeat, host):
                con.execute(
                    "UPDATE runs SET state = 'failed', ended_at = heartbeat_at, error = ? WHERE run_id = ?",
                    ["the run's process ended without finishing (killed or crashed); "
                     "the events it wrote before then are kept", run_id],
                )
                recovered.append(run_id)
        return recovered

    @staticmethod
    def _alive(run_host: str | None, pid: int | None, heartbeat: datetime | None, host: str) -> bool:
        if pid is not None and run_host == host:
            if pid == os.getpid():
                return True
            if not _pid_alive(int(pid)):
                return False
        if heartbeat is None:
            return run_host == host and pid is not None
        return _now() - _utc(heartbeat) < timedelta(seconds=STALE_SECONDS)

    def record(self, records: list[dict[str, Any]]) -> None:
        """Record a whole run at once from its log records (start, events..., finish).

        Sweeps use it: their workers never open the database, they send the records back.
        """
        with self.connect(timeout=FINAL_LOCK_TIMEOUT) as con:
            self._import_log(con, records)

    def sweep_points(self, sweep_id: str, states: Sequence[str] = ("finished", "stopped")) -> dict[str, str]:
        """``{point key: run_id}`` of a sweep's runs in the given states (to resume a sweep)."""
        with self.connect() as con:
            rows = con.execute(
                f"SELECT sweep_point, run_id FROM runs WHERE sweep_id = ? AND state IN "
                f"({', '.join('?' for _ in states)}) ORDER BY started_at",
                [sweep_id, *states]).fetchall()
        return {json.loads(point)["key"]: run_id for point, run_id in rows if point}

    def _import_log(self, con: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> None:
        start = records[0]
        info = RunInfo.from_dict(start)
        have = con.execute("SELECT coalesce(max(seq), -1) FROM events WHERE run_id = ?", [info.run_id]).fetchone()[0]
        if _one(con, "SELECT count(*) FROM runs WHERE run_id = ?", [info.run_id])[0] == 0:
            self.begin(info, con)
        events = [(seq, r) for seq, r in enumerate(records[1:]) if r.get("kind") != "finish" and seq > have]
        self.append_events(con, info.run_id, events)
        finish = records[-1] if records[-1].get("kind") == "finish" else None
        if finish is not None and finish.get("result") is not None:
            self.finish(con, info.run_id, finish["result"], None)
        else:
            reason = (finish or {}).get("error") or (
                "the run's process ended without finishing (killed or crashed); "
                "the events it wrote before then are kept")
            self.finish(con, info.run_id, None, reason)

    # -- reading ------------------------------------------------------------------------------

    def list_runs(self, *, solver: str | None = None, state: str | None = None, name: str | None = None,
                  sweep: str | None = None, limit: int | None = 50) -> list[RunRow]:
        where, params = [], []
        if sweep:
            where.append("starts_with(sweep_id, ?)")
            params.append(sweep)
        for column, value in (("solver", solver), ("state", state)):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if name:
            where.append("name ILIKE ?")
            params.append(f"%{name}%")
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY started_at DESC, run_id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self.connect() as con:
            return [_row(r) for r in con.execute(sql, params).fetchall()]

    def sweeps(self, *, solver: str | None = None, name: str | None = None) -> list[SweepRow]:
        """One row per sweep: its points done out of its total, their states and its best objective."""
        where, params = ["sweep_id IS NOT NULL"], []
        if solver:
            where.append("solver = ?")
            params.append(solver)
        if name:
            where.append("name ILIKE ?")
            params.append(f"%{name}%")
        with self.connect() as con:
            rows = con.execute(
                "SELECT sweep_id, any_value(name), any_value(solver), list(state), "
                "max(CAST(json_extract(sweep_point, '$.total') AS BIGINT)), min(objective), "
                "min(started_at), max(coalesce(ended_at, heartbeat_at, started_at)) "
                f"FROM runs WHERE {' AND '.join(where)} GROUP BY sweep_id ORDER BY min(started_at) DESC",
                params).fetchall()
        out = []
        for sweep_id, sweep_name, sweep_solver, states, total, best, started, last in rows:
            counts: dict[str, int] = {}
            for state in states:
                counts[state] = counts.get(state, 0) + 1
            out.append(SweepRow(sweep_id, sweep_name, sweep_solver, counts, total or len(states), best,
                                started.replace(tzinfo=timezone.utc), last.replace(tzinfo=timezone.utc)))
        return out

    def resolve(self, refs: Sequence[str]) -> list[str]:
        """Run ids for ``latest`` or unique id prefixes; a clear error otherwise."""
        out = []
        with self.connect() as con:
            for ref in refs:
                if ref == "latest":
                    row = _one(con, "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
                    if row is None:
                        raise StoreError(f"no runs recorded in {self.path} yet")
                    out.append(row[0])
                    continue
                matches = [r[0] for r in con.execute(
                    "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [ref]).fetchall()]
                if not matches:
                    raise StoreError(f"no run with an id starting {ref!r} in {self.path} (see 'glasswork runs list')")
                if len(matches) > 1:
                    raise StoreError(f"{ref!r} matches {len(matches)} runs ({', '.join(m[:12] for m in matches[:5])}"
                                     f"{', ...' if len(matches) > 5 else ''}); give more of the id")
                out.append(matches[0])
        return out

    def get_run(self, run_id: str) -> RunRow:
        with self.connect() as con:
            row = _one(con, f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", [run_id])
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.path}")
        return _row(row)

    def details(self, run_id: str) -> dict[str, Any]:
        """Everything ``runs show`` prints: the run, its model, metrics and split."""
        run = self.get_run(run_id)
        with self.connect() as con:
            artifacts = con.execute("SELECT name, kind, body, text FROM artifacts WHERE run_id = ?", [run_id]).fetchall()
            metrics = dict(con.execute("SELECT name, value FROM metrics WHERE run_id = ? ORDER BY name", [run_id]).fetchall())
            split = _one(con, "SELECT split FROM runs WHERE run_id = ?", [run_id])[0]
            n_events = _one(con, "SELECT count(*) FROM events WHERE run_id = ?", [run_id])[0]
        doc = run.to_dict()
        doc["metrics"] = metrics
        doc["models"] = [{"name": n, "kind": k, "model": json.loads(b) if b else None, "text": t}
                         for n, k, b, t in artifacts]
        doc["split"] = json.loads(split) if split else None
        doc["n_events"] = n_events
        return doc

    def events(self, run_id: str) -> list[dict[str, Any]]:
        with self.connect() as con:
            rows = con.execute(f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE run_id = ? ORDER BY seq",
                               [run_id]).fetchall()
        out = []
        for row in rows:
            record = dict(zip(EVENT_COLUMNS, row))
            record["counters"] = json.loads(record["counters"]) if record["counters"] else {}
            out.append(record)
        return out

    def export(self, run_ids: Sequence[str], prefix: Path, fmt: str) -> list[tuple[str, Path]]:
        """Write the runs and their events as ``PREFIX.runs.EXT`` and ``PREFIX.events.EXT``."""
        options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
        written = []
        with self.connect() as con:
            con.register("glasswork_export_ids", {"run_id": np.array(list(run_ids), dtype=object)})
            try:
                for table, order in (("runs", "started_at"), ("events", "run_id, seq")):
                    path = prefix.with_name(f"{prefix.name}.{table}.{fmt}")
                    con.execute(
                        f"COPY (SELECT * FROM {table} WHERE run_id IN (SELECT run_id FROM glasswork_export_ids) "
                        f"ORDER BY {order}) TO '{_sql_string(path)}' ({options})"
                    )
                    written.append((table, path))
            finally:
                con.unregister("glasswork_export_ids")
        return written

    def delete(self, run_ids: Sequence[str]) -> int:
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            for table in ("events", "artifacts", "metrics", "runs"):
                con.executemany(f"DELETE FROM {table} WHERE run_id = ?", [[r] for r in run_ids])
            con.execute("COMMIT")
        for run_id in run_ids:
            self.log_path(run_id).unlink(missing_ok=True)
        return len(run_ids)


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first row or None. (DuckDB 2 keeps a half-read result open and refuses the next
    statement on that connection, so never use fetchone.)"""
    rows = con.execute(sql, params).fetchall()
    return rows[0] if rows else None


def _sql_string(path: Path) -> str:
    return str(path).replace("'", "''")


def _read_log(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a run log (a torn last line from a crash is dropped)."""
    records = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return records


def _event_columns(run_id: str, records: Sequence[tuple[int, dict[str, Any]]]) -> dict[str, np.ndarray]:
    def floats(key: str) -> np.ndarray:
        return np.array([np.nan if r.get(key) is None else float(r[key]) for _, r in records], dtype=np.float64)

    def ints(key: str, source: str | None = None) -> np.ndarray:
        values = [r.get(key) if source is None else r.get("counters", {}).get(source) for _, r in records]
        return np.array([None if v is None else int(v) for v in values], dtype=object)

    return {
        "run_id": np.array([run_id] * len(records), dtype=object),
        "seq": np.array([seq for seq, _ in records], dtype=np.int64),
        "kind": np.array([r.get("kind") for _, r in records], dtype=object),
        "elapsed": floats("elapsed"),
        "objective": floats("objective"),
        "lower_bound": floats("lower_bound"),
        "gap": floats("gap"),
        "nodes": ints("nodes"),
        "queue": ints("queue", "queue"),
        "counters": np.array([_json(r["counters"]) if r.get("counters") else None for _, r in records], dtype=object),
        "message": np.array([r.get("message") for _, r in records], dtype=object),
    }


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

    def _write_log(self, record: dict[str, Any]) -> None:
        self._log.write(json.dumps(record, allow_nan=False, default=str) + "\n")
        self._log.flush()

    def on_start(self, run: RunInfo) -> None:
        self._run_id = run.run_id
        self.store.events_dir.mkdir(parents=True, exist_ok=True)
        self._log = self.store.log_path(run.run_id).open("a", encoding="utf-8")
        self._write_log(start_record(run, full=True))
        self._info = run
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
            self.warnings.append(f"run store: {exc}")
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
                self.warnings.append(f"run store: {exc}")

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        finish = dict(finish_record(run.run_id, outcome, error))
        self._write_log(finish)
        self._log.close()
        try:
            self._flush(timeout=FINAL_LOCK_TIMEOUT, finish=finish)
        except StoreError as exc:
            self.warnings.append(
                f"{exc}. The run is safe in {self.store.log_path(run.run_id)} and will be imported "
                "the next time the store is opened."
            )
            return
        self.store.log_path(run.run_id).unlink(missing_ok=True)
