"""The run store's tables as runs: a run's records written as its rows (``write_run``, the one
path from the run record to the tables: folding a journal, merging a live one into a read,
recording a sweep's point), and the queries ``glasswork runs`` and the terminal UI read (list,
sweeps, resolve, details, events, export, delete), each a function of a connection. The rows of a
run's Rashomon sets are ``glasswork.store.rashomon``'s."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.record import RunInfo
from glasswork.result import Status, relative_gap, stored_no_model_reason
from glasswork.store import rashomon
from glasswork.store.schema import (
    EVENT_COLUMNS,
    RUN_TABLES,
    STALE_SECONDS,
    STATE_OF_STATUS,
    StoreError,
    finite_or_none,
    json_text,
    utc_now,
    first_row,
    sql_string_body,
    as_utc,
)

if TYPE_CHECKING:
    import duckdb


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


_RUN_COLUMNS = (
    "run_id, name, solver, solver_version, state, status, objective, lower_bound, gap, "
    "started_at, ended_at, elapsed, spec, spec_hash, data_fingerprint, host, pid, "
    "peak_memory, stats, error, n_train, n_test, n_features, sweep_id"
)


def _row(values: Sequence[Any]) -> RunRow:
    names = [c.strip() for c in _RUN_COLUMNS.split(",")]
    data = dict(zip(names, values))
    for key in ("started_at", "ended_at"):
        if data[key] is not None:
            data[key] = data[key].replace(tzinfo=timezone.utc)
    data["spec"] = json.loads(data["spec"]) if data["spec"] else {}
    data["stats"] = json.loads(data["stats"]) if data["stats"] else {}
    return RunRow(**data)


# -- writing: a run's records become its rows -------------------------------------------------------

KILLED = "the run's process ended without finishing (killed or crashed); the events it wrote before then are kept"


def write_run(
    con: duckdb.DuckDBPyConnection,
    records: list[dict[str, Any]],
    *,
    live: bool = False,
    ended_at: datetime | None = None,
) -> str:
    """Replace whatever the tables hold for a run with what its records say (start, events,
    finish), so writing the same records twice gives the same rows. A run without a finish
    record is ``running`` when ``live``, else ``failed`` (its process ended without one) keeping
    its last incumbent. Returns the run id."""
    info = RunInfo.from_dict(records[0])
    run_id = info.run_id
    finish = records[-1] if len(records) > 1 and records[-1].get("kind") == "finish" else None
    if finish is not None and finish.get("ended_at"):
        ended_at = as_utc(finish["ended_at"])  # when the run ended, whenever it is folded
    for table in RUN_TABLES:
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    con.execute(
        "INSERT INTO runs (run_id, name, solver, solver_version, spec_hash, spec, "
        "spec_path, data_fingerprint, split, n_train, n_test, n_features, host, pid, started_at, "
        "heartbeat_at, state, sweep_id, sweep_point, inputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, 'running', ?, ?, ?)",
        [
            run_id,
            info.name,
            info.solver,
            info.solver_version,
            info.spec_hash,
            json_text(info.spec),
            info.spec_path,
            info.data_fingerprint,
            json_text(info.split),
            info.n_train,
            info.n_test,
            info.n_features,
            info.host,
            info.pid,
            as_utc(info.started_at),
            ended_at or utc_now(),
            info.sweep_id,
            json_text(info.sweep_point),
            json_text(info.inputs),
        ],
    )
    events = [(seq, r) for seq, r in enumerate(records[1:]) if r.get("kind") != "finish"]
    if events:
        con.register("glasswork_event_batch", _event_columns(run_id, events))
        try:
            con.execute(f"INSERT INTO events SELECT {', '.join(EVENT_COLUMNS)} FROM glasswork_event_batch")
        finally:
            con.unregister("glasswork_event_batch")
    result = None if finish is None else finish.get("result")
    if result is not None:
        _finish(con, run_id, result, ended_at or utc_now())
    elif finish is not None or not live:
        con.execute(
            "UPDATE runs SET state = 'failed', error = ?, ended_at = ? WHERE run_id = ?",
            [(finish or {}).get("error") or KILLED, ended_at or utc_now(), run_id],
        )
        _keep_best(con, run_id, [r for _, r in events])
    rashomon.write_sets(con, run_id, [r for _, r in events], result)
    return run_id


def _finish(con: duckdb.DuckDBPyConnection, run_id: str, result: dict[str, Any], ended_at: datetime) -> None:
    """The end of a run with a result: its certificate, model and metrics."""
    state = STATE_OF_STATUS[Status(result["status"])]
    stats = result.get("stats", {})
    con.execute(
        "UPDATE runs SET state = ?, status = ?, objective = ?, lower_bound = ?, gap = ?, "
        "elapsed = ?, peak_memory = ?, stats = ?, ended_at = ?, error = NULL WHERE run_id = ?",
        [
            state,
            result["status"],
            finite_or_none(result.get("objective")),
            finite_or_none(result.get("lower_bound")),
            finite_or_none(result.get("gap")),
            stats.get("elapsed"),
            stats.get("peak_memory"),
            json_text(stats),
            ended_at,
            run_id,
        ],
    )
    if result.get("fairness") is not None:
        con.execute("UPDATE runs SET fairness = ? WHERE run_id = ?", [json_text(result["fairness"]), run_id])
    if result.get("model") is not None:  # none when no model meets the constraints (infeasible, stopped)
        con.execute(
            "INSERT INTO artifacts VALUES (?, 'model', ?, ?, ?)",
            [run_id, result["model"].get("kind"), json_text(result["model"]), result.get("model_text")],
        )
    metrics = [
        (run_id, k, finite_or_none(v))
        for k, v in result.get("metrics", {}).items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    if metrics:
        con.register(
            "glasswork_metric_batch",
            {
                "run_id": np.array([m[0] for m in metrics], dtype=object),
                "name": np.array([m[1] for m in metrics], dtype=object),
                "value": np.array([np.nan if m[2] is None else m[2] for m in metrics], dtype=np.float64),
            },
        )
        try:
            con.execute("INSERT INTO metrics SELECT run_id, name, value FROM glasswork_metric_batch")
        finally:
            con.unregister("glasswork_metric_batch")


def _keep_best(con: duckdb.DuckDBPyConnection, run_id: str, events: list[dict[str, Any]]) -> None:
    """A failed run keeps what its events last said: the incumbent's objective, the bound, the
    gap, and (the journal holds models) the incumbent model. No status: it was not certified, so
    ``runs show`` shows these figures with the failed state."""

    def last(key: str) -> float | None:
        return next((finite_or_none(r[key]) for r in reversed(events) if finite_or_none(r.get(key)) is not None), None)

    # a ``rashomon`` event's lower_bound bounds what its set did not enumerate, not the optimum
    events = [r for r in events if r.get("kind") != "rashomon"]
    obj, low = last("objective"), last("lower_bound")
    if obj is None and low is None:
        return
    gap = relative_gap(obj, low)
    con.execute("UPDATE runs SET objective = ?, lower_bound = ?, gap = ? WHERE run_id = ?", [obj, low, gap, run_id])
    incumbent = next((r for r in reversed(events) if r.get("kind") == "incumbent" and r.get("model")), None)
    if incumbent is not None:
        con.execute("DELETE FROM artifacts WHERE run_id = ?", [run_id])
        con.execute(
            "INSERT INTO artifacts VALUES (?, 'model', ?, ?, ?)",
            [run_id, incumbent["model"].get("kind"), json_text(incumbent["model"]), incumbent.get("model_text")],
        )


def close_silent_runs(
    con: duckdb.DuckDBPyConnection, alive: Callable[[str, str | None, int | None], bool]
) -> list[str]:
    """``running`` rows left by glasswork before journals were folded (it wrote live rows): those
    whose process is gone and that have no journal become ``failed``."""
    closed = []
    for run_id, host, pid in con.execute("SELECT run_id, host, pid FROM runs WHERE state = 'running'").fetchall():
        if alive(run_id, host, pid):
            continue
        con.execute(
            "UPDATE runs SET state = 'failed', ended_at = coalesce(heartbeat_at, started_at), error = ? "
            "WHERE run_id = ?",
            [KILLED, run_id],
        )
        events = [
            dict(zip(EVENT_COLUMNS, r))
            for r in con.execute(
                f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE run_id = ? ORDER BY seq", [run_id]
            ).fetchall()
        ]
        _keep_best(con, run_id, events)
        closed.append(run_id)
    return closed


# -- reading (any connection whose runs, events, artifacts and metrics are the store's) -----------------


def list_runs(
    con: duckdb.DuckDBPyConnection,
    *,
    solver: str | None = None,
    state: str | None = None,
    name: str | None = None,
    sweep: str | None = None,
    limit: int | None = 50,
) -> list[RunRow]:
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
    return [_row(r) for r in con.execute(sql, params).fetchall()]


def sweep_points(con: duckdb.DuckDBPyConnection, sweep_id: str, states: Sequence[str]) -> dict[str, str]:
    rows = con.execute(
        f"SELECT sweep_point, run_id FROM runs WHERE sweep_id = ? AND state IN "
        f"({', '.join('?' for _ in states)}) ORDER BY started_at",
        [sweep_id, *states],
    ).fetchall()
    return {json.loads(point)["key"]: run_id for point, run_id in rows if point}


def sweeps(con: duckdb.DuckDBPyConnection, *, solver: str | None = None, name: str | None = None) -> list[SweepRow]:
    where, params = ["sweep_id IS NOT NULL"], []
    if solver:
        where.append("solver = ?")
        params.append(solver)
    if name:
        where.append("name ILIKE ?")
        params.append(f"%{name}%")
    rows = con.execute(
        "SELECT sweep_id, any_value(name), any_value(solver), list(state), "
        "max(CAST(json_extract(sweep_point, '$.total') AS BIGINT)), min(objective), "
        "min(started_at), max(coalesce(ended_at, heartbeat_at, started_at)) "
        f"FROM runs WHERE {' AND '.join(where)} GROUP BY sweep_id ORDER BY min(started_at) DESC",
        params,
    ).fetchall()
    out = []
    for sweep_id, sweep_name, sweep_solver, states, total, best, started, last in rows:
        counts: dict[str, int] = {}
        for state in states:
            counts[state] = counts.get(state, 0) + 1
        out.append(
            SweepRow(
                sweep_id,
                sweep_name,
                sweep_solver,
                counts,
                total or len(states),
                best,
                started.replace(tzinfo=timezone.utc),
                last.replace(tzinfo=timezone.utc),
            )
        )
    return out


def resolve(con: duckdb.DuckDBPyConnection, refs: Sequence[str], where: Path) -> list[str]:
    out = []
    for ref in refs:
        if ref == "latest":
            row = first_row(con, "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
            if row is None:
                raise StoreError(f"no runs recorded in {where} yet")
            out.append(row[0])
            continue
        matches = [
            r[0]
            for r in con.execute(
                "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [ref]
            ).fetchall()
        ]
        if not matches:
            raise StoreError(f"no run with an id starting {ref!r} in {where} (see 'glasswork runs list')")
        if len(matches) > 1:
            raise StoreError(
                f"{ref!r} matches {len(matches)} runs ({', '.join(m[:12] for m in matches[:5])}"
                f"{', ...' if len(matches) > 5 else ''}); give more of the id"
            )
        out.append(matches[0])
    return out


def get_run(con: duckdb.DuckDBPyConnection, run_id: str, where: Path) -> RunRow:
    row = first_row(con, f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", [run_id])
    if row is None:
        raise StoreError(f"no run {run_id!r} in {where}")
    return _row(row)


def details(con: duckdb.DuckDBPyConnection, run_id: str, where: Path) -> dict[str, Any]:
    doc = get_run(con, run_id, where).to_dict()
    artifacts = con.execute("SELECT name, kind, body, text FROM artifacts WHERE run_id = ?", [run_id]).fetchall()
    doc["metrics"] = dict(
        con.execute("SELECT name, value FROM metrics WHERE run_id = ? ORDER BY name", [run_id]).fetchall()
    )
    split, inputs, spec_path, fairness = first_row(
        con, "SELECT split, inputs, spec_path, fairness FROM runs WHERE run_id = ?", [run_id]
    )
    doc["models"] = [
        {"name": n, "kind": k, "model": json.loads(b) if b else None, "text": t} for n, k, b, t in artifacts
    ]
    doc["split"] = json.loads(split) if split else None
    doc["inputs"] = json.loads(inputs) if inputs else None  # None: recorded before inputs were kept
    doc["spec_path"] = spec_path
    if fairness:  # a run without an audit reads as before
        doc["fairness"] = json.loads(fairness)
    if not any(m["model"] for m in doc["models"]):  # infeasible, or stopped before any model met the constraints
        no_model = stored_no_model_reason(doc.get("status"), doc.get("spec"))
        if no_model is not None:
            doc["no_model"] = no_model
    doc["n_events"] = first_row(con, "SELECT count(*) FROM events WHERE run_id = ?", [run_id])[0]
    summary = rashomon.set_summary(con, run_id)
    if summary is not None:  # a run without a set reads as before
        doc["rashomon"] = summary.to_dict()
    points = rashomon.point_sets(con, run_id)
    if points:  # a sweep its search ran (a frontier): each point's set, as glasswork rashomon lists them
        doc["rashomon_points"] = [p.to_dict() for p in points]
    return doc


def events(con: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    rows = con.execute(
        f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE run_id = ? ORDER BY seq", [run_id]
    ).fetchall()
    out = []
    for row in rows:
        record = dict(zip(EVENT_COLUMNS, row))
        record["counters"] = json.loads(record["counters"]) if record["counters"] else {}
        out.append(record)
    return out


def export(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], prefix: Path, fmt: str) -> list[tuple[str, Path]]:
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    written = []
    con.register("glasswork_export_ids", {"run_id": np.array(list(run_ids), dtype=object)})
    try:
        for table, order in (("runs", "started_at"), ("events", "run_id, seq")):
            path = prefix.with_name(f"{prefix.name}.{table}.{fmt}")
            con.execute(
                f"COPY (SELECT * FROM {table} WHERE run_id IN (SELECT run_id FROM glasswork_export_ids) "
                f"ORDER BY {order}) TO '{sql_string_body(path)}' ({options})"
            )
            written.append((table, path))
    finally:
        con.unregister("glasswork_export_ids")
    return written


def delete(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> None:
    con.execute("BEGIN TRANSACTION")
    for table in RUN_TABLES:
        con.executemany(f"DELETE FROM {table} WHERE run_id = ?", [[r] for r in run_ids])
    con.execute("COMMIT")


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
        "counters": np.array([json_text(rashomon.event_counters(r)) for _, r in records], dtype=object),
        "message": np.array([r.get("message") for _, r in records], dtype=object),
    }
