"""The stored set's screen says which member each member decides as, and lists one member per
decision (``d``), exactly as ``glasswork rashomon`` does for the same store: checked through
Textual's pilot against the command's ``--json`` (``decides_as``) and its ``--distinct`` listing,
after a filter and a sort, on a real CORELS set of 50 rule lists making 5 distinct decisions."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from click.testing import CliRunner
from loans_table import loans_spec
from test_tui_rashomon_filters import column, ranks, submit
from textual.widgets import DataTable
from tui_fixtures import open_stored_set, plain, wait_for

from glasswork.cli import cli
from glasswork.tui.app import GlassworkApp
from glasswork.tui.widgets import HelpScreen

SIZE = (200, 60)
WHERE = "test_auc < 0.93"  # leaves out the best member, which members listed decide as


@pytest.fixture(scope="module")
def set_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run store holding one CORELS set over the loans table (rule lists reordered, or with a
    rule no row reaches, decide alike), built once for the module."""
    folder = tmp_path_factory.mktemp("decisions")
    spec = loans_spec(folder, "corels", "rashomon: {epsilon: 0.01}\n", binarize=True)
    db = folder / "runs.duckdb"
    result = CliRunner().invoke(cli, ["run", "--json", str(spec), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db, str(json.loads(result.stdout)["run_id"])


SORTED = ("--where", WHERE, "--sort", "test_auc", "--desc")
LISTINGS = {
    "every": (),
    "distinct": ("--distinct",),
    "filtered": ("--where", WHERE),
    "sorted": SORTED,
    "sorted distinct": (*SORTED, "--distinct"),
}


@pytest.fixture(scope="module")
def by_cli(set_store: tuple[Path, str]) -> dict[str, list[dict[str, Any]]]:
    """The members ``glasswork rashomon RUN --json`` lists with each of ``LISTINGS``' options
    (read once for the module: each call costs a third of a second)."""
    db, run_id = set_store
    listed = {}
    for name, options in LISTINGS.items():
        args = ["rashomon", run_id, "--db", str(db), "--json", "--limit", "1000", *options]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        listed[name] = list(json.loads(result.stdout)["models"])
    return listed


def words(member: dict[str, Any]) -> str:
    """The CLI's ``decides_as`` in the words of its table: ``itself`` or ``member K``."""
    like = member["decides_as"]
    assert like is not None
    return "itself" if like == member["rank"] else f"member {like}"


def browse(db: Path, steps: Callable[[Any, Any, Any], Awaitable[None]]) -> None:
    """Open the stored set's screen on ``db`` as a user does, run ``steps(pilot, app, screen)``, close."""
    app = GlassworkApp(db=str(db))

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_stored_set(pilot, app)
            await steps(pilot, app, screen)
            await pilot.press("q")

    asyncio.run(drive())


async def click_header(pilot: Any, screen: Any, name: str) -> None:
    """Click the members table's header of column ``name`` (sorts on it; again: reversed)."""
    table = screen.query_one("#members", DataTable)
    at = table.get_column_index(name)
    x = sum(c.get_render_width(table) for c in table.ordered_columns[:at]) + 2
    await pilot.click("#members", offset=(x, 0))


def test_decides_as_is_the_clis_over_every_kept_member_even_filtered_out(
    set_store: tuple[Path, str], by_cli: dict[str, list[dict[str, Any]]]
) -> None:
    every, filtered = by_cli["every"], by_cli["filtered"]
    assert len({m["decides_as"] for m in every}) < len(every)  # some members decide alike
    assert 0 < len(filtered) < len(every)
    # a listed member may decide as one the filter leaves out: read over every kept member
    assert {m["decides_as"] for m in filtered} - {m["rank"] for m in filtered}

    async def steps(pilot: Any, app: Any, screen: Any) -> None:
        assert ranks(screen) == [m["rank"] for m in every]
        assert column(screen, "decides as") == [words(m) for m in every]
        assert "member " in " ".join(column(screen, "decides as"))
        kept, distinct = len(every), len({m["decides_as"] for m in every})
        status = plain(screen.query_one("#set-status"))
        assert f"the {kept} kept member(s) decide the training rows in {distinct} distinct way(s)" in status
        await submit(pilot, screen, WHERE)
        await wait_for(pilot, lambda: ranks(screen) == [m["rank"] for m in filtered])
        assert column(screen, "decides as") == [words(m) for m in filtered]

    browse(set_store[0], steps)


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_d_lists_the_best_member_of_each_decision_as_distinct_does(
    set_store: tuple[Path, str], by_cli: dict[str, list[dict[str, Any]]]
) -> None:
    every, distinct = by_cli["every"], by_cli["distinct"]
    assert len(distinct) < len(every)

    async def steps(pilot: Any, app: Any, screen: Any) -> None:
        status = screen.query_one("#set-status")
        await pilot.press("end")  # on a member that one per decision leaves out
        await pilot.press("d")
        assert ranks(screen) == [m["rank"] for m in distinct]
        assert column(screen, "decides as") == ["itself"] * len(distinct)  # the best of each decision
        assert f"{len(distinct)} member(s) listed, one per distinct decision" in plain(status)
        assert screen.query_one("#members", DataTable).cursor_row == 0
        await pilot.press("d")  # every member again
        assert ranks(screen) == [m["rank"] for m in every]
        assert "one per distinct decision" not in plain(status)

        shown = {b.binding.key: b.binding for b in screen.active_bindings.values()}
        assert shown["d"].show and shown["d"].description == "one per decision"  # in the footer
        await pilot.press("question_mark")  # and in the help
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen.is_mounted)
        assert "one per decision" in plain(app.screen.query_one("#help-body"))
        await pilot.press("escape")

    browse(set_store[0], steps)


def test_d_keeps_the_first_of_each_decision_after_the_filter_and_sort_as_distinct_does(
    set_store: tuple[Path, str], by_cli: dict[str, list[dict[str, Any]]]
) -> None:
    every, matched, chosen = by_cli["every"], by_cli["sorted"], by_cli["sorted distinct"]
    assert len(chosen) < len(matched)
    # the sort changes which member stands for a decision, so the order is checked, not only the set
    assert [m["rank"] for m in chosen] != sorted(m["rank"] for m in chosen)
    assert any(words(m) != "itself" for m in chosen)

    async def steps(pilot: Any, app: Any, screen: Any) -> None:
        await pilot.press("d")
        await submit(pilot, screen, WHERE)  # still one per decision, of the members the filter keeps
        await wait_for(pilot, lambda: screen.where == WHERE)
        await click_header(pilot, screen, "test_auc")  # twice: largest first
        await click_header(pilot, screen, "test_auc")
        await wait_for(pilot, lambda: screen.sort == ("test_auc", True))
        assert ranks(screen) == [m["rank"] for m in chosen]
        assert column(screen, "decides as") == [words(m) for m in chosen]
        shown = plain(screen.query_one("#set-status"))
        assert f"{len(chosen)} member(s) listed, one per distinct decision" in shown
        assert f"{len(matched)} of {len(every)} kept match" in shown
        await pilot.press("d")
        assert ranks(screen) == [m["rank"] for m in matched]

    browse(set_store[0], steps)


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_decides_as_sorts_the_members_deciding_alike_together(
    set_store: tuple[Path, str], by_cli: dict[str, list[dict[str, Any]]]
) -> None:
    every = by_cli["every"]

    async def steps(pilot: Any, app: Any, screen: Any) -> None:
        await click_header(pilot, screen, "decides as")
        await wait_for(pilot, lambda: screen.sort == ("decides as", False))
        assert ranks(screen) == [m["rank"] for m in sorted(every, key=lambda m: (m["decides_as"], m["rank"]))]
        await pilot.press("d")  # the first of each decision in this order: its best member
        assert ranks(screen) == sorted({m["decides_as"] for m in every})
        while screen.sort[0] != "decides as":  # s reaches the column too
            await pilot.press("s")

    browse(set_store[0], steps)


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_a_set_recorded_without_fingerprints_says_its_decisions_are_not_known(
    set_store: tuple[Path, str], by_cli: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    import duckdb

    db = tmp_path / "old.duckdb"
    shutil.copy(set_store[0], db)
    with duckdb.connect(str(db)) as con:  # as a set stored before members had fingerprints
        con.execute("UPDATE rashomon_members SET fingerprint = NULL")
    every = by_cli["every"]

    async def steps(pilot: Any, app: Any, screen: Any) -> None:
        assert column(screen, "decides as") == ["-"] * len(every)
        assert "decides as is not recorded for this set" in plain(screen.query_one("#set-status"))
        await pilot.press("d")  # each member stands for itself: every member still listed
        assert ranks(screen) == [m["rank"] for m in every]

    browse(db, steps)
