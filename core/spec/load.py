"""Problem specs: a spec file read, validated against the installed solvers' models, and its JSON
Schema.

A spec file holds one problem: ``name``, ``data``, ``solver``, ``objective``, ``constraints``,
``search``, ``limits`` and ``store``. ``solver`` is the discriminator: each solver plugin brings
a ``SolverSpec`` subclass, and the union of those models is built at run time from the
registry, so a third-party solver gets validation, error messages and JSON Schema for free.

Every error comes out as ``FILE:LINE:COL: field.path: message``.

The spec's other concepts live beside this module in ``glasswork.spec``: the models in
``glasswork.spec.models`` (below the registry, which checks plugins' models against
``SolverSpec``), the document (bounded reading, positions, ``--set``, the errors) in
``glasswork.spec.document``. This module is the one of them that asks the registry.
"""

from __future__ import annotations

import difflib
import functools
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Union

from glasswork.spec.document import (
    Positions,
    SpecError,
    SpecIssue,
    apply_overrides,
    on_command_line,
    read_spec_document,
)
from glasswork.spec.models import FairnessConstraint, SolverSpec, fairness_issues
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

if TYPE_CHECKING:
    from glasswork.hooks.registry import Registry

__all__ = ["LoadedSpec", "json_schema", "load_spec", "spec_union", "validate_spec"]


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec together with the file it came from (data paths resolve against it)."""

    spec: SolverSpec
    path: Path | None

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


# -- validation ----------------------------------------------------------------------------------


def spec_union(models: Sequence[type[SolverSpec]]) -> Any:
    """The discriminated union of solver spec models, tagged by ``solver``."""
    if len(models) == 1:
        return models[0]
    return Annotated[Union[tuple(models)], Field(discriminator="solver")]  # noqa: UP007


@functools.lru_cache(maxsize=16)
def _adapter(models: tuple[type[SolverSpec], ...]) -> TypeAdapter[Any]:
    """Building the union's validator costs far more than using it: once per set of solvers."""
    return TypeAdapter(spec_union(models))


def validate_spec(
    document: dict[str, Any],
    registry: Registry,
    *,
    file: str = "<spec>",
    positions: Positions | None = None,
) -> SolverSpec:
    """Validate a parsed document against the registered solvers' models."""
    positions = positions or Positions(None)

    def issue(loc: Sequence[int | str], message: str, *, key: bool = False) -> SpecIssue:
        line, col = positions.locate(loc, key=key)
        return SpecIssue(file, line, col, ".".join(str(p) for p in loc), message)

    solver = document.get("solver")
    if "solver" not in document:
        raise SpecError([issue([], f"missing key 'solver'; installed solvers: {_names(registry.solvers)}")])
    if not isinstance(solver, str):
        raise SpecError([issue(["solver"], f"must be a solver name (a string); installed: {_names(registry.solvers)}")])
    solver_cls = registry.find(solver)  # imports that solver's plugin only
    if solver_cls is None:
        raise SpecError([issue(["solver"], registry.explain_unknown(solver))])

    # two steps: ``solver`` picked the model above, so validate with that model alone (the
    # other plugins' models are neither imported nor built)
    model = solver_cls.spec_model
    adapter = _adapter((model,))
    try:
        spec: SolverSpec = adapter.validate_python(document)
    except ValidationError as exc:
        issues = [_explain(err, list(err["loc"]), model, issue) for err in exc.errors(include_url=False)]
        raise SpecError(issues) from None
    tied = fairness_issues(spec)
    if tied:
        raise SpecError([issue(loc, message) for loc, message in tied])
    if spec.rashomon is not None:
        refusal = solver_cls.rashomon_refusal(spec)
        if refusal:
            raise SpecError([issue(["rashomon"], refusal, key=True)])
    limit = getattr(spec.constraints, "fairness", None)
    if (
        isinstance(limit, FairnessConstraint)
        and limit.frontier is not None
        and not solver_cls.supports_fairness_frontier
    ):
        message = (
            f"solver {solver_cls.name!r} does not walk the accuracy-fairness frontier; remove 'frontier' (or "
            "sweep constraints.fairness.at_most with 'glasswork sweep'), or choose a solver that lists it in "
            "`glasswork plugins`"
        )
        raise SpecError([issue(["constraints", "fairness", "frontier"], message, key=True)])
    return spec


def _explain(err: Any, loc: list[Any], model: type[BaseModel], issue: Any) -> SpecIssue:
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        bad = str(loc[-1])
        message = f"unknown key {bad!r}"
        close = difflib.get_close_matches(bad, allowed, n=1)
        if close:
            message += f"; did you mean {close[0]!r}"
        if allowed:
            message += f"; allowed keys here: {', '.join(allowed)}"
        return issue(loc, message, key=True)
    if kind == "missing":
        return issue(loc, "required key is missing")
    message = err["msg"]
    if kind.startswith("value_error") and message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    value = err.get("input")
    if kind not in ("missing",) and not isinstance(value, (dict, list)) and "input" in err:
        message += f" (got {value!r})"
    return issue(loc, message)


def _allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The field names of the model found at ``loc`` (best effort through optionals and lists)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            current = _inner_model(current, list_item=True)
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(str(part))
        if field is None:
            return []
        current = _inner_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _inner_model(annotation: Any, *, list_item: bool = False) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def _names(names: Iterable[str]) -> str:
    listed = sorted(names)
    return ", ".join(listed) if listed else "none (see 'glasswork plugins')"


def load_spec(path: str | Path, registry: Registry | None = None, *, overrides: Sequence[str] = ()) -> LoadedSpec:
    """Read and validate one spec file, with ``--set PATH=VALUE`` overrides applied first.

    Raises ``SpecError`` listing every problem found.
    """
    from glasswork.hooks.registry import get_registry

    registry = registry or get_registry()
    path = Path(path)
    document, positions = read_spec_document(path)
    apply_overrides(document, overrides)
    try:
        spec = validate_spec(document, registry, file=str(path), positions=positions)
    except SpecError as exc:
        raise SpecError(on_command_line(exc.issues, overrides)) from None
    return LoadedSpec(spec=spec, path=path.resolve())


def json_schema(registry: Registry | None = None) -> dict[str, Any]:
    """JSON Schema of a spec file for every installed solver (for editor completion)."""
    from glasswork.hooks.registry import get_registry

    registry = registry or get_registry()
    models = [registry.solvers[name].spec_model for name in sorted(registry.solvers)]
    if not models:
        schema: dict[str, Any] = {"type": "object", "description": "No solver plugin is installed."}
    else:
        schema = TypeAdapter(spec_union(models)).json_schema()
    return {
        **schema,
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "glasswork problem spec",
        "description": "One optimization problem: data, solver, objective, constraints, search, limits, store.",
    }
