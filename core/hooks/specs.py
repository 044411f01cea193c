"""Every hook a glasswork plugin can implement.

A plugin is a module (or object) with functions decorated by ``glasswork.hookimpl`` and named
after the hooks below. Third-party plugins are found through the ``glasswork`` entry-point group::

    [project.entry-points.glasswork]
    my_solver = "my_package.plugin"

The built-in solvers register through exactly the same hooks, and everything the command line
and the terminal UI show of a solver (its model, its monitor panels, its sweep defaults) comes
through them, so a third-party solver is shown exactly as a built-in one. The built-in plugins
and the example write each hook with all the arguments below, by these names (pluggy would take
a subset): one signature per hook everywhere. A decorated function whose name matches no hook
below is the plugin's load error (``glasswork plugins`` shows it), never silently ignored.
See ``docs/plugins.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from glasswork.contract.solver import Solver
    from glasswork.display.panels import Panel
    from glasswork.export.inputs import ExportRequest, ModelInputs
    from rich.console import RenderableType

PROJECT = "glasswork"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_solvers(register: Callable[[type[Solver]], None]) -> None:
    """Register solver classes by calling ``register(SolverClass)`` once per solver.

    Each class subclasses ``glasswork.Solver``, sets ``name``, ``version`` and ``spec_model``
    (a ``glasswork.SolverSpec`` subclass whose ``solver`` field is ``Literal[name]``) and
    implements ``solve(problem, ctx)``. A name claimed by two plugins is an error: neither is
    used until one is removed or disabled with ``GLASSWORK_DISABLE_PLUGINS``.
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add commands to the ``glasswork`` command line.

    ``cli`` is the root ``click.Group``; decorate new commands with ``@cli.command()``.
    """


@hookspec(firstresult=True)
def render_model(model: dict[str, Any], compact: bool, stats: dict[str, Any]) -> RenderableType | None:
    """Render a model as rich text for ``glasswork run``, ``runs show`` and the terminal UI.

    ``model`` is the model's ``to_dict()`` form, as the run store keeps it: look at
    ``model["kind"]`` and return ``None`` for kinds that are not yours, so the next plugin (and
    finally the model's own text) gets its turn. ``compact`` asks for a view that fits the
    monitor's model box (drop detail columns); ``stats`` is the result's ``stats`` (empty while
    a search runs), for figures a full view may show beside the model. Return any Rich
    renderable; ``glasswork.display.views.model_table`` gives the house table style. Put text from the
    data (feature names, labels) in as ``glasswork.display.console.plain_text``, never as markup. A
    renderer that raises, returns no renderable, or returns one that fails to draw is reported in
    the view and the model's text is shown instead.
    """


@hookspec
def monitor_panels(solver: str) -> list[Panel] | None:
    """The monitor panels of ``solver``'s runs: charts fed by the counters its events carry.

    Return new ``glasswork.display.panels.Panel`` instances (``SeriesPanel``, ``BarsPanel``,
    ``ScatterPanel``) on every call, in the order they are to appear, or ``None`` when
    ``solver`` is not yours. Each panel appears in ``glasswork monitor`` once the run has
    reported what it draws, and in the history's model screen when the final result holds it.
    """


@hookspec(firstresult=True)
def sweep_defaults(solver: str) -> dict[str, Any] | None:
    """Defaults for sweeps over ``solver``'s specs, or ``None`` when ``solver`` is not yours.

    Recognised keys: ``metric``, the metric that picks the best point when the data have a test
    part and the spec names none (``test_accuracy`` otherwise), and ``goal`` (``max`` or
    ``min``; otherwise inferred from the metric's name).
    """


@hookspec(firstresult=True)
def export_model(model: dict[str, Any], format: str, request: ExportRequest) -> str | None:
    """Write a model as the text of ``format`` for ``glasswork export``, ``glasswork report`` and the TUI.

    ``model`` is the model's ``to_dict()`` form; return ``None`` for kinds that are not yours
    and for formats you do not write, so the next plugin gets its turn (when none answers, the
    tool says the plugin has no exporter). Formats: ``python`` (a self-contained module, no
    glasswork import, with ``predict(row)`` returning the label or value and, for classifiers,
    ``predict_proba(row)`` returning the class probabilities in ``classes`` order, for a row
    given as a mapping of raw column names to values), ``sql`` (a query, one ``CASE``
    expression per output column: ``prediction`` and one ``p_<class>`` per class, over the raw
    table ``request.table``), ``markdown`` (the model as a table) and ``html`` (the model drawn
    for the report: an HTML fragment, inline SVG allowed, no script). ``request.inputs``
    (``glasswork.export.ModelInputs``) turns the model's feature columns into expressions over
    the raw columns; ``request.need_inputs()`` raises the clear error when the run lacks them.
    ``glasswork.export`` has helpers (``sql_select``, ``sql_case``, ``markdown_table``,
    ``python_module``); the contract checks exported predictions equal the model's. Raise
    ``glasswork.export.ExportError`` for a model that cannot be written in that format.
    """


@hookspec(firstresult=True)
def load_model(model: dict[str, Any], inputs: ModelInputs | None) -> Any | None:
    """Rebuild a model object from its ``to_dict()`` form, or ``None`` for kinds that are not yours.

    ``inputs`` (``None`` for runs recorded before they were kept) names the columns of the
    training matrix, for models that refer to features by name.

    ``glasswork.load_model`` reads an exported json document back through it, and the report
    uses it to draw the ROC curve and the calibration of a stored model. The object predicts
    from the training matrix as the solver's model does (``predict``, ``predict_proba``).
    """
