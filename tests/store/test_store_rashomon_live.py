"""A run stopped by a limit before it certified its optimum: its Rashomon set (the incumbent
alone, ``RashomonSet.unproven``) reaches the store while the run still goes, through the live
``rashomon`` event, for every solver, and names from the data stay data on the way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from glasswork import Problem
from glasswork.contract.solver import Limits, SolveContext
from glasswork.store import RunStore, StoreSink
from live_runs import corels_rashomon_spec, open_live_run

# quotes, a newline, an ANSI escape, Rich markup and SQL: names from a data file are data
HOSTILE = ['it\'s "q"', "line\nbreak", "\x1b[31mred\x1b[0m", "[bold]b[/bold]", "x'); DROP TABLE runs; --"]
NAMES = [f"{HOSTILE[j % len(HOSTILE)]} {j}" for j in range(12)]


def live_run(tmp_path: Path, run_id: str) -> tuple[RunStore, StoreSink]:
    """A run whose journal is open (its finish record not written yet), as the store reads it."""
    return open_live_run(tmp_path, run_id, n_features=len(NAMES))


def problem(X: np.ndarray, y: np.ndarray) -> Problem:
    return Problem(
        name="t",
        X=X,
        y=y,
        feature_names=NAMES[: X.shape[1]],
        task="binary",
        classes=np.array([0, 1], dtype=object),
    )


def assert_the_incumbent_is_stored(store: RunStore, run_id: str, rset) -> None:  # type: ignore[no-untyped-def]
    summary = store.rashomon_summary(run_id)
    assert summary is not None, "the stopped run's set reached the store only with its finish record"
    assert summary.count == rset.count == 1 and summary.complete is False
    assert summary.threshold == pytest.approx(rset.threshold)
    assert summary.unenumerated_bound == pytest.approx(rset.unenumerated_bound)
    rows = store.rashomon_members(run_id)
    incumbent = rset.members[0]
    assert [(r.rank, r.features, r.fingerprint) for r in rows] == [(1, incumbent.features, incumbent.fingerprint)]
    assert set(rows[0].features) <= set(NAMES) and rows[0].features  # the names as given, byte for byte
    assert store.get_run(run_id).state == "running"


def test_a_corels_search_stopped_by_a_limit_sends_its_unproven_set_live(tmp_path: Path) -> None:
    from glasswork.plugins.corels.solver import CorelsSolver

    rng = np.random.default_rng(0)
    X = (rng.random((400, 12)) < 0.4).astype(np.uint8)
    y = (rng.random(400) < 0.5).astype(np.int64)
    spec = corels_rashomon_spec(objective={"regularization": 0.001})
    store, sink = live_run(tmp_path, "corels-live")
    result = CorelsSolver(spec).solve(problem(X, y), SolveContext(Limits(nodes=500), sink.on_event))
    assert result.certificate.status.value == "stopped_nodes" and result.rashomon is not None
    assert_the_incumbent_is_stored(store, "corels-live", result.rashomon)
    sink.journal.close()


def test_a_fasterrisk_search_stopped_by_a_limit_sends_its_unproven_set_live(tmp_path: Path) -> None:
    from glasswork.plugins.fasterrisk.solver import FasterRiskSolver
    from glasswork.plugins.fasterrisk.spec import FasterRiskSpec

    rng = np.random.default_rng(42)
    X = rng.integers(0, 3, size=(24, len(HOSTILE))).astype(float)
    y = (rng.random(24) < 1 / (1 + np.exp(-(X[:, 0] - X[:, 2])))).astype(np.int64)
    spec = FasterRiskSpec.model_validate(
        {
            "name": "t",
            "solver": "fasterrisk",
            "store": {"enabled": False},
            "data": {"source": "in-memory", "target": "y"},
            "constraints": {"sparsity": 2, "coefficient_bounds": [-2, 2]},
            "search": {"policy": "exact"},
            "rashomon": {"epsilon": 0.05},
            "limits": {"nodes": 1},
        }
    )
    store, sink = live_run(tmp_path, "fr-live")
    result = FasterRiskSolver(spec).solve(problem(X, y), SolveContext(Limits(nodes=1), sink.on_event))
    assert result.certificate.status.value == "stopped_nodes" and result.rashomon is not None
    assert_the_incumbent_is_stored(store, "fr-live", result.rashomon)
    sink.journal.close()


def test_a_sweep_points_sets_are_kept_apart_from_the_runs_set(tmp_path: Path) -> None:
    """Events tagged with a point (a frontier's) are that point's set: listed per point, the last
    word per point kept, never merged into the run's set; a malformed one is skipped."""
    from glasswork.contract.events import Event
    from glasswork.rashomon import RashomonMember

    store, sink = live_run(tmp_path, "points")

    def send(point: object, count: int, complete: bool, bound: float | None = None) -> None:
        counters = {"rashomon_count": count, "rashomon_threshold": 2.0, "rashomon_point": point}
        counters["rashomon_complete"] = complete
        sink.on_event(Event("rashomon", 0.1, lower_bound=bound, counters=counters))

    send(1, 3, True)
    send(2, 40, False, 1.5)
    send("2; DROP TABLE runs", 9, True)  # not a point number
    send(True, 9, True)
    assert store.rashomon_summary("points") is None  # no set of the run's own yet
    assert [p.to_dict() for p in store.rashomon_points("points")] == [
        {"point": 1, "count": 3, "complete": True, "threshold": 2.0, "unenumerated_bound": None, "shared": False},
        {"point": 2, "count": 40, "complete": False, "threshold": 2.0, "unenumerated_bound": 1.5, "shared": False},
    ]
    member = RashomonMember(1.2, (NAMES[3],), "f" * 16)
    sink.on_event(Event("rashomon", 0.2, counters={"rashomon_count": 3, "rashomon_threshold": 1.3}, members=(member,)))
    summary = store.rashomon_summary("points")
    assert summary is not None and summary.count == 3 and summary.threshold == 1.3  # the run's alone
    assert [r.features for r in store.rashomon_members("points")] == [(NAMES[3],)]
    sink.journal.close()


def test_a_killed_runs_bound_is_the_searchs_not_a_sets(tmp_path: Path) -> None:
    """A run killed while it enumerates keeps its search's last objective and bound; a set's
    bound (on what it did not enumerate, above the optimum) is neither, in the store or the card."""
    from glasswork.contract.events import Event
    from glasswork.display.report import bound_trajectory

    store, sink = live_run(tmp_path, "killed")
    sink.on_event(Event("progress", 0.1, objective=10.0, lower_bound=8.0))
    set_event = {"rashomon_count": 4, "rashomon_threshold": 12.0, "rashomon_point": 1, "rashomon_complete": False}
    sink.on_event(Event("rashomon", 0.2, lower_bound=11.5, counters=set_event))
    sink.on_event(Event("rashomon", 0.3, lower_bound=11.0, counters={"rashomon_count": 2}))
    sink.journal.close()  # the process is gone: no finish record
    store = RunStore(store.path).open()  # the next reader folds the ended journal
    run = store.get_run("killed")
    assert run.state == "failed" and (run.objective, run.lower_bound) == (10.0, 8.0)
    chart = bound_trajectory(store.events("killed"), store.details("killed"))
    assert chart is not None and "11.5" not in chart and "11.0" not in chart


def test_a_certified_runs_live_set_has_its_epsilon_and_optimum_while_it_grows(tmp_path: Path) -> None:
    """The optimum is certified before the first member is enumerated: from the first event of
    the set, a second reader of the store (``glasswork rashomon RUN``, the TUI) sees the
    threshold, epsilon and optimum, not nulls until the finish record."""
    from glasswork.plugins.corels.solver import CorelsSolver

    rng = np.random.default_rng(1)
    X = (rng.random((200, 6)) < 0.4).astype(np.uint8)
    y = ((X[:, 0] | X[:, 3]) ^ (rng.random(200) < 0.1)).astype(np.int64)
    store, sink = live_run(tmp_path, "certified-live")
    seen: list[Any] = []

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        sink.on_event(event)
        if event.kind == "rashomon" and not seen:  # what a second terminal reads after the first event
            seen.append(store.rashomon_summary("certified-live"))

    result = CorelsSolver(corels_rashomon_spec()).solve(problem(X, y), SolveContext(Limits(), on_event))
    assert result.certificate.status.value == "optimal" and result.rashomon is not None
    optimum = result.certificate.objective
    for summary in (seen[0], store.rashomon_summary("certified-live")):
        assert summary.epsilon == pytest.approx(0.1)
        assert summary.optimum == pytest.approx(optimum)
        assert summary.threshold == pytest.approx(1.1 * optimum)
        assert summary.optimum_proven is True and summary.complete is False  # not complete until the end
    assert store.get_run("certified-live").state == "running"
    sink.journal.close()


def test_a_run_stopped_before_its_proof_keeps_optimum_proven_false_live(tmp_path: Path) -> None:
    from glasswork.plugins.corels.solver import CorelsSolver

    rng = np.random.default_rng(0)
    X = (rng.random((400, 12)) < 0.4).astype(np.uint8)
    y = (rng.random(400) < 0.5).astype(np.int64)
    store, sink = live_run(tmp_path, "unproven-live")
    spec = corels_rashomon_spec(objective={"regularization": 0.001})
    result = CorelsSolver(spec).solve(problem(X, y), SolveContext(Limits(nodes=500), sink.on_event))
    assert result.certificate.status.value == "stopped_nodes" and result.rashomon is not None
    summary = store.rashomon_summary("unproven-live")
    assert summary is not None and summary.optimum_proven is False
    assert summary.optimum == pytest.approx(result.rashomon.optimum)  # the incumbent's, not certified
    assert summary.epsilon == pytest.approx(0.1)
    sink.journal.close()
