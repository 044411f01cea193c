"""The CORELS plugin as the registry loads it, in the shape of a third-party one (``examples/``)."""

from __future__ import annotations

from collections.abc import Callable

from glasswork.contract.solver import Solver
from glasswork.hooks.specs import hookimpl
from glasswork.plugins.corels.export import export_model, load_model
from glasswork.plugins.corels.solver import CorelsSolver
from glasswork.plugins.corels.views import monitor_panels, render_model

__all__ = ["export_model", "load_model", "monitor_panels", "register_solvers", "render_model"]


@hookimpl
def register_solvers(register: Callable[[type[Solver]], None]) -> None:
    register(CorelsSolver)
