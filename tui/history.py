"""The history screen: the DuckDB run table with filters and sweeps grouped, from which a run
opens (``run_screen``), two runs are compared (``compare_screen``) and a spec file is launched
into the live monitor.

Every read opens the database only for the moment it runs (``RunStore`` does), on a thread
worker, so a run writing to the same file is never blocked for long and the screen never freezes
while it waits for the lock.
"""

from __future__ import annotations

from typing import Any

from glasswork.display.console import fmt_gap, fmt_when, plain_text
from glasswork.store import StoreError, SweepRow
from glasswork.tui.compare_screen import CompareScreen
from glasswork.tui.run_screen import RunScreen
from glasswork.tui.views import fmt
from glasswork.tui.widgets import FILTER_KEY, HELP_KEY, ErrorScreen, RowTable
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Select, Static

STATES = ("running", "finished", "stopped", "cancelled", "failed")
LIST_LIMIT = 500
AUTO_RELOAD_SECONDS = 5.0


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
        FILTER_KEY,
        Binding("q", "app.quit", "quit"),
        HELP_KEY,
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
        yield RowTable(id="runs")
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
    def _load(
        self, solver: str | None, state: str | None, name: str | None, grouped: bool = False, sweep: str | None = None
    ) -> None:
        if not self.store.path.exists():
            self.app.call_from_thread(
                self._show_rows,
                [],
                f"no run store at {self.store.path} yet: launch a spec with l, or point --db at one",
            )
            return
        try:
            if not self._recovered:
                self.store.open()  # imports the logs of runs whose process died
                self._recovered = True
            rows: list[Any] = self.store.list_runs(solver=solver, state=state, name=name, sweep=sweep, limit=LIST_LIMIT)
            if grouped:
                groups = self.store.sweeps(solver=solver, name=name)
                rows = sorted([r for r in rows if not r.sweep_id] + groups, key=lambda r: r.started_at, reverse=True)
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
                table.add_row(
                    "",
                    Text(f"sweep {r.sweep_id[:6]}", style="bold"),
                    plain_text(r.name),
                    plain_text(r.solver),
                    Text(r.progress(), style="cyan" if r.active else ""),
                    fmt(r.best_objective, 6),
                    "-",
                    fmt_when(r.started_at, seconds=False),
                    "-",
                    key=_row_key(r),
                )
                continue
            table.add_row(
                "*" if r.run_id in self.marked else "",
                r.run_id[:8],
                plain_text(r.name),
                plain_text(r.solver),
                plain_text(r.status or r.state),
                fmt(r.objective, 6),
                fmt_gap(r.objective, r.lower_bound, r.status, compact=True),  # the status is its neighbour
                fmt_when(r.started_at, seconds=False),
                "-" if r.elapsed is None else f"{r.elapsed:.1f}s",
                key=r.run_id,
            )
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
        self._status(note)

    def _status(self, note: str | None = None) -> None:
        sweeps = sum(isinstance(r, SweepRow) for r in self.rows)
        text = note or (
            f"{len(self.rows) - sweeps} run(s)"
            + (f" and {sweeps} sweep(s)" if sweeps else "")
            + f" in {self.store.path}"
        )
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
        try:
            docs = [self.store.details(r) for r in run_ids]
            events = [self.store.events(r) for r in run_ids]
        except StoreError as exc:
            self.app.call_from_thread(self._error, "Cannot read the run store", str(exc))
            return
        screen = RunScreen(docs[0], events[0], store=self.store) if len(docs) == 1 else CompareScreen(docs, events)
        self.app.call_from_thread(self.app.push_screen, screen)

    def action_watch(self) -> None:
        from glasswork.tui.monitor import MonitorScreen
        from glasswork.tui.sources import FollowedRun

        run_id = self._current()
        if run_id is None:
            return
        try:
            source = FollowedRun(self.store, run_id)
        except StoreError as exc:  # a stored id that cannot name a journal (written before ids were checked)
            self.notify(str(exc), title="cannot watch this run", severity="error", markup=False)
            return
        self.app.push_screen(MonitorScreen(source))

    # -- launching ----------------------------------------------------------------------------

    def action_launch(self) -> None:
        self.app.push_screen(LaunchScreen(), self.launch)

    def launch(self, spec_path: str | None) -> None:
        """Validate a spec file and run it in the live monitor (errors shown, not raised)."""
        from glasswork.tui.monitor import MonitorScreen
        from glasswork.tui.sources import OwnedRun, load_spec_or_error

        if not spec_path:
            return
        launch = load_spec_or_error(spec_path, db=str(self.store.path), follow_spec_store=True)
        if isinstance(launch, tuple):
            self.app.push_screen(ErrorScreen(*launch))
            return
        self.app.push_screen(MonitorScreen(OwnedRun(launch)))
