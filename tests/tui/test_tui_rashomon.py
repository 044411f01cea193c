"""The Rashomon set in the terminal UI: folded from records (no terminal), watched live in the
monitor while a real toy run enumerates it, a member's model opened, and a finished run's set
browsed, filtered and exported from a real DuckDB file; hostile feature names stay inert."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from glasswork.tui.app import GlassworkApp
from glasswork.tui.model_screen import ModelScreen
from glasswork.tui.monitor import MonitorScreen
from glasswork.tui.rashomon import RashomonPanel
from glasswork.tui.sources import OwnedRun, load_spec_or_error
from glasswork.tui.state import RashomonView, RunState
from textual.widgets import DataTable
from tui_fixtures import RULE_LIST, RULE_LIST_TEXT, open_stored_set, plain, utc, wait_for  # noqa: F401

SIZE = (160, 48)
HOSTILE = "[bold red]boom[/] \x1b[31mevil\x1b]0;title\x07"


def _set_record(t: float, count: int, members: list[dict[str, Any]], bound: float | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": "rashomon",
        "elapsed": t,
        "counters": {"rashomon_count": count, "rashomon_threshold": 0.5},
        "members": members,
    }
    if bound is not None:
        record["lower_bound"] = bound
    return record


def _member(objective: float, *features: str) -> dict[str, Any]:
    return {"objective": objective, "features": list(features), "fingerprint": "f" * 16}


# -- the state, without a terminal -------------------------------------------------------------


def test_state_folds_the_set_best_first_capped_and_apart_from_the_bounds() -> None:
    state = RunState()
    state.feed({"kind": "progress", "elapsed": 0.5, "objective": 0.3, "lower_bound": 0.1})
    state.feed(_set_record(1.0, 2, [_member(0.3, "b"), _member(0.4, "c")], bound=0.4))
    state.feed(_set_record(2.0, 4, [_member(0.1, "a"), _member(0.3, "d")], bound=0.45))
    view = state.rashomon
    assert view is not None and (view.summary.count, view.summary.threshold, view.summary.unenumerated_bound) == (
        4,
        0.5,
        0.45,
    )
    assert [m["features"] for m in view.members] == [["a"], ["b"], ["d"], ["c"]]  # best first, ties in arrival order
    assert view.summary.running
    assert state.lower_bound.ys == [0.1]  # the set's bound is on what is not enumerated, not on the optimum

    capped = RashomonView(cap=2)
    capped.feed(_set_record(1.0, 3, [_member(0.3, "x"), _member(0.2, "y"), _member(0.4, "z")]))
    assert [m["features"] for m in capped.members] == [["y"], ["x"]] and capped.summary.count == 3

    state.feed({"kind": "finish", "result": {"status": "cancelled", "objective": 0.1, "lower_bound": 0.0}})
    assert not view.summary.running and view.summary.complete is False  # ended without a set in its result
    assert view.summary.count == 4


def test_the_finish_record_settles_the_set() -> None:
    state = RunState()
    state.feed(_set_record(1.0, 1, [_member(0.2, "b")]))
    document = {
        "count": 7,
        "complete": True,
        "exhaustive": True,
        "threshold": 0.5,
        "epsilon": 0.25,
        "unenumerated_bound": None,
        "kept": 2,
        "models": [_member(0.1, "a"), _member(0.2, "b")],
    }
    state.feed({"kind": "finish", "result": {"status": "optimal", "objective": 0.1, "rashomon": document}})
    view = state.rashomon
    assert view is not None and view.summary.complete is True
    assert view.summary.count == 7 and view.summary.epsilon == 0.25
    assert [m["features"] for m in view.members] == [["a"], ["b"]] and view.summary.unenumerated_bound is None


# -- live, in the monitor ----------------------------------------------------------------------


def _set_spec(folder: Path, data: Path, batch: int = 1, step: float = 0.3) -> Path:
    path = folder / "set.yaml"
    path.write_text(
        f"name: toy set\ndata:\n  source: {data}\n  target: label\nsolver: toy\n"
        f"search:\n  behaviour: exact\n  step_seconds: {step}\n  rashomon_batch: {batch}\n"
        "rashomon:\n  threshold: 1.0\n"
    )
    return path


def _hostile_csv(folder: Path) -> Path:
    """The tiny data set with a feature whose name is markup and terminal escapes."""
    rows = ["a,flag,label"] + [f"{i % 2},{(i // 2) % 2},{(i % 2) if i > 5 else 1 - i % 2}" for i in range(60)]
    rows[0] = f'a,"{HOSTILE}",label'
    path = folder / "hostile.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def _no_escapes(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text


def test_the_monitor_shows_the_set_growing_and_opens_a_member(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    launch = load_spec_or_error(str(_set_spec(tmp_path, tiny_csv)), no_store=True)
    app = GlassworkApp(source=OwnedRun(launch))
    seen: list[int] = []

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, MonitorScreen)
            panel = screen.query_one(RashomonPanel)
            assert not panel.display  # no set reported yet

            def note() -> bool:
                view = screen.state.rashomon
                if view is not None and (not seen or seen[-1] != view.summary.count):
                    seen.append(view.summary.count)
                return screen.state.finished

            await wait_for(pilot, note)
            await pilot.pause(0.3)
            assert panel.display
            assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == 6  # it grew, one member at a time
            summary = plain(screen.query_one("#rashomon-summary"))
            assert "6 models" in summary and "complete" in summary and "within objective 1" in summary
            assert panel.query_one("#rashomon-members").row_count == 6
            await pilot.press("question_mark")  # the help offers the set now there is one
            assert "browse the set" in plain(app.screen.query_one("#help-body"))
            await pilot.press("escape")
            await pilot.press("s")  # into the set's table
            await pilot.press("enter")  # the best member: the stump on a
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            assert "member 1 of the Rashomon set" in plain(app.screen.query_one("#title"))
            assert "if a then" in plain(app.screen.query_one("#model"))
            await pilot.press("escape")
            await pilot.press("down", "down", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            assert "member 3 of the Rashomon set" in plain(app.screen.query_one("#title"))
            await pilot.press("escape")
            await pilot.press("q")

    asyncio.run(drive())
    assert app.return_code == 0


def test_a_stopped_enumeration_says_incomplete_with_its_bound(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    spec = _set_spec(tmp_path, tiny_csv, batch=2, step=0.01)
    spec.write_text(spec.read_text().replace("rashomon_batch: 2", "rashomon_batch: 2\n  rashomon_stop_after: 4"))
    app = GlassworkApp(source=OwnedRun(load_spec_or_error(str(spec), no_store=True)))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.state.finished)
            await pilot.pause(0.3)
            summary = plain(screen.query_one("#rashomon-summary"))
            assert "4 models" in summary and "incomplete" in summary and "objective >=" in summary
            await pilot.press("q")

    asyncio.run(drive())
    printed = _printed(app)  # what the monitor prints once the terminal is back
    assert "Rashomon set  4 models" in printed and "incomplete" in printed


def test_hostile_feature_names_reach_the_monitor_inert(toy_env, tmp_path: Path) -> None:
    launch = load_spec_or_error(str(_set_spec(tmp_path, _hostile_csv(tmp_path), batch=3, step=0.01)), no_store=True)
    app = GlassworkApp(source=OwnedRun(launch))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.state.finished)
            await pilot.pause(0.3)
            table = screen.query_one("#rashomon-members")
            cells = [str(table.get_cell_at((row, 2))) for row in range(table.row_count)]
            shown = "\n".join(cells)
            assert "[bold red]boom[/]" in shown  # the markup is shown as it is written, not read
            _no_escapes(shown)
            index = next(i for i, cell in enumerate(cells) if "boom" in cell)
            await pilot.press("s")
            for _ in range(index):
                await pilot.press("down")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            body = plain(app.screen.query_one("#model"))
            assert "[bold red]boom[/]" in body
            _no_escapes(body + plain(app.screen.query_one("#title")))
            await pilot.press("escape")
            await pilot.press("q")

    asyncio.run(drive())


def _printed(app: GlassworkApp) -> str:
    from rich.console import Console

    console = Console(width=160, record=True, file=io.StringIO())
    console.print(app.exit_summary)
    return console.export_text()


# -- a finished run's set, from the store ------------------------------------------------------


@pytest.fixture
def set_db(toy_env, tmp_path: Path) -> tuple[Path, str]:
    """A real run store holding a toy run with its set (hostile feature name included)."""
    launch = load_spec_or_error(
        str(_set_spec(tmp_path, _hostile_csv(tmp_path), batch=6, step=0.01)), db=str(tmp_path / "runs.duckdb")
    )
    assert not isinstance(launch, tuple)
    outcome = launch.run([])
    return tmp_path / "runs.duckdb", outcome.info.run_id


def test_a_followed_run_read_back_from_the_store_keeps_its_sets_completeness(set_db: tuple[Path, str]) -> None:
    from glasswork.store import RunStore
    from glasswork.tui.sources import FollowedRun

    db, run_id = set_db
    app = GlassworkApp(source=FollowedRun(RunStore(db), run_id))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.state.finished)
            await pilot.pause(0.3)
            view = screen.state.rashomon
            assert view is not None and view.summary.count == 6 and view.summary.complete is True
            assert [m["objective"] for m in view.members] == sorted(m["objective"] for m in view.members)
            assert screen.query_one("#rashomon-members").row_count == 6  # the members, from the store's table
            assert "complete: every model" in plain(screen.query_one("#rashomon-summary"))
            await pilot.press("q")

    asyncio.run(drive())


def test_a_finished_runs_set_browses_filters_and_exports_from_the_store(
    set_db: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, run_id = set_db
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app)
            summary = plain(screen.query_one("#set-summary"))
            assert "6 models" in summary and "complete" in summary and run_id[:12] in summary
            assert "\\n" not in summary  # the name's line ends, not a shown escape
            assert [m.rank for m in screen.members] == [1, 2, 3, 4, 5, 6]
            table = screen.query_one("#members")
            rules = table.get_column_index("rules or features")  # after the figures' columns
            shown = "\n".join(str(table.get_cell_at((row, rules))) for row in range(table.row_count))
            assert "[bold red]boom[/]" in shown
            _no_escapes(shown + summary)

            await pilot.press("slash")  # uses: the hostile feature, typed exactly
            uses = screen.query_one("#f-uses")
            uses.value = next(f for f in screen.features if "boom" in f)
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(screen.members) == 2)
            assert all(any("boom" in f for f in m.features) for m in screen.members)
            status = plain(screen.query_one("#set-status"))
            assert "2 member(s) listed" in status and "using" in status
            _no_escapes(status)

            uses.value = ""
            screen.query_one("#f-avoids").value = "a"
            screen.query_one("#f-avoids").focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(screen.members) == 4)
            assert all("a" not in m.features for m in screen.members)

            await pilot.press("enter")  # the best member avoiding a
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            rank = screen.members[0].rank
            assert f"member {rank} of the Rashomon set" in plain(app.screen.query_one("#title"))
            body = plain(app.screen.query_one("#model"))
            assert body.strip() and "(no model yet)" not in body
            _no_escapes(body)
            await pilot.press("escape")

            await pilot.press("e")
            await wait_for(pilot, lambda: screen.written)
            assert ".json" in {p.suffix for p in screen.written}  # the toy has no exporter for the rest
            assert all(p.parent == out and f"member-{rank}" in p.name for p in screen.written)
            message = next(n.message for n in app._notifications if "exported to" in n.message)
            assert f"member {rank} exported to" in message and "python:" in message

    asyncio.run(drive())
    document = next(p for p in out.iterdir() if p.suffix == ".json").read_text()
    assert "Rashomon member" in document


def _stored_corels_set(tmp_path: Path, models: list[dict[str, Any]]) -> GlassworkApp:
    """A store holding one CORELS run whose Rashomon set keeps ``models`` (best first), and the app on it."""
    from glasswork.contract.record import start_record
    from glasswork.store import RunStore
    from tui_fixtures import CORELS_ID, _info

    db = tmp_path / "runs.duckdb"
    store = RunStore(db).open()
    info = _info(CORELS_ID, "compas rule list", "corels", 0)
    members = [
        {
            "objective": 0.34 + 0.01 * i,
            "features": ["sex:Male,juvenile-crimes:>0", "priors:>3"],
            "fingerprint": f"{i:016x}",
            "model": model,
            "model_text": RULE_LIST_TEXT,
        }
        for i, model in enumerate(models)
    ]
    result = {
        "status": "optimal",
        "objective": 0.34,
        "lower_bound": 0.34,
        "gap": 0.0,
        "model": RULE_LIST,
        "model_text": RULE_LIST_TEXT,
        "metrics": {},
        "stats": {"elapsed": 1.0},
        "rashomon": {
            "count": len(members),
            "complete": True,
            "exhaustive": True,
            "threshold": 0.4,
            "epsilon": None,
            "optimum": 0.34,
            "optimum_proven": True,
            "unenumerated_bound": None,
            "kept": len(members),
            "models": members,
            "multiplicity": None,
        },
    }
    store.write_records([start_record(info, full=True), {"kind": "finish", "run_id": CORELS_ID, "result": result}])
    return GlassworkApp(db=str(db))


def test_a_member_model_is_drawn_by_its_plugins_view(tmp_path: Path, utc: None) -> None:
    """A CORELS rule list in a stored set is drawn by the corels plugin's render_model, not as text."""
    app = _stored_corels_set(tmp_path, [RULE_LIST] * 3)

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_stored_set(pilot, app)
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            body = plain(app.screen.query_one("#model"))
            assert "priors:>3" in body and "1,800" in body  # the plugin's table (captured counts), not the text
            assert "member 2 of the Rashomon set" in plain(app.screen.query_one("#title"))

    asyncio.run(drive())


def test_members_are_listed_as_their_rules_in_order(tmp_path: Path, utc: None) -> None:
    """Issue 36: two lists over the same features in another order were listed alike (their
    features in column order); the table lists each member's rules in the order it applies them."""
    swapped = {**RULE_LIST, "rules": RULE_LIST["rules"][::-1]}
    app = _stored_corels_set(tmp_path, [RULE_LIST, swapped])

    async def drive() -> None:
        async with app.run_test(size=(200, 40)) as pilot:
            screen = await open_stored_set(pilot, app)
            table = screen.query_one("#members", DataTable)
            rules = table.get_column_index("rules or features")
            shown = [str(table.get_row_at(i)[rules]) for i in range(table.row_count)]
            assert shown == [
                "sex:Male,juvenile-crimes:>0 -> Yes; priors:>3 -> Yes; else No",
                "priors:>3 -> Yes; sex:Male,juvenile-crimes:>0 -> Yes; else No",
            ]

    asyncio.run(drive())


def test_summary_only_members_say_why_they_have_no_model(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    spec = _set_spec(tmp_path, tiny_csv, batch=6, step=0.01)
    spec.write_text(spec.read_text().replace("threshold: 1.0", "threshold: 1.0\n  keep: summary"))
    launch = load_spec_or_error(str(spec), db=str(tmp_path / "runs.duckdb"))
    assert not isinstance(launch, tuple)
    launch.run([])
    app = GlassworkApp(db=str(tmp_path / "runs.duckdb"))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app)
            await pilot.press("e")
            await wait_for(pilot, lambda: any("kept as a summary" in n.message for n in app._notifications))
            assert not screen.written
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ModelScreen) and app.screen.is_mounted)
            assert "kept as a summary" in plain(app.screen.query_one("#model"))

    asyncio.run(drive())
