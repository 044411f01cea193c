"""CORELS, the built-in certifiably optimal rule list solver (search compiled in ``cython_ext/corels``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from glasswork.hookspecs import hookimpl
from glasswork.plugins.corels.views import monitor_panels, render_model  # noqa: F401  (hook implementations)
from glasswork.plugins.corels.model import Rule, RuleList
from glasswork.plugins.corels.solver import CorelsSolver
from glasswork.plugins.corels.spec import CorelsSpec

if TYPE_CHECKING:
    from glasswork.export import ExportRequest

__all__ = ["CorelsSolver", "CorelsSpec", "Rule", "RuleList"]


@hookimpl
def register_solvers(register: Callable[[type], None]) -> None:
    register(CorelsSolver)


# the exporters (and the model card's drawing they import) load when a model is exported, not
# with every run


@hookimpl
def export_model(model: dict[str, Any], format: str, request: ExportRequest) -> str | None:
    from glasswork.plugins.corels import export

    return export.export_model(model, format, request)


@hookimpl
def load_model(model: dict[str, Any]) -> RuleList | None:
    from glasswork.plugins.corels import export

    return export.load_model(model)
