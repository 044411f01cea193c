"""Folding, checking and salvaging: journals of ended runs become rows (``fold_journals``, under
the store's exclusive lock), and a store is read whole without writing (``check``) or copied out
of a damaged file (``salvage``).

A journal is folded in one transaction that first deletes whatever the tables hold for its run,
so folding the same journal twice, or again after a fold killed half-way, gives the same rows;
it is deleted only after that transaction committed (DuckDB syncs its log at commit).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.quoting import printable
from glasswork.store.journal import (
    NEW_SUFFIX,
    SUFFIX,
    JournalRefused,
    open_regular,
    pid_alive,
    read_journal,
    vet,
    writer_alive,
)
from glasswork.store.runs import close_silent_runs, write_run
from glasswork.store.schema import (
    RASHOMON_TABLES,
    RUN_TABLES,
    StoreError,
    disk_full,
    engine,
    first_row,
    is_damage,
    utc_now,
)

if TYPE_CHECKING:
    import duckdb


QUARANTINE = "quarantine"  # <db>.events/quarantine/: what the fold set aside, each with a .why beside it


def journal_ended(path: Path, records: list[dict[str, Any]] | None = None) -> bool:
    """Whether a journal's run is over: nobody holds its lock, and it either has its finish
    record or its process is gone (a journal written by an older glasswork, which did not lock
    it, is left alone while its process lives). Anything that is not a regular file is over:
    no run writes it."""
    try:
        open_regular(path).close()
    except JournalRefused:
        return True
    except OSError:
        return False  # gone meanwhile
    if writer_alive(path):
        return False
    records = read_journal(path) if records is None else records
    if not records or records[-1].get("kind") == "finish":
        return True
    start = records[0]
    pid = start.get("pid")
    return not (isinstance(pid, int) and pid > 0 and pid_alive(pid, start.get("host")))


def foldable(path: Path) -> bool:
    """Whether the fold has work with this entry: an ended run's journal, or anything nobody
    writes that cannot be trusted (set aside)."""
    if writer_alive(path):
        return False
    try:
        records = vet(path)
    except JournalRefused:
        return True
    except OSError:
        return False
    return journal_ended(path, records)


def journals(events_dir: Path) -> list[Path]:
    """Every entry named ``*.jsonl`` in the journals' folder, whatever it is (a link, a folder and
    a FIFO too: the fold sets those aside)."""
    try:
        return sorted(p for p in events_dir.glob(f"*{SUFFIX}")) if events_dir.is_dir() else []
    except OSError:
        return []


def quarantine_dir(events_dir: Path) -> Path:
    return events_dir / QUARANTINE


def quarantined(events_dir: Path) -> list[tuple[str, str]]:
    """What the fold set aside: ``(name in the quarantine folder, why)``, oldest first."""
    folder = quarantine_dir(events_dir)
    if not folder.is_dir():
        return []
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.endswith(".why"):
            continue
        try:
            why = entry.with_name(entry.name + ".why").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            why = "reason not recorded"
        found.append((entry.name, why))
    return found


def set_aside(path: Path, why: str, warn: Callable[[str], None]) -> None:
    """Move a journal the fold cannot trust into the quarantine folder (never delete it: it may
    be someone's data), note why beside it, and say so once."""
    folder = quarantine_dir(path.parent)
    moved = folder / f"{utc_now().strftime('%Y%m%dT%H%M%S%f')}-{path.name}"
    try:
        folder.mkdir(exist_ok=True)
        os.rename(path, moved)
        moved.with_name(moved.name + ".why").write_text(why + "\n", encoding="utf-8")
    except FileNotFoundError:
        return  # another process moved or folded it first
    except OSError as exc:
        warn(
            f"the journal {printable(str(path))} cannot be folded ({why}) nor moved aside ({exc.strerror}); "
            "move or delete it yourself"
        )
        return
    warn(
        f"the journal {printable(path.name)} in {printable(str(path.parent))} was not folded into the run store: "
        f"{why}. It was moved to {printable(str(moved))}; 'glasswork runs check' lists what was set aside"
    )


def modified(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).replace(tzinfo=None)
    except OSError:
        return None


def fold_journals(
    con: duckdb.DuckDBPyConnection, events_dir: Path, warn: Callable[[str], None]
) -> tuple[list[str], list[Path]]:
    """Fold every ended journal that can be trusted (``journal.vet``) into the tables (the caller
    holds the exclusive lock); set aside any other with one warning (``set_aside``); close
    ``running`` rows an older glasswork left behind. A run the store holds as ended is never
    rewritten: a journal of it is a leftover of a fold that committed (deleted) or a stray copy
    (set aside). Returns the run ids recorded and the journals folded, which the caller deletes
    once the store has them on disk (``RunStore.fold``)."""
    folded: list[str] = []
    done: list[Path] = []
    if events_dir.is_dir():
        for stray in events_dir.glob(f"*{NEW_SUFFIX}"):  # killed before its start line was written
            made = modified(stray)  # (a fresh one may be between its creation and its lock)
            if made is not None and (utc_now() - made).total_seconds() > 60 and not writer_alive(stray):
                stray.unlink(missing_ok=True)
    for path in journals(events_dir):
        if writer_alive(path):
            continue  # a live run's: never touched
        try:
            records = vet(path)
        except JournalRefused as exc:
            set_aside(path, exc.reason(), warn)
            continue
        except OSError:
            continue  # gone meanwhile
        run_id = records[0]["run_id"]
        stored = first_row(
            con,
            "SELECT state, ended_at, (SELECT count(*) FROM events WHERE run_id = ?) FROM runs WHERE run_id = ?",
            [run_id, run_id],
        )
        if stored is not None and stored[0] != "running":
            if _same_run(stored, records, path):
                done.append(path)  # folded before, deleted only now: the store has it
            else:
                set_aside(
                    path,
                    f"run {run_id} is already stored as {stored[0]}, and a journal never rewrites a stored run",
                    warn,
                )
            continue
        if not journal_ended(path, records):
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            folded.append(write_run(con, records, ended_at=modified(path)))
            con.execute("COMMIT")
        except BaseException as exc:
            rollback(con)
            if not isinstance(exc, Exception) or store_fault(exc):
                raise
            set_aside(path, f"its records do not fit the store ({type(exc).__name__}: {str(exc)[:200]})", warn)
            continue
        done.append(path)
    live = {p.stem for p in journals(events_dir)}
    folded += close_silent_runs(con, lambda run_id, host, pid: run_id in live or pid_alive(pid, host))
    return folded, done


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back a fold's transaction, if DuckDB still has one: a commit that failed (a full disk)
    already ended it, and its error, not the rollback's, is the one to report."""
    try:
        con.execute("ROLLBACK")
    except engine().Error:
        pass


def _same_run(stored: tuple[Any, ...], records: list[dict[str, Any]], path: Path) -> bool:
    """Whether a journal is the one the stored run was folded from (its end and its events)."""
    from glasswork.store.schema import as_utc

    finish = records[-1] if len(records) > 1 and records[-1].get("kind") == "finish" else None
    ended = as_utc(finish["ended_at"]) if finish is not None and finish.get("ended_at") else modified(path)
    events = sum(1 for r in records[1:] if r.get("kind") != "finish")
    return stored[1] == ended and stored[2] == events


def store_fault(exc: BaseException) -> bool:
    """Whether a fold's error is the store's (damage, a full disk, an interrupt), not the journal's."""
    if not isinstance(exc, engine().Error):
        return False
    duckdb = engine()
    data_errors = tuple(
        getattr(duckdb, n)
        for n in ("ConversionException", "InvalidInputException", "OutOfRangeException", "TypeMismatchException")
        if hasattr(duckdb, n)
    )
    return is_damage(exc) or disk_full(exc) or not isinstance(exc, data_errors)


def check(
    path: Path, con: duckdb.DuckDBPyConnection | None, error: BaseException | None, events_dir: Path
) -> dict[str, Any]:
    """Read every table to its last block through a read-only connection (nothing is written)
    and check the runs against their events. Returns ``{"file", "ok", "tables", "problems",
    "pending_logs", "live_logs"}``: journals waiting to be folded, and those of live runs."""
    import duckdb

    pending = journals(events_dir)
    live = [p.name for p in pending if writer_alive(p)]
    refused: dict[str, str] = {}
    for journal in pending:
        if journal.name not in live:
            try:
                vet(journal)
            except JournalRefused as exc:
                refused[journal.name] = exc.reason()
            except OSError:
                pass
    aside = quarantined(events_dir)
    report: dict[str, Any] = {
        "file": str(path),
        "ok": True,
        "tables": {},
        "problems": [
            *(f"journal {printable(name)} cannot be folded: {why}" for name, why in refused.items()),
            *(
                f"journal set aside in {printable(str(quarantine_dir(events_dir)))}: {printable(name)} ({why}); "
                "look at it, then delete it"
                for name, why in aside
            ),
        ],
        "pending_logs": [p.name for p in pending if p.name not in live and p.name not in refused],
        "live_logs": live,
        "refused_logs": refused,
        "quarantined_logs": [{"name": name, "why": why} for name, why in aside],
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
            try:
                records = vet(path)  # what the fold would set aside is not copied either
            except (JournalRefused, OSError):
                continue
            if journal_ended(path, records):
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
