"""Folding, checking and salvaging: journals of ended runs become rows (``fold_journals``, under
the store's exclusive lock), and a store is read whole without writing (``check``) or copied out
of a damaged file (``salvage``).

A journal is folded in one transaction that first deletes whatever the tables hold for its run,
so folding the same journal twice, or again after a fold killed half-way, gives the same rows;
it is deleted only after that transaction committed (DuckDB syncs its log at commit).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.store.journal import NEW_SUFFIX, SUFFIX, pid_alive, read_journal, writer_alive
from glasswork.store.runs import close_silent_runs, write_run
from glasswork.store.schema import RASHOMON_TABLES, RUN_TABLES, StoreError, first_row, utc_now

if TYPE_CHECKING:
    import duckdb


def journal_ended(path: Path, records: list[dict[str, Any]] | None = None) -> bool:
    """Whether a journal's run is over: nobody holds its lock, and it either has its finish
    record or its process is gone (a journal written by an older glasswork, which did not lock
    it, is left alone while its process lives)."""
    if writer_alive(path):
        return False
    records = read_journal(path) if records is None else records
    if not records or records[-1].get("kind") == "finish":
        return True
    start = records[0]
    pid = start.get("pid")
    return not (isinstance(pid, int) and pid > 0 and pid_alive(pid, start.get("host")))


def journals(events_dir: Path) -> list[Path]:
    return sorted(events_dir.glob(f"*{SUFFIX}")) if events_dir.is_dir() else []


def modified(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).replace(tzinfo=None)
    except OSError:
        return None


def fold_journals(con: duckdb.DuckDBPyConnection, events_dir: Path) -> list[str]:
    """Fold every ended journal into the tables (the caller holds the exclusive lock); close
    ``running`` rows an older glasswork left behind. Returns the run ids recorded."""
    folded = []
    if events_dir.is_dir():
        for stray in events_dir.glob(f"*{NEW_SUFFIX}"):  # killed before its start line was written
            made = modified(stray)  # (a fresh one may be between its creation and its lock)
            if made is not None and (utc_now() - made).total_seconds() > 60 and not writer_alive(stray):
                stray.unlink(missing_ok=True)
    for path in journals(events_dir):
        records = read_journal(path)
        if not journal_ended(path, records):
            continue
        if not records or records[0].get("kind") != "start" or not records[0].get("run_id"):
            path.unlink(missing_ok=True)  # not even a start record: nothing was promised
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            folded.append(write_run(con, records, ended_at=modified(path)))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        path.unlink(missing_ok=True)
    live = {p.stem for p in journals(events_dir)}
    folded += close_silent_runs(con, lambda run_id, host, pid: run_id in live or pid_alive(pid, host))
    return folded


def check(
    path: Path, con: duckdb.DuckDBPyConnection | None, error: BaseException | None, events_dir: Path
) -> dict[str, Any]:
    """Read every table to its last block through a read-only connection (nothing is written)
    and check the runs against their events. Returns ``{"file", "ok", "tables", "problems",
    "pending_logs", "live_logs"}``: journals waiting to be folded, and those of live runs."""
    import duckdb

    pending = journals(events_dir)
    live = [p.name for p in pending if writer_alive(p)]
    report: dict[str, Any] = {
        "file": str(path),
        "ok": True,
        "tables": {},
        "problems": [],
        "pending_logs": [p.name for p in pending if p.name not in live],
        "live_logs": live,
    }
    if con is None:
        report["ok"] = False
        report["problems"].append(f"cannot open: {str(error).splitlines()[0] if str(error) else error!r}")
        return report
    present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    for table in ("meta", *RUN_TABLES):
        if table in RASHOMON_TABLES and table not in present:
            continue  # a store from before schema version 4 or 5 (read-only here, so never migrated)
        try:
            rows = 0
            cursor = con.execute(f"SELECT * FROM {table}")
            while batch := cursor.fetchmany(10_000):
                rows += len(batch)
            report["tables"][table] = rows
        except duckdb.Error as exc:
            report["ok"] = False
            report["tables"][table] = None
            report["problems"].append(f"table {table} unreadable: {str(exc).splitlines()[0]}")
    for index, probe in (
        ("meta's key index", "SELECT * FROM meta WHERE key = 'schema_version'"),
        ("runs' id index", "SELECT * FROM runs WHERE run_id = (SELECT max(run_id) FROM runs)"),
    ):
        try:  # point lookups read the primary-key indexes, which full scans never touch
            con.execute(probe).fetchall()
        except duckdb.Error as exc:
            report["ok"] = False
            report["problems"].append(f"{index} unreadable: {str(exc).splitlines()[0]}")
    if report["ok"]:
        report["problems"].extend(_inconsistencies(con))
    report["ok"] = not report["problems"]
    return report


def salvage(source: Path, target: Path, events_dir: Path) -> dict[str, int]:
    """Copy every readable run of a (damaged) store into a new store at ``target``: whole tables
    when they read, else run by run; then the journals of ended runs that were never folded.
    The damaged file is only read."""
    import duckdb

    from glasswork.store.schema import migrate

    if target.exists():
        raise StoreError(f"{target} exists; salvage writes a new store, choose a new file name")
    copied: dict[str, int] = {}
    target.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(target))
    try:
        migrate(con, target)
        con.execute(f"ATTACH '{str(source).replace(chr(39), chr(39) * 2)}' AS damaged (READ_ONLY)")
        run_ids = [r[0] for r in con.execute("SELECT run_id FROM damaged.runs").fetchall()]
        source_tables = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'damaged'"
            ).fetchall()
        }
        for table in RUN_TABLES:
            if table not in source_tables:
                continue  # the damaged store predates the table
            columns = {
                "events": "run_id, seq",
                "rashomon_members": "run_id, rank",
                "rashomon_point_members": "run_id, point, rank",
            }.get(table, "run_id")
            try:
                con.execute(
                    f"INSERT INTO {table} BY NAME SELECT * FROM damaged.{table}"
                )  # an older file lacks later columns
                copied[table] = first_row(con, f"SELECT count(*) FROM {table}")[0]
                continue
            except duckdb.Error:
                con.execute(f"DELETE FROM {table}")
            for run_id in run_ids:
                try:
                    con.execute(
                        f"INSERT INTO {table} BY NAME SELECT * FROM damaged.{table} "
                        f"WHERE run_id = ? ORDER BY {columns}",
                        [run_id],
                    )
                except duckdb.Error:
                    continue
            copied[table] = first_row(con, f"SELECT count(*) FROM {table}")[0]
        logs = 0
        for path in journals(events_dir):
            records = read_journal(path)
            if records and records[0].get("kind") == "start" and journal_ended(path, records):
                write_run(con, records, ended_at=modified(path))  # the journal stays: the source is untouched
                logs += 1
        copied["journals"] = logs
    except duckdb.Error as exc:
        raise StoreError(f"cannot salvage {source}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
    return copied


def _inconsistencies(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What a consistent store never holds (the torture suite checks these after every case)."""
    problems = []
    checks = [
        ("events of unknown runs", "SELECT count(*) FROM events WHERE run_id NOT IN (SELECT run_id FROM runs)"),
        (
            "duplicate events (same run and seq)",
            "SELECT count(*) FROM (SELECT run_id, seq FROM events GROUP BY ALL HAVING count(*) > 1)",
        ),
        (
            "runs whose event numbers have gaps",
            "SELECT count(*) FROM (SELECT run_id FROM events GROUP BY run_id HAVING max(seq) + 1 <> count(*))",
        ),
        (
            "ended runs with a result but no model",
            "SELECT count(*) FROM runs WHERE state IN ('finished', 'stopped', 'cancelled') "
            "AND run_id NOT IN (SELECT run_id FROM artifacts)",
        ),
        ("ended runs without an end time", "SELECT count(*) FROM runs WHERE state <> 'running' AND ended_at IS NULL"),
    ]
    shared = "SELECT 1 FROM information_schema.columns WHERE table_name = 'rashomon_sets' AND column_name = ?"
    if first_row(con, shared, ["shared_points"]) is not None:  # schema 6 on (a check never migrates)
        checks.append(
            (
                "Rashomon points stored twice (named as sharing the run's set, and with rows of their own)",
                "SELECT count(*) FROM (SELECT DISTINCT q.run_id, q.point FROM rashomon_point_members q "
                "JOIN rashomon_sets s USING (run_id) WHERE list_contains(s.shared_points, q.point))",
            )
        )
    for what, sql in checks:
        count = first_row(con, sql)[0]
        if count:
            problems.append(f"{count} {what}")
    return problems
