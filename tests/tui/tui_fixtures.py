"""Fixed runs for the terminal UI tests: a run store with one run of each solver, and the
records a live run produces, so screens render the same frame every time."""

from __future__ import annotations

import io
import os
import socket
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

RULE_LIST = {
    "kind": "rule_list",
    "task": "binary",
    "classes": ["No", "Yes"],
    "target": "recidivate",
    "label_names": ["recidivate:No", "recidivate:Yes"],
    "rules": [
        {
            "antecedent": "sex:Male,juvenile-crimes:>0",
            "items": [[3, 1]],
            "prediction": "Yes",
            "captured": 410,
            "class_counts": [120, 290],
        },
        {
            "antecedent": "priors:>3",
            "items": [[15, 1]],
            "prediction": "Yes",
            "captured": 1800,
            "class_counts": [650, 1150],
        },
    ],
    "default": {"prediction": "No", "captured": 4279, "class_counts": [2813, 1466]},
}
RULE_LIST_TEXT = (
    "if ({sex:Male,juvenile-crimes:>0}) then ({recidivate:Yes})\n"
    "else if ({priors:>3}) then ({recidivate:Yes})\nelse ({recidivate:No})"
)

SCORE_CARD = {
    "kind": "score_card",
    "features": ["age<=30", "priors>=3", "juvenile"],
    "columns": [0, 4, 7],
    "points": [2, 3, -1],
    "intercept": -3.0,
    "multiplier": 1.5,
    "classes": ["no", "yes"],
    "binary": [True, True, True],
    "loss": 812.5,
    "reduced_by": 1,
    "table": [
        {"score": s, "risk": r}
        for s, r in [(-1.0, 0.0474), (0.0, 0.1192), (2.0, 0.3392), (3.0, 0.5), (4.0, 0.6608), (5.0, 0.7914)]
    ],
}
SCORE_CARD_TEXT = " 1. age<=30    2 points |   ...\n 2. priors>=3  3 points | + ...\n 3. juvenile  -1 point  | + ..."

RULE_SET = {
    "kind": "rule_set",
    "task": "regression",
    "encoding": "sirus",
    "intercept": 22.5,
    "epsilon": 0.4,
    "h1": 0.62,
    "h2": 18.25,
    "rules": [
        {"text": "rm > 6.9", "conditions": [], "pi": 0.81, "weight": 1.0, "value_inside": 9.1, "value_outside": -1.2},
        {
            "text": "lstat <= 9.5",
            "conditions": [],
            "pi": 0.43,
            "weight": 1.0,
            "value_inside": 4.0,
            "value_outside": -2.5,
        },
    ],
}
FRONTIER = [
    {
        "point": i + 1,
        "chosen": i == 1,
        "epsilon": e,
        "h1": h1,
        "h2": h2,
        "lower_bound": h2 - 1e-4,
        "gap": 5e-6,
        "status": "optimal",
        "rules": ["rm > 6.9", "lstat <= 9.5"][: 1 + i % 2],
        "weights": [1.0],
        "iterations": 3,
        "cuts": 4,
        "seconds": 0.1,
    }
    for i, (e, h1, h2) in enumerate([(0.8, 0.9, 25.0), (0.6, 0.62, 18.25), (0.4, 0.41, 15.1), (0.2, 0.22, 14.0)])
]

CORELS_ID = "c0ffee00aa11bb22cc33dd44ee55ff66"
CORELS_ID_2 = "c0ffee11bb22cc33dd44ee55ff66aa77"
FASTERRISK_ID = "fa57e12a00000000000000000000000b"
MOSS_ID = "0055aa0000000000000000000000000c"
FAILED_ID = "dead0000000000000000000000000000"

FIXED_START = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def _info(run_id: str, name: str, solver: str, minute: int, spec: dict[str, Any] | None = None) -> Any:
    from glasswork.running.runner import RunInfo

    return RunInfo(
        run_id=run_id,
        name=name,
        solver=solver,
        solver_version="1.0.0",
        spec_hash="0" * 64,
        spec=spec or {"name": name, "solver": solver, "objective": {"regularization": 0.01}},
        spec_path=None,
        data_fingerprint="f" * 16,
        n_train=6489,
        n_test=721,
        n_features=155,
        started_at=FIXED_START.replace(minute=minute).isoformat(),
        host=socket.gethostname(),
        pid=os.getpid(),
    )


def bound_events(
    n: int = 12, *, objective: float = 0.40, bound0: float = 0.30, counters: bool = True
) -> list[dict[str, Any]]:
    """A converging trajectory: the objective drops, the bound rises, counters grow."""
    out = []
    for i in range(n):
        t = 0.5 * (i + 1)
        obj = objective - 0.02 * min(i, 3)
        lb = bound0 + (obj - bound0) * i / (n + 2)
        record: dict[str, Any] = {
            "kind": "progress",
            "elapsed": t,
            "objective": obj,
            "lower_bound": lb,
            "nodes": 1000 * (i + 1) ** 2,
        }
        if counters:
            record["counters"] = {
                "queue": 500 + 40 * i,
                "trie": 800 + 90 * i,
                "map": 300 + 10 * i,
                "log10_remaining": 60.0 - 4.5 * i,
                "queue_lengths": {"1": 3, "2": 40 + i, "3": 200 + 30 * i},
            }
        out.append(record)
    return out


def corels_records(finished: bool = False) -> list[dict[str, Any]]:
    info = _info(CORELS_ID, "compas rule list", "corels", 0)
    records: list[dict[str, Any]] = [
        {"kind": "start", **info.to_dict()},
        {"kind": "log", "elapsed": 0.01, "level": "info", "message": "corels: 155 antecedents, 6489 samples"},
    ]
    events = bound_events()
    records += events[:4]
    records.append(
        {
            "kind": "incumbent",
            "elapsed": 2.0,
            "objective": 0.34,
            "nodes": 16000,
            "model": RULE_LIST,
            "model_text": RULE_LIST_TEXT,
        }
    )
    records += events[4:]
    if finished:
        records.append(
            {
                "kind": "finish",
                "run_id": info.run_id,
                "result": {
                    "status": "optimal",
                    "objective": 0.34,
                    "lower_bound": 0.34,
                    "gap": 0.0,
                    "model": RULE_LIST,
                    "model_text": RULE_LIST_TEXT,
                    "metrics": {"train_accuracy": 0.66},
                    "stats": {"elapsed": 6.2},
                },
            }
        )
    return records


def fasterrisk_records() -> list[dict[str, Any]]:
    info = _info(FASTERRISK_ID, "risk card", "fasterrisk", 5)
    records: list[dict[str, Any]] = [{"kind": "start", **info.to_dict()}]
    by_size: dict[str, float] = {"0": 1400.0}
    for size, loss in enumerate([1100.0, 950.0, 870.0, 830.0, 812.5], start=1):
        by_size[str(size)] = loss
        records.append(
            {
                "kind": "progress",
                "elapsed": 0.1 * size,
                "objective": loss,
                "nodes": 40 * size,
                "counters": {"phase": "beam", "support_size": size, "best_loss_by_size": dict(by_size)},
            }
        )
    records.append(
        {
            "kind": "incumbent",
            "elapsed": 0.7,
            "objective": 812.5,
            "nodes": 200,
            "model": SCORE_CARD,
            "model_text": SCORE_CARD_TEXT,
        }
    )
    return records


def moss_records() -> list[dict[str, Any]]:
    info = _info(MOSS_ID, "boston rule set", "moss", 10)
    records: list[dict[str, Any]] = [{"kind": "start", **info.to_dict()}]
    for i, p in enumerate(FRONTIER):
        records.append(
            {
                "kind": "progress",
                "elapsed": 1.0 + i,
                "objective": p["h2"],
                "lower_bound": p["lower_bound"],
                "nodes": i + 1,
                "counters": {"frontier_points": i + 1, "epsilon": p["epsilon"], "h1": p["h1"], "cuts": 4 * (i + 1)},
            }
        )
    return records


def _result(
    status: str, objective: float, lower: float | None, model: dict[str, Any], text: str, elapsed: float, **stats: Any
) -> dict[str, Any]:
    gap = None if lower is None else max(0.0, objective - lower) / abs(objective)
    return {
        "status": status,
        "objective": objective,
        "lower_bound": lower,
        "gap": gap,
        "model": model,
        "model_text": text,
        "metrics": {"train_accuracy": 0.7, "test_accuracy": 0.68},
        "stats": {"elapsed": elapsed, "peak_memory": 1 << 26, **stats},
    }


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Local time is UTC, so displayed start times do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def history_db(tmp_path: Path, utc: None) -> Path:
    """A run store holding five fixed runs: CORELS (two), FasterRisk, MOSS and a failed one."""
    from glasswork.contract.record import start_record
    from glasswork.store import RunStore

    path = tmp_path / "runs.duckdb"
    store = RunStore(path).open()
    ended = FIXED_START.replace(hour=10, tzinfo=None)
    runs = [
        (
            _info(CORELS_ID, "compas rule list", "corels", 0),
            _result("optimal", 0.34, 0.34, RULE_LIST, RULE_LIST_TEXT, 6.2),
            bound_events(),
        ),
        (
            _info(
                CORELS_ID_2,
                "compas rule list",
                "corels",
                1,
                {"name": "compas rule list", "solver": "corels", "objective": {"regularization": 0.005}},
            ),
            _result("stopped_time", 0.33, 0.31, RULE_LIST, RULE_LIST_TEXT, 30.0),
            bound_events(objective=0.39, bound0=0.28),
        ),
        (
            _info(FASTERRISK_ID, "risk card", "fasterrisk", 5),
            _result("heuristic", 812.5, None, SCORE_CARD, SCORE_CARD_TEXT, 0.8),
            fasterrisk_records()[1:],
        ),
        (
            _info(MOSS_ID, "boston rule set", "moss", 10),
            _result("optimal", 18.25, 18.2499, RULE_SET, "start at 22.5", 4.1, frontier=FRONTIER),
            moss_records()[1:],
        ),
        (_info(FAILED_ID, "broken", "corels", 15), None, []),
    ]
    for info, result, events in runs:
        finish = {"kind": "finish", "run_id": info.run_id, "result": result, "ended_at": ended.isoformat()}
        if result is None:
            finish["error"] = "RuntimeError: toy solver asked to fail"
        store.write_records(
            [start_record(info, full=True), *[e for e in events if e.get("kind") not in ("incumbent", "start")], finish]
        )
    return path


def toy_spec(folder: Path, data: Path, behaviour: str = "endless", name: str = "toy run", extra: str = "") -> Path:
    path = folder / f"{name.replace(' ', '_')}.yaml"
    path.write_text(
        f"name: {name}\ndata:\n  source: {data}\n  target: label\nsolver: toy\n"
        f"search:\n  behaviour: {behaviour}\n  step_seconds: 0.01\n{extra}"
    )
    return path


def error_shown(app: Any) -> bool:
    """The error overlay is up and mounted (the screen becomes current before its widgets exist)."""
    from glasswork.tui.widgets import ErrorScreen

    return isinstance(app.screen, ErrorScreen) and bool(app.screen.query("#error-message"))


async def wait_for(pilot: Any, predicate: Any, timeout: float = 20.0) -> None:
    """Let the app run until ``predicate()`` holds (fails the test after ``timeout`` seconds). A
    screen is current as soon as it is pushed but composes its widgets a moment later: wait for
    ``app.screen.is_mounted`` too before querying them (on a loaded machine the moment is long)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.05)


def plain(widget: Any, width: int = 200) -> str:
    """The text a Static shows (its Rich renderable rendered without styles)."""
    from rich.console import Console

    content = widget.content if hasattr(widget, "content") else widget.renderable  # Textual < 6
    if isinstance(content, str):
        return content
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


async def open_stored_set(pilot: Any, app: Any, says: str = "Rashomon set") -> Any:
    """From the history, open the first run (its summary saying ``says``), then its stored
    Rashomon set's screen (``s``), once it lists members; returns that screen."""
    from glasswork.tui.rashomon import RashomonScreen
    from glasswork.tui.run_screen import RunScreen

    await app.workers.wait_for_complete()
    await wait_for(pilot, lambda: app.screen.rows)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.is_mounted)
    assert says in plain(app.screen.query_one("#summary"))
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, RashomonScreen) and app.screen.is_mounted)
    screen = app.screen
    await wait_for(pilot, lambda: screen.members)
    return screen
