"""Resolve a ``DataSpec`` into a ``Problem``: read, select, check, encode the target, split, binarize.

Every bad input raises ``DataError`` naming the file, column, row or value, and the fix (the CLI
turns it into exit status 2 before anything is written).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from glasswork.data.binarize import Binarizer, binarize
from glasswork.data.problem import DataError, Problem
from glasswork.data.sandbox import Bounds
from glasswork.data.sources import Table, hide_vars, read_table
from glasswork.data.spec import DataSpec
from glasswork.data.split import split_indices

__all__ = ["binarize", "load_again", "load_problem", "split_indices"]


def load_problem(
    spec: DataSpec, base_dir: str | Path = ".", *, time_limit: float | None = None, memory_limit: int | None = None
) -> Problem:
    """Build the ``Problem`` a spec's ``data:`` section describes; raises ``DataError``.

    ``time_limit`` (seconds) and ``memory_limit`` (bytes), a run's ``limits``, bound reading and
    filtering the files (``DataError`` past them); Ctrl-C stops it (``KeyboardInterrupt``).
    """
    try:
        return _load(spec, Path(base_dir), Bounds(time_limit, memory_limit))
    except DataError as exc:  # a ${VAR}'s value is never printed (docs/security.md)
        hide_vars(exc, spec.source, spec.test)
        raise


def load_again(data: Any, spec_path: str | None, fingerprint: str | None) -> Problem | str:
    """A recorded run's data loaded again (the run store keeps no rows): its spec's ``data:``
    section (a dict), read relative to the spec file as the run read it, and checked against the
    run's data fingerprint; else why not, in words (a report says so and goes on)."""
    from glasswork.quoting import printable

    try:
        problem = load_problem(DataSpec.model_validate(data), Path(spec_path).parent if spec_path else Path("."))
    except Exception as exc:  # data moved or unreadable
        return f"the data could not be loaded again ({printable(exc)})"
    if problem.fingerprint() != fingerprint:
        return "the data differ from those the run used (fingerprint mismatch)"
    return problem


def _load(spec: DataSpec, base_dir: Path, bounds: Bounds) -> Problem:
    if spec.source.lower().endswith(".out"):
        from glasswork.data.corels_format import load_corels

        return load_corels(spec, base_dir)

    table = read_table(spec.source, base_dir, spec.where, spec.types, bounds)
    target = spec.target or table.target
    if target is None:
        raise DataError(
            "the data set names no single default target",
            file=table.origin,
            hint=f"set 'target' to one of: {', '.join(table.names)}",
        )
    features = _select(spec, table, target)
    used = [*features, target] + ([spec.weights] if spec.weights else []) + spec.audit_only
    _no_repeated_names(table, used)
    table = _missing(spec, table, used, target)
    _not_empty(spec, table, features)

    test = None
    if spec.test is not None:
        test = read_table(spec.test, base_dir, spec.where, spec.types, bounds)
        absent = [c for c in used if c not in test.columns]
        if absent:
            raise DataError(
                f"the test file lacks column(s) {', '.join(map(repr, absent))}",
                file=test.origin,
                hint="train and test files need the same columns",
            )
        _no_repeated_names(test, used)
        test = _missing(spec, test, used, target)
        if test.n_rows == 0:
            raise DataError("the test file has no rows", file=test.origin, hint="check the file and the 'where' filter")
        for c in features:  # a column has the training file's type in the test file too
            if table.columns[c].dtype.kind in "biuf" and test.columns[c].dtype.kind not in "biuf":
                test.columns[c] = _numeric(test, c)
            elif table.columns[c].dtype.kind == "O" and test.columns[c].dtype.kind != "O":
                test.columns[c] = _as_text(test.columns[c], test.missing[c])

    task, y, classes = _encode_target(spec, table, target)
    weights = _weights(spec, table)
    train, held, folds = split_indices(spec.split, y, task)

    if spec.binarize is not None:
        _check_text_columns(spec, table, features)
        fitted = Binarizer(spec.binarize).fit({c: table.columns[c][train] for c in features}, features)
        names, X = fitted.transform({c: table.columns[c] for c in features})
        if not names:
            raise DataError(
                "binarization produced no features (every column is constant)",
                file=table.origin,
                hint="check 'columns', 'drop' and 'where'",
            )
        warnings = id_column_warnings(fitted, train.shape[0], table.origin)
        warnings += missing_marker_warnings(fitted, table.origin) + spelling_warnings(fitted, table.origin)
    else:
        names, X = features, _numeric_matrix(table, features)

    problem = Problem(
        name=spec.source,
        X=X[train],
        y=y[train],
        feature_names=list(names),
        task=task,
        classes=classes,
        sample_weight=None if weights is None else weights[train],
        train_index=train,
        test_index=held,
        folds=folds,
        fold=spec.split.fold if spec.split.kind == "kfold" else None,
        source=spec.source,
    )
    problem.audit = {c: table.columns[c][train] for c in spec.audit_only}
    if held is not None:
        problem.X_test, problem.y_test = X[held], y[held]
        problem.test_sample_weight = None if weights is None else weights[held]
        problem.audit_test = {c: table.columns[c][held] for c in spec.audit_only}
    if test is not None:
        problem.X_test = (
            fitted.transform({c: test.columns[c] for c in features})[1]
            if spec.binarize is not None
            else _numeric_matrix(test, features)
        )
        problem.y_test = _encode_test_target(spec, test, target, task, classes)
        problem.test_sample_weight = None if spec.weights is None else _weights(spec, test)
        problem.audit_test = {c: test.columns[c] for c in spec.audit_only}
    if spec.binarize is not None:
        problem.extras["binarizer"] = fitted
        problem.warnings.extend(warnings)
    return problem


# A one-hot encoded column with at least this many values, nearly one per training row, is taken
# for an identifier: each of its features holds for a row or two, so it only slows the search.
ID_MIN_VALUES = 100
ID_DISTINCT_SHARE = 0.9


def id_column_warnings(fitted: Binarizer, n_rows: int, origin: str) -> list[str]:
    """A warning for each one-hot encoded column whose values are (nearly) all distinct: an ID
    column that would become hundreds of features, with the line that leaves it out."""
    out = []
    for enc in fitted.encodings:
        distinct = len(enc.values)
        if enc.kind == "onehot" and distinct >= ID_MIN_VALUES and distinct >= ID_DISTINCT_SHARE * n_rows:
            name = json.dumps(enc.column)  # quoted and escaped: a column name is data
            out.append(
                f"{origin}: column {name} has {distinct} distinct values in {n_rows} training rows "
                f"(an ID?) and is one-hot encoded into {distinct} features; to leave it out, "
                f"add it to data.drop in the spec (drop: [{name}])"
            )
    return out


# Tokens people write for "no value" that the one missing-value rule (glasswork.values.is_missing)
# keeps as text, since each can be a real category ('NA': North America, 'None': a level).
MISSING_MARKERS = frozenset({"na", "n/a", "n.a.", "#n/a", "null", "none", "nil", "?", "-", "--", "missing", "unknown"})


def missing_marker_warnings(fitted: Binarizer, origin: str) -> list[str]:
    """A warning for each one-hot encoded column with values that usually mean missing: they are
    categories as written (``city:N/A``), which is right only if the user meant them as values."""
    out = []
    for enc in fitted.encodings:
        if enc.kind != "onehot":
            continue
        markers = [v for v in enc.values if isinstance(v, str) and v.strip().casefold() in MISSING_MARKERS]
        if markers:
            name = json.dumps(enc.column)  # quoted and escaped: a column name is data
            shown = ", ".join(map(repr, markers))  # quoted and escaped: values are data
            out.append(
                f'{origin}: column {name} holds {shown}, read as categories (features {name[:-1]}:..."), '
                "not missing; if they mean missing, leave those cells empty in the file (an empty cell is "
                "missing) and set 'missing: drop', or keep them out with data.where"
            )
    return out


def spelling_warnings(fitted: Binarizer, origin: str) -> list[str]:
    """A warning for each one-hot encoded column with values that differ only in case or
    surrounding spaces (``Paris``, `` Paris``, ``paris``): as written they are separate features,
    which a spreadsheet's stray space or capital makes without the user meaning it."""
    out = []
    for enc in fitted.encodings:
        if enc.kind != "onehot":
            continue
        groups: dict[str, list[str]] = {}
        for v in enc.values:
            if isinstance(v, str):
                groups.setdefault(_spelling(v), []).append(v)
        split = [g for g in groups.values() if len(g) > 1]
        if split:
            name = json.dumps(enc.column)  # quoted and escaped: a column name is data
            shown = "; ".join(", ".join(map(repr, g)) for g in split[:5])  # quoted and escaped
            shown += f" (and {len(split) - 5} more such groups)" if len(split) > 5 else ""
            out.append(
                f"{origin}: column {name} holds {shown}, which differ only in case or spaces and are "
                "separate categories (features) as written; if they are one value, write it one way in the file"
            )
    return out


def _select(spec: DataSpec, table: Table, target: str) -> list[str]:
    names = table.names
    listing = f"columns are: {', '.join(names)}"
    if target not in table.columns:
        raise DataError(
            f"target column {target!r} is not in the data",
            file=table.origin,
            hint=f"set 'target' to one of: {', '.join(names)}",
        )
    if spec.weights is not None and spec.weights not in table.columns:
        raise DataError(f"weights column {spec.weights!r} is not in the data", file=table.origin, hint=listing)
    absent = [c for c in spec.audit_only if c not in table.columns]
    if absent:
        raise DataError(
            f"audit-only column(s) {', '.join(map(repr, absent))} not in the data",
            file=table.origin,
            hint=listing,
            field="data.audit_only",
        )
    wanted = spec.columns if spec.columns is not None else names
    missing = [c for c in [*wanted, *spec.drop] if c not in table.columns]
    if missing:
        raise DataError(f"unknown column(s) {', '.join(map(repr, missing))}", file=table.origin, hint=listing)
    if spec.columns is not None and target in spec.columns:
        raise DataError(
            f"the target {target!r} is listed under 'columns'",
            file=table.origin,
            hint="a model cannot use its own target as a feature; remove it",
        )
    left_out = {target, spec.weights, *spec.drop, *spec.audit_only}  # audit-only: never a feature
    return [c for c in wanted if c not in left_out]


def _no_repeated_names(table: Table, used: list[str]) -> None:
    """Refuse a used column whose name the header writes twice: a model over ``age_1`` (the
    reader's name for the second ``age``) could not be run on the user's table."""
    for c in used:
        group = table.repeated.get(c)
        if group:
            written = group[0]
            raise DataError(
                f"the column name {written!r} is written {'twice' if len(group) == 2 else f'{len(group)} times'} "
                "in the header "
                f"(read as {', '.join(map(repr, group))})",
                file=table.origin,
                line=1,
                hint="give each column its own name in the file's first line, or leave them out of the model: "
                f"drop: {json.dumps(group)}",
            )


def _missing(spec: DataSpec, table: Table, used: list[str], target: str) -> Table:
    bad = np.zeros(table.n_rows, dtype=bool)
    for c in used:
        bad |= table.missing[c]
    if not bad.any():
        return table
    if spec.missing == "drop":
        return table.take(~bad)
    for c in used:  # name the first missing cell, column by column
        hits = np.flatnonzero(table.missing[c])
        if hits.size:
            what = "target" if c == target else "audit-only column" if c in spec.audit_only else "feature"
            raise DataError(
                f"missing value (empty or NaN) in the {what}",
                **table.where(c, int(hits[0])),
                hint=f"{int(hits.size)} row(s) affected: fill them, or set 'missing: drop' to leave those rows out",
            )
    return table  # unreachable: some column had a missing cell


def _not_empty(spec: DataSpec, table: Table, features: list[str]) -> None:
    if table.n_rows == 0:
        hint = "the 'where' filter keeps no row" if spec.where else "the file has no data rows"
        if spec.missing == "drop":
            hint += " (or every row has a missing value and 'missing: drop' removed it)"
        raise DataError("the data set is empty after filtering", file=table.origin, hint=hint)
    if not features:
        raise DataError("no feature columns are left", file=table.origin, hint="check 'columns' and 'drop'")


def _numeric(table: Table, name: str) -> np.ndarray:
    """A column as float64, or a DataError naming the first value that is not a number."""
    col = table.columns[name]
    if col.dtype.kind in "biuf":
        return col.astype(np.float64)
    out = np.empty(col.shape[0], dtype=np.float64)
    for i, v in enumerate(col.tolist()):
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            raise DataError(
                f"value {v!r} is not a number",
                **table.where(name, i),
                hint="write a plain number (12 not 12%, 1200 not $1,200, 1.5 not 1,5)"
                if _formatting(v) == "number"
                else "fix the value, 'drop' the column, or add 'binarize:' to one-hot encode text",
            ) from None
    return out


# A number as people write it in a spreadsheet, which a CSV reader reads as text: a currency sign,
# thousands separators (``1,234``, ``1.234``, ``1 234``), a decimal comma, a percent sign.
_FORMATTED_NUMBER = re.compile(
    r"[-+]?[$€£¥]?\s?[-+]?(\d{1,3}([,. ]\d{3})+([.,]\d+)?|\d+,\d+|\d+(\.\d*)?|\.\d+)\s?[$€£¥%]?",
)
_PLAIN_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")


def _formatting(value: object) -> str | None:
    """What makes a text cell a number or a date the reader keeps as text, or None."""
    text = str(value).strip()
    if _PLAIN_NUMBER.fullmatch(text):
        return None
    if _DATE.fullmatch(text):
        return "date"
    if _FORMATTED_NUMBER.fullmatch(text) and any(ch.isdigit() for ch in text):
        return "number"
    return None


def _check_text_columns(spec: DataSpec, table: Table, features: list[str]) -> None:
    """A text column whose values are mostly numbers has a typo, not categories; one whose values
    are mostly numbers written with formatting (``12%``, ``$1,200``, ``1,5``) or dates would become
    one feature per value: name it, with what to write, rather than one-hot encode it."""
    listed = set(spec.binarize.categorical) if spec.binarize is not None else set()
    for c in features:
        col = table.columns[c]
        if col.dtype.kind != "O" or c in listed or spec.types.get(c) == "category":
            continue
        values = col.tolist()
        counts = Counter(values)  # each distinct value judged once
        kinds = {v: k for v in counts if (k := _formatting(v)) is not None}
        if sum(counts[v] for v in kinds) * 2 > len(values):
            first = next(i for i, v in enumerate(values) if v in kinds)
            distinct = len(counts)
            if kinds[values[first]] == "date":
                what = f"value {values[first]!r} is a date, which is read as text"
                fix = "add a numeric column made from it (a year, days since a start) to the file, drop it"
            else:
                what = f"value {values[first]!r} is a number written with formatting, which is read as text"
                fix = "write plain numbers in the file (12 not 12%, 1200 not $1,200, 1.5 not 1,5)"
            raise DataError(
                what,
                **table.where(c, first),
                hint=f"its {distinct} distinct value(s) would become {distinct} one-hot features; {fix}, "
                f"or list {c!r} under binarize.categorical to one-hot encode its values as written",
            )
        bad = []
        for i, v in enumerate(values):
            try:
                float(v)
            except (TypeError, ValueError):
                bad.append(i)
                if len(bad) * 2 > len(col):
                    break
        if bad and len(bad) * 2 <= len(col):
            marker = str(col[bad[0]]).strip().casefold() in MISSING_MARKERS
            raise DataError(
                f"value {col[bad[0]]!r} is not a number, in a column of numbers",
                **table.where(c, bad[0]),
                hint=f"{len(bad)} such row(s): "
                + (
                    "if they mean missing, leave the cell empty in the file (an empty cell is missing) and set "
                    "'missing: drop' to leave those rows out; otherwise fix them, or "
                    if marker
                    else "fix them, or "
                )
                + f"list {c!r} under binarize.categorical to one-hot encode its values",
            )


def _as_text(col: np.ndarray, missing: np.ndarray) -> np.ndarray:
    out = np.empty(col.shape[0], dtype=object)
    out[:] = [None if gap else str(v) for v, gap in zip(col.tolist(), missing.tolist())]
    return out


def _numeric_matrix(table: Table, features: list[str]) -> np.ndarray:
    X = np.empty((table.n_rows, len(features)), dtype=np.float64)
    for j, c in enumerate(features):
        X[:, j] = _numeric(table, c)
        if table.columns[c].dtype.kind == "O":  # every value parses, yet the column is text: codes
            first = str(table.columns[c][0])
            raise DataError(
                f"column {c!r} holds codes written like numbers ({first!r}): text, not numbers",
                **table.where(c, 0),
                hint=f"a number with a leading zero or '+' is read as a code; set data.types: {{{c}: numeric}} "
                "to read the column as numbers, or add 'binarize:' to one-hot encode it",
            )
        bad = np.flatnonzero(~np.isfinite(X[:, j]))
        if bad.size:
            raise DataError(
                f"value {float(X[bad[0], j])!r} is not a finite number",
                **table.where(c, int(bad[0])),
                hint="fix or drop those rows",
            )
    return X


def _weights(spec: DataSpec, table: Table) -> np.ndarray | None:
    if spec.weights is None:
        return None
    w = _numeric(table, spec.weights)
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise DataError(
            f"weight {float(w[bad[0]])!r} is not a finite non-negative number",
            **table.where(spec.weights, int(bad[0])),
            hint="weights must be >= 0",
        )
    if not (w > 0).any():
        raise DataError(
            "every weight is zero",
            file=table.origin,
            column=spec.weights,
            hint="give at least one sample a positive weight",
        )
    return w


def _spelling(label: str) -> str:
    """A label as a reader hears it: without case or surrounding spaces."""
    return label.strip().casefold()


def _same_label_spelled_twice(table: Table, target: str) -> None:
    """Refuse text labels that differ only in case or surrounding spaces (``Yes``, ``yes``,
    `` yes``): as written they are different classes, so one label would be split in two, or
    flipped to the negative class by ``positive: yes``."""
    seen: dict[str, str] = {}
    for i, v in enumerate(table.columns[target].tolist()):
        if not isinstance(v, str):
            continue
        first = seen.setdefault(_spelling(v), v)
        if first != v:
            raise DataError(
                f"the target labels {first!r} and {v!r} differ only in case or spaces, so they would be "
                "two different classes",
                **table.where(target, i),
                hint="write each label one way in the file (the same case, no spaces around it)",
            )


def _encode_target(spec: DataSpec, table: Table, target: str) -> tuple[Any, np.ndarray, np.ndarray | None]:
    y_raw = table.columns[target]
    _same_label_spelled_twice(table, target)
    values = _unique(y_raw)
    if len(values) < 2:
        shown = values[0] if len(values) else None
        raise DataError(
            f"the target is constant (every row is {shown!r})",
            file=table.origin,
            column=target,
            hint="a model needs at least two distinct target values; check 'target' and 'where'",
        )
    task = spec.task or _infer_task(spec, y_raw, values)
    if task == "regression" and spec.positive is not None:
        raise DataError(
            "'positive' applies to classification, but the task is regression",
            column=target,
            hint="remove 'positive' or set task: binary",
        )
    if task == "regression":
        return task, _numeric(table, target), None
    if spec.positive is not None:
        pos = find_label(values, spec.positive)
        if pos is None:
            raise DataError(
                f"positive label {spec.positive!r} does not occur in the target",
                file=table.origin,
                column=target,
                hint=f"labels are: {', '.join(map(str, values))}",
            )
        if task == "multiclass":
            raise DataError(
                "'positive' makes the task binary, but task is multiclass",
                column=target,
                hint="remove 'positive' or set task: binary",
            )
        others = [v for v in values if v != pos]
        neg = others[0] if len(others) == 1 else f"not-{pos}"
        y = np.asarray([v == pos for v in y_raw.tolist()], dtype=np.int64)
        return "binary", y, np.asarray([neg, pos], dtype=object)
    if task == "binary" and len(values) != 2:
        raise DataError(
            f"a binary task needs two labels, the target has {len(values)}: "
            f"{', '.join(map(str, values[:10]))}{' ...' if len(values) > 10 else ''}",
            file=table.origin,
            column=target,
            hint="set 'positive' to the label to predict (the rest become negative), or set 'task: multiclass'",
        )
    index = {v: i for i, v in enumerate(values)}
    y = np.asarray([index[v] for v in y_raw.tolist()], dtype=np.int64)
    return task, y, np.asarray(values, dtype=object)


def _encode_test_target(spec: DataSpec, test: Table, target: str, task: str, classes: np.ndarray | None) -> np.ndarray:
    if task == "regression" or classes is None:
        return _numeric(test, target)
    y_raw = test.columns[target].tolist()
    _same_label_spelled_twice(test, target)
    if spec.positive is not None:
        pos = classes[1]
        for i, v in enumerate(y_raw):
            if isinstance(v, str) and isinstance(pos, str) and v != pos and _spelling(v) == _spelling(pos):
                raise DataError(
                    f"test label {v!r} differs from the positive label {pos!r} only in case or spaces",
                    **test.where(target, i),
                    hint="write each label one way in both files (the same case, no spaces around it)",
                )
        return np.asarray([v == pos for v in y_raw], dtype=np.int64)
    index = {v: i for i, v in enumerate(classes.tolist())}
    for i, v in enumerate(y_raw):
        if v not in index:
            raise DataError(
                f"test label {v!r} does not occur in the training data",
                **test.where(target, i),
                hint=f"training labels are: {', '.join(map(str, classes))}",
            )
    return np.asarray([index[v] for v in y_raw], dtype=np.int64)


def _unique(values: np.ndarray) -> list:
    """Distinct values, sorted (text and numbers both), as Python scalars."""
    distinct = set(values.tolist())
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=str)


def _infer_task(spec: DataSpec, y_raw: np.ndarray, values: list) -> str:
    if y_raw.dtype.kind == "f" and not np.all(np.mod(y_raw, 1) == 0):
        return "regression"
    if y_raw.dtype.kind in "iuf" and len(values) > 20:
        return "regression"
    return "binary" if len(values) == 2 or spec.positive is not None else "multiclass"


def find_label(values: list, positive: object) -> object | None:
    """The label ``positive`` names (also the value a protected group names): equal, or with the
    same text (``positive: true`` in YAML is a boolean, and also names a ``true`` / ``TRUE`` text
    label)."""
    for v in values:
        if v == positive or str(v) == str(positive):
            return v
    if isinstance(positive, bool):
        for v in values:
            if isinstance(v, str) and v.strip().lower() == str(positive).lower():
                return v
    return None
