"""The run history: the DuckDB run table with filters, a run's model and bound trajectory,
side-by-side comparison of two runs, and launching a spec file into the live monitor.

Every read opens the database only for the moment it runs (``RunStore`` does), on a thread
worker, so a run writing to the same file is never blocked for long and the screen never freezes
while it waits for the lock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Select, Static

from glasswork.console import fmt_when
from glasswork.spec import flatten
from glasswork.store import SweepRow
from glasswork.tui.state import RunState
from glasswork.tui.views import fmt, fmt_pct, model_view
from glasswork.tui.widgets import Chart, ErrorScreen, PanelChart, draw_bounds

STATES = ("running", "finished", "stopped", "cancelled", "failed")
LIST_LIMIT = 500
AUTO_RELOAD_SECONDS = 5.0




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


class ModelScreen(Screen[None]):
    """A model on its own: its plugin's full view (or its text), and the solver's panels that the
    final result feeds (a frontier of solutions, say)."""

    BINDINGS = [
        Binding("t", "toggle_text", "structured / text"),
        Binding("escape,q", "app.pop_screen", "back"),
        Binding("question_mark", "app.help", "help", key_display="?"),
    ]
    DEFAULT_CSS = """
    ModelScreen #title { height: 1; padding: 0 1; background: $boost; text-style: bold; }
    ModelScreen PanelChart { height: 16; }
    ModelScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(self, title: str, model: dict[str, Any] | None, text: str | None,
                 stats: dict[str, Any] | None = None, solver: str | None = None) -> None:
        super().__init__()
        self.model_title, self.model, self.text = title, model, text
        self.stats = stats or {}
        self.panels = []
        if solver and self.stats:
            from glasswork.registry import get_registry

            self.panels = get_registry().monitor_panels(solver)
            for panel in self.panels:
                try:
                    panel.feed({"kind": "finish", "result": {"stats": self.stats}})
                except Exception:  # a plugin's panel that cannot read this result is left out
                    panel.title = ""
            self.panels = [p for p in self.panels if p.title and p.has_data]
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
        body = Text(self.text or "(no text)") if self.as_text else model_view(self.model, self.text,
                                                                              stats=self.stats)
        self.query_one("#model", Static).update(body)

    def action_toggle_text(self) -> None:
        self.as_text = not self.as_text
        self._show()


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


class CompareScreen(Screen[None]):
    """Two runs side by side: the spec keys that differ, certificates, metrics, models, bounds."""

    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "back"),
        Binding("question_mark", "app.help", "help", key_display="?"),
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
            values = [d.get(key) for d in self.docs]
            table.add_row(key, *(fmt_pct(v) if key == "gap" else fmt(v, 8) for v in values))
        for key in sorted({m for d in self.docs for m in d["metrics"]}):
            table.add_row(key, *(fmt(d["metrics"].get(key), 6) for d in self.docs))
        if not differing:
            table.caption = "(the specs are identical)"
        return table

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            with VerticalScroll(id="fields"):
                yield Static(self._fields())
            yield Chart(id="trajectories")
        with Horizontal(id="both"):
            for i, (doc, state) in enumerate(zip(self.docs, self.states)):
                with VerticalScroll(classes="side", id=f"side-{i}"):
                    yield Static(Group(Text(f"{doc['run_id'][:8]} {doc['name']}", style="bold"),
                                       model_view(state.model, state.model_text, compact=True)))
        yield Footer()

    def on_mount(self) -> None:
        a, b = self.states
        self.query_one("#trajectories", Chart).draw(lambda plt: draw_bounds(plt, [
            (f"{a.run_id[:8]} objective", a.objective, "orange"), (f"{a.run_id[:8]} bound", a.lower_bound, "red"),
            (f"{b.run_id[:8]} objective", b.objective, "cyan"), (f"{b.run_id[:8]} bound", b.lower_bound, "blue"),
        ], "bound trajectories"))


class LaunchScreen(ModalScreen[str | None]):
    """Asks for a spec file to run in the live monitor."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    LaunchScreen { align: center middle; }
    LaunchScreen > Vertical { width: 80; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Run a spec file in the live monitor (enter to start, escape to cancel)")
            yield Input(placeholder="path/to/spec.yaml", id="spec-path")

    @on(Input.Submitted, "#spec-path")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _row_key(row: SweepRow) -> str:
    return f"sweep:{row.sweep_id}"


class HistoryScreen(Screen[None]):
    """Every recorded run, newest first."""

    BINDINGS = [
        Binding("enter", "open", "open run", show=False),
        Binding("o", "open", "open run"),
        Binding("space", "mark", "mark"),
        Binding("c", "compare", "compare marked"),
        Binding("w", "watch", "watch live"),
        Binding("l", "launch", "launch spec"),
        Binding("g", "group", "group sweeps"),
        Binding("r", "reload", "reload"),
        Binding("slash", "filter", "filter", key_display="/"),
        Binding("q", "app.quit", "quit"),
        Binding("question_mark", "app.help", "help", key_display="?"),
    ]
    DEFAULT_CSS = """
    HistoryScreen #filters { height: 3; }
    HistoryScreen #filters Input { width: 1fr; }
    HistoryScreen #filters Select { width: 24; }
    HistoryScreen #status { height: 1; padding: 0 1; color: $text-muted; }
    HistoryScreen DataTable { height: 1fr; }
    """

    def __init__(self, db: str | None = None) -> None:
        super().__init__()
        from glasswork.store import RunStore, default_db_path

        self.db = db
        self.store = RunStore(default_db_path(db))
        self.rows: list[Any] = []
        self.marked: list[str] = []
        self.grouped = False  # sweeps as one row each
        self.sweep: str | None = None  # showing the runs of this sweep
        self._recovered = False
        self._gw_shown = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="filters"):
            yield Input(placeholder="solver", id="f-solver")
            yield Select([(s, s) for s in STATES], prompt="any state", id="f-state")
            yield Input(placeholder="spec name contains", id="f-name")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in ("", "run", "name", "solver", "status", "objective", "gap", "started", "elapsed"):
            table.add_column(column, key=column or "mark")
        self.action_reload()
        table.focus()
        self.set_interval(AUTO_RELOAD_SECONDS, self._auto_reload)

    def _auto_reload(self) -> None:
        """Keep live runs' figures fresh while this screen is the one shown."""
        live = any(getattr(r, "state", None) == "running" or getattr(r, "active", False) for r in self.rows)
        if self.is_current and (live or self.grouped):
            self.action_reload()

    def on_screen_resume(self) -> None:
        if self._gw_shown:  # back from another screen: a run may have been added or finished
            self.action_reload()
        self._gw_shown = True

    # -- loading ------------------------------------------------------------------------------

    def _filters(self) -> dict[str, Any]:
        state = self.query_one("#f-state", Select).value
        return {
            "solver": self.query_one("#f-solver", Input).value.strip() or None,
            "state": state if isinstance(state, str) else None,
            "name": self.query_one("#f-name", Input).value.strip() or None,
        }

    def action_reload(self) -> None:
        self._load(**self._filters(), grouped=self.grouped, sweep=self.sweep)

    def action_group(self) -> None:
        """Toggle sweeps shown as one row each (their progress, live); from a sweep's runs, back."""
        self.grouped = not self.grouped or self.sweep is not None
        self.sweep = None
        self.action_reload()

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def _load(self, solver: str | None, state: str | None, name: str | None, grouped: bool = False,
              sweep: str | None = None) -> None:
        from glasswork.store import StoreError

        if not self.store.path.exists():
            self.app.call_from_thread(self._show_rows, [], f"no run store at {self.store.path} yet: "
                                                           "launch a spec with l, or point --db at one")
            return
        try:
            if not self._recovered:
                self.store.open()  # imports the logs of runs whose process died
                self._recovered = True
            rows: list[Any] = self.store.list_runs(solver=solver, state=state, name=name, sweep=sweep,
                                                   limit=LIST_LIMIT)
            if grouped:
                groups = self.store.sweeps(solver=solver, name=name)
                rows = sorted([r for r in rows if not r.sweep_id] + groups,
                              key=lambda r: r.started_at, reverse=True)
        except StoreError as exc:
            self.app.call_from_thread(self._error, "Cannot read the run store", str(exc))
            return
        note = f"runs of sweep {sweep[:12]}: g goes back to the sweeps" if sweep else None
        self.app.call_from_thread(self._show_rows, rows, note)

    def _error(self, title: str, message: str) -> None:
        self.query_one("#status", Static).update(Text(message, style="red"))
        self.app.push_screen(ErrorScreen(title, message))

    def _show_rows(self, rows: list[Any], note: str | None) -> None:
        self.rows = rows
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        for r in rows:
            if isinstance(r, SweepRow):
                table.add_row("", Text(f"sweep {r.sweep_id[:6]}", style="bold"), r.name, r.solver,
                              Text(r.progress(), style="cyan" if r.active else ""), fmt(r.best_objective, 6),
                              "-", fmt_when(r.started_at, seconds=False), "-", key=_row_key(r))
                continue
            table.add_row(
                "*" if r.run_id in self.marked else "", r.run_id[:8], r.name, r.solver, r.status or r.state,
                fmt(r.objective, 6), fmt_pct(r.gap), fmt_when(r.started_at, seconds=False),
                "-" if r.elapsed is None else f"{r.elapsed:.1f}s", key=r.run_id)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
        self._status(note)

    def _status(self, note: str | None = None) -> None:
        sweeps = sum(isinstance(r, SweepRow) for r in self.rows)
        text = note or (f"{len(self.rows) - sweeps} run(s)" + (f" and {sweeps} sweep(s)" if sweeps else "")
                        + f" in {self.store.path}")
        if self.marked:
            text += f"  marked: {', '.join(m[:8] for m in self.marked)}"
        self.query_one("#status", Static).update(text)

    @on(Input.Submitted)
    @on(Select.Changed)
    def _filter_changed(self) -> None:
        self.action_reload()
        self.query_one(DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#f-name", Input).focus()

    # -- a row --------------------------------------------------------------------------------

    def _current_row(self) -> Any:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def _current(self) -> str | None:
        """The run under the cursor (None on a sweep row)."""
        row = self._current_row()
        return None if row is None or isinstance(row, SweepRow) else row.run_id

    def action_open(self) -> None:
        row = self._current_row()
        if isinstance(row, SweepRow):  # a sweep opens as the list of its runs
            self.sweep, self.grouped = row.sweep_id, False
            self.action_reload()
            return
        run_id = self._current()
        if run_id is None:
            self.notify("no run selected")
            return
        self._open([run_id])

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    def action_mark(self) -> None:
        run_id = self._current()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked.append(run_id)
            self.marked = self.marked[-2:]
        table = self.query_one(DataTable)
        for r in self.rows:
            if not isinstance(r, SweepRow):
                table.update_cell(r.run_id, "mark", "*" if r.run_id in self.marked else "")
        self._status()

    def action_compare(self) -> None:
        if len(self.marked) != 2:
            self.notify("mark two runs with space first", severity="warning")
            return
        self._open(list(self.marked))

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def _open(self, run_ids: list[str]) -> None:
        from glasswork.store import StoreError

        try:
            docs = [self.store.details(r) for r in run_ids]
            events = [self.store.events(r) for r in run_ids]
        except StoreError as exc:
            self.app.call_from_thread(self._error, "Cannot read the run store", str(exc))
            return
        screen = RunScreen(docs[0], events[0]) if len(docs) == 1 else CompareScreen(docs, events)
        self.app.call_from_thread(self.app.push_screen, screen)

    def action_watch(self) -> None:
        from glasswork.tui.monitor import FollowedRun, MonitorScreen

        run_id = self._current()
        if run_id is None:
            return
        self.app.push_screen(MonitorScreen(FollowedRun(self.store, run_id)))

    # -- launching ----------------------------------------------------------------------------

    def action_launch(self) -> None:
        self.app.push_screen(LaunchScreen(), self.launch)

    def launch(self, spec_path: str | None) -> None:
        """Validate a spec file and run it in the live monitor (errors shown, not raised)."""
        from glasswork.tui.monitor import MonitorScreen, OwnedRun

        if not spec_path:
            return
        loaded = load_spec_or_error(spec_path)
        if isinstance(loaded, tuple):
            self.app.push_screen(ErrorScreen(*loaded))
            return
        # recorded in the store this screen shows, unless the spec turns recording off
        self.app.push_screen(MonitorScreen(OwnedRun(loaded, db=str(self.store.path),
                                                    no_store=not loaded.spec.store.enabled)))


def load_spec_or_error(spec_path: str, overrides: tuple[str, ...] = ()) -> Any:
    """The loaded spec, or ``(title, message)`` saying readably why it cannot run."""
    from glasswork.cli import _load
    from glasswork.spec import SpecError

    path = Path(spec_path).expanduser()
    if not path.is_file():
        return ("No such spec file", f"{spec_path}: not a file")
    try:
        return _load(str(path), overrides)
    except SpecError as exc:
        lines = [str(issue) for issue in exc.issues]
        return ("Invalid spec", "\n".join(lines) + f"\n\n{spec_path}: invalid spec "
                f"({len(exc.issues)} error(s)); nothing was run.")
    except Exception as exc:
        return ("Cannot read the spec", f"{spec_path}: {type(exc).__name__}: {exc}")
