"""The Textual application: the history, or a live monitor, plus the help overlay on ``?``."""

from __future__ import annotations

from typing import Any

from glasswork.tui.widgets import ErrorScreen, HelpScreen
from textual.app import App
from textual.binding import Binding


class GlassworkApp(App[None]):
    """Opens on the run history (``glasswork tui``) or on one run's monitor (``glasswork monitor``)."""

    TITLE = "glasswork"
    BINDINGS = [
        Binding("question_mark", "help", "help", key_display="?", show=False),
        Binding("ctrl+q", "quit", "quit", show=False),
    ]

    def __init__(self, *, db: str | None = None, source: Any = None) -> None:
        super().__init__()
        self.db = db
        self.source = source
        self.monitor_screen: Any = None  # the monitor screen of `glasswork monitor`

    def on_mount(self) -> None:
        if self.source is not None:
            from glasswork.tui.monitor import MonitorScreen

            self.monitor_screen = MonitorScreen(self.source, standalone=True)
            self.push_screen(self.monitor_screen)
        else:
            from glasswork.tui.history import HistoryScreen

            self.push_screen(HistoryScreen(self.db))

    @property
    def exit_summary(self) -> Any:
        """What the monitor prints once the app has closed (the run, as `glasswork run` prints it)."""
        return None if self.monitor_screen is None else self.monitor_screen.summary

    def action_help(self) -> None:
        if isinstance(self.screen, (HelpScreen, ErrorScreen)):
            return
        name = type(self.screen).__name__.removesuffix("Screen").lower() or "screen"
        self.push_screen(HelpScreen(self.screen, name))
