"""The stored set's screen in the terminal UI, through Textual's pilot: each member's figures as
columns (``n/a`` for members kept as summaries), and the range of each audited fairness metric
over the set with what it covers; a hostile protected value stays inert."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import DataTable
from tui_fixtures import open_stored_set, plain

from glasswork.running.launch import Launch
from glasswork.store import RunStore
from glasswork.tui.app import GlassworkApp

SIZE = (200, 60)


def stored_set(folder: Path, keep: str) -> tuple[Path, str]:
    """A toy run's set, recorded in ``folder/runs.duckdb``, over a table with a protected group
    whose value is markup and terminal escapes."""
    rng = np.random.default_rng(1)
    rows = ["a,b,c,group,label"]
    for _ in range(120):
        a, b, c = rng.integers(0, 2, 3)
        label = a if rng.random() > 0.15 else 1 - a
        rows.append(f"{a},{b},{c},{'[red]x' if rng.random() < 0.4 else 'y'},{label}")
    (folder / "t.csv").write_text("\n".join(rows) + "\n")
    spec = folder / "s.yaml"
    spec.write_text(
        "name: figures\nsolver: toy\n"
        "data: {source: t.csv, target: label, positive: 1, audit_only: [group], "
        "split: {kind: holdout, test_size: 0.3, seed: 0}}\n"
        "fairness: {protected: {column: group, value: '[red]x'}, metrics: [statistical_parity]}\n"
        f"rashomon: {{epsilon: 10, keep: {keep}}}\n"
    )
    db = folder / "runs.duckdb"
    outcome = Launch.from_file(spec, db=db).run()
    return db, outcome.info.run_id


@pytest.mark.parametrize("keep", ["model", "summary"])
def test_the_stored_set_lists_its_members_figures_and_the_fairness_range(
    toy_env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str
) -> None:
    monkeypatch.chdir(tmp_path)
    db, run_id = stored_set(tmp_path, keep)
    stored = RunStore(db).rashomon_members(run_id)
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app)
            table = screen.query_one("#members", DataTable)
            labels = [str(key.value) for key in table.columns]
            summary = plain(screen.query_one("#set-summary"))
            if keep == "model":
                assert labels[:3] == ["rank", "objective", "decides as"]
                assert labels[3:6] == ["test_accuracy", "test_auc", "statistical_parity"]
                for row, member in enumerate(stored):
                    assert str(table.get_cell_at((row, 3))) == f"{member.metrics['test_accuracy']:.4f}"
                    assert str(table.get_cell_at((row, 5))) == f"{member.fairness['train']['statistical_parity']:.4f}"
                assert f"exact over all {len(stored):,} members of the complete set" in summary
                assert "statistical_parity: train " in summary
            else:  # no model, so no figures: said, never made up
                assert labels == ["rank", "objective", "decides as", "size", "n_features", "rules or features"]
                assert {str(table.get_cell_at((row, 3))) for row in range(table.row_count)} == {"n/a"}
                assert f"covers 0 of {len(stored):,} members, not exact" in summary
            assert "\x1b" not in summary
            await pilot.press("q")

    asyncio.run(drive())
