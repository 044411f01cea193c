"""Every hook a glasswork plugin can implement.

A plugin is a module (or object) with functions decorated by ``glasswork.hookimpl`` and named
after the hooks below. Third-party plugins are found through the ``glasswork`` entry-point group::

    [project.entry-points.glasswork]
    my_solver = "my_package.plugin"

The built-in solvers register through exactly the same hooks. See ``docs/plugins.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from glasswork.solver import Solver

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
