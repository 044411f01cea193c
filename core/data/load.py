"""Resolve a ``DataSpec`` into a ``Problem``: read, select, encode the target, split, binarize."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from glasswork.data.problem import DataError, Problem
from glasswork.data.spec import BinarizeSpec, DataSpec

SKLEARN_SETS = ("breast_cancer", "iris", "wine", "diabetes")


def load_problem(spec: DataSpec, base_dir: str | Path = ".") -> Problem:
    """Build the ``Problem`` a spec's ``data:`` section describes; raises ``DataError``."""
    names, X, y_raw, weights = _read(spec, Path(base_dir))
    if X.shape[0] == 0:
        raise DataError("the data set is empty after filtering", file=spec.source,
                        hint="check 'columns', 'drop' and the file's contents")
    task, y, classes = _encode_target(spec, y_raw)
    if spec.binarize is not None:
        names, X = binarize(X, names, spec.binarize)
    rows = np.arange(X.shape[0])
    problem = Problem(
        name=spec.source,
        X=X,
        y=y,
        feature_names=names,
        task=task,
        classes=classes,
        sample_weight=weights,
        source=spec.source,
    )
    if spec.split.kind == "holdout":
        from sklearn.model_selection import train_test_split

        stratify = y if (spec.split.stratify and task != "regression") else None
        train, test = train_test_split(
            rows, test_size=spec.split.test_size, random_state=spec.split.seed, stratify=stratify
        )
        train, test = np.sort(train), np.sort(test)
        problem.X, problem.y = X[train], y[train]
        problem.X_test, problem.y_test = X[test], y[test]
        problem.train_index, problem.test_index = train, test
        if weights is not None:
            problem.sample_weight = weights[train]
    else:
        problem.train_index = rows
    return problem


def _read(spec: DataSpec, base_dir: Path) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray | None]:
    if spec.source.startswith("sklearn:"):
        return _read_sklearn(spec)
    path = Path(spec.source)
    if not path.is_absolute():
        path = base_dir / path
    if not path.exists():
        raise DataError(f"data file not found: {path}", file=spec.source,
                        hint="paths are relative to the spec file's folder")
    import duckdb

    try:
        con = duckdb.connect()
        reader = "read_parquet" if path.suffix.lower() == ".parquet" else "read_csv_auto"
        rel = con.execute(f"SELECT * FROM {reader}($path)", {"path": str(path)})
        columns = [d[0] for d in rel.description]
        table = rel.fetchnumpy()
    except duckdb.Error as exc:
        raise DataError(f"cannot read {path}: {exc}", file=path) from exc
    if spec.target not in columns:
        raise DataError(f"target column {spec.target!r} is not in the file", file=path,
                        hint=f"columns are: {', '.join(columns)}")
    features = [c for c in (spec.columns or columns) if c != spec.target and c != spec.weights]
    missing = [c for c in features + spec.drop if c not in columns]
    if missing:
        raise DataError(f"unknown column(s) {', '.join(map(repr, missing))}", file=path,
                        hint=f"columns are: {', '.join(columns)}")
    features = [c for c in features if c not in spec.drop]
    matrix = np.empty((len(table[spec.target]), len(features)), dtype=np.float64)
    for j, c in enumerate(features):
        col = np.asarray(table[c])
        try:
            matrix[:, j] = np.asarray(col, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError("non-numeric value in a feature column", file=path, column=c,
                            hint="encode it as numbers or list it under 'drop'") from exc
        bad = np.flatnonzero(np.isnan(matrix[:, j]))
        if bad.size:
            raise DataError("missing value (NaN) in a feature", file=path, column=c,
                            row=int(bad[0]) + 1, hint="fill or drop those rows")
    weights = None
    if spec.weights is not None:
        if spec.weights not in columns:
            raise DataError(f"weights column {spec.weights!r} is not in the file", file=path)
        weights = np.asarray(table[spec.weights], dtype=np.float64)
    return features, matrix, np.asarray(table[spec.target]), weights


def _read_sklearn(spec: DataSpec) -> tuple[list[str], np.ndarray, np.ndarray, None]:
    name = spec.source.split(":", 1)[1]
    if name not in SKLEARN_SETS:
        raise DataError(f"unknown scikit-learn data set {name!r}",
                        hint=f"choose one of: {', '.join('sklearn:' + n for n in SKLEARN_SETS)}")
    from sklearn import datasets

    bunch: Any = getattr(datasets, f"load_{name}")()
    names = [str(n).replace(" ", "_") for n in bunch.feature_names]
    X = np.asarray(bunch.data, dtype=np.float64)
    if spec.columns is not None or spec.drop:
        keep = [n for n in (spec.columns or names) if n not in spec.drop]
        unknown = [n for n in keep if n not in names]
        if unknown:
            raise DataError(f"unknown column(s) {', '.join(map(repr, unknown))}",
                            file=spec.source, hint=f"columns are: {', '.join(names)}")
        idx = [names.index(n) for n in keep]
        X, names = X[:, idx], keep
    y: np.ndarray = np.asarray(bunch.target)
    if name != "diabetes" and hasattr(bunch, "target_names"):
        y = np.asarray(bunch.target_names)[y]
    return names, X, y, None


def _encode_target(spec: DataSpec, y_raw: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray | None]:
    values = np.unique(y_raw)
    if values.size < 2:
        raise DataError(f"the target {spec.target or spec.source!r} is constant ({values!r})",
                        hint="a model needs at least two distinct target values")
    task = spec.task
    if task is None:
        numeric = np.issubdtype(y_raw.dtype, np.floating) and not np.all(np.mod(y_raw, 1) == 0)
        task = "regression" if numeric or (np.issubdtype(y_raw.dtype, np.number) and values.size > 20) \
            else ("binary" if values.size == 2 or spec.positive is not None else "multiclass")
    if task == "regression":
        return task, np.asarray(y_raw, dtype=np.float64), None
    if task == "binary":
        if spec.positive is not None:
            pos = np.asarray([spec.positive]).astype(y_raw.dtype) if y_raw.dtype.kind != "O" \
                else np.asarray([spec.positive], dtype=object)
            if pos[0] not in values:
                raise DataError(f"positive label {spec.positive!r} does not occur in the target",
                                hint=f"labels are: {', '.join(map(str, values))}")
            neg = [v for v in values if v != pos[0]]
            classes = np.asarray([neg[0] if len(neg) == 1 else "other", pos[0]], dtype=object)
            return task, (y_raw == pos[0]).astype(np.int64), classes
        if values.size != 2:
            raise DataError(f"a binary task needs two labels, the target has {values.size}",
                            hint="set 'positive' to the label to predict, or 'task: multiclass'")
    return task, np.searchsorted(values, y_raw).astype(np.int64), values


def binarize(X: np.ndarray, names: list[str], spec: BinarizeSpec) -> tuple[list[str], np.ndarray]:
    """Threshold features ``name<=t`` at quantiles; 0/1 columns are kept as they are."""
    out_cols: list[np.ndarray] = []
    out_names: list[str] = []
    for j, name in enumerate(names):
        col = X[:, j]
        values = np.unique(col)
        if values.size <= 2 and np.isin(values, (0, 1)).all():
            cols = [(col == 1, name)]
        else:
            qs = np.linspace(0, 1, spec.thresholds + 2)[1:-1]
            cuts = np.unique(np.quantile(col, qs, method="lower"))
            cuts = cuts[cuts < values[-1]]
            cols = [(col <= t, f"{name}<={_fmt(t)}") for t in cuts]
        for bits, label in cols:
            out_cols.append(bits)
            out_names.append(label)
            if spec.negations:
                out_cols.append(~bits)
                out_names.append(_negate(label))
    matrix = np.column_stack(out_cols).astype(np.uint8) if out_cols else np.zeros((X.shape[0], 0), np.uint8)
    return out_names, matrix


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _negate(label: str) -> str:
    return label.replace("<=", ">", 1) if "<=" in label else f"not {label}"
