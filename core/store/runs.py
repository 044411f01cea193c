"""The run store's tables as runs: a run's records written as its rows (``write_run``, the one
path from the run record to the tables: folding a journal, merging a live one into a read,
recording a sweep's point), and the queries ``glasswork runs`` and the terminal UI read (list,
sweeps, resolve, details, events, export, delete), each a function of a connection."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.record import RunInfo
from glasswork.result import Status, relative_gap
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
    own: dict[str, Any] | None = None  # the run's set, as written
    if finish is not None and finish.get("result") is not None:
        _finish(con, run_id, finish["result"], ended_at or utc_now())
        own = finish["result"].get("rashomon")
    else:
        if finish is not None or not live:
            con.execute(
                "UPDATE runs SET state = 'failed', error = ?, ended_at = ? WHERE run_id = ?",
                [(finish or {}).get("error") or KILLED, ended_at or utc_now(), run_id],
            )
            _keep_best(con, run_id, [r for _, r in events])
        own = rashomon_of_events([r for _, r in events])  # a live or killed run: what its events announced
    if own is not None:
        write_rashomon(con, run_id, own)
    _write_point_members(con, run_id, [r for _, r in events], None if own is None else own.get("models") or [])
    return run_id


def _write_point_members(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    events: Sequence[dict[str, Any]],
    own: Sequence[dict[str, Any]] | None,
) -> None:
    """The kept members of each sweep point's set (a frontier's), from the last ``rashomon`` event
    of each point (a point whose set was taken up again is sent again, whole), ranked from 1. A
    point whose members are the run's own set's (``own``, member for member: the chosen point's)
    is written once, as the run's set, and named in ``rashomon_sets.shared_points``."""
    last: dict[int, list[dict[str, Any]]] = {}
    for r in events:
        point = (r.get("counters") or {}).get("rashomon_point") if r.get("kind") == "rashomon" else None
        if isinstance(point, int) and not isinstance(point, bool) and point >= 1:
            last[point] = list(r.get("members") or [])
    own_rows = [_member_columns(m) for m in own] if own else None
    shared: list[int] = []
    for point in sorted(last):
        if not last[point]:
            continue
        if own_rows is not None and [_member_columns(m) for m in last[point]] == own_rows:
            shared.append(point)
            continue
        _insert_members(con, "rashomon_point_members", run_id, last[point], point=point)
    if shared:
        con.execute("UPDATE rashomon_sets SET shared_points = ? WHERE run_id = ?", [shared, run_id])


def _member_columns(member: dict[str, Any]) -> tuple[Any, ...]:
    """What the store keeps of a member (``_insert_members``' columns): two members with the same
    are stored alike."""
    model = member.get("model")
    return (
        finite_or_none(member.get("objective")),
        json_text(list(member.get("features") or [])),
        member.get("fingerprint"),
        (model or {}).get("kind"),
        json_text(model),
        member.get("model_text"),
    )


def rashomon_of_events(events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The Rashomon set a run's ``rashomon`` events announced (a run still going, or killed
    before its finish record): the members in order, the last running count and threshold, the
    optimum, its proof and epsilon as the solver gave them (``SolveContext.rashomon_basis``), and
    never ``complete`` (nobody certified it). ``None`` when no event spoke of a set."""
    # a sweep point's own set (``rashomon_point``) is not the run's: ``rashomon_points`` reads those
    announced = [r for r in events if r.get("kind") == "rashomon" and "rashomon_point" not in (r.get("counters") or {})]
    if not announced:
        return None
    counters = announced[-1].get("counters") or {}
    members = [m for r in announced for m in r.get("members") or []]

    def last(key: str) -> Any:  # the latest word on a figure of the set (SolveContext.rashomon_basis)
        said = ((r.get("counters") or {}).get(key) for r in reversed(announced))
        return next((v for v in said if v is not None), None)

    threshold = last("rashomon_threshold")
    bound = next((r["lower_bound"] for r in reversed(announced) if r.get("lower_bound") is not None), None)
    return {
        "count": max(int(counters.get("rashomon_count", 0)), len(members)),
        "complete": False,
        "exhaustive": True,
        "threshold": threshold,
        "epsilon": last("rashomon_epsilon"),
        "optimum": last("rashomon_optimum"),
        "optimum_proven": last("rashomon_optimum_proven") is True,  # a stop before the proof: False
        "unenumerated_bound": bound,
        "kept": len(members),
        "models": members,
    }


_SET_COLUMNS = (
    "count",
    "complete",
    "exhaustive",
    "threshold",
    "epsilon",
    "optimum",
    "optimum_proven",
    "unenumerated_bound",
    "kept",
)


def write_rashomon(con: duckdb.DuckDBPyConnection, run_id: str, doc: dict[str, Any]) -> None:
    """A run's Rashomon set as rows: its summary (with the multiplicity figures) and one row per
    kept member, ranked from 1 (the best), in one batch however many there are. ``doc`` is
    ``RashomonSet.to_dict()`` with every kept member, as the finish record holds it."""
    con.execute("DELETE FROM rashomon_sets WHERE run_id = ?", [run_id])
    con.execute("DELETE FROM rashomon_members WHERE run_id = ?", [run_id])
    members = doc.get("models") or []
    con.execute(
        f"INSERT INTO rashomon_sets (run_id, {', '.join(_SET_COLUMNS)}, multiplicity) "
        f"VALUES (?, {', '.join('?' for _ in _SET_COLUMNS)}, ?)",
        [
            run_id,
            int(doc.get("count") or 0),
            bool(doc.get("complete")),
            bool(doc.get("exhaustive", True)),
            finite_or_none(doc.get("threshold")),
            finite_or_none(doc.get("epsilon")),
            finite_or_none(doc.get("optimum")),
            bool(doc.get("optimum_proven")),
            finite_or_none(doc.get("unenumerated_bound")),
            int(doc.get("kept", len(members))),
            json_text(doc.get("multiplicity")),
        ],
    )
    if members:
        _insert_members(con, "rashomon_members", run_id, members)


def _insert_members(
    con: duckdb.DuckDBPyConnection,
    table: str,
    run_id: str,
    members: Sequence[dict[str, Any]],
    *,
    point: int | None = None,
) -> None:
    """Members (``RashomonMember.to_dict()``, best first) as rows of ``table``, ranked from 1, in
    one batch; ``point`` for a sweep point's set (``rashomon_point_members``)."""
    batch = {
        "run_id": np.array([run_id] * len(members), dtype=object),
        **({} if point is None else {"point": np.full(len(members), point, dtype=np.int64)}),
        "rank": np.arange(1, len(members) + 1, dtype=np.int64),
        "objective": np.array(
            [np.nan if finite_or_none(m.get("objective")) is None else float(m["objective"]) for m in members],
            dtype=np.float64,
        ),
        "features": np.array([json_text(list(m.get("features") or [])) for m in members], dtype=object),
        "fingerprint": np.array([m.get("fingerprint") for m in members], dtype=object),
        "kind": np.array([(m.get("model") or {}).get("kind") for m in members], dtype=object),
        "model": np.array([json_text(m.get("model")) for m in members], dtype=object),
        "model_text": np.array([m.get("model_text") for m in members], dtype=object),
    }
    con.register("glasswork_rashomon_batch", batch)
    try:
        con.execute(
            f"INSERT INTO {table} SELECT run_id, {'' if point is None else 'point, '}rank, objective, "
            "from_json(features, '[\"VARCHAR\"]'), fingerprint, kind, model, model_text FROM glasswork_rashomon_batch"
        )
    finally:
        con.unregister("glasswork_rashomon_batch")


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
    doc["n_events"] = first_row(con, "SELECT count(*) FROM events WHERE run_id = ?", [run_id])[0]
    rashomon = rashomon_summary(con, run_id)
    if rashomon is not None:  # a run without a set reads as before
        doc["rashomon"] = rashomon
    points = rashomon_points(con, run_id)
    if points:  # a sweep its search ran (a frontier): each point's set, as glasswork rashomon lists them
        doc["rashomon_points"] = points
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


@dataclass
class RashomonMemberRow:
    """One kept member of a run's Rashomon set as the store holds it; ``model`` is ``None`` when
    the spec kept summaries only (``rashomon.keep: summary``)."""

    rank: int
    objective: float | None
    features: tuple[str, ...]
    fingerprint: str | None
    model: dict[str, Any] | None
    model_text: str | None

    def to_dict(self, *, with_model: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rank": self.rank,
            "objective": self.objective,
            "features": list(self.features),
            "fingerprint": self.fingerprint,
        }
        if with_model:
            out["model"] = self.model
            out["model_text"] = self.model_text
        return out


def rashomon_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    """A run's Rashomon set in summary: ``count``, ``complete``, ``exhaustive``, ``threshold``,
    ``epsilon``, ``optimum``, ``optimum_proven``, ``unenumerated_bound``, ``kept`` and
    ``multiplicity`` (the figures over the kept members, or ``None``); ``None`` when the run has
    no set."""
    row = first_row(
        con, f"SELECT {', '.join(_SET_COLUMNS)}, multiplicity FROM rashomon_sets WHERE run_id = ?", [run_id]
    )
    if row is None:
        return None
    out = dict(zip(_SET_COLUMNS, row[:-1]))
    for key in ("threshold", "epsilon", "optimum", "unenumerated_bound"):
        out[key] = finite_or_none(out[key])
    out["multiplicity"] = json.loads(row[-1]) if row[-1] else None
    return out


def rashomon_points(con: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    """The sets a run enumerated per point of a sweep its search runs (a frontier), one per point
    in point order, as its ``rashomon`` events tagged with the point gave them (each sent once,
    when the point's enumeration ended): ``point`` (from 1), ``count``, ``complete``,
    ``threshold``, ``unenumerated_bound`` and ``shared`` (its kept members are the run's own
    set's: the frontier's chosen point). Only the points whose set was done are there: a run
    stopped or killed mid-sweep lists those it finished."""
    shared_row = first_row(con, "SELECT shared_points FROM rashomon_sets WHERE run_id = ?", [run_id])
    shared = set(shared_row[0] or ()) if shared_row is not None else set()
    rows = con.execute(
        "SELECT lower_bound, counters FROM events WHERE run_id = ? AND kind = 'rashomon' "
        "AND json_extract(counters, '$.rashomon_point') IS NOT NULL ORDER BY seq",
        [run_id],
    ).fetchall()
    points: dict[int, dict[str, Any]] = {}
    for bound, counters in rows:
        c = json.loads(counters)
        point, count = c.get("rashomon_point"), c.get("rashomon_count")
        if not isinstance(point, int) or isinstance(point, bool) or point < 1:
            continue  # not a point number: nothing a reader can place
        points[point] = {
            "point": point,
            "count": int(count) if isinstance(count, (int, float)) and not isinstance(count, bool) else 0,
            "complete": bool(c.get("rashomon_complete")),
            "threshold": finite_or_none(c.get("rashomon_threshold")),
            "unenumerated_bound": None if c.get("rashomon_complete") else finite_or_none(bound),
            "shared": point in shared,
        }
    return [points[k] for k in sorted(points)]


def rashomon_members(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    uses: Sequence[str | Sequence[str]] = (),
    avoids: Sequence[str | Sequence[str]] = (),
    limit: int | None = None,
    *,
    rank: int | None = None,
    point: int | None = None,
) -> list[RashomonMemberRow]:
    """The kept members of a run's set, best first: those using every feature in ``uses`` and
    none in ``avoids`` (exact names), at most ``limit``; ``rank`` picks one member. An item may be
    a group of names, which stands for any of them (the features derived from one raw column):
    used means one of them is, avoided means none is. With ``point``, the members of that sweep
    point's set instead of the run's own."""
    table, where, params = _members_of(con, run_id, point)
    for negate, items in (("", uses), ("NOT ", avoids)):
        for item in items:
            group = [item] if isinstance(item, str) else [str(name) for name in item]
            where.append(f"{negate}list_has_any(features, ?::VARCHAR[])")
            params.append(group)
    if rank is not None:
        where.append("rank = ?")
        params.append(int(rank))
    sql = (
        f"SELECT rank, objective, features, fingerprint, model, model_text FROM {table} "
        f"WHERE {' AND '.join(where)} ORDER BY rank"
    )
    if limit is not None:
        sql += f" LIMIT {max(0, int(limit))}"
    return [
        RashomonMemberRow(
            int(r[0]), finite_or_none(r[1]), tuple(r[2] or ()), r[3], json.loads(r[4]) if r[4] else None, r[5]
        )
        for r in con.execute(sql, params).fetchall()
    ]


def _members_of(con: duckdb.DuckDBPyConnection, run_id: str, point: int | None) -> tuple[str, list[str], list[Any]]:
    """Where the kept members of the run's set, or of sweep point ``point``'s, are: the table and
    the conditions that pick them. A point sharing the run's members reads the run's rows."""
    if point is not None:
        row = first_row(
            con, "SELECT list_contains(shared_points, ?) FROM rashomon_sets WHERE run_id = ?", [point, run_id]
        )
        if row is None or not row[0]:
            return "rashomon_point_members", ["run_id = ?", "point = ?"], [run_id, int(point)]
    return "rashomon_members", ["run_id = ?"], [run_id]


def rashomon_features(con: duckdb.DuckDBPyConnection, run_id: str, point: int | None = None) -> list[str]:
    """Every feature name some kept member of the run's set (or of sweep point ``point``'s) uses,
    sorted (for did-you-mean)."""
    table, where, params = _members_of(con, run_id, point)
    sql = f"SELECT DISTINCT unnest(features) AS f FROM {table} WHERE {' AND '.join(where)} ORDER BY f"
    rows = con.execute(sql, params).fetchall()
    return [r[0] for r in rows]


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
        "counters": np.array(
            [json_text(r["counters"]) if r.get("counters") else None for _, r in records], dtype=object
        ),
        "message": np.array([r.get("message") for _, r in records], dtype=object),
    }
