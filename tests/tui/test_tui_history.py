"""The history screens driven by a pilot: the run table and its filters, a run's model and bound
trajectory, comparing two runs, launching a spec into the live monitor, help and errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

from glasswork.tui.app import GlassworkApp
from glasswork.tui.compare_screen import CompareScreen
from glasswork.tui.history import HistoryScreen
from glasswork.tui.model_screen import ModelScreen
from glasswork.tui.monitor import MonitorScreen
from glasswork.tui.run_screen import RunScreen
from glasswork.tui.widgets import ErrorScreen, HelpScreen, PanelChart
from tui_fixtures import (
    CORELS_ID,
    CORELS_ID_2,
    MOSS_ID,
    history_db,  # noqa: F401  (a pytest fixture)
    plain,
    toy_spec,
    utc,  # noqa: F401
    wait_for,
)

SIZE = (130, 40)


async def loaded(pilot, n: int | None = None) -> HistoryScreen:
    screen = pilot.app.screen
    assert isinstance(screen, HistoryScreen)
    await pilot.app.workers.wait_for_complete()
    await wait_for(pilot, lambda: screen.rows and (n is None or len(screen.rows) == n))
    return screen


async def type_path(pilot, path: str) -> None:
    """Open the launch prompt and submit a path (set at once: typing it key by key is slow)."""
    from textual.widgets import Input

    await pilot.press("l")
    pilot.app.screen.query_one(Input).value = path
    await pilot.press("enter")


def row_of(screen: HistoryScreen, run_id: str) -> int:
    return [r.run_id for r in screen.rows].index(run_id)


def test_table_filters_and_help(history_db: Path) -> None:
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot, 5)
            assert [r.solver for r in screen.rows].count("corels") == 3
            assert screen.rows[0].state == "failed"  # newest first
            await pilot.click("#f-solver")
            await pilot.press(*"corels", "enter")
            await wait_for(pilot, lambda: len(screen.rows) == 3)
            screen.query_one("#f-state").value = "stopped"
            await wait_for(pilot, lambda: len(screen.rows) == 1)
            assert screen.rows[0].run_id == CORELS_ID_2
            screen.query_one("#f-state").clear()
            screen.query_one("#f-solver").value = ""
            await pilot.press("slash", *"risk", "enter")
            await wait_for(pilot, lambda: len(screen.rows) == 1 and screen.rows[0].solver == "fasterrisk")
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            keys = plain(app.screen.query_one("#help-body"))
            for phrase in ("open run", "mark", "compare marked", "launch spec", "filter", "quit"):
                assert phrase in keys
            await pilot.press("escape")
            assert app.screen is screen

    asyncio.run(drive())


def test_open_a_run_its_model_and_frontier(history_db: Path) -> None:
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot, 5)
            for _ in range(row_of(screen, MOSS_ID)):
                await pilot.press("down")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.is_mounted)
            run = app.screen
            assert run.details["run_id"] == MOSS_ID and len(run.state.objective) == 5  # 4 points + the certificate
            summary = plain(run.query_one("#summary"))
            assert "optimal" in summary and "train_accuracy" in summary
            assert "rm > 6.9" in plain(run.query_one("#model"))
            await pilot.press("question_mark")
            assert "full model" in plain(app.screen.query_one("#help-body"))
            await pilot.press("escape", "m")
            assert isinstance(app.screen, ModelScreen)
            assert "optimal" in plain(app.screen.query_one("#model"))  # the frontier, through the moss view
            assert [c.panel.title for c in app.screen.query(PanelChart)] == ["frontier: loss H2 by stability H1"]
            await pilot.press("t")
            assert plain(app.screen.query_one("#model")).startswith("start at 22.5")
            await pilot.press("escape", "escape")
            assert app.screen is screen

    asyncio.run(drive())


def test_mark_two_runs_and_compare(history_db: Path) -> None:
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot, 5)
            await pilot.press("c")  # nothing marked yet: a notice, no screen
            assert app.screen is screen
            first, second = row_of(screen, CORELS_ID), row_of(screen, CORELS_ID_2)
            for _ in range(second):
                await pilot.press("down")
            await pilot.press("space")
            for _ in range(first - second):
                await pilot.press("down")
            await pilot.press("space")
            assert set(screen.marked) == {CORELS_ID, CORELS_ID_2}
            assert "marked" in plain(screen.query_one("#status"))
            await pilot.press("c")
            # a pushed screen composes its widgets a moment later (on a loaded machine, later still)
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.query("#fields Static"))
            fields = plain(app.screen.query_one("#fields Static"))
            assert "spec.objective.regularization" in fields and "0.005" in fields
            assert "stopped_time" in fields and "optimal" in fields

    asyncio.run(drive())


def test_launch_a_spec_from_disk_into_the_monitor(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.duckdb"
    spec = toy_spec(tmp_path, tiny_csv)
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            history = app.screen
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: "no run store" in plain(history.query_one("#status")))
            await type_path(pilot, str(spec))
            await wait_for(pilot, lambda: isinstance(app.screen, MonitorScreen) and app.screen.is_mounted)
            monitor = app.screen
            await wait_for(pilot, lambda: (monitor.state.nodes or 0) > 3)
            await pilot.press("c")
            await wait_for(pilot, lambda: monitor.state.finished)
            assert monitor.state.status == "cancelled"
            await pilot.press("escape")
            assert app.screen is history
            await wait_for(pilot, lambda: len(history.rows) == 1)
            assert history.rows[0].state == "cancelled"

    asyncio.run(drive())


def test_bad_specs_are_readable_errors(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    bad = toy_spec(tmp_path, tiny_csv, extra="objective:\n  regularization: 7\n")
    app = GlassworkApp(db=str(tmp_path / "runs.duckdb"))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await type_path(pilot, str(bad))
            assert isinstance(app.screen, ErrorScreen)
            assert plain(app.screen.query_one("#error-title")) == "Invalid spec"
            message = plain(app.screen.query_one("#error-message"))
            assert "objective.regularization" in message and "nothing was run" in message
            await pilot.press("escape")
            await type_path(pilot, str(tmp_path / "missing.yaml"))
            assert plain(app.screen.query_one("#error-title")) == "No such spec file"

    asyncio.run(drive())


def test_watch_a_recorded_run(history_db: Path) -> None:
    """``w`` on a run that has ended shows it in the monitor, read back from the store."""
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot, 5)
            for _ in range(row_of(screen, MOSS_ID)):
                await pilot.press("down")
            await pilot.press("w")
            assert isinstance(app.screen, MonitorScreen)
            monitor = app.screen
            await wait_for(pilot, lambda: monitor.state.finished)
            [frontier] = monitor.query(PanelChart)  # the MOSS panel, from its plugin's hook
            assert monitor.state.status == "optimal" and len(frontier.panel.points) == 4
            await wait_for(pilot, lambda: frontier.display)
            await pilot.press("c")  # not live: nothing to cancel, and no crash
            await pilot.press("escape")
            assert app.screen is screen

    asyncio.run(drive())


def test_sweeps_group_into_one_row_with_their_progress(history_db: Path) -> None:
    """g shows each sweep as one row (points done of its total); opening it lists its runs."""
    from glasswork.store import RunStore
    from tui_fixtures import RULE_LIST, RULE_LIST_TEXT, _info, _result

    store = RunStore(history_db)
    for i, status in enumerate(["optimal", "stopped_time"]):
        info = _info(f"sw{i:030d}", "lambda path", "corels", 20 + i)
        start = {
            "kind": "start",
            **info.to_dict(full=True),
            "sweep_id": "feedc0ffee123456",
            "sweep_point": {
                "key": f"k{i}",
                "coords": {"objective.regularization": 0.01 * (i + 1)},
                "fold": None,
                "total": 3,
            },
        }
        result = _result(status, 0.35 + i / 100, 0.35, RULE_LIST, RULE_LIST_TEXT, 1.0)
        store.write_records([start, {"kind": "finish", "run_id": info.run_id, "result": result}])
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot, 7)  # five runs plus the sweep's two
            await pilot.press("g")
            await wait_for(pilot, lambda: len(screen.rows) == 6)
            sweep = [
                r
                for r in screen.rows
                if getattr(r, "sweep_id", None) == "feedc0ffee123456" and not hasattr(r, "run_id")
            ]
            assert len(sweep) == 1 and sweep[0].progress() == "2/3 done" and sweep[0].best_objective == 0.35
            table = screen.query_one("DataTable")
            table.move_cursor(row=screen.rows.index(sweep[0]))
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(screen.rows) == 2)
            assert {r.run_id for r in screen.rows} == {"sw" + "0" * 30, "sw" + "0" * 29 + "1"}
            assert "runs of sweep feedc0ffee12" in plain(screen.query_one("#status"))
            await pilot.press("g")
            await wait_for(pilot, lambda: len(screen.rows) == 6)
            await pilot.press("q")

    asyncio.run(drive())


def test_a_run_screen_closed_as_soon_as_it_opens_draws_nothing_and_fails_nothing(history_db: Path) -> None:
    """Issue 36: on a loaded machine a run screen's ``on_mount`` ran after the screen had closed and
    failed with ``NoMatches: '#trajectory'``. Opened and closed in one step, as then, it leaves the app
    running and the history showing."""
    from glasswork.store import RunStore

    store = RunStore(history_db).open()
    docs = [store.details(r) for r in (MOSS_ID, store.resolve(["latest"])[0])]
    events = [store.events(d["run_id"]) for d in docs]
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot, 5)
            for screen in (RunScreen(docs[0], events[0], store=store), CompareScreen(docs, events)):
                app.push_screen(screen)
                app.pop_screen()
                await pilot.pause()
                await pilot.pause()
            assert isinstance(app.screen, HistoryScreen) and app.is_running
            app.push_screen(RunScreen(docs[0], events[0], store=store))  # and one left open draws its chart
            await wait_for(pilot, lambda: len(app.screen.query("#trajectory")) == 1)

    asyncio.run(drive())
    assert app.return_code in (None, 0)


def test_j_and_k_move_the_cursor_as_the_arrows_do(history_db: Path) -> None:
    """Issue 36: ``j`` / ``k`` did not move the history's cursor."""
    app = GlassworkApp(db=str(history_db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot, 5)
            table = screen.query_one("#runs")
            table.focus()
            start = table.cursor_row
            await pilot.press("j", "j")
            assert table.cursor_row == start + 2
            await pilot.press("k")
            assert table.cursor_row == start + 1

    asyncio.run(drive())
