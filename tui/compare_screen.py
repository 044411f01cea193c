"""The compare screen: two recorded runs side by side (differing spec keys, certificates,
metrics, both bound trajectories and both models)."""

from __future__ import annotations

import json
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from glasswork.console import fmt_gap, plain_text
from glasswork.spec import flatten
from glasswork.tui.state import RunState
from glasswork.tui.views import fmt, model_view
from glasswork.tui.widgets import BACK_KEY, Chart, HELP_KEY, draw_bounds


class CompareScreen(Screen[None]):
    """Two runs side by side: the spec keys that differ, certificates, metrics, models, bounds."""

    BINDINGS = [
        BACK_KEY,
        HELP_KEY,
    ]
    DEFAULT_CSS = """
    CompareScreen #top { height: 1fr; }
    CompareScreen #fields { width: 1fr; padding: 0 1; }
    CompareScreen #trajectories { width: 1fr; }
    CompareScreen #both { height: 1fr; border-top: solid $primary-darken-2; }
    CompareScreen .side { width: 1fr; padding: 0 1; }
    CompareScreen #side-1 { border-left: solid $primary-darken-2; }
    """

    def __init__(self, docs: list[dict[str, Any]], events: list[list[dict[str, Any]]]) -> None:
        super().__init__()
        self.docs = docs
        self.states = [RunState.from_store(d, e) for d, e in zip(docs, events)]

    def _fields(self) -> Table:
        specs = [flatten(d["spec"]) for d in self.docs]
        keys = sorted({k for s in specs for k in s})
        differing = [k for k in keys if len({json.dumps(s.get(k), sort_keys=True, default=str) for s in specs}) > 1]
        table = Table(title="comparison", title_justify="left", expand=False, box=box.SIMPLE_HEAD)
        table.add_column("field")
        for d in self.docs:
            table.add_column(f"{d['run_id'][:8]} {d['name']}", justify="right")
        for key in differing:
            table.add_row(f"spec.{key}", *(fmt(s.get(key)) for s in specs))
        for key in ("solver", "state", "status", "objective", "lower_bound", "gap", "elapsed"):
            if key == "gap":  # the one gap form, compact: the status and lower bound are the rows above
                table.add_row(
                    key, *(fmt_gap(d.get("objective"), d.get("lower_bound"), compact=True) for d in self.docs)
                )
                continue
            table.add_row(key, *(fmt(d.get(key), 8) for d in self.docs))
        for key in sorted({m for d in self.docs for m in d["metrics"]}):
            table.add_row(key, *(fmt(d["metrics"].get(key), 6) for d in self.docs))
        if not differing:
            table.caption = "(the specs are identical)"
        return table

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            with VerticalScroll(id="fields"):
                yield Static(self._fields())
            yield Chart(self._paint_trajectories, id="trajectories")  # drawn once mounted (see RunScreen)
        with Horizontal(id="both"):
            for i, (doc, state) in enumerate(zip(self.docs, self.states)):
                with VerticalScroll(classes="side", id=f"side-{i}"):
                    yield Static(
                        Group(
                            plain_text(f"{doc['run_id'][:8]} {doc['name']}", "bold"),
                            model_view(state.model, state.model_text, compact=True, absent=state.no_model),
                        )
                    )
        yield Footer()

    def _paint_trajectories(self, plt: Any) -> None:
        a, b = self.states
        draw_bounds(
            plt,
            [
                (f"{a.run_id[:8]} objective", a.objective, "orange"),
                (f"{a.run_id[:8]} bound", a.lower_bound, "red"),
                (f"{b.run_id[:8]} objective", b.objective, "cyan"),
                (f"{b.run_id[:8]} bound", b.lower_bound, "blue"),
            ],
            "bound trajectories",
        )
