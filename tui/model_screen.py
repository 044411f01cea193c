"""The model screen: one model on its own, as its plugin draws it, with the solver's panels that
the final result feeds."""

from __future__ import annotations

from typing import Any

from glasswork.display.console import plain_text
from glasswork.display.panels import Panel
from glasswork.tui.views import model_view
from glasswork.tui.widgets import BACK_KEY, HELP_KEY, PanelChart
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static


class ModelScreen(Screen[None]):
    """A model on its own: its plugin's full view (or its text), and the solver's panels that the
    final result feeds (a frontier of solutions, say)."""

    BINDINGS = [
        Binding("t", "toggle_text", "structured / text"),
        BACK_KEY,
        HELP_KEY,
    ]
    DEFAULT_CSS = """
    ModelScreen #title { height: 1; padding: 0 1; background: $boost; text-style: bold; }
    ModelScreen PanelChart { height: 16; }
    ModelScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(
        self,
        title: str,
        model: dict[str, Any] | None,
        text: str | None,
        stats: dict[str, Any] | None = None,
        solver: str | None = None,
        absent: str | None = None,
    ) -> None:
        super().__init__()
        self.model_title, self.model, self.text = title, model, text
        self.absent = absent  # why a finished run has no model (infeasible, stopped before any)
        self.stats = stats or {}
        self.panels: list[Panel] = []
        if solver and self.stats:
            from glasswork.hooks.registry import get_registry

            for panel in get_registry().monitor_panels(solver):
                try:
                    panel.feed({"kind": "finish", "result": {"stats": self.stats}})
                except Exception:  # a plugin's panel that cannot read this result is left out
                    continue
                if panel.has_data:
                    self.panels.append(panel)
        self.as_text = False

    def compose(self) -> ComposeResult:
        yield Static(self.model_title, id="title", markup=False)
        with VerticalScroll():
            for panel in self.panels:
                yield PanelChart(panel)
            yield Static(id="model")
        yield Footer()

    def on_mount(self) -> None:
        self._show()
        for chart in self.query(PanelChart):
            chart.update_panel()

    def _show(self) -> None:
        body = (
            plain_text(self.text or self.absent or "(no text)", newlines=True)
            if self.as_text
            else model_view(self.model, self.text, stats=self.stats, absent=self.absent)
        )
        self.query_one("#model", Static).update(body)

    def action_toggle_text(self) -> None:
        self.as_text = not self.as_text
        self._show()
