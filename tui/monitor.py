"""The live monitor: one run's bounds, gap, counters, solver panels and incumbent model, and its
Rashomon set while it grows (``glasswork.tui.rashomon``).

The records come from a *source* (``glasswork.tui.sources``): ``OwnedRun`` runs a spec in this
process (the run path blocks a Textual thread worker while the solver searches without the GIL
in its own thread) and ``FollowedRun`` follows a run another process owns. The screen drains its
source a few times a second, so however fast a solver emits events the interface stays
responsive.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, RichLog, Static

from glasswork.console import fmt_gap, plain_text
from glasswork.tui.rashomon import RashomonPanel, points_text, set_summary
from glasswork.tui.sources import FollowedRun, OwnedRun
from glasswork.tui.state import RunState
from glasswork.tui.views import fmt, fmt_rate, model_view
from glasswork.tui.widgets import Chart, ErrorScreen, HELP_KEY, PanelChart, draw_bounds, gap_bar

POLL_SECONDS = 0.25
SHOWN_COUNTERS = 12


class MonitorScreen(Screen[None]):
    """Watch one run converge."""

    BINDINGS = [
        Binding("c", "cancel", "cancel run"),
        Binding("ctrl+c", "cancel", "cancel run", show=False, priority=True),  # as in `glasswork run`
        Binding("m", "model", "full model"),
        Binding("s", "rashomon", "browse the set"),
        Binding("q,escape", "close", "close"),
        HELP_KEY,
    ]
    DEFAULT_CSS = """
    MonitorScreen #header { height: 2; padding: 0 1; background: $boost; }
    MonitorScreen #top { height: 3fr; }
    MonitorScreen #bounds { width: 2fr; }
    MonitorScreen #side { width: 1fr; min-width: 36; padding: 0 1; }
    MonitorScreen #gap { height: 4; }
    MonitorScreen #counters { height: 1fr; }
    MonitorScreen #bottom { height: 3fr; }
    MonitorScreen #panels { width: 1fr; }
    MonitorScreen #panels PanelChart { width: 1fr; }
    MonitorScreen #model-box { width: 1fr; border-left: solid $primary-darken-2; padding: 0 1; }
    MonitorScreen #log { height: 5; border-top: solid $primary-darken-2; }
    """

    def __init__(self, source: OwnedRun | FollowedRun, *, standalone: bool = False) -> None:
        super().__init__()
        self.source = source
        self.standalone = standalone
        self.state = RunState()
        self._gw_shown_messages = 0
        self._gw_model_seen: Any = object()  # never a model: the first refresh draws the box
        self._gw_absent_seen: str | None = None  # why a finished run has no model, once drawn
        self._gw_closing = False
        self._gw_failed = False
        self._gw_left = False
        self._gw_timer: Any = None
        self._gw_panels: list[Any] = []
        self._gw_ended = False  # the run has ended: the footer stops offering to cancel it
        self._gw_has_set = False  # the run reports a Rashomon set: the footer offers to browse it
        self.summary: RenderableType | None = None  # what `glasswork monitor` prints once it has closed

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with Horizontal(id="top"):
            yield Chart(id="bounds")
            with Vertical(id="side"):
                yield Static(id="gap")
                yield Static(id="counters")
        with Horizontal(id="bottom"):
            yield Horizontal(id="panels")  # the solver's panels, mounted once its name is known
            with VerticalScroll(id="model-box"):
                yield Static(id="model")
            yield RashomonPanel(id="rashomon")
        yield RichLog(id="log", wrap=True, markup=False, max_lines=500)
        yield Footer()

    def on_mount(self) -> None:
        if isinstance(self.source, OwnedRun):
            self._run_owned()
        self.refresh_view()
        self._gw_timer = self.set_interval(POLL_SECONDS, self.tick)

    @work(thread=True, exclusive=True, group="owned-run", exit_on_error=False)
    def _run_owned(self) -> None:
        assert isinstance(self.source, OwnedRun)
        self.source.run()

    @work(thread=True, exclusive=True, group="store-read", exit_on_error=False)
    def _read_store(self) -> None:
        assert isinstance(self.source, FollowedRun)
        try:
            self.source.read_store()
        finally:
            self.source.store_reading = False

    # -- updates ------------------------------------------------------------------------------

    def tick(self) -> None:
        records = self.source.poll()
        if (
            isinstance(self.source, FollowedRun)
            and self.source.need_store
            and not self.source.done
            and not self.source.store_reading
        ):
            self.source.store_reading = True
            self._read_store()
        if records:
            self.ingest(records)
        if self._gw_closing and self.state.finished or self._gw_closing and self.source.done and self._gw_failed:
            self._leave()

    def ingest(self, records: list[dict[str, Any]]) -> None:
        plain = []
        for record in records:
            if record.get("kind") == "failed":
                self._gw_failed = True
                self.state.finished = True
                self.state.error = record["message"]
                self.app.push_screen(ErrorScreen(record["title"], record["message"]))
            else:
                plain.append(record)
        self.state.feed(plain)
        self.refresh_view()
        if not self._gw_ended and self.state.finished:
            self._gw_ended = True
            self.refresh_bindings()  # "c cancel run" leaves the footer

    def refresh_view(self) -> None:
        s = self.state
        self.query_one("#header", Static).update(self._header())
        self.query_one("#bounds", Chart).draw(
            lambda plt: draw_bounds(
                plt,
                [("objective", s.objective, "orange"), ("lower bound", s.lower_bound, "cyan")],
                "objective and lower bound",
            )
        )
        self.query_one("#gap", Static).update(
            gap_bar(fmt_gap(s.best_objective, s.best_lower_bound, s.status), s.gap, s.gap_closed)
        )
        self.query_one("#counters", Static).update(self._counters())
        self._panels()
        if s.model is not self._gw_model_seen or s.no_model != self._gw_absent_seen:
            self._gw_model_seen, self._gw_absent_seen = s.model, s.no_model
            title = Text("best model" if s.finished else "current best model", style="bold")
            self.query_one("#model", Static).update(
                Group(title, model_view(s.model, s.model_text, compact=True, absent=s.no_model))
            )
        self.query_one(RashomonPanel).show(
            s.rashomon, finished=s.finished, run_name=s.name, solver=s.solver, points=s.rashomon_points
        )
        if s.rashomon is not None and not self._gw_has_set:
            self._gw_has_set = True
            self.refresh_bindings()  # "s browse the set" joins the footer
        log = self.query_one("#log", RichLog)
        messages = list(s.messages)
        for t, level, message in (
            messages[self._gw_shown_messages :] if len(messages) >= self._gw_shown_messages else messages
        ):
            log.write(
                plain_text(
                    f"{t:8.2f}s {level:<7} {message}",
                    {"warning": "yellow", "error": "red"}.get(level, ""),
                    newlines=True,
                )
            )
        self._gw_shown_messages = len(messages)

    def _header(self) -> Text:
        s = self.state
        text = Text()
        text.append(s.name or self.source.title, style="bold")
        text.append(f"  {s.solver or '?'}  ", style="cyan")
        text.append(f"run {s.run_id[:12] or '-'}  ")
        status = s.status
        if self._gw_failed:
            status = "failed"
        style = {"running": "bold yellow", "optimal": "bold green", "failed": "bold red"}.get(status, "bold")
        text.append(status, style=style)
        if self._gw_closing and not s.finished:
            text.append(" (stopping...)", style="yellow")
        text.append(f"  {s.elapsed:.1f}s")
        if not self.source.owned:
            text.append("  (following another process)", style="dim")
        text.append("\nobjective ")
        text.append(fmt(s.best_objective, 8), style="bold")
        text.append("   lower bound ")
        text.append(fmt(s.best_lower_bound, 8), style="bold")
        if s.nodes is not None:
            text.append(f"   nodes {s.nodes:,}")
        if s.error:
            text.append(f"   {s.error}", style="red")
        return text

    def _counters(self) -> Table:
        s = self.state
        table = Table(
            box=None,
            pad_edge=False,
            show_edge=False,
            expand=False,
            title="counters",
            title_justify="left",
            title_style="bold",
        )
        table.add_column("name")
        table.add_column("value", justify="right")
        table.add_column("per s", justify="right", style="dim")
        figures: dict[str, Any] = {}
        if s.nodes is not None:
            figures["nodes"] = s.nodes
        for key, value in s.counters.items():
            if isinstance(value, (int, float, str)) and not isinstance(value, bool) and key != "nodes":
                figures[key] = value
        for key, value in list(figures.items())[:SHOWN_COUNTERS]:
            rate = s.rates.get(key)
            shown = fmt(value, 5) if not isinstance(value, str) else value
            table.add_row(key, shown, "" if isinstance(value, str) else fmt_rate(rate))
        if not figures:
            table.add_row("(none yet)", "", "")
        return table

    def _panels(self) -> None:
        """Mount the solver's panels when its run starts; draw those that have data."""
        box = self.query_one("#panels", Horizontal)
        if self.state.panels is not self._gw_panels:
            self._gw_panels = self.state.panels
            box.remove_children()
            box.mount(*(PanelChart(panel) for panel in self.state.panels))
            self.call_after_refresh(self._draw_panels)  # once mounted
            return
        self._draw_panels()

    def _draw_panels(self) -> None:
        for chart in self.query_one("#panels", Horizontal).query(PanelChart):
            chart.update_panel()

    def on_unmount(self) -> None:
        # An owned search never outlives its screen (nor keeps the app from exiting).
        stopped = self.source.owned and not self.source.done and not self.state.finished
        if self.source.owned and not self.source.done:
            self.source.cancel()
        if self.standalone:  # `glasswork monitor` prints it once the terminal is back
            self.summary = exit_summary(self.state, self.source, asked_to_stop=stopped or self._gw_closing)

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """An ended run is not offered for cancelling, nor a run without a Rashomon set for
        browsing one (the footer and the keys agree)."""
        if action == "cancel" and self.state.finished:
            return False
        if action == "rashomon" and self.state.rashomon is None:
            return False
        return True

    def action_cancel(self) -> None:
        if self.state.finished or self.source.done:
            self.notify("the run has already ended")
            return
        self.notify(self.source.cancel())

    def action_model(self) -> None:
        from glasswork.tui.model_screen import ModelScreen

        s = self.state
        stats = (s.result or {}).get("stats") or {}
        self.app.push_screen(ModelScreen(f"{s.name} ({s.status})", s.model, s.model_text, stats, s.solver))

    def action_rashomon(self) -> None:
        """Into the set's table: arrows move, enter opens a member's model."""
        self.query_one("#rashomon-members", DataTable).focus()

    def action_close(self) -> None:
        if self.source.owned and not self.state.finished and not self.source.done:
            if not self._gw_closing:
                self._gw_closing = True
                self.notify(self.source.cancel() + "; closing when it has stopped")
                self.refresh_view()
            return
        self._leave()

    def _leave(self) -> None:
        if self._gw_left:
            return
        self._gw_left = True
        if self.standalone:
            # from the app's own message loop: exiting from inside this screen's timer stalls shutdown
            self.app.call_later(self.app.exit, return_code=self.source.exit_code)
        else:
            self.dismiss(None)


def exit_summary(state: RunState, source: OwnedRun | FollowedRun, *, asked_to_stop: bool = False) -> RenderableType:
    """What ``glasswork monitor`` prints once its window closes, as ``glasswork run`` prints a run:
    the run id, the status and certificate, the model (its plugin's view), and what became of a
    run the monitor left before it ended."""
    from glasswork.console import fmt_number

    lines: list[RenderableType] = []
    head = Text()
    head.append(plain_text(state.name or source.title, "bold"))
    if state.solver:
        head.append(plain_text(f"  solver {state.solver}"))
    head.append(plain_text(f"  run {state.run_id or '-'}"))
    lines.append(head)
    if state.info or state.finished:
        lines += [Text(""), Text("Model", style="bold")]
        stats = (state.result or {}).get("stats") or {}
        lines.append(
            model_view(
                state.model, state.model_text, stats=stats if isinstance(stats, dict) else {}, absent=state.no_model
            )
        )
    certificate = Table.grid(padding=(0, 2))
    status = state.status if state.finished else "running"
    certificate.add_row("status", Text(status, style="green" if status == "optimal" else "yellow"))
    certificate.add_row("objective", fmt_number(state.best_objective, 10))
    certificate.add_row("lower bound", fmt_number(state.best_lower_bound, 10))
    certificate.add_row("gap", fmt_gap(state.best_objective, state.best_lower_bound, status))
    lines += [Text(""), Group(Text("Certificate", style="bold"), certificate)]
    if state.rashomon is not None:
        lines += [Text(""), set_summary(state.rashomon, finished=state.finished)]
    if state.rashomon_points:
        lines += [Text(""), points_text(state.rashomon_points)]
    if state.error:
        lines.append(plain_text(f"error: {state.error}", "red"))
    lines.append(Text(""))
    lines.append(_fate(state, source, asked_to_stop))
    return Group(*lines)


def _fate(state: RunState, source: OwnedRun | FollowedRun, asked_to_stop: bool) -> Text:
    """Where the run is now: stored (and under which id), still running elsewhere, or cancelled."""
    run = f"run {state.run_id[:12]}" if state.run_id else "the run"
    if isinstance(source, FollowedRun):
        if state.finished:
            return plain_text(f"{run} is recorded in {source.store.path} (glasswork runs show {state.run_id[:12]}).")
        return plain_text(
            f"The monitor closed; {run} goes on in its own process and is recorded in {source.store.path} "
            f"when it ends (glasswork monitor {state.run_id[:12] or 'latest'} follows it again).",
            "yellow",
        )
    launch = getattr(source, "launch", None)  # an OwnedRun's; a replayed recording has none
    store = launch.store if launch is not None else None
    where = f"recorded in {store.path}" if store is not None else "not recorded (no run store)"
    if state.status == "failed" and not state.run_id:
        return plain_text("Nothing was run, and nothing was recorded.", "red")
    if not state.finished:
        what = "was asked to stop" if asked_to_stop else "was left running"
        return plain_text(f"The monitor closed before {run} ended: it {what}; it is {where} once stopped.", "yellow")
    if state.status == "failed":
        return plain_text(f"{run} failed; it is {where}.", "red")
    if state.status == "cancelled":
        return plain_text(f"{run} was cancelled; its best model (above) is {where}.", "yellow")
    return plain_text(f"{run} is {where}.")
