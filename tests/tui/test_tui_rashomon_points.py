"""A MOSS frontier run browsed from a real run store: its stored-run screen lists every point's
set (count, complete or the bound, threshold) as ``glasswork rashomon RUN`` does, and the chosen
point's members as before; a point chosen in that list shows its own members (as ``glasswork
rashomon RUN --point K``), opened and exported like the run's; feature names from the data (Rich
markup among them) shown literally."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.display.console import member_rules, rashomon_point_text
from glasswork.rashomon import PointSet
from glasswork.store import RunStore
from glasswork.tui.app import GlassworkApp
from glasswork.tui.model_screen import ModelScreen
from glasswork.tui.rashomon import RashomonScreen
from spec_files import write_frontier_spec
from textual.widgets import DataTable
from tui_fixtures import open_stored_set, plain, wait_for

SIZE = (180, 60)


def set_lines(screen: RashomonScreen) -> str:
    """The sets the points' table lists, one line each."""
    table = screen.query_one("#set-points", DataTable)
    return "\n".join(str(table.get_cell_at((row, 0))) for row in range(table.row_count))


def member_cells(screen: RashomonScreen) -> list[tuple[str, str, str]]:
    """The members' table as shown: rank, objective, features (after the figures' columns)."""
    table = screen.query_one("#members", DataTable)
    columns = (0, 1, table.get_column_index("rules or features"))
    return [tuple(str(table.get_cell_at((row, col))) for col in columns) for row in range(table.row_count)]


@pytest.fixture(scope="module")
def frontier_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real DuckDB store holding a real MOSS frontier run, made by ``glasswork run``."""
    folder = tmp_path_factory.mktemp("frontier")
    db = folder / "runs.duckdb"
    run = CliRunner().invoke(cli, ["run", "--json", "-q", "--db", str(db), str(write_frontier_spec(folder))])
    assert run.exit_code == 0, run.output
    return db, json.loads(run.stdout)


def test_the_stored_run_screen_lists_each_frontier_points_set(frontier_db: tuple[Path, dict[str, Any]]) -> None:
    db, doc = frontier_db
    listed = CliRunner().invoke(cli, ["rashomon", doc["run_id"], "--json", "--db", str(db)])
    points = json.loads(listed.stdout)["points"]
    assert len(points) == 4 and doc["stats"]["chosen_point"] in {p["point"] for p in points}
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app, "4 frontier point(s)")
            shown = set_lines(screen)
            for p in points:  # the CLI's words, point by point: count, completeness, threshold
                assert rashomon_point_text(PointSet.from_dict(p)) in shown
            chosen = next(line for line in shown.splitlines() if "the run's own set" in line)
            assert chosen.startswith(f"point {doc['stats']['chosen_point']}: ")
            assert len(screen.members) == doc["rashomon"]["kept"]  # the knee's members, as before
            assert any("[bold red]boom[/]" in f for _, _, f in member_cells(screen))  # markup shown as typed
            await pilot.press("q")

    asyncio.run(drive())


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_a_point_chosen_in_the_list_shows_its_own_members(
    frontier_db: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enter on a point lists that point's kept members (rank, objective, features: the run's
    set's columns, as ``--point K`` lists them); enter on one opens its model, ``e`` exports it
    named after its point; the knee's point reads the run's own rows; the run's set comes back."""
    db, doc = frontier_db
    run_id, knee = doc["run_id"], doc["stats"]["chosen_point"]
    store = RunStore(db)
    other = max((p for p in store.rashomon_points(run_id) if p.point != knee), key=lambda p: p.count)
    k = other.point
    expected = [
        # each member as glasswork rashomon lists it: its rules in order (a MOSS rule set has rules)
        (str(m.rank), m.objective, "; ".join(member_rules(m.model) or m.features))
        for m in store.rashomon_members(run_id, point=k, limit=1000)
    ]
    own = [m.fingerprint for m in store.rashomon_members(run_id)]
    assert len(expected) >= 2 and [m.fingerprint for m in store.rashomon_members(run_id, point=k)] != own
    monkeypatch.chdir(tmp_path)
    app = GlassworkApp(db=str(db))

    def listed(screen: RashomonScreen) -> list[tuple[str, float, str]]:
        return [(rank, float(objective), features) for rank, objective, features in member_cells(screen)]

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app, "frontier point(s)")
            assert screen.point is None and len(screen.members) == len(own)
            await pilot.press("p")  # to the points' table: its first row is the run's set, then point 1, 2, ...
            assert screen.focused is screen.query_one("#set-points")
            for _ in range(k):
                await pilot.press("down")
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.point == k and len(screen.members) == len(expected))
            shown = listed(screen)
            assert [r for r, _, _ in shown] == [r for r, _, _ in expected]
            assert [f for _, _, f in shown] == [f for _, _, f in expected]  # hostile names as typed
            assert all(abs(o - e) <= 1e-6 * max(1.0, abs(e)) for (_, o, _), (_, e, _) in zip(shown, expected))
            assert any("[bold red]boom[/]" in f for _, _, f in shown)
            assert "red]boom[/]" in app.export_screenshot()  # drawn as typed: the markup not applied
            status = plain(screen.query_one("#set-status"))
            assert f"point {k}'s set: {other.count:,} model" in status and f"{len(expected)} kept" in status
            await pilot.press("down", "enter")  # the second member's model, drawn by its plugin
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            assert f"member 2 of point {k}'s Rashomon set" in app.screen.model_title
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            await pilot.press("e")
            await wait_for(pilot, lambda: bool(screen.written))
            code = next(p for p in screen.written if p.suffix == ".py").read_text(encoding="utf-8")
            assert f"Rashomon set of point {k}, member 2" in code
            compile(code, "member.py", "exec")  # names from the data quoted, never code
            await pilot.press("p")
            for _ in range(knee - k):
                await pilot.press("down")
            for _ in range(k - knee):
                await pilot.press("up")
            await pilot.press("enter")  # the knee's point: the run's own rows, stored once
            await wait_for(pilot, lambda: screen.point == knee and len(screen.members) == len(own))
            assert [m.fingerprint for m in screen.members] == own
            await pilot.press("p", *["up"] * knee, "enter")  # back to the run's own set, the first row
            await wait_for(pilot, lambda: screen.point is None and len(screen.members) == len(own))
            assert "point" not in plain(screen.query_one("#set-status"))
            await pilot.press("q")

    asyncio.run(drive())


def test_a_run_killed_before_it_chose_a_point_opens_on_its_first_points_members(tmp_path: Path) -> None:
    """A frontier run whose process died after its points' sets but before the run's own (its
    journal cut there, folded as a killed run): the screen has no run's set to list, so it opens
    on point 1's kept members, and the points' table has no row for a run's set."""
    from glasswork.contract.events import RecordSink
    from glasswork.running.launch import Launch
    from glasswork.spec.load import load_spec

    records: list[dict[str, Any]] = []
    spec = load_spec(write_frontier_spec(tmp_path))
    Launch(spec, db=tmp_path / "first.duckdb").run([RecordSink(records.append, full=True)])
    tagged = [i for i, r in enumerate(records) if (r.get("rashomon") or {}).get("point") is not None]
    killed = [r for r in records[: tagged[-1] + 1] if r.get("kind") != "rashomon" or r in [records[i] for i in tagged]]
    killed[0] = {**killed[0], "pid": 2**22 + 12345}  # a process of this host that no longer exists
    db = tmp_path / "killed.duckdb"
    store = RunStore(db).open()
    store.write_records(killed)
    run_id = killed[0]["run_id"]
    assert store.rashomon_summary(run_id) is None and len(store.rashomon_points(run_id)) == 4
    first = [m.fingerprint for m in store.rashomon_members(run_id, point=1)]
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app, "frontier point(s)")
            assert screen.point == 1 and [m.fingerprint for m in screen.members] == first
            assert set_lines(screen).splitlines()[0].startswith("point 1: ")
            assert "point 1's set: " in plain(screen.query_one("#set-status"))
            await pilot.press("q")

    asyncio.run(drive())
