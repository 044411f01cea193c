"""The live monitor: one run's bounds, gap, counters, solver panels and incumbent model.

The records come from a *source*: ``OwnedRun`` runs a spec in this process (the runner blocks a
Textual thread worker while the solver searches without the GIL in its own thread) and
``FollowedRun`` tails the events file of a run another process owns, then reads the rest from
DuckDB once the owner has recorded it and removed the file. The screen drains its source a few
times a second, so however fast a solver emits events the interface stays responsive.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import time
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from glasswork.tui.state import LogFollower, RunState, event_record, finish_record, start_record
from glasswork.tui.views import fmt, fmt_rate, model_view
from glasswork.tui.widgets import Chart, ErrorScreen, PanelChart, draw_bounds, gap_bar

POLL_SECONDS = 0.25
OWNER_CHECK_SECONDS = 3.0  # a followed run silent this long: check that its process still lives
SHOWN_COUNTERS = 12


class QueueSink:
    """An event sink that hands records to the UI thread through a queue (never blocks the run)."""

    def __init__(self, records: queue.SimpleQueue[dict[str, Any]]) -> None:
        self.records = records

    def on_start(self, run: Any) -> None:
        self.records.put({"kind": "start", **run.to_dict()})

    def on_event(self, event: Any) -> None:
        self.records.put(event.to_dict())

    def on_finish(self, run: Any, outcome: Any, error: BaseException | None) -> None:
        record: dict[str, Any] = {"kind": "finish", "run_id": run.run_id,
                                  "result": None if outcome is None else outcome.to_dict()}
        if error is not None:
            record["error"] = f"{type(error).__name__}: {error}"
        self.records.put(record)


class OwnedRun:
    """A spec run by this process; the monitor owns it and can cancel it."""

    owned = True

    def __init__(self, loaded: Any, *, db: str | None = None, no_store: bool = False) -> None:
        self.loaded = loaded
        self.db = db
        self.no_store = no_store
        self.records: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.runner: Any = None
        self.exit_code = 0
        self.done = False
        self.cancel_requested = False

    @property
    def title(self) -> str:
        return str(self.loaded.path or self.loaded.spec.name)

    def run(self) -> None:
        """Blocks until the run ends; call it from a thread worker. Never raises."""
        from glasswork.data import DataError
        from glasswork.runner import RunAborted, Runner, SolverFailure
        from glasswork.store import RunStore, StoreError, StoreSink, default_db_path

        sinks: list[Any] = []
        store_sink = None
        try:
            spec = self.loaded.spec
            problem = Runner().prepare(self.loaded)  # before the store opens: bad data writes nothing
            if not self.no_store and (self.db is not None or spec.store.enabled):
                store = RunStore(default_db_path(self.db, spec.store.path, self.loaded.base_dir))
                store.open()
                store_sink = StoreSink(store)
                sinks.append(store_sink)  # first: the run is recorded before the UI hears it ended
            sinks.append(QueueSink(self.records))
            self.runner = Runner(sinks=sinks)
            if self.cancel_requested:
                self.runner.cancel()  # asked before the runner existed: stops as soon as it starts
            self.runner.run(self.loaded, problem=problem)
        except StoreError as exc:
            self._fail("The run store cannot be used", f"{exc}; nothing was run.", 1)
        except DataError as exc:
            self._fail("Bad data", f"{self.title}: data error: {exc}", 2)
        except SolverFailure as exc:
            self._fail("The run failed", f"{self.title}: {exc}", 1)
        except RunAborted:
            self._fail("Run abandoned", f"{self.title}: run abandoned; no result.", 130)
        except Exception as exc:  # shown, not raised: the UI must survive any failure
            self._fail("The run failed", f"{self.title}: {type(exc).__name__}: {exc}", 1)
        finally:
            for problem in (self.runner.sink_errors if self.runner else []) + (
                    store_sink.warnings if store_sink else []):
                self.records.put({"kind": "log", "elapsed": 0.0, "level": "warning", "message": problem})
            self.done = True

    def _fail(self, title: str, message: str, code: int) -> None:
        self.exit_code = code
        self.records.put({"kind": "failed", "title": title, "message": message})

    def cancel(self) -> str:
        self.cancel_requested = True
        if self.runner is not None:
            self.runner.cancel()
        return "cancelling: the solver keeps its best model (status cancelled)"

    def poll(self) -> list[dict[str, Any]]:
        out = []
        while True:
            try:
                out.append(self.records.get_nowait())
            except queue.Empty:
                return out


class FollowedRun:
    """A run another process owns, followed through its events file and then its DuckDB rows."""

    owned = False

    def __init__(self, store: Any, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.follower = LogFollower(store.log_path(run_id))
        self.exit_code = 0
        self.done = False
        self.n_events = 0  # events read from the log (their seq are 0 .. n_events - 1)
        self.info: dict[str, Any] = {}
        self.pending: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.need_store = not self.follower.path.exists()
        self.store_reading = False
        self.recover = False
        self._last_data = time.monotonic()

    @property
    def title(self) -> str:
        return f"run {self.run_id[:12]}"

    def poll(self) -> list[dict[str, Any]]:
        out = []
        while True:
            try:
                out.append(self.pending.get_nowait())
            except queue.Empty:
                break
        if self.done or self.need_store:
            return out
        records = self.follower.poll()
        for record in records:
            kind = record.get("kind")
            if kind == "start":
                self.info = record
            elif kind != "finish":
                self.n_events += 1
        out.extend(records)
        now = time.monotonic()
        if records:
            self._last_data = now
        if self.follower.finished:
            self.done = True
        elif self.follower.vanished:
            self.need_store = True
        elif now - self._last_data > OWNER_CHECK_SECONDS:
            self._last_data = now
            if not self._owner_alive():
                self.need_store = self.recover = True  # opening the store imports its log
        return out

    def _owner_alive(self) -> bool:
        pid, host = self.info.get("pid"), self.info.get("host")
        if pid is None or host != socket.gethostname():
            return True  # cannot tell from here: keep following
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True

    def read_store(self) -> None:
        """The rest of the run from DuckDB (blocks on the lock; call from a thread worker)."""
        from glasswork.store import StoreError

        try:
            if self.recover:
                self.store.open()  # the owner died: recovery records its run as failed
            details = self.store.details(self.run_id)
            events = self.store.events(self.run_id)
        except StoreError as exc:
            self.pending.put({"kind": "failed", "title": "Cannot read the run store", "message": str(exc)})
            self.done = True
            return
        if not self.info:
            self.pending.put(start_record(details))
        for row in events:
            if row.get("seq", 0) >= self.n_events:
                self.pending.put(event_record(row))
        self.n_events = max(self.n_events, len(events))
        finish = finish_record(details)
        if finish:
            self.pending.put(finish)  # type: ignore[arg-type]
            self.done = True
        elif self.follower.path.exists():
            self.need_store = False  # the log (re)appeared: follow it again
        else:
            self.pending.put({"kind": "log", "elapsed": 0.0, "level": "warning", "message": (
                f"run {self.run_id[:12]} is marked running but has no events file here "
                "(another machine?); showing what the store holds")})
            self.done = True

    def cancel(self) -> str:
        """Ask the owner process to stop, as Ctrl-C in its terminal would."""
        pid, host = self.info.get("pid"), self.info.get("host")
        if self.done or pid is None:
            return "the run is not live"
        if host != socket.gethostname():
            return f"the run belongs to a process on {host}; cancel it there"
        try:
            os.kill(int(pid), signal.SIGINT)
        except OSError as exc:
            return f"cannot signal process {pid}: {exc}"
        return f"asked process {pid} to stop (it keeps its best model, status cancelled)"


class MonitorScreen(Screen[None]):
    """Watch one run converge."""

    BINDINGS = [
        Binding("c", "cancel", "cancel run"),
        Binding("ctrl+c", "cancel", "cancel run", show=False, priority=True),  # as in `glasswork run`
        Binding("m", "model", "full model"),
        Binding("q,escape", "close", "close"),
        Binding("question_mark", "app.help", "help", key_display="?"),
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
        self._gw_closing = False
        self._gw_failed = False
        self._gw_left = False
        self._gw_timer: Any = None
        self._gw_panels: list[Any] = []

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
        if isinstance(self.source, FollowedRun) and self.source.need_store and not self.source.done \
                and not self.source.store_reading:
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

    def refresh_view(self) -> None:
        s = self.state
        self.query_one("#header", Static).update(self._header())
        self.query_one("#bounds", Chart).draw(lambda plt: draw_bounds(
            plt, [("objective", s.objective, "orange"), ("lower bound", s.lower_bound, "cyan")],
            "objective and lower bound"))
        self.query_one("#gap", Static).update(gap_bar(s.gap, s.gap_closed))
        self.query_one("#counters", Static).update(self._counters())
        self._panels()
        if s.model is not self._gw_model_seen:
            self._gw_model_seen = s.model
            title = Text("best model" if s.finished else "current best model", style="bold")
            self.query_one("#model", Static).update(Group(title, model_view(s.model, s.model_text, compact=True)))
        log = self.query_one("#log", RichLog)
        messages = list(s.messages)
        for t, level, message in messages[self._gw_shown_messages:] if len(messages) >= self._gw_shown_messages else messages:
            log.write(Text(f"{t:8.2f}s {level:<7} {message}",
                           style={"warning": "yellow", "error": "red"}.get(level, "")))
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
        table = Table(box=None, pad_edge=False, show_edge=False, expand=False, title="counters",
                      title_justify="left", title_style="bold")
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
        if self.source.owned and not self.source.done:
            self.source.cancel()

    # -- actions ------------------------------------------------------------------------------

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
