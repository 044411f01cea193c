"""CORELS, the built-in certifiably optimal rule list solver (search compiled in ``cython_ext/corels``)."""

from collections.abc import Callable

from glasswork.hookspecs import hookimpl
from glasswork.plugins.corels.views import monitor_panels, render_model  # noqa: F401  (hook implementations)
from glasswork.plugins.corels.export import export_model, load_model  # noqa: F401  (hook implementations)
from glasswork.plugins.corels.model import Rule, RuleList
from glasswork.plugins.corels.solver import CorelsSolver
from glasswork.plugins.corels.spec import CorelsSpec

__all__ = ["CorelsSolver", "CorelsSpec", "Rule", "RuleList"]


@hookimpl
def register_solvers(register: Callable[[type], None]) -> None:
    register(CorelsSolver)
