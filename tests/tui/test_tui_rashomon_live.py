"""The monitor following a run stopped by a limit before its proof, whose finish record is not
written yet: the set its solver sent live (the incumbent alone) is shown, enumerating, with
hostile feature names inert."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
from glasswork import Problem
from glasswork.contract.solver import Limits, SolveContext
from glasswork.display.console import member_rules
from glasswork.quoting import terminal_text
from glasswork.tui.app import GlassworkApp
from glasswork.tui.monitor import MonitorScreen
from glasswork.tui.sources import FollowedRun
from live_runs import corels_rashomon_spec, open_live_run
from tui_fixtures import plain, wait_for

# every name markup, escapes, a newline and quotes: whichever the incumbent uses is hostile
NAMES = [f"[bold red]f{j}[/] \x1b[31mevil\x1b]0;title\x07 a\nb 'q\"" for j in range(12)]


def test_the_monitor_shows_a_stopped_corels_runs_set_before_its_finish_record(tmp_path: Path) -> None:
    from glasswork.plugins.corels.solver import CorelsSolver

    store, sink = open_live_run(tmp_path, "stopped-live", solver="corels", n_features=len(NAMES), n_train=400)
    rng = np.random.default_rng(0)
    X = (rng.random((400, len(NAMES))) < 0.4).astype(np.uint8)
    y = (rng.random(400) < 0.5).astype(np.int64)
    problem = Problem(name="t", X=X, y=y, feature_names=NAMES, task="binary", classes=np.array([0, 1], dtype=object))
    spec = corels_rashomon_spec(objective={"regularization": 0.001})
    result = CorelsSolver(spec).solve(problem, SolveContext(Limits(nodes=500), sink.on_event))
    assert result.certificate.status.value == "stopped_nodes" and result.rashomon is not None
    app = GlassworkApp(source=FollowedRun(store, "stopped-live"))

    async def drive() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen
            assert isinstance(screen, MonitorScreen)
            await wait_for(pilot, lambda: screen.state.rashomon is not None and screen.state.rashomon.summary.count)
            await pilot.pause(0.3)
            assert not screen.state.finished
            summary = plain(screen.query_one("#rashomon-summary"))
            assert "Rashomon set  1 model" in summary and "enumerating" in summary
            table = screen.query_one("#rashomon-members")
            assert table.row_count == 1
            shown = str(table.get_cell_at((0, 2)))
            rules = member_rules(result.rashomon.members[0].to_dict()["model"])  # in order, as the CLI lists them
            assert rules and shown == terminal_text("; ".join(rules)) and "[bold red]f" in shown  # names as data
            assert not {"\x1b", "\x07", "\n"} & set(shown) and "\x1b" not in summary
            await pilot.press("q")

    asyncio.run(drive())
    sink.journal.close()


def test_a_frontier_points_sets_are_folded_apart_from_the_runs_set() -> None:
    from glasswork.tui.state import RunState

    state = RunState()
    for point, count, complete in ((1, 3, True), (2, 40, False)):
        counters = {"rashomon_count": count, "rashomon_threshold": 2.0, "rashomon_point": point}
        state.feed({"kind": "rashomon", "elapsed": 0.1, "counters": {**counters, "rashomon_complete": complete}})
    assert state.rashomon is None  # a point's set is not the run's: no count of 40 for it
    assert {k: (p.count, p.complete) for k, p in state.rashomon_points.items()} == {1: (3, True), 2: (40, False)}
    state.feed({"kind": "rashomon", "elapsed": 0.2, "counters": {"rashomon_count": 3, "rashomon_threshold": 1.3}})
    assert state.rashomon is not None and state.rashomon.summary.count == 3 and state.rashomon.summary.threshold == 1.3


def test_the_monitor_folds_both_record_forms_of_a_sets_events_alike() -> None:
    """A followed journal of the previous version (form 1: the set's figures among the counters)
    and one of this version (form 2: ``rashomon``) give the monitor the same set and points."""
    from glasswork.contract.solver import SolveContext
    from glasswork.rashomon import RashomonMember
    from glasswork.tui.state import RunState

    events: list = []
    ctx = SolveContext(emit=events.append)
    ctx.rashomon(3, point=1, threshold=2.0, complete=True)
    ctx.rashomon(40, point=2, threshold=2.0, complete=False, lower_bound=1.5)
    ctx.rashomon_basis(1.2, proven=False, epsilon=0.1)
    ctx.rashomon(2, (RashomonMember(1.2, ("a",), "f"), RashomonMember(1.25, ("b",), "g")), threshold=1.32)
    typed = [e.to_dict() for e in events]
    old = [
        {
            **{k: v for k, v in r.items() if k != "rashomon"},
            "counters": {f"rashomon_{k}": v for k, v in r["rashomon"].items()},
        }
        for r in typed
    ]
    states = []
    for records in (typed, old):
        state = RunState()
        for record in records:
            state.feed(record)
        states.append(state)
    new, before = states
    assert new.rashomon_points == before.rashomon_points and len(new.rashomon_points) == 2
    assert new.rashomon is not None and before.rashomon is not None
    assert (new.rashomon.summary.count, new.rashomon.summary.threshold, len(new.rashomon.members)) == (2, 1.32, 2)
    assert new.rashomon == before.rashomon


MOSS_SPEC = """\
name: moss-frontier-live
solver: moss
data: {source: sklearn:diabetes, split: {kind: holdout, test_size: 0.25, seed: 0}}
objective:
  gamma: 0.001
  candidates: {trees: 40, depth: 2, seed: 0, max_candidates: 12}
constraints: {max_rules: 3, frontier: {points: 4}}
rashomon: {epsilon: 0.04}
limits: {nodes: 8}
"""


def test_the_monitor_shows_each_frontier_points_set(tmp_path: Path) -> None:
    from glasswork.tui.sources import OwnedRun, load_spec_or_error

    spec = tmp_path / "frontier.yaml"
    spec.write_text(MOSS_SPEC)
    app = GlassworkApp(source=OwnedRun(load_spec_or_error(str(spec), no_store=True)))

    async def drive() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.state.finished, timeout=60)
            await pilot.pause(0.3)
            points = screen.state.rashomon_points
            summary = plain(screen.query_one("#rashomon-summary"))
            shown = ", ".join(f"{k}: {p.count}{'' if p.complete else '+'}" for k, p in sorted(points.items()))
            assert len(points) >= 2 and f"sets per frontier point  {shown}" in summary and "+" in shown
            run_set = screen.state.rashomon
            assert run_set is not None and f"Rashomon set  {run_set.summary.count:,} model" in summary
            await pilot.press("q")

    asyncio.run(drive())
