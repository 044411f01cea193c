"""The run screen's `e` (export the model) and `r` (write the report), driven by the pilot: each
says where its files went; a run recorded without inputs exports what it can and says why not
the rest; a fresh real run exports all four formats."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from glasswork.tui.app import GlassworkApp
from glasswork.tui.history import HistoryScreen
from glasswork.tui.run_screen import RunScreen
from tui_fixtures import CORELS_ID, history_db, utc, wait_for  # noqa: F401

SIZE = (130, 40)
ROOT = Path(__file__).resolve().parents[2]


def _messages(app: GlassworkApp) -> list[str]:
    return [n.message for n in app._notifications]


async def _open(pilot, app: GlassworkApp, run_id: str) -> RunScreen:
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    await app.workers.wait_for_complete()
    await wait_for(pilot, lambda: screen.rows)
    for _ in range([r.run_id for r in screen.rows].index(run_id)):
        await pilot.press("down")
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.is_mounted)
    return app.screen


def test_export_and_report_keys_say_where_the_files_went(
    history_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            run = await _open(pilot, app, CORELS_ID)
            await pilot.press("e")
            await wait_for(pilot, lambda: any("exported to" in m for m in _messages(app)))
            message = next(m for m in _messages(app) if "exported to" in m)
            # the fixture's run predates inputs: json and markdown, and why not python and sql
            assert {p.suffix for p in run.written} == {".json", ".md"}
            assert all(str(p) in message for p in run.written)
            assert "python: run" in message and "recorded before glasswork kept a model's inputs" in message
            await pilot.press("r")
            await wait_for(pilot, lambda: any("report written to" in m for m in _messages(app)))
            card = run.written[-1]
            assert card.suffix == ".html" and card.parent == tmp_path and card.exists()
            assert "Proven optimal" in card.read_text() and str(card) in _messages(app)[-1]

    asyncio.run(drive())


def test_a_real_run_exports_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = Path(os.environ.get("GLASSWORK_DATA", ROOT.parent / "shared" / "datasets"))
    if not (data / "corels").is_dir():
        pytest.skip(f"the shared data sets are not at {data}")
    monkeypatch.setenv("GLASSWORK_DATA", str(data))
    monkeypatch.chdir(tmp_path)
    import glasswork

    db = tmp_path / "runs.duckdb"
    run_id = glasswork.run(ROOT / "specs" / "corels_compas.yaml", db=db).info.run_id
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            run = await _open(pilot, app, run_id)
            await pilot.press("e")
            await wait_for(pilot, lambda: len(run.written) == 4)
            assert sorted(p.suffix for p in run.written) == [".json", ".md", ".py", ".sql"]
            assert "CASE" in next(p for p in run.written if p.suffix == ".sql").read_text()

    asyncio.run(drive())
