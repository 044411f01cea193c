"""The fairness audit of a run (a spec's ``fairness:`` section): its protected groups found in the
audit-only columns, checked before the search, and the figures of the model's predictions on the
training and test rows, for any solver (``glasswork.fairness`` computes them).

The document (``run --json``'s ``fairness``, the store's ``fairness`` column, the model card)::

    {"groups": ["race = African-American"], "metrics": [...],
     "train": {METRIC: value, ..., "protected_rows": n, "reference_rows": m, "groups": [...]},
     "test": {...}}            # "test" only when the run has test rows
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork import fairness

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.result import Model
    from glasswork.spec_models import FairnessSpec, ProtectedGroupSpec, SolverSpec

MAX_VALUES_LISTED = 10


def _distinct(values: np.ndarray) -> list[Any]:
    try:
        return [v.item() if isinstance(v, np.generic) else v for v in np.unique(values)]
    except TypeError:  # text mixed with numbers in one object column: first appearance order
        return list(dict.fromkeys(values.tolist()))


def group_label(group: ProtectedGroupSpec) -> str:
    """``race = African-American`` or ``race in [a, b]``, as plain text (printers escape it)."""
    values = group.values
    if len(values) == 1:
        return f"{group.column} = {values[0]}"
    return f"{group.column} in [{', '.join(map(str, values))}]"


def _field(spec: FairnessSpec, i: int, name: str) -> str:
    return f"fairness.protected.{i}.{name}" if isinstance(spec.protected, list) else f"fairness.protected.{name}"


def groups(spec: FairnessSpec, columns: dict[str, np.ndarray], *, training: bool = True) -> list[fairness.Group]:
    """The protected groups' masks over ``columns`` (the audit-only columns of one part).

    On the training rows a value no row holds is the user's mistake (``DataError`` at the
    value's line in the spec); on the test rows it is an empty group, whose figures are ``None``.
    """
    from glasswork.data import DataError
    from glasswork.data.load import find_label

    out = []
    for i, group in enumerate(spec.groups):
        column = columns.get(group.column)
        if column is None:  # a problem built by hand, without its audit-only columns
            raise DataError(
                f"the audit-only column {group.column!r} is not among the data's audit columns",
                hint="list it under data.audit_only (a Problem built in code holds it in Problem.audit "
                "and Problem.audit_test)",
                field=_field(spec, i, "column"),
            )
        present = _distinct(column)
        matched = []
        for value in group.values:
            found = find_label(present, value)
            if found is None and training:
                listed = ", ".join(map(repr, present[:MAX_VALUES_LISTED]))
                more = f" (and {len(present) - MAX_VALUES_LISTED} more)" if len(present) > MAX_VALUES_LISTED else ""
                raise DataError(
                    f"no training row has {value!r} in the audit-only column {group.column!r}",
                    hint=f"its values are: {listed}{more}",
                    field=_field(spec, i, "value"),
                )
            if found is not None:
                matched.append(found)
        mask = np.zeros(column.shape[0], dtype=bool)
        for found in matched:
            mask |= column == found
        out.append(fairness.Group(group_label(group), group.column, tuple(group.values), mask))
    return out


def check(spec: SolverSpec, problem: Problem) -> None:
    """Refuse, before the search, an audit that cannot be made: a target that is not binary, a
    protected value no training row holds (``DataError`` naming the spec field)."""
    from glasswork.data import DataError

    if spec.fairness is None:
        return
    if problem.task != "binary":
        raise DataError(
            f"a fairness audit compares the rates of a binary prediction, but the target is {problem.task}",
            hint="set data.positive to the label to predict (the others become negative), or remove 'fairness'",
            field="fairness",
        )
    groups(spec.fairness, problem.audit)


def figures(spec: SolverSpec, problem: Problem, model: Model) -> dict[str, Any] | None:
    """The audit document of ``model`` (module docstring), ``None`` without a ``fairness:`` section."""
    if spec.fairness is None or problem.task != "binary":
        return None
    from glasswork.result import Classifier

    wanted = spec.fairness.metrics
    out: dict[str, Any] = {"groups": [group_label(g) for g in spec.fairness.groups], "metrics": list(wanted)}
    parts = [("train", problem.X, problem.y, problem.sample_weight, problem.audit, True)]
    if problem.X_test is not None and problem.y_test is not None and problem.audit_test is not None:
        parts.append(("test", problem.X_test, problem.y_test, problem.test_sample_weight, problem.audit_test, False))
    for name, X, y, weights, columns, training in parts:
        pred = np.asarray(model.predict(X))
        score = None
        if isinstance(model, Classifier):
            proba = np.asarray(model.predict_proba(X), dtype=np.float64)
            score = proba[:, 1] if proba.ndim == 2 and proba.shape[1] == 2 else None
        found = groups(spec.fairness, columns, training=training)
        out[name] = fairness.audit(y, pred, found, wanted, weights, score)
    return out


def headline(document: dict[str, Any] | None) -> dict[str, float]:
    """The audit's figures under flat names (``train_statistical_parity``, ``test_...``), as a
    sweep summarises metrics; undefined figures are left out, as a NaN metric is."""
    if not document or "error" in document:
        return {}
    out = {}
    for part in ("train", "test"):
        for metric in document.get("metrics") or []:
            value = (document.get(part) or {}).get(metric)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[f"{part}_{metric}"] = float(value)
    return out


def constraint_figures(spec: SolverSpec, problem: Problem, pred: np.ndarray) -> list[tuple[str, float | None, bool]]:
    """Per protected group, the figure ``constraints.fairness`` holds of the predictions ``pred``
    on the training rows and whether it meets the limit (``fairness.within``: an undefined figure
    does not); ``[]`` for a spec without the constraint."""
    from glasswork.spec_models import FairnessConstraint

    limit = getattr(spec.constraints, "fairness", None)
    if not isinstance(limit, FairnessConstraint) or spec.fairness is None:
        return []
    out = []
    for group in groups(spec.fairness, problem.audit):
        protected, reference = fairness.group_rates(problem.y, pred, group.mask, problem.sample_weight)
        figure = fairness.prediction_metrics(protected, reference)[limit.metric]
        out.append((group.label, figure, fairness.within(limit.metric, limit.at_most, protected, reference)))
    return out


def unfairness(spec: SolverSpec, problem: Problem, pred: np.ndarray) -> float | None:
    """The constrained metric of ``pred`` on the training rows, the worst over the groups (a
    frontier point's unfairness); ``None`` when it is undefined for a group or nothing is
    constrained."""
    figures = [figure for _, figure, _ in constraint_figures(spec, problem, pred)]
    if not figures or any(figure is None for figure in figures):
        return None
    return max(figure for figure in figures if figure is not None)


def constraint_breach(spec: SolverSpec, problem: Problem, model: Model) -> str | None:
    """What of ``constraints.fairness`` the solver's model breaks on the training rows, as a
    phrase (``breaks constraints.fairness (statistical_parity <= 0.05): 0.21 for race = b``), or
    ``None`` when it meets it. The run path asks it of every constrained result, as the
    certificate's own checks, so a solver's claim is never trusted."""
    from glasswork.spec_models import FairnessConstraint

    limit = getattr(spec.constraints, "fairness", None)
    if not isinstance(limit, FairnessConstraint):
        return None
    broken = [
        f"{'undefined' if figure is None else f'{figure:.6g}'} for {label}"
        for label, figure, ok in constraint_figures(spec, problem, np.asarray(model.predict(problem.X)))
        if not ok
    ]
    if not broken:
        return None
    return f"breaks constraints.fairness ({limit.metric} <= {limit.at_most:g}) on the training rows: " + "; ".join(
        broken
    )
