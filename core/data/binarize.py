"""Binarization: raw columns to the 0/1 features rule solvers and score cards use.

The encoding is *fitted* on training rows (categories seen, thresholds) and then *applied* to any
rows, so test data are encoded exactly as the training data were, with no peeking.

* text columns (and ``categorical`` ones): one-hot ``col:value``, optionally ``col:not-value``;
* numeric columns: thresholds ``col<=t`` (and ``col>t``), at quantiles, on an equal-width grid,
  at every distinct value, or at fixed cut points;
* columns holding only 0 and 1: kept as they are;
* with ``numeric: keep``, other numeric columns too (``raw``: the matrix is then not all 0/1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from glasswork.data.problem import DataError
from glasswork.data.rules import negate_name
from glasswork.data.spec import BinarizeSpec


@dataclass
class _Encoding:
    column: str
    kind: str  # "onehot" | "binary" | "threshold" | "raw"
    values: list = field(default_factory=list)  # categories, or cut points


@dataclass
class Binarizer:
    """A fitted binarization: ``fit`` on training columns, ``transform`` any columns."""

    spec: BinarizeSpec
    encodings: list[_Encoding] = field(default_factory=list)

    def fit(self, columns: dict[str, np.ndarray], names: Sequence[str]) -> Binarizer:
        spec = self.spec
        unknown = [c for c in [*spec.grid, *spec.categorical] if c not in names]
        if unknown:
            raise DataError(
                f"binarize names unknown column(s) {', '.join(map(repr, unknown))}",
                hint=f"feature columns are: {', '.join(names)}",
            )
        self.encodings = []
        for name in names:
            col = columns[name]
            numeric = col.dtype.kind in "biuf"
            if name in spec.grid:
                if not numeric:
                    raise DataError(
                        "a threshold grid needs a numeric column",
                        column=name,
                        hint="remove the column from 'grid' or encode it as numbers",
                    )
                cuts = np.unique(np.asarray(spec.grid[name], dtype=np.float64))
                self.encodings.append(_Encoding(name, "threshold", list(cuts)))
            elif not numeric or name in spec.categorical:
                self.encodings.append(_Encoding(name, "onehot", _categories(col, spec.category_order)))
            elif np.isin(col, (0, 1)).all():
                self.encodings.append(_Encoding(name, "binary"))
            elif spec.numeric == "keep":
                self.encodings.append(_Encoding(name, "raw"))
            else:
                self.encodings.append(_Encoding(name, "threshold", list(_cuts(col, spec))))
        return self

    def transform(self, columns: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
        """The 0/1 features as ``(names, uint8 matrix)``; a float64 matrix when columns are kept raw."""
        names: list[str] = []
        cols: list[np.ndarray] = []
        n = len(next(iter(columns.values()))) if columns else 0
        for enc in self.encodings:
            col = columns[enc.column]
            if enc.kind == "raw":
                names.append(enc.column)
                cols.append(np.asarray(col, dtype=np.float64))
                continue
            if enc.kind == "binary":
                plain = [(enc.column, col == 1)]
            elif enc.kind == "onehot":
                cats = enc.values
                if self.spec.collapse_binary and len(cats) == 2:
                    cats = cats[1:]
                plain = [(f"{enc.column}:{_fmt(v)}", col == v) for v in cats]
            else:
                values = np.asarray(col, dtype=np.float64)
                plain = [(f"{enc.column}<={_fmt(t)}", values <= t) for t in enc.values]
            for label, bits in plain:
                names.append(label)
                cols.append(bits)
            if self.spec.negations:
                for label, bits in plain:
                    names.append(negate_name(label))
                    cols.append(~bits)
        if not cols:
            return names, np.zeros((n, 0), dtype=np.uint8)
        dtype = np.float64 if self.raw_columns else np.uint8
        return names, np.ascontiguousarray(np.column_stack(cols).astype(dtype))

    @property
    def raw_columns(self) -> list[str]:
        """The numeric columns kept as they are (``numeric: keep``): each a feature of its own name."""
        return [enc.column for enc in self.encodings if enc.kind == "raw"]

    def conditions(self) -> list[tuple[str, str, str, object]]:
        """Each feature ``transform`` makes, as ``(name, column, op, value)`` in its order, so a
        model can be written over the raw columns (``glasswork.export``); ``op`` is ``==``,
        ``!=``, ``<=`` or ``>`` (thresholds compare the column as float64)."""
        out: list[tuple[str, str, str, object]] = []
        for enc in self.encodings:
            plain: list[tuple[str, str, object]]
            if enc.kind == "raw":  # no condition: see ``raw_columns``
                continue
            if enc.kind == "binary":
                plain = [(enc.column, "==", 1)]
            elif enc.kind == "onehot":
                cats = enc.values[1:] if self.spec.collapse_binary and len(enc.values) == 2 else enc.values
                plain = [(f"{enc.column}:{_fmt(v)}", "==", v) for v in cats]
            else:
                plain = [(f"{enc.column}<={_fmt(t)}", "<=", float(t)) for t in enc.values]
            out.extend((label, enc.column, op, value) for label, op, value in plain)
            if self.spec.negations:
                out.extend(
                    (negate_name(label), enc.column, "!=" if op == "==" else ">", value) for label, op, value in plain
                )
        return out


def binarize(X: np.ndarray, names: list[str], spec: BinarizeSpec) -> tuple[list[str], np.ndarray]:
    """Fit and apply a binarization to a numeric matrix in one step."""
    X = np.asarray(X)
    columns = {n: X[:, j] for j, n in enumerate(names)}
    return Binarizer(spec).fit(columns, names).transform(columns)


def _categories(col: np.ndarray, order: str) -> list:
    if order == "sorted":
        try:
            return sorted(set(col.tolist()))
        except TypeError:  # mixed types: order by their text
            return sorted(set(col.tolist()), key=str)
    _, first = np.unique(col, return_index=True) if col.dtype.kind != "O" else _first_seen(col)
    return [col[i] for i in np.sort(first)]


def _first_seen(col: np.ndarray) -> tuple[None, np.ndarray]:
    seen: dict = {}
    for i, v in enumerate(col.tolist()):
        seen.setdefault(v, i)
    return None, np.asarray(list(seen.values()), dtype=np.int64)


def _cuts(col: np.ndarray, spec: BinarizeSpec) -> np.ndarray:
    values = np.asarray(col, dtype=np.float64)
    if values.size == 0:
        return np.zeros(0)
    distinct = np.unique(values)
    top = distinct[-1]
    k = spec.thresholds
    if spec.method == "all" and distinct.size - 1 <= k:
        return distinct[:-1]
    if spec.method == "uniform":
        grid = np.linspace(distinct[0], top, k + 2)[1:-1]
        cuts = np.unique([float(f"{g:.4g}") for g in grid])
    else:
        qs = np.linspace(0.0, 1.0, k + 2)[1:-1]
        cuts = np.unique(np.quantile(values, qs, method="lower"))
    return cuts[(cuts < top) & (cuts >= distinct[0])]


def _fmt(value: object) -> str:
    """Readable value text: ``25`` not ``25.0``, and the shortest exact form of a float."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v.is_integer():
            return str(int(v))
        return np.format_float_positional(v, trim="-")
    return str(value)


def estimator_columns(estimator: Any, X: Any, y: Any = None, *, reset: bool) -> tuple[dict[str, np.ndarray], Any]:
    """The columns a scikit-learn estimator of glasswork is given, by name, for a ``Binarizer``:
    numbers as float64 and, in a DataFrame, text columns as text (one-hot encoded by the
    binarizer, as a spec's ``binarize:`` does); with ``y``, the checked labels too. ``reset``:
    ``fit`` (records ``feature_names_in_``) or a later call (checks the same columns)."""
    from sklearn.utils.validation import validate_data

    dtypes = getattr(X, "dtypes", None)
    text = dtypes is not None and any(getattr(t, "kind", "O") not in "biuf" for t in dtypes)
    dtype = None if text else np.float64
    if y is None:
        A = validate_data(estimator, X, dtype=dtype, reset=reset)
    else:
        A, y = validate_data(estimator, X, y, dtype=dtype)
    A = np.asarray(A)
    names = [str(c) for c in getattr(estimator, "feature_names_in_", [f"x{j}" for j in range(A.shape[1])])]
    columns: dict[str, np.ndarray] = {}
    for j, name in enumerate(names):
        column = A[:, j]
        if column.dtype.kind == "O":
            try:
                column = column.astype(np.float64)
            except (TypeError, ValueError):
                column = np.asarray([str(v) for v in column], dtype=object)
        columns[name] = column
    return columns, y


def has_text(columns: dict[str, np.ndarray]) -> bool:
    return any(c.dtype.kind == "O" for c in columns.values())
