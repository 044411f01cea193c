"""The run store's tables of Rashomon sets: a run's own set (``rashomon_sets``, one row of its
summary, and ``rashomon_members``, one row per kept member) and the sets of the points of a sweep
its search ran (``rashomon_point_members``; their summaries are the points' ``rashomon`` events).
Written from a run's records by ``write_sets`` (the one path, called by ``runs.write_run``) and
read as the types of ``glasswork.rashomon``, each a function of a connection."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from glasswork.rashomon import PointSet, SetProgress, SetSummary, announced_set, decides_as
from glasswork.store.schema import finite_or_none, first_row, json_text

if TYPE_CHECKING:
    import duckdb

Record = Mapping[str, Any]

# -- writing: a run's records become the rows of its sets ---------------------------------------------


def write_sets(con: duckdb.DuckDBPyConnection, run_id: str, events: Sequence[Record], result: Record | None) -> None:
    """The run's own set, from its result (``RunOutcome.to_dict()``'s ``rashomon``, every kept
    member listed) or, for a live or killed run, from what its events announced; then the kept
    members of each sweep point's set. The caller has emptied the run's rows."""
    summary: SetSummary | None = None
    members: list[dict[str, Any]] = []
    if result is not None:
        document = result.get("rashomon")
        if document is not None:
            summary, members = SetSummary.from_dict(document), list(document.get("models") or [])
    else:
        announced = announced_set(events)
        if announced is not None:
            summary, members = announced
    if summary is not None:
        _write_set(con, run_id, summary, members)
    _write_point_members(con, run_id, events, None if summary is None else members)


def event_counters(record: Record) -> dict[str, Any] | None:
    """The ``events.counters`` column of an event record: its counters, and for a ``rashomon``
    event its ``SetProgress`` under the flat names (so the column reads as before the type)."""
    counters = dict(record.get("counters") or {})
    progress = SetProgress.of_record(record)
    if progress is not None:
        counters = {**SetProgress.without_flat_names(counters), **progress.counters()}
    return counters or None


# rashomon_sets' columns of a summary: its figures, by the names of SetSummary's fields (the
# multiplicity figures and the fairness range are JSON columns of their own; ``running`` is a
# reader's, never stored)
_SET_COLUMNS = tuple(
    name for name in SetSummary.__dataclass_fields__ if name not in ("multiplicity", "running", "fairness")
)


def _write_set(con: duckdb.DuckDBPyConnection, run_id: str, summary: SetSummary, members: Sequence[Record]) -> None:
    """A run's set as rows: its summary (with the multiplicity figures) and one row per kept
    member, ranked from 1 (the best), in one batch however many there are."""
    row = summary.to_dict()
    con.execute(
        f"INSERT INTO rashomon_sets (run_id, {', '.join(_SET_COLUMNS)}, multiplicity, fairness) "
        f"VALUES (?, {', '.join('?' for _ in _SET_COLUMNS)}, ?, ?)",
        [run_id, *(row[c] for c in _SET_COLUMNS), json_text(summary.multiplicity), json_text(summary.fairness)],
    )
    if members:
        _insert_members(con, "rashomon_members", run_id, members)


def _write_point_members(
    con: duckdb.DuckDBPyConnection, run_id: str, events: Sequence[Record], own: Sequence[Record] | None
) -> None:
    """The kept members of each sweep point's set (a frontier's), from the last ``rashomon`` event
    of each point (a point whose set was taken up again is sent again, whole), ranked from 1. A
    point whose members are the run's own set's (``own``, member for member: the chosen point's)
    is written once, as the run's set, and named in ``rashomon_sets.shared_points``."""
    last: dict[int, list[Record]] = {}
    for r in events:
        progress = SetProgress.of_record(r)
        if progress is not None and progress.point is not None:
            last[progress.point] = list(r.get("members") or [])
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


def _member_columns(member: Record) -> tuple[Any, ...]:
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


def _insert_members(
    con: duckdb.DuckDBPyConnection,
    table: str,
    run_id: str,
    members: Sequence[Record],
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
        "size": np.array([_size(m.get("size")) for m in members], dtype=object),
        "metrics": np.array([json_text(m.get("metrics")) for m in members], dtype=object),
        "fairness": np.array([json_text(m.get("fairness")) for m in members], dtype=object),
    }
    point_column = "" if point is None else "point, "
    con.register("glasswork_rashomon_batch", batch)
    try:
        con.execute(
            f"INSERT INTO {table} (run_id, {point_column}rank, objective, features, fingerprint, kind, model, "
            f"model_text, size, metrics, fairness) SELECT run_id, {point_column}rank, objective, "
            "from_json(features, '[\"VARCHAR\"]'), fingerprint, kind, model, model_text, size::BIGINT, metrics, "
            "fairness FROM glasswork_rashomon_batch"
        )
    finally:
        con.unregister("glasswork_rashomon_batch")


def _size(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- reading -------------------------------------------------------------------------------------------


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
    size: int | None = None
    metrics: dict[str, float | None] | None = None
    fairness: dict[str, dict[str, float | None]] | None = None

    def to_dict(self, *, with_model: bool = True) -> dict[str, Any]:
        """The member's JSON form; ``metrics`` and ``fairness`` ``null`` when not available (a
        member kept as a summary, a set recorded before members had figures, no audit)."""
        out: dict[str, Any] = {
            "rank": self.rank,
            "objective": self.objective,
            "features": list(self.features),
            "fingerprint": self.fingerprint,
            "size": self.size,
            "metrics": self.metrics,
            "fairness": self.fairness,
        }
        if with_model:
            out["model"] = self.model
            out["model_text"] = self.model_text
        return out


def set_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> SetSummary | None:
    """A run's Rashomon set in summary, its multiplicity figures included; ``None`` when the run
    has no set."""
    row = first_row(
        con, f"SELECT {', '.join(_SET_COLUMNS)}, multiplicity, fairness FROM rashomon_sets WHERE run_id = ?", [run_id]
    )
    if row is None:
        return None
    *figures, multiplicity, fairness = row
    return SetSummary.from_dict(
        {
            **dict(zip(_SET_COLUMNS, figures)),
            "multiplicity": json.loads(multiplicity) if multiplicity else None,
            "fairness": json.loads(fairness) if fairness else None,
        }
    )


def point_sets(con: duckdb.DuckDBPyConnection, run_id: str) -> list[PointSet]:
    """The sets a run enumerated per point of a sweep its search runs (a frontier), one per point
    in point order, as its ``rashomon`` events tagged with the point gave them (each sent once,
    when the point's enumeration ended; the last word counts). Only the points whose set was done
    are there: a run stopped or killed mid-sweep lists those it finished."""
    shared_row = first_row(con, "SELECT shared_points FROM rashomon_sets WHERE run_id = ?", [run_id])
    shared = set(shared_row[0] or ()) if shared_row is not None else set()
    rows = con.execute(
        "SELECT lower_bound, counters FROM events WHERE run_id = ? AND kind = 'rashomon' ORDER BY seq", [run_id]
    ).fetchall()
    points: dict[int, PointSet] = {}
    for bound, counters in rows:
        progress = SetProgress.from_counters(json.loads(counters) if counters else {})
        if progress is not None and progress.point is not None:
            points[progress.point] = PointSet.of_progress(progress, bound, shared=progress.point in shared)
    return [points[k] for k in sorted(points)]


def decisions(con: duckdb.DuckDBPyConnection, run_id: str, *, point: int | None = None) -> dict[int, int]:
    """``glasswork.rashomon.decides_as`` over every kept member of a run's set (or of sweep point
    ``point``'s): read from ranks and fingerprints only, so a listing cut by ``--limit`` still says
    which member each decides as, without loading every model."""
    table, where, params = _members_of(con, run_id, point)
    sql = f"SELECT rank, fingerprint FROM {table} WHERE {' AND '.join(where)} ORDER BY rank"
    return decides_as((int(r[0]), r[1]) for r in con.execute(sql, params).fetchall())


def members(
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
        f"SELECT rank, objective, features, fingerprint, model, model_text, size, metrics, fairness FROM {table} "
        f"WHERE {' AND '.join(where)} ORDER BY rank"
    )
    if limit is not None:
        sql += f" LIMIT {max(0, int(limit))}"
    return [
        RashomonMemberRow(
            int(r[0]),
            finite_or_none(r[1]),
            tuple(r[2] or ()),
            r[3],
            json.loads(r[4]) if r[4] else None,
            r[5],
            None if r[6] is None else int(r[6]),
            json.loads(r[7]) if r[7] else None,
            json.loads(r[8]) if r[8] else None,
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


def features(con: duckdb.DuckDBPyConnection, run_id: str, point: int | None = None) -> list[str]:
    """Every feature name some kept member of the run's set (or of sweep point ``point``'s) uses,
    sorted (for did-you-mean)."""
    table, where, params = _members_of(con, run_id, point)
    sql = f"SELECT DISTINCT unnest(features) AS f FROM {table} WHERE {' AND '.join(where)} ORDER BY f"
    rows = con.execute(sql, params).fetchall()
    return [r[0] for r in rows]
