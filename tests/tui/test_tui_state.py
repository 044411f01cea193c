"""RunState, the events-file follower and the model views, without a terminal."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from rich.console import Console

from tui_fixtures import (
    FAILED_ID,
    FRONTIER,
    MOSS_ID,
    RULE_LIST,
    RULE_SET,
    SCORE_CARD,
    corels_records,
    fasterrisk_records,
    history_db,  # noqa: F401  (a pytest fixture)
    moss_records,
    utc,  # noqa: F401  (a pytest fixture)
)  # noqa: F401  (pytest fixtures)

from glasswork.record import event_of_stored as event_record
from glasswork.tui.state import LogFollower, RunState
from glasswork.tui.views import fmt, fmt_rate, model_view


def render(renderable) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_textual_stays_out_of_the_core() -> None:
    import subprocess

    code = (
        "import sys, glasswork, glasswork.cli, glasswork.runner, glasswork.store; "
        "print(any(m == 'textual' or m.startswith('textual.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_state_folds_a_corels_run() -> None:
    state = RunState()
    state.feed(corels_records())
    assert state.solver == "corels" and state.name == "compas rule list"
    assert state.status == "running" and not state.finished
    assert len(state.objective) == 12 and len(state.lower_bound) == 12
    assert state.best_objective == state.objective.ys[-1]
    assert state.gap is not None and state.gap < state.first_gap
    assert 0 < state.gap_closed <= 1
    assert state.model == RULE_LIST
    panels = {p.title: p for p in state.panels}  # from the corels plugin's monitor_panels hook
    assert panels["queue by prefix length"].values["3"] == 200 + 30 * 11
    assert len(panels["log10 remaining space"].series) == 12
    assert state.rates["nodes"] > 0 and state.rates["queue"] == 80.0  # 40 per 0.5 s
    assert state.messages[0][2].startswith("corels:")


def test_state_finish_and_failure() -> None:
    state = RunState()
    state.feed(corels_records(finished=True))
    assert state.finished and state.status == "optimal" and state.gap == 0.0
    assert state.best_lower_bound == 0.34 and state.gap_closed == 1.0
    failed = RunState()
    failed.feed(
        [
            {"kind": "start", "run_id": "x", "name": "n", "solver": "toy"},
            {"kind": "finish", "run_id": "x", "result": None, "error": "RuntimeError: boom"},
        ]
    )
    assert failed.status == "failed" and failed.error == "RuntimeError: boom"


def test_state_solver_panels() -> None:
    fr = RunState()
    fr.feed(fasterrisk_records())
    [by_size] = fr.panels
    assert by_size.bars() == (["0", "1", "2", "3", "4", "5"], [1400.0, 1100.0, 950.0, 870.0, 830.0, 812.5])
    assert fr.model == SCORE_CARD and fr.lower_bound.ys == [] and fr.gap is None
    moss = RunState()
    moss.feed(moss_records())
    [frontier] = moss.panels
    assert [p[0] for p in frontier.points] == [p["h1"] for p in FRONTIER]
    assert [p[1] for p in frontier.points] == [p["h2"] for p in FRONTIER]


def test_state_from_store(history_db: Path) -> None:
    from glasswork.store import RunStore

    store = RunStore(history_db)
    state = RunState.from_store(store.details(MOSS_ID), store.events(MOSS_ID))
    assert state.status == "optimal" and state.model == RULE_SET
    assert len(state.panels[0].points) == len(FRONTIER)
    failed = RunState.from_store(store.details(FAILED_ID), [])
    assert failed.status == "failed" and "toy solver asked to fail" in failed.error


def test_event_record_drops_missing_values() -> None:
    row = {
        "run_id": "r",
        "seq": 3,
        "kind": "progress",
        "elapsed": 1.5,
        "objective": float("nan"),
        "lower_bound": 0.2,
        "gap": None,
        "nodes": None,
        "queue": 4,
        "counters": {"queue": 4},
        "message": None,
    }
    assert event_record(row) == {"kind": "progress", "elapsed": 1.5, "lower_bound": 0.2, "counters": {"queue": 4}}


def test_series_thins_itself() -> None:
    from glasswork import display as module

    series = module.Series()
    for i in range(module.MAX_POINTS + 10):
        series.add(float(i), float(i))
    assert len(series) <= module.MAX_POINTS and series.xs[-1] == module.MAX_POINTS + 9
    xs, _ = series.sampled(100)
    assert len(xs) <= 101 and xs[-1] == series.xs[-1] and xs == sorted(xs)


def test_follower_keeps_torn_lines_and_sees_the_file_vanish(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    follower = LogFollower(path)
    assert follower.poll() == [] and not follower.vanished  # not there yet is not gone
    start = json.dumps({"kind": "start", "run_id": "r"})
    event = json.dumps({"kind": "progress", "elapsed": 1.0, "objective": 2.0})
    path.write_text(start + "\n" + event[:10])
    assert follower.poll() == [{"kind": "start", "run_id": "r"}]
    with path.open("a") as fh:
        fh.write(event[10:])
    assert follower.poll() == []  # still no newline: the write is not complete
    with path.open("a") as fh:
        fh.write("\nnot json\n" + json.dumps({"kind": "finish", "run_id": "r", "result": None}) + "\n")
    records = follower.poll()
    assert [r["kind"] for r in records] == ["progress", "finish"] and follower.finished
    path.unlink()
    assert follower.poll() == [] and follower.vanished


def test_rule_list_view_shows_captures_and_probabilities() -> None:
    text = render(model_view(RULE_LIST))
    assert "if ({sex:Male,juvenile-crimes:>0}) then ({recidivate:Yes})" in text
    assert "else ({recidivate:No})" in text
    assert "410" in text and "70.73%" in text  # 290 / 410
    assert "65.74%" in text  # default: 2813 / 4279
    assert "n Yes" in text and "n Yes" not in render(model_view(RULE_LIST, compact=True))


def test_score_card_rule_set_and_fallback_views() -> None:
    card = render(model_view(SCORE_CARD))
    assert "priors>=3" in card and "+3" in card and "-1" in card and "50.0%" in card and "P(yes)" in card
    rules = render(model_view(RULE_SET))
    assert "rm > 6.9" in rules and "0.81" in rules and "stability H1 = 0.62" in rules
    assert render(model_view({"kind": "stump", "feature": 1}, "if a then 1\nelse 0")).startswith("if a then 1")
    assert "no model yet" in render(model_view(None))
    # a model of a known kind but an unexpected shape still shows its text
    assert "fallback" in render(model_view({"kind": "score_card", "points": 3}, "fallback"))


def test_number_formats() -> None:
    assert fmt(None) == "-" and fmt(float("nan")) == "-" and fmt(1234) == "1,234" and fmt(0.123456789, 4) == "0.1235"
    assert fmt(float("inf")) == "inf"
    assert fmt_rate(123456.7) == "123,457" and fmt_rate(0.001) == "0" and fmt_rate(12.345) == "12.3"


def test_state_of_a_run_without_a_model_says_why() -> None:
    reason = "no model meets constraints.fairness (statistical_parity <= 0.05): proven infeasible"
    state = RunState()
    state.feed(
        [
            {"kind": "start", "run_id": "x", "name": "n", "solver": "toy"},
            {"kind": "progress", "elapsed": 0.1, "lower_bound": 0.1},
            {
                "kind": "finish",
                "run_id": "x",
                "result": {
                    "status": "infeasible",
                    "objective": None,
                    "lower_bound": None,
                    "gap": None,
                    "model": None,
                    "model_text": None,
                    "metrics": {},
                    "stats": {},
                    "no_model": reason,
                },
            },
        ]
    )
    assert state.finished and state.status == "infeasible" and state.no_model == reason
    shown = render(model_view(state.model, state.model_text, absent=state.no_model))
    assert "proven infeasible" in shown and "no model yet" not in shown
    running = RunState()
    running.feed([{"kind": "start", "run_id": "y", "name": "n", "solver": "toy"}])
    assert running.no_model is None and "no model yet" in render(model_view(None, None, absent=running.no_model))
