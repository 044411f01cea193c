"""The module glasswork loads through the entry point.

``pyproject.toml`` declares ``[project.entry-points.glasswork] greedy = "glasswork_greedy.plugin"``.
"""

from __future__ import annotations

from collections.abc import Callable

from glasswork import Solver, hookimpl
from glasswork_greedy.solver import GreedySolver


@hookimpl
def register_solvers(register: Callable[[type[Solver]], None]) -> None:
    register(GreedySolver)
