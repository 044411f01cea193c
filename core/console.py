"""Terminal output for the CLI: the live progress line on stderr and the printed result.

Rendering lives here, not in the runner, so the runner stays usable from notebooks and workers.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from glasswork.events import Event
from glasswork.quoting import terminal_text

if TYPE_CHECKING:
    from glasswork.runner import RunInfo, RunOutcome


def fmt_number(value: Any, digits: int = 6) -> str:
    """Numbers for people: ``-`` for missing or NaN, thousands separated, ``digits`` figures."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}g}"
    return str(value)


def plain_text(value: Any, style: str = "", *, newlines: bool = False) -> Text:
    """Data (a name, a label, a message) for a rich table or print: no markup is read in it and no
    control character (ESC, carriage return, bidi mark) reaches the terminal."""
    return Text(terminal_text(value, newlines=newlines), style=style)


def fmt_when(value: Any, *, seconds: bool = True) -> str:
    """A stored UTC time in the local time zone."""
    if value is None:
        return "-"
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{n} B"


class ProgressSink:
    """A one-line live view on stderr: elapsed, incumbent, bound, gap, nodes.

    It stays silent for runs shorter than ``delay`` seconds, and when stderr is not a terminal,
    so scripted and piped runs get clean output.
    """

    def __init__(self, console: Console | None = None, *, delay: float = 0.5) -> None:
        self.console = console or Console(stderr=True)
        self.delay = delay
        self._live: Live | None = None
        self._started = 0.0
        self._last: Event | None = None
        self._objective: float | None = None
        self._lower: float | None = None
        self._nodes: int | None = None
        self._solver = ""

    def on_start(self, run: RunInfo) -> None:
        self._started = time.monotonic()
        self._solver = run.solver

    def on_event(self, event: Event) -> None:
        if event.kind == "log":
            if event.level in ("warning", "error"):
                self.console.print(plain_text(event.message, "yellow", newlines=True))
            return
        if event.objective is not None:
            self._objective = event.objective
        if event.lower_bound is not None:
            self._lower = event.lower_bound
        if event.nodes is not None:
            self._nodes = event.nodes
        self._last = event
        if not self.console.is_terminal:
            return
        if self._live is None and time.monotonic() - self._started >= self.delay:
            self._live = Live(self._render(), console=self.console, refresh_per_second=8, transient=True)
            self._live.start()
        elif self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Text:
        elapsed = time.monotonic() - self._started
        gap = None
        if self._objective is not None and self._lower is not None:
            gap = max(0.0, self._objective - self._lower) / max(abs(self._objective), 1e-10)
        parts = [
            f"{self._solver} {elapsed:7.1f}s",
            f"best {fmt_number(self._objective)}",
            f"bound {fmt_number(self._lower)}",
            f"gap {'-' if gap is None else f'{gap:.2%}'}",
        ]
        if self._nodes is not None:
            parts.append(f"nodes {self._nodes:,}")
        return Text("  ".join(parts), style="cyan")

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _records_table(title: str, records: list[dict[str, Any]], limit: int = 50) -> Table:
    """A list of flat dicts (a score-card pool, a frontier) as a table of its scalar columns."""
    columns = [k for k, v in records[0].items() if isinstance(v, (int, float, str, bool)) or v is None]
    table = Table(title=title.replace("_", " ").capitalize(), title_justify="left", title_style="bold")
    for column in columns:
        table.add_column(plain_text(column), justify="right" if not isinstance(records[0][column], str) else "left")
    for record in records[:limit]:
        table.add_row(*(plain_text(fmt_number(record.get(c))) for c in columns))
    if len(records) > limit:
        table.caption = f"{len(records) - limit} more not shown (see --json)"
    return table


def render_outcome(outcome: RunOutcome, console: Console) -> None:
    """Print the model, the certificate, the metrics and the search stats."""
    from glasswork.display import model_view

    info, result = outcome.info, outcome.result
    cert = result.certificate
    console.print(
        Text.assemble(
            plain_text(info.name, "bold"),
            plain_text(
                f"  solver {info.solver} {info.solver_version}  "
                f"train {info.n_train:,} rows, test {info.n_test:,} rows, {info.n_features:,} features"
            ),
        )
    )
    console.print()
    console.print("[bold]Model[/bold]")
    # the model as its plugin draws it (the render_model hook), else its own text
    console.print(model_view(result.model.to_dict(), result.model.to_text()))
    console.print()

    certificate = Table.grid(padding=(0, 2))
    status_style = "green" if cert.status.value == "optimal" else "yellow"
    certificate.add_row("status", Text(cert.status.value, style=status_style))
    certificate.add_row("objective", fmt_number(cert.objective, 10))
    certificate.add_row("lower bound", fmt_number(cert.lower_bound, 10))
    certificate.add_row("gap", "-" if cert.gap is None else f"{cert.gap:.4%}")
    console.print(Group(Text("Certificate", style="bold"), certificate))
    console.print()

    if result.metrics:
        table = Table.grid(padding=(0, 2))
        for key, value in sorted(result.metrics.items()):
            if isinstance(value, (int, float)):
                table.add_row(plain_text(key), fmt_number(value))
        console.print(Group(Text("Metrics", style="bold"), table))
        console.print()

    stats = Table.grid(padding=(0, 2))
    stats.add_row("elapsed", f"{outcome.elapsed:.3f} s")
    stats.add_row("peak memory", fmt_bytes(outcome.peak_memory))
    for key, value in sorted(result.stats.items()):
        if isinstance(value, (int, float, str, bool)):
            stats.add_row(plain_text(key), plain_text(fmt_number(value)))
    console.print(Group(Text("Search", style="bold"), stats))
    for key, value in result.stats.items():
        if _is_records(value):
            console.print()
            console.print(_records_table(key, value))
    if outcome.interrupted:
        console.print()
        console.print("[yellow]The run was interrupted; the model above is the best found before the stop.[/yellow]")
