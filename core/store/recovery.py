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
from glasswork.store.runs import RunTables
from glasswork.store.schema import FINAL_LOCK_TIMEOUT, STALE_SECONDS, _now, _one, _utc

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
