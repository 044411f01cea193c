"""The stored set's curves in the terminal UI, through Textual's pilot: ``c`` on the set's screen
lists them, the cells those of ``glasswork rashomon RUN --curves``; a set recorded without them is
told so, and no screen opens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import duckdb
import pytest
from test_tui_rashomon_figures import SIZE, stored_set
from textual.widgets import DataTable
from tui_fixtures import open_stored_set, plain, wait_for

from glasswork.rashomon.curves import cells, header, rows
from glasswork.store import RunStore
from glasswork.tui.app import GlassworkApp
from glasswork.tui.curves import CurvesScreen


@pytest.mark.parametrize("recorded", [True, False])
def test_c_lists_the_sets_curves(toy_env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: bool) -> None:
    monkeypatch.chdir(tmp_path)
    db, run_id = stored_set(tmp_path, "model")
    doc = RunStore(db).rashomon_summary(run_id).multiplicity["curves"]
    if not recorded:  # as a set recorded before curves
        con = duckdb.connect(str(db))
        try:
            con.execute("UPDATE rashomon_sets SET multiplicity = json_merge_patch(multiplicity, '{\"curves\": null}')")
        finally:
            con.close()
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app)
            await pilot.press("c")
            if not recorded:
                await pilot.pause()
                assert app.screen is screen
                assert any("no curves" in str(n.message) for n in app._notifications)
                return
            await wait_for(pilot, lambda: isinstance(app.screen, CurvesScreen) and app.screen.is_mounted)
            table = app.screen.query_one("#curves", DataTable)
            assert [str(c.label) for c in table.columns.values()] == header(doc)
            for row, point in enumerate(rows(doc)):
                assert [str(table.get_cell_at((row, k))) for k in range(len(header(doc)))] == cells(doc, point)
            assert "the set as epsilon grows, exact at each of" in plain(app.screen.query_one("#curves-coverage"))
            await pilot.press("q")
            await wait_for(pilot, lambda: app.screen is screen)

    asyncio.run(drive())
