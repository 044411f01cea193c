"""Checking an exported model against the model itself, on the raw rows it was trained from.

The contract (``SolverContract``) and glasswork's own tests use these: run the exported Python
in a fresh namespace, the exported SQL in DuckDB and in SQLite, and the json document through
``glasswork.load_model``, each on the raw table, and compare with the model's own predictions
on the feature matrix: labels bit for bit, probabilities within ``PROBA_TOLERANCE``.

Before anything runs, the text is checked for its shape, so data can never have become code:
the Python parses (``ast``) to a module of only a docstring, ``import math`` / ``import re``,
assignments and function definitions, and running it adds nothing to ``sys.modules`` or
``builtins``; the SQL is exactly one ``SELECT`` statement to DuckDB's parser and to SQLite
(``complete_statement``, and ``execute`` refuses a second statement), and a sentinel table
beside the data survives it (``check_python``, ``check_sql``).
"""

from __future__ import annotations

import ast
import builtins
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
from glasswork.data import DataSpec, Problem
from glasswork.export import ExportRequest, ModelInputs, export_model, load_model
from glasswork.hooks.registry import Registry
from glasswork.quoting import sql_name
from glasswork.values import is_missing

PROBA_TOLERANCE = 1e-12
ROW = "_glasswork_row"
SENTINEL = "glasswork_sentinel"  # a table beside the data that an exported query must leave alone
MODULE_IMPORTS = {"math", "re"}


def check_python(text: str) -> dict[str, Any]:
    """Parse an exported module, check it holds nothing but its docstring, its imports, constants
    and functions, run it in a fresh namespace and check the run changed nothing outside it;
    returns the namespace. An ``AssertionError`` says what is wrong."""
    tree = ast.parse(text)
    for k, node in enumerate(tree.body):
        if k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import):
            names = {a.name for a in node.names}
            assert names <= MODULE_IMPORTS, f"the module imports {sorted(names)}"
            continue
        assert isinstance(node, (ast.Assign, ast.FunctionDef)), (
            f"line {node.lineno}: a top-level {type(node).__name__} in an exported module"
        )
        if isinstance(node, ast.FunctionDef):
            assert not node.decorator_list, f"line {node.lineno}: a decorated function"
            assert all(d is None or isinstance(d, ast.Constant) for d in node.args.defaults), (
                f"line {node.lineno}: a default argument that runs code"
            )
        else:  # constants and aliases only: nothing is called while the module is imported
            calls = [n for n in ast.walk(node.value) if isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr))]
            ok = all(
                isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute)
                and c.func.attr == "compile"
                and isinstance(c.func.value, ast.Name)
                and c.func.value.id == "re"
                for c in calls
            )
            assert ok, f"line {node.lineno}: an assignment that runs code"
    before_modules, before_builtins = set(sys.modules), dict(vars(builtins))
    namespace: dict[str, Any] = {"__name__": "exported_model"}
    exec(compile(tree, "<exported model>", "exec"), namespace)
    added = set(sys.modules) - before_modules
    assert not added, f"importing the module imported {sorted(added)}"
    changed = [
        k
        for k in set(vars(builtins)) | set(before_builtins)
        if k not in before_builtins or vars(builtins).get(k) is not before_builtins[k]
    ]
    assert not changed, f"importing the module changed builtins {sorted(changed)}"
    return namespace


def check_sql(text: str) -> None:
    """Exactly one statement, a ``SELECT``, to DuckDB's parser and to SQLite's."""
    import duckdb

    statements = duckdb.extract_statements(text)
    assert len(statements) == 1, f"DuckDB reads {len(statements)} statements"
    assert statements[0].type == duckdb.StatementType.SELECT, f"DuckDB reads a {statements[0].type}"
    assert sqlite3.complete_statement(text.rstrip() + ";"), "SQLite reads an unfinished statement"
    lite = sqlite3.connect(":memory:")
    try:  # sqlite3 refuses to prepare a second statement: an injected one fails here
        lite.execute(f"EXPLAIN {text}")
    except sqlite3.ProgrammingError as exc:
        raise AssertionError(f"SQLite: {exc}") from None
    except sqlite3.OperationalError:
        pass  # no table here: this checks the statement count only
    finally:
        lite.close()


def raw_columns(
    data: DataSpec, problem: Problem, part: str = "test", base_dir: str | Path = "."
) -> dict[str, np.ndarray]:
    """The raw columns of the ``train`` or ``test`` rows of ``problem``, read again from its source.

    A separate test file is read as it is. A CORELS ``.out`` source has no raw columns; its
    ``.csv`` companion (the categorical table the antecedents were mined from, as the CORELS
    repository ships it) is read instead.
    """
    from glasswork.data.sources import read_table

    separate = part == "test" and data.test is not None
    source = data.test if separate and data.test is not None else data.source
    premined = source.lower().endswith(".out")
    if premined:
        source = source[:-4] + ".csv"
    columns = dict(read_table(source, Path(base_dir), data.where, None if premined else data.types).columns)
    rows = None if separate else (problem.train_index if part == "train" else problem.test_index)
    return columns if rows is None else {k: v[rows] for k, v in columns.items()}


def expected(model: Any, X: np.ndarray) -> tuple[list[Any], np.ndarray | None]:
    """The model's labels (class values, or numbers for regression) and probabilities on ``X``."""
    encoded = np.asarray(model.predict(X))
    if getattr(model, "task", "") == "regression":
        return encoded.tolist(), None
    labels = np.asarray(model.classes, dtype=object)[encoded].tolist()
    return [v.item() if hasattr(v, "item") else v for v in labels], np.asarray(model.predict_proba(X), dtype=np.float64)


def _rows(columns: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    names = list(columns)
    plain = {k: [v.item() if hasattr(v, "item") else v for v in np.asarray(columns[k]).tolist()] for k in names}
    n = len(plain[names[0]]) if names else 0
    return [{k: plain[k][i] for k in names} for i in range(n)]


def run_python(text: str, columns: dict[str, np.ndarray]) -> tuple[list[Any], np.ndarray | None]:
    namespace = check_python(text)  # the exported module, as a user imports it
    rows = _rows(columns)
    labels = [namespace["predict"](row) for row in rows]
    proba = namespace.get("predict_proba")
    if proba is None:
        return labels, None
    probas = [proba(row) for row in rows]  # None for a row with a missing value: a row of NaN here
    width = max((len(p) for p in probas if p is not None), default=0)
    return labels, np.asarray([[np.nan] * width if p is None else p for p in probas], dtype=np.float64)


def _cell(value: Any) -> Any:
    """A value as a database holds it: every kind of missing value is NULL."""
    return None if value is None or (not isinstance(value, (str, bytes)) and is_missing(value)) else value


def _duck_column(values: np.ndarray) -> np.ndarray:
    """A column as DuckDB should type it: kept when numpy typed it; an object column holding any text
    becomes VARCHAR (numbers written as text, missing as NULL), else DOUBLE (NULL for missing)."""
    values = np.asarray(values)
    if values.dtype.kind != "O":
        return values
    cells = [_cell(v.item() if hasattr(v, "item") else v) for v in values.tolist()]
    if any(isinstance(v, str) for v in cells):
        return np.asarray([v if v is None or isinstance(v, str) else repr(v) for v in cells], dtype=object)
    if all(v is None or isinstance(v, bool) for v in cells) and any(v is not None for v in cells):
        return np.asarray(cells, dtype=object)
    return np.asarray([np.nan if v is None else float(v) for v in cells], dtype=np.float64)


def run_sql(
    text: str, columns: dict[str, np.ndarray], engine: str, classes: list[Any] | None
) -> tuple[list[Any], np.ndarray | None]:
    """Run the exported query on the raw rows in ``duckdb`` or ``sqlite`` (table ``data``, beside a
    sentinel table the query must leave as it is)."""
    check_sql(text)
    rows = _rows(columns)
    names = list(columns)
    outputs = ["prediction"] + [f"p_{c}" for c in classes or []]
    select = ", ".join(sql_name(o) for o in outputs)
    query = f"SELECT {select} FROM ({text.rstrip().rstrip(';')}) AS exported ORDER BY {sql_name(ROW)}"
    con: Any
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.register("raw", {**{k: _duck_column(columns[k]) for k in names}, ROW: np.arange(len(rows))})
        con.execute("CREATE TABLE data AS SELECT * FROM raw")
        con.unregister("raw")
    else:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE TABLE data (" + ", ".join(sql_name(k) for k in [*names, ROW]) + ")")
        con.executemany(
            f"INSERT INTO data VALUES ({', '.join('?' for _ in range(len(names) + 1))})",
            [[_cell(row[k]) for k in names] + [i] for i, row in enumerate(rows)],
        )
    con.execute(f"CREATE TABLE {SENTINEL} (kept INTEGER)")
    con.execute(f"INSERT INTO {SENTINEL} VALUES (1)")
    try:
        result = con.execute(query).fetchall()
        kept = con.execute(f"SELECT kept FROM {SENTINEL}").fetchall()
        assert kept == [(1,)], f"sql/{engine}: the query changed the table beside the data"
        assert con.execute("SELECT COUNT(*) FROM data").fetchone()[0] == len(rows), f"sql/{engine}: the data changed"
    finally:
        con.close()
    labels = [r[0] for r in result]
    return labels, (np.asarray([r[1:] for r in result], dtype=np.float64) if classes else None)


def check_exports(
    model: Any,
    inputs: ModelInputs,
    columns: dict[str, np.ndarray],
    X: np.ndarray,
    registry: Registry,
    formats: tuple[str, ...] = ("python", "sql", "json"),
) -> dict[str, int]:
    """Export ``model`` in each format, predict the raw ``columns`` and compare with the model on
    ``X`` (the same rows as its matrix); raises ``AssertionError`` naming the first difference.
    Returns the number of rows checked per format."""
    want_labels, want_proba = expected(model, X)
    doc = model.to_dict()
    classes = None if want_proba is None else [v.item() if hasattr(v, "item") else v for v in model.classes]
    request = ExportRequest("python", inputs, "data", {"run_id": "contract", "name": "contract"})
    checked = {}
    for fmt in formats:
        results: list[tuple[str, tuple[list[Any], np.ndarray | None]]] = []
        if fmt == "python":
            request.format = fmt
            results.append((fmt, run_python(export_model(doc, request, registry), columns)))
        elif fmt == "sql":
            request.format = fmt
            text = export_model(doc, request, registry)
            results += [(f"sql/{e}", run_sql(text, columns, e, classes)) for e in ("duckdb", "sqlite")]
        elif fmt == "json":
            document = {
                "format": "glasswork.model",
                "version": 1,
                "kind": doc["kind"],
                "model": doc,
                "inputs": inputs.model_dump(mode="json"),
            }
            loaded = load_model(document, registry)
            got = loaded.predict(columns)
            labels = [v.item() if hasattr(v, "item") else v for v in np.asarray(got, dtype=object).tolist()]
            results.append((fmt, (labels, None if want_proba is None else np.asarray(loaded.predict_proba(columns)))))
        for name, (labels, proba) in results:
            assert len(labels) == len(want_labels), f"{name}: {len(labels)} predictions for {len(want_labels)} rows"
            bad = [
                i
                for i, (a, b) in enumerate(zip(labels, want_labels))
                if a != b
                or type(a) is not type(b)
                and not (isinstance(a, (int, float)) and isinstance(b, (int, float)))
            ]
            assert not bad, f"{name}: row {bad[0]} predicts {labels[bad[0]]!r}, the model {want_labels[bad[0]]!r}"
            if want_proba is not None:
                assert proba is not None, f"{name}: no probabilities"
                worst = float(np.max(np.abs(proba - want_proba))) if proba.size else 0.0
                assert worst <= PROBA_TOLERANCE, f"{name}: probabilities differ by up to {worst:.3g}"
            checked[name] = len(labels)
    return checked


__all__ = [
    "PROBA_TOLERANCE",
    "check_exports",
    "check_python",
    "check_sql",
    "expected",
    "raw_columns",
    "run_python",
    "run_sql",
]
