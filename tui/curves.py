"""A recorded set's figures as epsilon grows (``glasswork.rashomon.curves``) in the terminal UI:
``c`` on the stored set's screen opens them as a table, one row per threshold where the set
changes, with the same cells as ``glasswork rashomon RUN --curves`` and what they cover above it."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from glasswork.display.console import plain_text
from glasswork.rashomon.curves import SIZE_NOTE, cells, coverage, header, rows
from glasswork.tui.widgets import BACK_KEY, HELP_KEY, RowTable

NO_CURVES = (
    "no curves: the set was recorded before glasswork kept them, or without a model to compare its "
    "members with; run its spec again"
)


def curves_of(summary_doc: Any) -> dict[str, Any] | None:
    """The curves recorded with a stored set's summary (``details["rashomon"]``), else ``None``."""
    figures = summary_doc.get("multiplicity") if isinstance(summary_doc, dict) else None
    doc = figures.get("curves") if isinstance(figures, dict) else None
    return doc if isinstance(doc, dict) and isinstance(doc.get("points"), dict) else None


class CurvesScreen(Screen[None]):
    """The curves of one recorded set, as a table."""

    BINDINGS = [BACK_KEY, HELP_KEY]
    DEFAULT_CSS = """
    CurvesScreen #curves-coverage { height: auto; padding: 0 1; background: $boost; }
    CurvesScreen DataTable { height: 1fr; }
    """

    def __init__(self, title: str, doc: dict[str, Any]) -> None:
        super().__init__()
        self.title_text = title
        self.doc = doc

    def compose(self) -> ComposeResult:
        said = plain_text(f"{self.title_text}: the set as epsilon grows, {coverage(self.doc)}")
        points = rows(self.doc)
        for line in [*self.doc.get("notes", []), *([SIZE_NOTE] if not all(p.get("exact") for p in points) else [])]:
            said.append("\n")
            said.append_text(plain_text(line))
        yield Static(said, id="curves-coverage")
        yield RowTable(id="curves")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#curves", DataTable)
        for name in header(self.doc):
            table.add_column(name, key=name)
        for point in rows(self.doc):
            table.add_row(*(plain_text(c) for c in cells(self.doc, point)))
        table.focus()
