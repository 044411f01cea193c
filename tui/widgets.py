"""Widgets and overlays every screen shares: charts, the gap bar, help and error overlays."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from glasswork.display.panels import BarsPanel, Panel, ScatterPanel, SeriesPanel
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot


class Chart(PlotextPlot):
    """A plotext chart redrawn from scratch by a drawing function (cheap at a few hundred points)."""

    DEFAULT_CSS = "Chart { min-height: 8; }"

    def __init__(self, paint: Callable[[Any], None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._first_paint = paint  # drawn once the chart itself is mounted (no screen queries it)

    def on_mount(self) -> None:
        super().on_mount()
        if self._first_paint is not None:
            self.draw(self._first_paint)

    def draw(self, paint: Callable[[Any], None]) -> None:
        plt = self.plt
        plt.clear_figure()
        paint(plt)
        self.refresh()


class RowTable(DataTable[Any]):
    """A table of rows to pick from (runs, members, points): the arrows, and ``j`` / ``k`` as in
    ``less`` and vi, move the cursor."""

    BINDINGS = [
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)


class PanelChart(Chart):
    """One of a solver's monitor panels (``glasswork.display.panels``), hidden until it has data."""

    def __init__(self, panel: Panel, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.panel = panel
        self.display = False

    def update_panel(self) -> None:
        if self.panel.has_data:
            self.display = True
            self.draw(lambda plt: draw_panel(plt, self.panel))


def draw_panel(plt: Any, panel: Panel) -> None:
    """Draw a panel by its type: a line over time, bars, or a scatter of points."""
    if isinstance(panel, SeriesPanel):
        plt.plot(*panel.series.sampled(), marker="braille", color=panel.color)
    elif isinstance(panel, BarsPanel):
        labels, heights = panel.bars()
        if not labels:  # reported empty (a queue at the end of its search): no bar, and saying so
            plt.title(f"{panel.title}: empty")
            return
        plt.bar(labels, heights, color=panel.color)
    elif isinstance(panel, ScatterPanel):
        plt.scatter([p[0] for p in panel.points], [p[1] for p in panel.points], color=panel.color, marker="dot")
    plt.title(panel.title)
    if panel.xlabel:
        plt.xlabel(panel.xlabel)


def draw_bounds(plt: Any, series: Iterable[tuple[str, Any, str]], title: str) -> None:
    """Objective and lower bound (or several runs' of them) against elapsed seconds."""
    drawn = False
    for label, s, color in series:
        xs, ys = s.sampled()
        if xs:
            plt.plot(xs, ys, label=label, color=color, marker="braille")
            drawn = True
    plt.title(title if drawn else f"{title} (waiting for the first bound)")
    plt.xlabel("seconds")


def gap_bar(label: str, gap: float | None, closed: float | None, width: int = 30) -> Text:
    """The gap as ``glasswork.display.console.fmt_gap`` writes it (``label``), and a bar of how much of the
    first gap has been closed."""
    text = Text()
    text.append("gap ", style="bold")
    text.append(label, style="bold green" if gap == 0 else "bold yellow")
    if closed is None:
        text.append("\n" + "░" * width, style="dim")
        text.append("\nno bound yet" if gap is None else "\n")
        return text
    filled = round(closed * width)
    text.append("\n")
    text.append("█" * filled, style="green")
    text.append("░" * (width - filled), style="dim")
    text.append(f"\n{closed:.0%} of the first gap closed")
    return text


def _bindings(screen: Screen) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for source in (type(screen).BINDINGS, type(screen.app).BINDINGS):
        for item in source:
            binding = item if isinstance(item, Binding) else Binding(*item)
            key = binding.key_display or binding.key
            if key in seen or not binding.description:
                continue
            if "." not in binding.action and screen.check_action(binding.action, ()) is False:
                continue  # not offered here now (no Rashomon set to browse, say): the footer agrees
            seen.add(key)
            rows.append((key, binding.description))
    return rows


# the keys every screen offers alike: ? lists the screen's keys, escape or q goes back, / filters
HELP_KEY = Binding("question_mark", "app.help", "help", key_display="?")
BACK_KEY = Binding("escape,q", "app.pop_screen", "back")
FILTER_KEY = Binding("slash", "filter", "filter", key_display="/")


class HelpScreen(ModalScreen[None]):
    """The ``?`` overlay: the keys of the screen below it."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 64; height: auto; max-height: 90%; border: thick $accent;
                            background: $surface; padding: 1 2; }
    """

    def __init__(self, screen: Screen, title: str) -> None:
        super().__init__()
        self.below = screen
        self.title_text = title

    def compose(self) -> ComposeResult:
        body = Text()
        body.append(f"{self.title_text}: keys\n\n", style="bold")
        for key, description in _bindings(self.below):
            body.append(f"{key:>12}", style="bold cyan")
            body.append(f"  {description}\n")
        body.append("\nescape or ? closes this help", style="dim")
        with Vertical():
            yield Static(body, id="help-body")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class ErrorScreen(ModalScreen[None]):
    """A readable error: what went wrong and what to do, never a traceback."""

    BINDINGS = [Binding("escape,enter,q", "dismiss", "close")]
    DEFAULT_CSS = """
    ErrorScreen { align: center middle; }
    ErrorScreen > Vertical { width: 80%; max-width: 100; height: auto; max-height: 80%;
                             border: thick $error; background: $surface; padding: 1 2; }
    ErrorScreen #error-title { text-style: bold; color: $error; margin-bottom: 1; }
    ErrorScreen VerticalScroll { height: auto; max-height: 24; }
    ErrorScreen #error-hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self.error_title = title
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.error_title, id="error-title", markup=False)
            with VerticalScroll():
                yield Static(self.message, id="error-message", markup=False)
            yield Static("press escape to close", id="error-hint")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
