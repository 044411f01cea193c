"""The run screen: one recorded run's certificate, metrics, bound trajectory and model."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from glasswork.tui.model_screen import ModelScreen
from glasswork.tui.state import RunState
from glasswork.tui.views import fmt, fmt_pct, model_view
from glasswork.tui.widgets import Chart, draw_bounds


def _summary(doc: dict[str, Any]) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, expand=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("run", f"{doc['run_id']}  {doc['name']}")
    table.add_row("solver", f"{doc['solver']} {doc.get('solver_version') or ''}")
    table.add_row("state", str(doc["state"]) + (f"  ({doc['error']})" if doc.get("error") else ""))
    table.add_row("certificate", f"{doc.get('status') or '-'}  objective {fmt(doc.get('objective'), 8)}  "
                                 f"lower bound {fmt(doc.get('lower_bound'), 8)}  gap {fmt_pct(doc.get('gap'))}")
    table.add_row("elapsed", "-" if doc.get("elapsed") is None else f"{doc['elapsed']:.2f} s")
    metrics = doc.get("metrics") or {}
    if metrics:
        table.add_row("metrics", "  ".join(f"{k} {fmt(v, 5)}" for k, v in metrics.items()))
    return table


class RunScreen(Screen[None]):
    """One recorded run: its certificate and metrics, model, and bound trajectory."""

    BINDINGS = [
        Binding("m", "model", "full model"),
        Binding("escape,q", "app.pop_screen", "back"),
        Binding("question_mark", "app.help", "help", key_display="?"),
    ]
    DEFAULT_CSS = """
    RunScreen #summary { height: auto; padding: 0 1; background: $boost; }
    RunScreen #trajectory { width: 1fr; }
    RunScreen #model-box { width: 1fr; padding: 0 1; border-left: solid $primary-darken-2; }
    """

    def __init__(self, details: dict[str, Any], events: list[dict[str, Any]]) -> None:
        super().__init__()
        self.details = details
        self.state = RunState.from_store(details, events)

    def compose(self) -> ComposeResult:
        yield Static(_summary(self.details), id="summary")
        with Horizontal():
            yield Chart(id="trajectory")
            with VerticalScroll(id="model-box"):
                yield Static(Group(Text("model", style="bold"),
                                   model_view(self.state.model, self.state.model_text, compact=True)),
                             id="model")
        yield Footer()

    def on_mount(self) -> None:
        s = self.state
        self.query_one("#trajectory", Chart).draw(lambda plt: draw_bounds(
            plt, [("objective", s.objective, "orange"), ("lower bound", s.lower_bound, "cyan")],
            "bound trajectory"))

    def action_model(self) -> None:
        self.app.push_screen(ModelScreen(f"{self.details['name']} ({self.details['run_id'][:12]})",
                                         self.state.model, self.state.model_text,
                                         self.details.get("stats") or {}, self.details.get("solver")))
