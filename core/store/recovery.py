"""Recovery: when the store is opened, the logs of runs whose writer is gone (killed with SIGKILL,
machine crash, a database that stayed locked) are imported, so each such run becomes ``failed``
with every event it wrote, or ``finished`` if its final result reached the log; ``running`` rows
whose process is gone and whose heartbeat is stale are marked failed. Sweeps record their
workers' runs through the same import.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.record import RunInfo
from glasswork.store.schema import StoreError
from glasswork.store.runs import RunTables
from glasswork.store.schema import FINAL_LOCK_TIMEOUT, STALE_SECONDS, _finite, _json, _now, _one, _utc

if TYPE_CHECKING:
    import duckdb


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


class Recovery(RunTables):
    """Brings runs whose process is gone back into the tables."""

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
                self._keep_best(con, run_id, [])
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
            self._keep_best(con, info.run_id, records[1:])

    def _keep_best(self, con: duckdb.DuckDBPyConnection, run_id: str, records: list[dict[str, Any]]) -> None:
        """A failed run keeps what its events last said: the incumbent's objective, the bound, the
        gap, and (from the log, which holds models) the incumbent model. No status: it was not
        certified, so ``runs show`` shows these figures with the failed state."""
        objective = _one(con, "SELECT objective FROM events WHERE run_id = ? AND objective IS NOT NULL "
                              "AND NOT isnan(objective) ORDER BY seq DESC LIMIT 1", [run_id])
        bound = _one(con, "SELECT lower_bound FROM events WHERE run_id = ? AND lower_bound IS NOT NULL "
                          "AND NOT isnan(lower_bound) ORDER BY seq DESC LIMIT 1", [run_id])
        obj = _finite(objective[0]) if objective else None
        low = _finite(bound[0]) if bound else None
        gap = None if obj is None or low is None else max(0.0, obj - low) / max(abs(obj), 1e-10)
        if obj is None and low is None:
            return
        con.execute("UPDATE runs SET objective = ?, lower_bound = ?, gap = ? WHERE run_id = ?",
                    [obj, low, gap, run_id])
        incumbent = next((r for r in reversed(records) if r.get("kind") == "incumbent" and r.get("model")), None)
        if incumbent is not None:
            con.execute("DELETE FROM artifacts WHERE run_id = ?", [run_id])
            con.execute("INSERT INTO artifacts VALUES (?, 'model', ?, ?, ?)",
                        [run_id, incumbent["model"].get("kind"), _json(incumbent["model"]),
                         incumbent.get("model_text")])

    # -- checking and salvaging a store --------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Read every table to its last block (read-only: nothing is written) and check the runs
        against their events. Returns ``{"file", "ok", "tables", "problems", "pending_logs"}``."""
        import duckdb

        report: dict[str, Any] = {"file": str(self.path), "ok": True, "tables": {}, "problems": [],
                                  "pending_logs": sorted(p.name for p in self.events_dir.glob("*.jsonl"))
                                  if self.events_dir.is_dir() else []}
        try:
            con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error as exc:
            report["ok"] = False
            report["problems"].append(f"cannot open: {str(exc).splitlines()[0]}")
            return report
        try:
            for table in ("meta", "runs", "events", "artifacts", "metrics"):
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
            for index, probe in (("meta's key index", "SELECT * FROM meta WHERE key = 'schema_version'"),
                                 ("runs' id index", "SELECT * FROM runs WHERE run_id = (SELECT max(run_id) FROM runs)")):
                try:  # point lookups read the primary-key indexes, which full scans never touch
                    con.execute(probe).fetchall()
                except duckdb.Error as exc:
                    report["ok"] = False
                    report["problems"].append(f"{index} unreadable: {str(exc).splitlines()[0]}")
            if report["ok"]:
                report["problems"].extend(_inconsistencies(con))
        finally:
            try:
                con.close()
            except duckdb.Error:
                pass
        report["ok"] = not report["problems"]
        return report

    def salvage(self, target: Path) -> dict[str, int]:
        """Copy every readable run of this (damaged) store into a new store at ``target``: whole
        tables when they read, else run by run. The damaged file is only read."""
        import duckdb

        from glasswork.store import RunStore

        if target.exists():
            raise StoreError(f"{target} exists; salvage writes a new store, choose a new file name")
        RunStore(target).open()
        copied: dict[str, int] = {}
        con = duckdb.connect(str(target))
        try:
            con.execute(f"ATTACH '{str(self.path).replace(chr(39), chr(39) * 2)}' AS damaged (READ_ONLY)")
            run_ids = [r[0] for r in con.execute("SELECT run_id FROM damaged.runs").fetchall()]
            for table in ("runs", "events", "artifacts", "metrics"):
                columns = "run_id, seq" if table == "events" else "run_id"
                try:
                    con.execute(f"INSERT INTO {table} SELECT * FROM damaged.{table}")
                    copied[table] = _one(con, f"SELECT count(*) FROM {table}")[0]
                    continue
                except duckdb.Error:
                    con.execute(f"DELETE FROM {table}")
                for run_id in run_ids:
                    try:
                        con.execute(f"INSERT INTO {table} SELECT * FROM damaged.{table} WHERE run_id = ? "
                                    f"ORDER BY {columns}", [run_id])
                    except duckdb.Error:
                        continue
                copied[table] = _one(con, f"SELECT count(*) FROM {table}")[0]
        except duckdb.Error as exc:
            raise StoreError(f"cannot salvage {self.path}: {str(exc).splitlines()[0]}") from exc
        finally:
            con.close()
        return copied


def _inconsistencies(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What a consistent store never holds (the torture suite checks these after every case)."""
    problems = []
    checks = [
        ("events of unknown runs", "SELECT count(*) FROM events WHERE run_id NOT IN (SELECT run_id FROM runs)"),
        ("duplicate events (same run and seq)",
         "SELECT count(*) FROM (SELECT run_id, seq FROM events GROUP BY ALL HAVING count(*) > 1)"),
        ("runs whose event numbers have gaps",
         "SELECT count(*) FROM (SELECT run_id FROM events GROUP BY run_id HAVING max(seq) + 1 <> count(*))"),
        ("ended runs with a result but no model",
         "SELECT count(*) FROM runs WHERE state IN ('finished', 'stopped', 'cancelled') "
         "AND run_id NOT IN (SELECT run_id FROM artifacts)"),
        ("ended runs without an end time",
         "SELECT count(*) FROM runs WHERE state <> 'running' AND ended_at IS NULL"),
    ]
    for what, sql in checks:
        count = _one(con, sql)[0]
        if count:
            problems.append(f"{count} {what}")
    return problems
