"""A MOSS frontier run browsed from a real run store: its stored-run screen lists every point's
set (count, complete or the bound, threshold) as ``glasswork rashomon RUN`` does, and the chosen
point's members as before; feature names from the data (Rich markup among them) shown literally."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from spec_files import write_frontier_spec
from tui_fixtures import plain, wait_for

from glasswork.cli import cli
from glasswork.console import rashomon_point_text
from glasswork.tui.app import GlassworkApp
from glasswork.tui.rashomon import RashomonScreen
from glasswork.tui.run_screen import RunScreen

SIZE = (180, 60)


@pytest.fixture
def frontier_db(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A real DuckDB store holding a real MOSS frontier run, made by ``glasswork run``."""
    db = tmp_path / "runs.duckdb"
    run = CliRunner().invoke(cli, ["run", "--json", "-q", "--db", str(db), str(write_frontier_spec(tmp_path))])
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
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: app.screen.rows)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
            assert "4 frontier point(s)" in plain(app.screen.query_one("#summary"))
            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, RashomonScreen))
            screen = app.screen
            await wait_for(pilot, lambda: screen.members)
            shown = plain(screen.query_one("#set-points"))
            for p in points:  # the CLI's words, point by point: count, completeness, threshold
                assert rashomon_point_text(p) in shown
            chosen = next(line for line in shown.splitlines() if "the run's own set" in line)
            assert chosen.startswith(f"point {doc['stats']['chosen_point']}: ")
            assert len(screen.members) == doc["rashomon"]["kept"]  # the knee's members, as before
            table = screen.query_one("#members")
            cells = "\n".join(str(table.get_cell_at((row, 2))) for row in range(table.row_count))
            assert "[bold red]boom[/]" in cells  # the markup shown as typed, not applied
            await pilot.press("q")

    asyncio.run(drive())
