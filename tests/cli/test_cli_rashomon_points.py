"""Every point of a MOSS frontier keeps its set's members in the store (capped by
``rashomon.max_models`` per point), and ``glasswork rashomon RUN --point K`` lists them (also as
JSON), shows one and picks one for export like any member; names from the data stay data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.store import RunStore
from spec_files import HOSTILE_COLUMNS, write_frontier_spec

MAX_MODELS = 30


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def frontier(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("points")
    db = str(folder / "runs.duckdb")
    run = invoke(
        "run",
        "--json",
        "-q",
        "--db",
        db,
        str(write_frontier_spec(folder, rashomon=f"{{epsilon: 0.05, max_models: {MAX_MODELS}}}")),
    )
    assert run.exit_code == 0, run.output
    return db, json.loads(run.stdout)


def test_every_points_members_are_stored_capped_per_point(frontier: tuple[str, dict[str, Any]]) -> None:
    db, doc = frontier
    points = json.loads(invoke("rashomon", doc["run_id"], "--json", "--db", db).stdout)["points"]
    assert len(points) == 4
    assert any(p["count"] > MAX_MODELS for p in points)  # the cap is exercised
    for p in points:
        listed = invoke("rashomon", doc["run_id"], "--point", str(p["point"]), "--json", "--limit", "1000", "--db", db)
        assert listed.exit_code == 0, listed.output
        got = json.loads(listed.stdout)
        assert (got["point"], got["count"], got["complete"]) == (p["point"], p["count"], p["complete"])
        assert got["kept"] == len(got["models"]) == min(p["count"], MAX_MODELS)
        objectives = [m["objective"] for m in got["models"]]
        assert objectives == sorted(objectives) and max(objectives) <= p["threshold"] + 1e-9
        assert all(set(m["features"]) <= set(HOSTILE_COLUMNS) for m in got["models"])
        assert [m["rank"] for m in got["models"]] == list(range(1, got["kept"] + 1))
    knee = doc["stats"]["chosen_point"]
    own = json.loads(invoke("rashomon", doc["run_id"], "--json", "--limit", "1000", "--db", db).stdout)["models"]
    at_knee = json.loads(
        invoke("rashomon", doc["run_id"], "--point", str(knee), "--json", "--limit", "1000", "--db", db).stdout
    )["models"]
    assert [m["fingerprint"] for m in at_knee] == [m["fingerprint"] for m in own]  # the knee's, as before


def test_a_points_member_is_shown_and_exported_like_any_member(
    frontier: tuple[str, dict[str, Any]], tmp_path: Path
) -> None:
    db, doc = frontier
    rows = doc["stats"]["frontier"]
    k = str(next(i for i, row in enumerate(rows, 1) if (row.get("rashomon_count") or 0) >= 2))
    listed = json.loads(invoke("rashomon", doc["run_id"], "--point", k, "--json", "--db", db).stdout)
    shown = invoke("rashomon", doc["run_id"], "--point", k, "--show", "2", "--json", "--db", db)
    assert shown.exit_code == 0, shown.output
    member = json.loads(shown.stdout)
    assert member["point"] == int(k) and member["fingerprint"] == listed["models"][1]["fingerprint"]
    assert member["model"] is not None
    out = tmp_path / "member.py"
    picked = invoke(
        "rashomon", doc["run_id"], "--point", k, "--pick", "2", "--format", "python", "-o", str(out), "--db", db
    )
    assert picked.exit_code == 0, picked.output
    code = out.read_text(encoding="utf-8")
    assert f"Rashomon set of point {k}, member 2" in code
    compile(code, str(out), "exec")  # the names from the data are quoted, never code
    text = invoke("rashomon", doc["run_id"], "--point", k, "--db", db).stdout
    assert f"point {k}'s set: " in text and "rank" in text


def test_a_point_that_has_no_set_is_exit_2_with_the_points_there_are(frontier: tuple[str, dict[str, Any]]) -> None:
    db, doc = frontier
    missing = CliRunner().invoke(cli, ["rashomon", doc["run_id"], "--point", "9", "--db", db])
    assert missing.exit_code == 2 and "the points with a set are 1, 2, 3, 4" in missing.output
    beyond = CliRunner().invoke(cli, ["rashomon", doc["run_id"], "--point", "1", "--show", "999", "--db", db])
    assert beyond.exit_code == 2 and "there is no rank 999" in beyond.output


def test_the_store_size_of_the_points_members_is_bounded_by_the_cap(frontier: tuple[str, dict[str, Any]]) -> None:
    db, doc = frontier
    store = RunStore(db)
    rows = sum(len(store.rashomon_members(doc["run_id"], point=p.point)) for p in store.rashomon_points(doc["run_id"]))
    assert rows <= 4 * MAX_MODELS
