"""glasswork: glass-box models built by optimization, with certificates of how good they are.

The public API is small and lives here; everything a plugin author needs is re-exported.
Importing ``glasswork`` stays fast: no solver, DuckDB or Textual module is imported until used.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# first: Ctrl-C while the command line imports is one line and exit 130 (glasswork.startup)
from glasswork import startup as _startup  # noqa: F401, I001
from glasswork._version import __version__

if TYPE_CHECKING:
    from glasswork.contract.events import Event, EventSink
    from glasswork.contract.model import Classifier, Model, prediction_fingerprint
    from glasswork.contract.record import RunOutcome
    from glasswork.contract.result import Certificate, Result, Status, relative_gap
    from glasswork.contract.solver import Limits, SolveContext, Solver, StopReason
    from glasswork.data import DataError, DataSpec, Problem, load_problem
    from glasswork.export import LoadedModel
    from glasswork.hooks.specs import hookimpl
    from glasswork.rashomon import RashomonMember, RashomonSet
    from glasswork.spec.document import SpecError
    from glasswork.spec.load import LoadedSpec, load_spec
    from glasswork.spec.models import SolverSpec, StrictModel

# Where each re-exported name lives. They load on first use (PEP 562), so ``import glasswork``
# costs only itself, and no module of the package depends on this namespace: modules import
# from the concept module (tests/test_architecture.py checks it), which keeps the import graph
# free of cycles through the package.
_HOMES = {
    "Certificate": "glasswork.contract.result",
    "Classifier": "glasswork.contract.model",
    "DataError": "glasswork.data",
    "DataSpec": "glasswork.data",
    "Event": "glasswork.contract.events",
    "EventSink": "glasswork.contract.events",
    "Limits": "glasswork.contract.solver",
    "LoadedSpec": "glasswork.spec.load",
    "Model": "glasswork.contract.model",
    "Problem": "glasswork.data",
    "RashomonMember": "glasswork.rashomon",
    "RashomonSet": "glasswork.rashomon",
    "Result": "glasswork.contract.result",
    "SolveContext": "glasswork.contract.solver",
    "Solver": "glasswork.contract.solver",
    "SolverSpec": "glasswork.spec.models",
    "SpecError": "glasswork.spec.document",
    "Status": "glasswork.contract.result",
    "StopReason": "glasswork.contract.solver",
    "StrictModel": "glasswork.spec.models",
    "hookimpl": "glasswork.hooks.specs",
    "load_problem": "glasswork.data",
    "load_spec": "glasswork.spec.load",
    "prediction_fingerprint": "glasswork.contract.model",
    "relative_gap": "glasswork.contract.result",
}


def __getattr__(name: str) -> Any:
    """A re-exported name, imported from its home on first use; a submodule (``glasswork.spec``)
    when asked for as an attribute, as an eager package would have it."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


__all__ = [
    "Certificate",
    "Classifier",
    "DataError",
    "DataSpec",
    "Event",
    "EventSink",
    "Limits",
    "LoadedSpec",
    "Model",
    "Problem",
    "RashomonMember",
    "RashomonSet",
    "Result",
    "SolveContext",
    "Solver",
    "SolverSpec",
    "SpecError",
    "Status",
    "StopReason",
    "StrictModel",
    "__version__",
    "hookimpl",
    "load_model",
    "load_problem",
    "load_spec",
    "prediction_fingerprint",
    "relative_gap",
    "run",
]


def run(
    spec_path: str | Path,
    *,
    sinks: Sequence[EventSink] = (),
    overrides: Sequence[str] = (),
    db: str | Path | None = None,
) -> RunOutcome:
    """Load, validate and run one spec file: ``glasswork run`` from Python.

    Nothing is stored unless ``db`` names a run store. ``overrides`` are ``--set`` edits
    (``"objective.regularization=0.01"``). Raises ``SpecError``, ``DataError``, ``StoreError``
    or ``SolverFailure``.
    """
    from glasswork.running.launch import Launch

    return Launch.from_file(spec_path, overrides, db=db, no_store=db is None).run(sinks)


def load_model(source: str | Path | dict) -> LoadedModel:
    """Read an exported model (``glasswork export --format json``) back: ``.predict(table)`` and
    ``.predict_proba(table)`` on the raw columns, ``.model`` the plugin's model object. Raises
    ``glasswork.export.ExportError`` for a file that is not a model document this version reads."""
    from glasswork.export import load_model as load

    return load(source)
