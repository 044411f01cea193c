"""A MOSS frontier run's sets in a real DuckDB store: the chosen point's members, which are the
run's own set's, are stored once (in ``rashomon_members``; the point named in
``rashomon_sets.shared_points``) and read back for the point as for the run; a store written by
schema version 5, which held them twice, is migrated to hold them once, every reader answering
as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.store import MIGRATIONS, SCHEMA_VERSION, RunStore
from spec_files import HOSTILE_COLUMNS, write_frontier_spec

MEMBER_COLUMNS = "run_id, rank, objective, features, fingerprint, kind, model, model_text"


@pytest.fixture(scope="module")
def frontier(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("frontier")
    db = folder / "runs.duckdb"
    spec = write_frontier_spec(folder, rashomon="{epsilon: 0.05, max_models: 1000}")
    run = CliRunner().invoke(cli, ["run", "--json", "-q", "--db", str(db), str(spec)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    return db, json.loads(run.stdout)


def rows(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def answers(store: RunStore, run_id: str, *, figures: bool = True) -> dict[str, Any]:
    """Everything a reader asks the store about the run's sets: the run's members, each point's
    members and features, the summaries; without the members' figures (a file written before
    version 8 has none) when ``figures`` is false."""
    points = [p.to_dict() for p in store.rashomon_points(run_id)]
    summary = store.rashomon_summary(run_id)
    dropped = () if figures else ("size", "metrics", "fairness")

    def listed(**where: Any) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in m.to_dict().items() if k not in dropped} for m in store.rashomon_members(run_id, **where)
        ]

    return {
        "summary": None if summary is None else summary.to_dict(),
        "points": points,
        "own": listed(),
        "own_features": store.rashomon_features(run_id),
        **{f"point {p['point']}": listed(point=p["point"]) for p in points},
        **{f"features {p['point']}": store.rashomon_features(run_id, point=p["point"]) for p in points},
        "knee uses": [
            m.rank
            for m in store.rashomon_members(
                run_id, uses=[HOSTILE_COLUMNS[2]], point=int(store.details(run_id)["stats"]["chosen_point"])
            )
        ],
    }


def test_the_chosen_points_members_are_stored_once_and_read_for_the_point(
    frontier: tuple[Path, dict[str, Any]],
) -> None:
    db, doc = frontier
    run_id, knee = doc["run_id"], doc["stats"]["chosen_point"]
    own = rows(db, "SELECT count(*) FROM rashomon_members WHERE run_id = ?", [run_id])[0][0]
    assert own == doc["rashomon"]["kept"] >= 2
    per_point = dict(rows(db, "SELECT point, count(*) FROM rashomon_point_members GROUP BY point"))
    assert knee not in per_point and len(per_point) == 3  # the other points keep theirs
    assert rows(db, "SELECT shared_points FROM rashomon_sets WHERE run_id = ?", [run_id]) == [([knee],)]
    store = RunStore(db)
    assert [p.point for p in store.rashomon_points(run_id) if p.shared] == [knee]  # what the TUI marks
    at_knee = store.rashomon_members(run_id, point=knee)
    assert [m.to_dict() for m in at_knee] == [m.to_dict() for m in store.rashomon_members(run_id)]
    assert store.rashomon_features(run_id, point=knee) == store.rashomon_features(run_id)
    # and through the command line, as the point's set: its count from its own event, members listed, shown, picked
    listed = CliRunner().invoke(cli, ["rashomon", run_id, "--point", str(knee), "--json", "--db", str(db)])
    got = json.loads(listed.stdout)
    assert got["point"] == knee and got["kept"] == own and len(got["models"]) == min(own, 20)
    shown = CliRunner().invoke(
        cli, ["rashomon", run_id, "--point", str(knee), "--show", "2", "--json", "--db", str(db)]
    )
    assert shown.exit_code == 0 and json.loads(shown.stdout)["fingerprint"] == at_knee[1].fingerprint
    out = db.parent / "knee-member.py"
    picked = CliRunner().invoke(
        cli,
        ["rashomon", run_id, "--point", str(knee), "--pick", "1", "--format", "python", "-o", str(out)]
        + ["--db", str(db)],
    )
    assert picked.exit_code == 0, picked.output
    code = out.read_text(encoding="utf-8")
    assert f"Rashomon set of point {knee}, member 1" in code
    compile(code, str(out), "exec")  # the hostile names quoted, never code


def old_store(db: Path, source: Path, run_id: str, knee: int) -> None:
    """A file as schema version 5 wrote it: its DDL, the run's rows copied from ``source``, and
    the chosen point's members held twice, as the run's and as the point's."""
    con = duckdb.connect(str(db))
    try:
        for step in MIGRATIONS[:5]:
            for statement in step:
                con.execute(statement)
        con.execute("INSERT INTO meta VALUES ('schema_version', '5')")
        con.execute(f"ATTACH '{source}' AS new (READ_ONLY)")
        con.execute("INSERT INTO runs SELECT * EXCLUDE (fairness) FROM new.runs")  # version 7's column
        for table in ("events", "artifacts", "metrics"):
            con.execute(f"INSERT INTO {table} SELECT * FROM new.{table}")
        for table in ("rashomon_members", "rashomon_point_members"):  # without version 8's figures
            con.execute(f"INSERT INTO {table} SELECT * EXCLUDE (size, metrics, fairness) FROM new.{table}")
        con.execute("INSERT INTO rashomon_sets SELECT * EXCLUDE (shared_points, fairness) FROM new.rashomon_sets")
        con.execute(
            f"INSERT INTO rashomon_point_members SELECT run_id, {knee}, rank, objective, features, fingerprint, "
            "kind, model, model_text FROM new.rashomon_members WHERE run_id = ?",
            [run_id],
        )
        con.execute("DETACH new")
    finally:
        con.close()


def test_a_version_5_store_is_migrated_to_keep_the_chosen_points_members_once(
    frontier: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db, doc = frontier
    run_id, knee = doc["run_id"], doc["stats"]["chosen_point"]
    old = tmp_path / "old.duckdb"
    old_store(old, db, run_id, knee)
    before = rows(old, "SELECT count(*) FROM rashomon_point_members")[0][0]
    expected = answers(RunStore(db), run_id, figures=False)
    store = RunStore(old)
    store.open()
    assert rows(old, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    assert rows(old, "SELECT shared_points FROM rashomon_sets") == [([knee],)]
    after = rows(old, "SELECT count(*) FROM rashomon_point_members")[0][0]
    assert before - after == doc["rashomon"]["kept"]  # the knee's copies dropped, nothing else
    assert rows(old, "SELECT count(*) FROM rashomon_point_members WHERE point = ?", [knee]) == [(0,)]
    assert answers(store, run_id, figures=False) == expected
    # a set recorded before members had figures: not available, never made up
    assert {m.metrics is None for m in store.rashomon_members(run_id)} == {True}
    assert store.check()["ok"]


def test_a_point_whose_members_differ_from_the_runs_keeps_its_rows_through_the_migration(
    frontier: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Only a point member for member the run's set is folded into it: one differing row (here
    the knee's copy cut short by one member) keeps the point's rows."""
    db, doc = frontier
    run_id, knee = doc["run_id"], doc["stats"]["chosen_point"]
    old = tmp_path / "old.duckdb"
    old_store(old, db, run_id, knee)
    con = duckdb.connect(str(old))
    last = con.execute("SELECT max(rank) FROM rashomon_point_members WHERE point = ?", [knee]).fetchone()[0]
    con.execute("DELETE FROM rashomon_point_members WHERE point = ? AND rank = ?", [knee, last])
    con.close()
    store = RunStore(old)
    store.open()
    assert rows(old, "SELECT shared_points FROM rashomon_sets") == [(None,)]
    assert len(store.rashomon_members(run_id, point=knee)) == last - 1
    assert len(store.rashomon_members(run_id)) == last


def test_a_salvaged_version_5_store_keeps_its_sets(frontier: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Salvage copies an older file's tables by column name, so a table that gained a column
    since (``rashomon_sets.shared_points``) is copied whole, not lost."""
    db, doc = frontier
    run_id, knee = doc["run_id"], doc["stats"]["chosen_point"]
    old = tmp_path / "old.duckdb"
    old_store(old, db, run_id, knee)
    copied = RunStore(old).salvage(tmp_path / "new.duckdb")
    assert copied["rashomon_sets"] == 1 and copied["rashomon_members"] == doc["rashomon"]["kept"]
    salvaged = RunStore(tmp_path / "new.duckdb")
    assert [m.fingerprint for m in salvaged.rashomon_members(run_id, point=knee)] == [
        m.fingerprint for m in salvaged.rashomon_members(run_id)
    ]


def test_the_store_check_finds_a_shared_point_stored_twice(
    frontier: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """``glasswork runs check``: a point named as sharing the run's set must have no rows of its
    own (a reader would take the run's and never see them)."""
    db, doc = frontier
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    assert RunStore(copy).check()["ok"]
    run_id, knee = doc["run_id"], doc["stats"]["chosen_point"]
    with duckdb.connect(str(copy)) as con:
        con.execute(
            "INSERT INTO rashomon_point_members SELECT * REPLACE (? AS point) FROM rashomon_point_members "
            "WHERE run_id = ? AND point = (SELECT min(point) FROM rashomon_point_members)",
            [knee, run_id],
        )
    report = RunStore(copy).check()
    assert not report["ok"]
    assert report["problems"] == [
        "1 Rashomon points stored twice (named as sharing the run's set, and with rows of their own)"
    ]
