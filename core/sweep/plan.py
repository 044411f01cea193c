"""A sweep's plan: one spec with a ``sweep:`` section expanded into validated points (grid
coordinates, folds), every point checked before any runs."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glasswork.hooks.registry import Registry
from glasswork.quoting import printable
from glasswork.spec.document import Positions, SpecError, SpecIssue, set_path
from glasswork.spec.load import LoadedSpec, validate_spec
from glasswork.spec.models import SweepSpec

MAXIMISE = ("accuracy", "auc", "r2", "stability")


@dataclass
class SweepPoint:
    """One run of a sweep: its grid coordinates, its fold, and its complete spec document."""

    index: int
    coords: dict[str, Any]
    fold: int | None
    document: dict[str, Any]

    @property
    def key(self) -> str:
        """Identifies the point across invocations (for resuming)."""
        return json.dumps({"coords": self.coords, "fold": self.fold}, sort_keys=True, default=str)

    def label(self) -> str:
        """The point as a person reads it, on one printable line (swept values are the spec's data)."""
        parts = [f"{printable(k)}={printable(v)}" for k, v in self.coords.items()]
        if self.fold is not None:
            parts.append(f"fold {self.fold}")
        return ", ".join(parts) or "base"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "index": self.index, "coords": self.coords, "fold": self.fold}


@dataclass
class Sweep:
    """A validated, expanded sweep."""

    loaded: LoadedSpec
    spec: SweepSpec
    points: list[SweepPoint]
    defaults: dict[str, Any] = field(default_factory=dict)  # the solver's sweep_defaults hook

    @property
    def sweep_id(self) -> str:
        return self.loaded.spec.spec_hash()[:16]

    @property
    def metric(self) -> str:
        if self.spec.metric:
            return self.spec.metric
        has_test = (
            self.spec.folds is not None
            or self.loaded.spec.data.split.kind != "none"
            or self.loaded.spec.data.test is not None
        )
        if not has_test:
            return "objective"
        return str(self.defaults.get("metric") or "test_accuracy")

    @property
    def maximise(self) -> bool:
        if self.spec.goal is not None:
            return self.spec.goal == "max"
        if self.defaults.get("goal") in ("max", "min") and not self.spec.metric:
            return self.defaults["goal"] == "max"
        return any(word in self.metric for word in MAXIMISE)


def expand(
    document: dict[str, Any],
    registry: Registry,
    *,
    file: str = "<spec>",
    positions: Positions | None = None,
    path: Path | None = None,
) -> Sweep:
    """Validate a spec with a ``sweep:`` section and every point it expands to.

    An invalid point is reported with its grid coordinates, at the line of the sweep entry
    that produced it; all invalid points are reported together and nothing runs.
    """
    positions = positions or Positions(None)
    base = validate_spec(document, registry, file=file, positions=positions)
    if base.sweep is None:
        line, col = positions.locate([])
        raise SpecError([SpecIssue(file, line, col, "sweep", "this spec has no 'sweep:' section to expand")])
    sweep_spec = base.sweep
    folds: list[int | None] = list(range(sweep_spec.folds)) if sweep_spec.folds else [None]

    template = {k: v for k, v in document.items() if k != "sweep"}
    points: list[SweepPoint] = []
    issues: list[SpecIssue] = []
    for coords, where in _combinations(sweep_spec):
        for fold in folds:
            doc = copy.deepcopy(template)
            for key, value in coords.items():
                set_path(doc, key, copy.deepcopy(value))
            if fold is not None:
                split = dict(doc.get("data", {}).get("split") or {})
                split.update(kind="kfold", folds=sweep_spec.folds, fold=fold)
                doc.setdefault("data", {})["split"] = split
            point = SweepPoint(len(points), coords, fold, doc)
            try:
                validate_spec(doc, registry, file=file, positions=None)
            except SpecError as exc:
                for issue in exc.issues:
                    culprit = next((loc for k, loc in where.items() if issue.path.startswith(k)), None)
                    line, col = positions.locate(culprit or next(iter(where.values()), ["sweep"]))
                    issues.append(
                        SpecIssue(file, line, col, issue.path, f"at sweep point ({point.label()}): {issue.message}")
                    )
                continue
            points.append(point)
    if issues:
        raise SpecError(issues)
    return Sweep(LoadedSpec(base, path), sweep_spec, points, registry.sweep_defaults(base.solver))


def _combinations(sweep_spec: SweepSpec) -> Iterator[tuple[dict[str, Any], dict[str, list[str | int]]]]:
    """Each grid combination, then each listed point, with where each value stands in the file.

    Lazy: the spec model has already refused a sweep of more than ``MAX_SWEEP_RUNS`` runs, and
    nothing here holds more than the point being built.
    """
    grid_keys = list(sweep_spec.grid)
    if grid_keys:
        for indices in itertools.product(*(range(len(sweep_spec.grid[k])) for k in grid_keys)):
            yield (
                {k: sweep_spec.grid[k][i] for k, i in zip(grid_keys, indices)},
                {k: ["sweep", "grid", k, i] for k, i in zip(grid_keys, indices)},
            )
    for i, p in enumerate(sweep_spec.points):
        yield dict(p), {k: ["sweep", "points", i, k] for k in p}
    if not grid_keys and not sweep_spec.points:
        yield {}, {}
