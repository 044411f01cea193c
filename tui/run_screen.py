"""The run screen: one recorded run's certificate, metrics, bound trajectory and model, and the way
into its Rashomon set (``s``) when it has one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from glasswork.console import fairness_text, fmt_gap, plain_text
from glasswork.tui.model_screen import ModelScreen
from glasswork.rashomon import SetSummary
from glasswork.tui.state import RunState
from glasswork.tui.views import fmt, model_view
from glasswork.tui.widgets import BACK_KEY, Chart, HELP_KEY, draw_bounds


def _summary(doc: dict[str, Any]) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, expand=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("run", plain_text(f"{doc['run_id']}  {doc['name']}"))  # data: no markup, no control codes
    table.add_row("solver", plain_text(f"{doc['solver']} {doc.get('solver_version') or ''}"))
    table.add_row("state", plain_text(str(doc["state"]) + (f"  ({doc['error']})" if doc.get("error") else "")))
    objective, bound = doc.get("objective"), doc.get("lower_bound")
    table.add_row(
        "certificate",
        f"{doc.get('status') or '-'}  objective {fmt(objective, 8)}  "
        f"lower bound {fmt(bound, 8)}  gap {fmt_gap(objective, bound, compact=True)}",  # the bound is its neighbour
    )
    table.add_row("elapsed", "-" if doc.get("elapsed") is None else f"{doc['elapsed']:.2f} s")
    rashomon = doc.get("rashomon")
    if rashomon:
        summary = SetSummary.from_dict(rashomon)
        what = "complete" if summary.complete else ("a sample" if not summary.exhaustive else "incomplete")
        table.add_row(
            "Rashomon set", f"{summary.count:,} models ({what}) within {fmt(summary.threshold, 8)}; s browses it"
        )
    points = doc.get("rashomon_points") or []
    if points:
        table.add_row("sets per point", f"{len(points):,} frontier point(s) with a set; s lists them")
    metrics = doc.get("metrics") or {}
    if metrics:
        table.add_row("metrics", "  ".join(f"{k} {fmt(v, 5)}" for k, v in metrics.items()))
    audit = fairness_text(doc.get("fairness"))
    if audit:
        table.add_row("fairness", plain_text(audit))  # group names are data: no markup read
    return table


class RunScreen(Screen[None]):
    """One recorded run: its certificate and metrics, model, and bound trajectory."""

    BINDINGS = [
        Binding("m", "model", "full model"),
        Binding("e", "export", "export model"),
        Binding("r", "report", "write report"),
        Binding("s", "rashomon", "Rashomon set"),
        BACK_KEY,
        HELP_KEY,
    ]
    DEFAULT_CSS = """
    RunScreen #summary { height: auto; padding: 0 1; background: $boost; }
    RunScreen #trajectory { width: 1fr; }
    RunScreen #model-box { width: 1fr; padding: 0 1; border-left: solid $primary-darken-2; }
    """

    def __init__(
        self, details: dict[str, Any], events: list[dict[str, Any]], folder: Path | None = None, store: Any = None
    ) -> None:
        super().__init__()
        self.store = store  # the RunStore it was read from: the Rashomon set's members are read from it
        self.details = details
        self.events = events
        self.folder = folder  # where exports and reports go (default: the working folder)
        self.state = RunState.from_store(details, events)
        self.written: list[Path] = []

    def compose(self) -> ComposeResult:
        yield Static(_summary(self.details), id="summary")
        with Horizontal():
            s = self.state  # drawn by the chart when it is mounted: a screen's own on_mount may run after
            # its children are gone (the screen closed at once), where querying them fails
            yield Chart(
                lambda plt: draw_bounds(
                    plt,
                    [("objective", s.objective, "orange"), ("lower bound", s.lower_bound, "cyan")],
                    "bound trajectory",
                ),
                id="trajectory",
            )
            with VerticalScroll(id="model-box"):
                yield Static(
                    Group(
                        Text("model", style="bold"),
                        model_view(self.state.model, self.state.model_text, compact=True, absent=self.state.no_model),
                    ),
                    id="model",
                )
        yield Footer()

    def action_model(self) -> None:
        self.app.push_screen(
            ModelScreen(
                f"{self.details['name']} ({self.details['run_id'][:12]})",
                self.state.model,
                self.state.model_text,
                self.details.get("stats") or {},
                self.details.get("solver"),
            )
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``s`` is offered only for a run with a stored Rashomon set (its own, or a frontier's per point)."""
        if action == "rashomon":
            stored = self.details.get("rashomon") or self.details.get("rashomon_points")
            return bool(stored) and self.store is not None
        return True

    def action_rashomon(self) -> None:
        from glasswork.tui.rashomon import RashomonScreen

        self.app.push_screen(RashomonScreen(self.store, self.details, self.folder))

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def action_export(self) -> None:
        """Write the model in every format its run allows, next to each other; say where."""
        from glasswork.export import FORMATS, ExportError, default_path, export_run, write_file

        folder = self.folder or Path.cwd()
        written, skipped = [], []
        for form in FORMATS:
            path = default_path(self.details, form, folder)
            try:
                write_file(path, export_run(self.details, form))
            except ExportError as exc:
                skipped.append(f"{form}: {exc}")
                continue
            written.append(path)
        self.written += written
        message = ("exported to " + ", ".join(str(p) for p in written)) if written else "nothing exported"
        if skipped:
            message += "\n" + "\n".join(skipped)
        self.app.call_from_thread(
            self.notify, message, title="export", severity="warning" if skipped else "information", timeout=12
        )

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def action_report(self) -> None:
        """Write the run's HTML model card; say where."""
        from glasswork.export import ExportError, default_path, write_file
        from glasswork.report import build_report

        path = default_path(self.details, "html", self.folder or Path.cwd())
        try:
            write_file(path, build_report(self.details, self.events))
        except ExportError as exc:
            self.app.call_from_thread(self.notify, f"no report: {exc}", title="report", severity="error")
            return
        self.written.append(path)
        self.app.call_from_thread(self.notify, f"report written to {path}", title="report", timeout=12)
