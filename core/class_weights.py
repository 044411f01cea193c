"""Class weights: one spelling (``objective.class_weight``) and one meaning in every solver that
weighs its loss by class: ``balanced``, a map from class label to weight, or a list in class order."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from glasswork.data.problem import DataError
from pydantic import Field, PositiveFloat

ClassWeight = Annotated[
    Literal["balanced"] | dict[str | int | float | bool, PositiveFloat] | list[PositiveFloat] | None,
    Field(
        description="Weight of each class in the loss: 'balanced' (n / (classes x n_class), every class "
        "weighing as much in total), a map from class label to weight (others 1), or a list in class order."
    ),
]

OLD_SPELLING = "class_weights"


def one_spelling(data: Any) -> Any:
    """A ``mode="before"`` validator of an objective section: ``class_weights: null``, as the resolved
    spec of a run recorded before the spelling was one still holds it, is dropped; any other value of
    the plural is left for the strict model to refuse as an unknown key, naming ``class_weight``."""
    if isinstance(data, dict) and data.get(OLD_SPELLING, ...) is None:
        data = {k: v for k, v in data.items() if k != OLD_SPELLING}
    return data


def class_weight_factors(
    given: Any, classes: Any, y: np.ndarray, multiplicity: np.ndarray | None = None
) -> np.ndarray | None:
    """The weight of each class (in class order), or None for none given. ``y``: the encoded labels
    (and ``multiplicity``: how many rows each stands for) that ``balanced`` is computed from."""
    if given is None:
        return None
    y = np.asarray(y, dtype=np.int64)
    n_classes = len(classes) if classes is not None else int(y.max()) + 1
    names = [str(c) for c in (classes if classes is not None else range(n_classes))]
    if isinstance(given, str):  # balanced
        counts = np.bincount(y, weights=multiplicity, minlength=n_classes).astype(np.float64)
        return counts.sum() / (n_classes * np.maximum(counts, 1.0))
    if isinstance(given, list):
        if len(given) != n_classes:
            raise DataError(
                f"objective.class_weight lists {len(given)} weights for {n_classes} classes",
                hint=f"give one weight per class, in class order ({', '.join(names)})",
            )
        return np.asarray(given, dtype=np.float64)
    by_name = {str(k): float(v) for k, v in given.items()}
    unknown = [k for k in by_name if k not in names]
    if unknown:
        raise DataError(
            f"objective.class_weight names unknown class(es) {', '.join(map(repr, unknown))}",
            hint=f"classes are: {', '.join(names)}",
        )
    return np.asarray([by_name.get(n, 1.0) for n in names], dtype=np.float64)
