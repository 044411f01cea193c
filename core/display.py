"""What a solver shows: its model as rich text, and the monitor panels its counters feed.

Both come from plugins through hooks (``render_model`` and ``monitor_panels`` in
``glasswork.hookspecs``), so the command line and the terminal UI never name a solver and a
third-party solver is shown exactly as a built-in one. Panels are plain descriptions with the
data they have folded from a run's records; the terminal UI draws them. Nothing here imports
Textual, so plugins can describe panels without depending on the UI.

The panel classes live in ``glasswork.panels`` (the registry checks a plugin's panels against
them, and ``model_view`` here asks the registry: one module would be a cycle) and are
re-exported here, where plugins import them.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from glasswork.panels import (  # noqa: F401  (re-exported: plugins describe their panels from here)
    MAX_POINTS,
    BarsPanel,
    Panel,
    ScatterPanel,
    Series,
    SeriesPanel,
    finite,
)
from glasswork.quoting import terminal_text

if TYPE_CHECKING:
    from glasswork.registry import Registry


# -- models ----------------------------------------------------------------------------------------


def drawing_fault(view: Any) -> Exception | None:
    """Why a plugin's view cannot be printed (not a rich renderable, or it raises when drawn: a
    name from the data read as markup), or ``None``. Drawn once into a throwaway console, so the
    failure is the plugin's note over the model's text, not an exception where the view is printed."""
    from rich.console import Console
    from rich.protocol import is_renderable

    if not is_renderable(view):
        return TypeError(f"render_model returned an object of type {type(view).__name__!r}, not a rich renderable")
    try:
        Console(width=120, file=io.StringIO(), color_system=None).print(view)
    except Exception as exc:
        return exc
    return None


def model_table(title: str | None = None) -> Table:
    """The house style for model tables (rules, points, risks), for ``render_model`` hooks."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, expand=False)


def model_view(
    model: dict[str, Any] | None,
    text: str | None = None,
    *,
    compact: bool = False,
    stats: dict[str, Any] | None = None,
    registry: Registry | None = None,
    absent: str | None = None,
) -> RenderableType:
    """The structured view of a model from its plugin's ``render_model``, else its own text;
    ``absent`` says why there is none (``glasswork.result.no_model_reason``), else "no model yet".

    A renderer that fails (a model stored by an older version, a plugin bug) never hides the
    model: its text is shown, under a note saying which renderer failed.
    """
    note: Text | None = None
    if model is not None:
        if registry is None:
            from glasswork.registry import get_registry

            registry = get_registry()
        answer = registry.render_model(model, compact=compact, stats=stats)
        if answer.value is not None:
            fault = drawing_fault(answer.value)
            if fault is None:
                return answer.value
            answer.errors.append((answer.plugin or "?", fault))
        if answer.errors:
            note = Text(
                terminal_text(
                    f"(the view of {model.get('kind')!r} models failed: {answer.failure()}; showing the model's text)"
                ),
                style="dim",
            )
    if text:  # the model's own text: data, shown as it is written, never as markup or control codes
        shown = Text(terminal_text(text, newlines=True))
        return Group(note, shown) if note is not None else shown
    return Text(terminal_text(absent), style="yellow") if absent else Text("(no model yet)", style="dim")
