"""The module glasswork loads through the entry point.

``pyproject.toml`` declares ``[project.entry-points.glasswork] greedy = "glasswork_greedy.plugin"``.
It registers the solver, and shows its model and a monitor panel through the same hooks as the
built-in solvers (``glasswork_greedy.views``).
"""

from __future__ import annotations

from collections.abc import Callable

from glasswork import Solver, hookimpl
from glasswork_greedy.solver import GreedySolver
from glasswork_greedy.export import export_model, load_model
from glasswork_greedy.views import monitor_panels, render_model

__all__ = ["export_model", "load_model", "monitor_panels", "register_solvers", "render_model"]


@hookimpl
def register_solvers(register: Callable[[type[Solver]], None]) -> None:
    register(GreedySolver)
