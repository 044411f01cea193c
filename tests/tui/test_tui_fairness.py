"""The run screen shows a run's fairness audit in its summary, group names as data."""

from __future__ import annotations

import asyncio
from pathlib import Path

from glasswork.hooks.registry import Registry
from glasswork.running.launch import Launch
from glasswork.tui.app import GlassworkApp
from glasswork.tui.history import HistoryScreen
from glasswork.tui.run_screen import RunScreen
from textual.widgets import Static
from tui_fixtures import plain, wait_for

GROUP = "[bold red]boom[/]"


def test_the_run_screen_shows_the_audit(tmp_path: Path) -> None:
    lines = ["a,g,y"] + [f"{i % 2},{GROUP if i % 3 else 'other'},{(i % 2) ^ (i % 7 == 0)}" for i in range(60)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.yaml").write_text(
        "name: audited\nsolver: corels\ndata: {source: d.csv, target: y, audit_only: [g]}\n"
        f"objective: {{regularization: 0.01}}\nfairness: {{protected: {{column: g, value: '{GROUP}'}}}}\n"
    )
    db = tmp_path / "glasswork.duckdb"
    outcome = Launch.from_file(tmp_path / "s.yaml", db=db, registry=Registry(entry_points=False, disabled=())).run()
    parity = outcome.to_dict()["fairness"]["train"]["statistical_parity"]
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=(160, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, HistoryScreen)
            await app.workers.wait_for_complete()
            await wait_for(pilot, lambda: screen.rows)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
            text = plain(app.screen.query_one("#summary", Static), width=400)
            words = " ".join(text.split())
            assert f"fairness g = {GROUP} against the rest (train / test): statistical_parity " in words
            assert f"{parity:.4f}" in text

    asyncio.run(drive())
