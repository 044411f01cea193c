"""The live monitor driven by a pilot: a real run launched in the app, live updates, cancelling,
readable failures, and following a run that another process owns."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from glasswork.tui.app import GlassworkApp
from glasswork.tui.monitor import MonitorScreen
from glasswork.tui.sources import FollowedRun, OwnedRun, load_spec_or_error
from glasswork.tui.widgets import HelpScreen
from tui_fixtures import error_shown, plain, toy_spec, wait_for

SIZE = (120, 40)


def text_of(app: GlassworkApp, selector: str) -> str:
    return plain(app.screen.query_one(selector))


def test_launch_live_updates_and_cancel(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    launch = load_spec_or_error(str(toy_spec(tmp_path, tiny_csv)), db=str(db))
    app = GlassworkApp(source=OwnedRun(launch))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, MonitorScreen)
            await wait_for(pilot, lambda: (screen.state.nodes or 0) > 3)
            first = screen.state.nodes
            await wait_for(pilot, lambda: screen.state.nodes > first + 3)  # updates keep arriving
            assert "running" in text_of(app, "#header") and "toy" in text_of(app, "#header")
            assert "nodes" in text_of(app, "#counters") and "queue" in text_of(app, "#counters")
            assert "if a then" in text_of(app, "#model")  # the incumbent stump
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            help_text = text_of(app, "#help-body")
            assert "cancel run" in help_text and "full model" in help_text
            await pilot.press("escape")
            await pilot.press("ctrl+c")  # what a terminal user presses first; c does the same
            await wait_for(pilot, lambda: screen.state.finished)
            assert screen.state.status == "cancelled"
            assert "cancelled" in text_of(app, "#header")
            await pilot.press("m")
            assert "if a then" in text_of(app, "#model")
            await pilot.press("escape")
            await pilot.press("q")

    asyncio.run(drive())
    assert app.return_code == 130  # a cancelled run exits as Ctrl-C in `glasswork run` does
    [row] = RunStore(db).list_runs()
    assert row.state == "cancelled" and row.solver == "toy"
    assert not RunStore(db).log_path(row.run_id).exists()


def test_quit_while_running_cancels_first(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    app = GlassworkApp(source=OwnedRun(load_spec_or_error(str(toy_spec(tmp_path, tiny_csv)), db=str(db))))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: (app.screen.state.nodes or 0) > 2)
            await pilot.press("q")
            deadline = time.monotonic() + 20
            while app.is_running and app.return_code is None:  # the app leaves once the run stopped
                assert time.monotonic() < deadline, "the app did not exit"
                await asyncio.sleep(0.05)

    asyncio.run(drive())
    assert [r.state for r in RunStore(db).list_runs()] == ["cancelled"]
    assert app.return_code == 130


def test_cancel_then_quit_exits_130_as_ctrl_c_in_run_does(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.duckdb"
    app = GlassworkApp(source=OwnedRun(load_spec_or_error(str(toy_spec(tmp_path, tiny_csv)), db=str(db))))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: (screen.state.nodes or 0) > 2)
            await pilot.press("c")
            await wait_for(pilot, lambda: screen.state.finished)
            assert screen.state.status == "cancelled"
            await pilot.press("q")

    asyncio.run(drive())
    assert app.return_code == 130
    finished = GlassworkApp(source=OwnedRun(load_spec_or_error(str(toy_spec(tmp_path, tiny_csv, "exact")), db=str(db))))

    async def drive_to_the_end() -> None:
        async with finished.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: finished.screen.state.finished)
            await pilot.press("q")

    asyncio.run(drive_to_the_end())
    assert finished.return_code == 0  # a run nobody stopped exits 0


@pytest.mark.parametrize(
    "behaviour, title, phrase, code",
    [
        ("raise", "The run failed", "toy solver asked to fail", 1),
        ("exact", "Bad data", "data error", 2),
    ],
)
def test_failures_are_readable_messages(
    toy_env, tiny_csv: Path, tmp_path: Path, behaviour: str, title: str, phrase: str, code: int
) -> None:
    spec = toy_spec(tmp_path, tiny_csv, behaviour)
    if title == "Bad data":
        spec.write_text(spec.read_text().replace("target: label", "target: no_such_column"))
    app = GlassworkApp(source=OwnedRun(load_spec_or_error(str(spec), no_store=True)))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: error_shown(app))
            assert text_of(app, "#error-title") == title
            message = text_of(app, "#error-message")
            assert phrase in message and "Traceback" not in message
            await pilot.press("escape")
            assert "failed" in text_of(app, "#header")
            await pilot.press("q")

    asyncio.run(drive())
    assert app.return_code == code
    summary = _summary_text(app)  # printed once the terminal is back: what failed, and what was kept
    assert "failed" in summary and phrase in summary
    assert ("Nothing was run" in summary) == (title == "Bad data")


def test_a_store_held_by_another_program_does_not_stop_a_run(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    """Issue 23: a run is never refused by a busy store; the monitor runs it and says where it
    is kept until the store is free."""
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    RunStore(db).open()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ("import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('ok', flush=True); time.sleep(30)"),
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        source = OwnedRun(load_spec_or_error(str(toy_spec(tmp_path, tiny_csv, behaviour="exact")), db=str(db)))
        app = GlassworkApp(source=source)

        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                screen = app.screen
                await wait_for(pilot, lambda: screen.state.finished and source.done)
                await pilot.pause(0.3)
                assert not error_shown(app)
                await pilot.press("q")

        asyncio.run(drive())
        assert app.return_code == 0 and source.exit_code == 0
        assert any(
            f"locked by process {holder.pid}" in w and "kept in its journal" in w for w in source.launch.warnings
        )
    finally:
        holder.kill()
        holder.wait()
    [row] = RunStore(db).list_runs()  # the holder is gone: the journal is folded
    assert row.state == "finished"


def _start_owner(tmp_path: Path, spec: Path, db: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "glasswork", "run", str(spec), "--db", str(db), "-q"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_log(db: Path, proc: subprocess.Popen, timeout: float = 20.0) -> str:
    events = db.with_name(db.name + ".events")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = list(events.glob("*.jsonl")) if events.is_dir() else []
        if logs and logs[0].stat().st_size > 0:
            return logs[0].stem
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    raise AssertionError("the owner process never started its run")


def test_attach_follows_another_process_and_cancels_it(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    proc = _start_owner(tmp_path, toy_spec(tmp_path, tiny_csv), db, toy_env)
    try:
        run_id = _wait_for_log(db, proc)
        store = RunStore(db)
        app = GlassworkApp(source=FollowedRun(store, run_id))

        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                screen = app.screen
                await wait_for(pilot, lambda: (screen.state.nodes or 0) > 3, timeout=20)
                first = screen.state.nodes
                await wait_for(pilot, lambda: screen.state.nodes > first, timeout=20)
                assert screen.state.run_id == run_id and "following another process" in text_of(app, "#header")
                await pilot.press("c")  # asks the owner to stop, as Ctrl-C would
                await wait_for(pilot, lambda: screen.state.finished, timeout=30)
                assert screen.state.status == "cancelled"
                assert screen.source.follower.vanished or screen.source.follower.finished
                await pilot.press("q")

        asyncio.run(drive())
        assert proc.wait(timeout=30) == 130  # the owner reports an interrupted run
        assert app.return_code == 130  # and so does the monitor that cancelled it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    [row] = RunStore(db).list_runs()
    assert row.state == "cancelled"


@pytest.mark.slow
def test_attach_after_the_log_is_gone_reads_duckdb(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    """A follower that starts mid-run and sees the log vanish finishes from the store."""
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    spec = toy_spec(tmp_path, tiny_csv, extra="limits:\n  time: 1.5\n")
    proc = _start_owner(tmp_path, spec, db, toy_env)
    try:
        run_id = _wait_for_log(db, proc)
        app = GlassworkApp(source=FollowedRun(RunStore(db), run_id))

        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                screen = app.screen
                await wait_for(pilot, lambda: screen.state.finished, timeout=30)
                assert screen.state.status == "stopped_time"
                assert screen.state.model_text and "if a then" in screen.state.model_text
                assert len(screen.state.objective) > 3

        asyncio.run(drive())
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # and once it is over, following it shows the stored run at once
    app = GlassworkApp(source=FollowedRun(RunStore(db), run_id))

    async def again() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.screen.state.finished)
            assert app.screen.state.status == "stopped_time" and len(app.screen.state.objective) > 3

    asyncio.run(again())


@pytest.mark.slow
def test_attach_to_a_run_whose_process_dies(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    """kill -9 of the owner: the follower notices, and the store's recovery marks the run failed."""
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    proc = _start_owner(tmp_path, toy_spec(tmp_path, tiny_csv), db, toy_env)
    try:
        run_id = _wait_for_log(db, proc)
        app = GlassworkApp(source=FollowedRun(RunStore(db), run_id))

        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                screen = app.screen
                await wait_for(pilot, lambda: (screen.state.nodes or 0) > 3, timeout=20)
                proc.kill()
                proc.wait()
                await wait_for(pilot, lambda: screen.state.finished, timeout=20)
                assert screen.state.status == "failed" and "killed or crashed" in screen.state.error
                assert "failed" in text_of(app, "#header")

        asyncio.run(drive())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert RunStore(db).list_runs()[0].state == "failed"


def _summary_text(app: GlassworkApp) -> str:
    from rich.console import Console

    console = Console(width=160, record=True, file=open("/dev/null", "w"))
    console.print(app.exit_summary)
    return console.export_text()


def test_an_ended_run_is_not_offered_for_cancelling_and_is_printed_at_exit(
    toy_env, tiny_csv: Path, tmp_path: Path
) -> None:
    """Issue 25: after the run ended the footer still offered "c cancel run", and after q the
    monitor printed nothing (no run id, status or model, unlike `glasswork run`)."""
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    source = OwnedRun(load_spec_or_error(str(toy_spec(tmp_path, tiny_csv, behaviour="exact")), db=str(db)))
    app = GlassworkApp(source=source)

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert "cancel run" in [b.binding.description for b in app.active_bindings.values()] or source.done
            await wait_for(pilot, lambda: screen.state.finished and source.done)
            await pilot.pause(0.3)
            shown = [b.binding.description for b in app.active_bindings.values()]
            assert "cancel run" not in shown and "close" in shown
            await pilot.press("q")

    asyncio.run(drive())
    [row] = RunStore(db).list_runs()
    text = _summary_text(app)
    assert row.run_id in text and "optimal" in text and "toy run" in text
    assert "if a then" in text  # the model, as `run` prints it
    assert "objective" in text and "lower bound" in text and "gap" in text
    assert f"recorded in {db}" in text


def test_quitting_a_running_run_says_what_became_of_it(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    app = GlassworkApp(source=OwnedRun(load_spec_or_error(str(toy_spec(tmp_path, tiny_csv)), db=str(db))))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: (app.screen.state.nodes or 0) > 2)
            await pilot.press("q")
            deadline = time.monotonic() + 20
            while app.is_running and app.return_code is None:
                assert time.monotonic() < deadline, "the app did not exit"
                await asyncio.sleep(0.05)

    asyncio.run(drive())
    [row] = RunStore(db).list_runs()
    text = _summary_text(app)
    assert row.run_id in text and "cancelled" in text
    assert f"was cancelled; its best model (above) is recorded in {db}" in text.replace("\n", " ")
