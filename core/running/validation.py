"""``glasswork validate``: every check ``glasswork run`` makes before its search, without the search.

A spec that validates must not fail ``run`` with exit 2 before solving. So validation goes
through the run path itself (``Launch``): the spec and its store path, then the data loaded and
checked against the solver exactly as a run loads them (``Launch.prepare``), then the solver's
own pre-search checks (``Solver.check``) and its size estimate (``Solver.size_report``, which
for CORELS mines the antecedents as the run does). Only the search and the run store are left
out. ``read_data=False`` stops after the spec, for specs whose data are not on this machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.data import DataError, LimitReached
from glasswork.spec.document import SpecError, SpecIssue
from glasswork.spec.load import LoadedSpec

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.hooks.registry import Registry


@dataclass
class Validation:
    """What validating one spec file found: its spec issues or data error, else the data's shape
    and the solver's size estimate (a summary line and a warning when the search looks hopeless)."""

    file: str
    loaded: LoadedSpec | None = None
    issues: list[SpecIssue] = field(default_factory=list)
    data_error: DataError | None = None
    data_checked: bool = False
    problem: Problem | None = None
    size: tuple[str, str | None] | None = None
    solver_error: str | None = None  # the solver's check itself failed: a plugin's bug, not the user's
    # reading the data went past the spec's limits: run would stop there (exit 0), not fail
    stopped: LimitReached | None = None

    @property
    def valid(self) -> bool:
        """Whether ``run`` would get past its checks (exit 2 otherwise)."""
        return not self.issues and self.data_error is None

    def data_summary(self) -> str | None:
        """``455 training rows, 114 test rows, 60 features, binary target`` once the data are read."""
        problem = self.problem
        if problem is None:
            return None
        parts = [f"{problem.n_samples:,} training rows"]
        if problem.y_test is not None:
            parts.append(f"{int(problem.y_test.shape[0]):,} test rows")
        parts.append(f"{problem.n_features:,} features")
        parts.append(f"{problem.task} target")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The entry of ``glasswork validate --json`` for this file."""
        doc: dict[str, Any] = {"file": self.file, "valid": self.valid, "data_checked": self.data_checked}
        issues = [{"kind": "spec", **issue.to_dict()} for issue in self.issues]
        if self.data_error is not None:
            error = self.data_error
            issues.append(
                {
                    "kind": "data",
                    "file": error.file,
                    "line": error.line,
                    "column": None,
                    "path": error.field,
                    "message": error.message,
                    "hint": error.hint,
                    "data_column": error.column,
                    "row": error.row,
                    "text": str(error),
                }
            )
        doc["issues"] = issues
        if self.loaded is not None:
            spec = self.loaded.spec
            doc.update(solver=spec.solver, name=spec.name, spec_hash=spec.spec_hash())
        problem = self.problem
        if problem is not None:
            doc["data"] = {
                "rows": problem.n_samples,
                "test_rows": None if problem.y_test is None else int(problem.y_test.shape[0]),
                "features": problem.n_features,
                "task": problem.task,
                "classes": None if problem.classes is None else [str(c) for c in problem.classes],
                "warnings": list(problem.warnings),
            }
        doc["size"] = None if self.size is None else {"summary": self.size[0], "warning": self.size[1]}
        doc["solver_error"] = self.solver_error
        doc["stopped"] = None if self.stopped is None else {"status": self.stopped.status, "message": str(self.stopped)}
        return doc


def validate_file(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    read_data: bool = True,
    registry: Registry | None = None,
) -> Validation:
    """Check one spec file as ``glasswork run`` (without flags) would before its search.

    ``KeyboardInterrupt`` propagates; any other failure of the user's spec or data is in the
    returned ``Validation``.
    """
    from glasswork.running.launch import Launch
    from glasswork.running.runner import SolverFailure

    found = Validation(str(path))
    try:
        launch = Launch.from_file(path, overrides, registry=registry)
    except SpecError as exc:
        found.issues = exc.issues
        return found
    found.loaded = launch.loaded
    if not read_data:
        return found
    found.data_checked = True
    try:
        found.problem = launch.prepare()
    except DataError as exc:
        found.data_error = exc
        return found
    except LimitReached as exc:  # a valid spec whose limit ends the run while it reads: said, not an error
        found.stopped = exc
        return found
    except SolverFailure as exc:  # the plugin's check broke: said, never a traceback
        found.solver_error = str(exc)
        return found
    spec = launch.loaded.spec
    # Launch.prepare ran the solver's check; what is left is its size estimate (which may refuse too)
    try:
        solver = launch.registry.solver(spec.solver)(spec)
        found.size = solver.size_report(found.problem, spec.limits.time)
    except DataError as exc:
        found.data_error = exc
    except Exception as exc:  # a plugin's bug: said, never a traceback
        found.solver_error = f"solver {spec.solver!r} failed while checking the data: {type(exc).__name__}: {exc}"
    return found
