"""glasswork: glass-box models built by optimization, with certificates of how good they are.

The public API is small and lives here; everything a plugin author needs is re-exported.
Importing ``glasswork`` stays fast: no solver, DuckDB or Textual module is imported until used.
"""

from __future__ import annotations

# first: Ctrl-C while the command line imports is one line and exit 130 (glasswork.startup)
from glasswork import startup as _startup  # noqa: F401, I001
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from glasswork._version import __version__
from glasswork.data import DataError, DataSpec, Problem, load_problem
from glasswork.events import Event, EventSink
from glasswork.hookspecs import hookimpl
from glasswork.result import Certificate, Classifier, Model, Result, Status, relative_gap
from glasswork.solver import Limits, SolveContext, Solver, StopReason
from glasswork.spec import LoadedSpec, SolverSpec, SpecError, StrictModel, load_spec

if TYPE_CHECKING:
    from glasswork.export import LoadedModel
    from glasswork.runner import RunOutcome

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
    from glasswork.launch import Launch

    return Launch.from_file(spec_path, overrides, db=db, no_store=db is None).run(sinks)


def load_model(source: str | Path | dict) -> LoadedModel:
    """Read an exported model (``glasswork export --format json``) back: ``.predict(table)`` and
    ``.predict_proba(table)`` on the raw columns, ``.model`` the plugin's model object. Raises
    ``glasswork.export.ExportError`` for a file that is not a model document this version reads."""
    from glasswork.export import load_model as load

    return load(source)
