"""The ``where`` row filter, sandboxed: a spec is data, so its filter may only look at the rows.

A spec can come from anyone (a colleague's mail, a paper, a generated sweep), so ``data.where``
is checked with DuckDB's own parser before anything runs, and then run in a connection that can
reach nothing but the rows already read:

- checked: it must parse as exactly one boolean expression standing alone in
  ``SELECT * FROM rows WHERE <expression>`` (no second statement, no ``UNION``, ``ORDER BY``,
  subquery, parameter or qualified name); every function it calls must be a built-in scalar
  function that does not look outside the rows (``getenv``, ``current_setting``, ``nextval``,
  ``getvariable`` and the catalog functions are refused). ``x = ANY([1, 3])`` and
  ``x <> ALL([1, 3])``, which DuckDB parses as a subquery over ``unnest`` of the list, are
  allowed in exactly that shape (no ``FROM``). The old lambda arrow (``x -> x + 1``), which
  DuckDB 2.0 parses but refuses when it runs, is refused here with what to write instead. What
  runs is DuckDB's re-rendering of the checked expression, never the text as written.
- run: the connection has a memory limit (``SANDBOX_MEMORY_LIMIT``) and a thread count
  (``SANDBOX_THREADS``) of its own; the file is read into an in-memory table first; then
  external access is switched off (no file, no network, no ``ATTACH``, no extension install or
  load), the configuration is locked so the filter cannot switch any of it back, and only then
  is the filter applied.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

MAX_WHERE_CHARS = 4096
ROWS_TABLE = "gw_rows"

# Scalar functions that read something other than the rows: the environment, the session, the
# catalog, sequences, or DuckDB's own SQL (de)serialisers, which could smuggle in a statement.
_REFUSED = frozenset({
    "getenv", "getvariable", "current_setting", "current_database", "current_catalog",
    "current_schema", "current_schemas", "current_user", "session_user", "user", "current_role",
    "current_query", "nextval", "currval", "setseed", "version", "txid_current",
    "json_serialize_sql", "json_deserialize_sql", "json_serialize_plan", "json_execute_serialized_sql",
    "sql_auto_complete", "query", "query_table", "error",
})
_REFUSED_PREFIXES = ("duckdb_", "pragma_", "pg_", "has_", "current_", "read_", "glob", "sniff_")
_CLOCK = frozenset({"current_date", "current_time", "current_timestamp", "current_localtime",
                    "current_localtimestamp"})  # the time of day is not a secret

# DuckDB's own default is 80 % of the machine's memory and one thread per core; a data file or a
# filter (``repeat('x', 10^10)``) should not take the machine from the solver, or from the other
# runs of a sweep. 4 GB holds data sets far larger than the solvers can search.
SANDBOX_MEMORY_LIMIT = "4GB"
SANDBOX_THREADS = 2
SANDBOX_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                  "memory_limit": SANDBOX_MEMORY_LIMIT, "threads": SANDBOX_THREADS}


class UnsafeFilter(ValueError):
    """A ``where`` filter that is not a plain condition over the rows' columns."""


class FilterFailed(ValueError):
    """A checked filter that failed on the rows (a cast of a text value, a bad pattern): the
    filter's fault, not the file's."""


def _serialize(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, Any]:
    rows = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()
    return json.loads(rows[0][0])


@lru_cache(maxsize=None)
def _functions(condition: str) -> frozenset[str]:
    """The built-in functions meeting ``condition`` on ``duckdb_functions()``, lower case."""
    import duckdb

    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        names = con.execute(f"SELECT DISTINCT function_name FROM duckdb_functions() WHERE {condition}").fetchall()
    finally:
        con.close()
    return frozenset(n[0].lower() for n in names)


def _scalar_functions() -> frozenset[str]:
    return _functions("function_type IN ('scalar', 'macro')")


def _lambda_functions() -> frozenset[str]:
    """The functions that take a lambda (``list_transform``, ``list_filter``, ...)."""
    return _functions("list_contains(parameter_types, 'LAMBDA')")


@lru_cache(maxsize=1)
def _list_subquery() -> dict[str, Any]:
    """The subquery DuckDB makes of ``x = ANY([...])``: ``SELECT unnest(<list>)`` and nothing else."""
    import duckdb

    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        where = _serialize(con, f"SELECT * FROM {ROWS_TABLE} WHERE 1 = ANY([1])")["statements"][0]["node"]["where_clause"]
    finally:
        con.close()
    return _strip_locations(_list_argument(where["subquery"], None))


def _list_argument(subquery: dict[str, Any], replacement: Any) -> Any:
    """``subquery`` with the list inside ``unnest(...)`` replaced; ``None`` if it has another shape."""
    try:
        node = subquery["node"]
        (item,) = node["select_list"]
        (argument,) = item["arguments"]
        if item.get("class") != "FUNCTION" or str(item.get("function_name")).lower() != "unnest":
            return None
    except (KeyError, TypeError, ValueError):
        return None
    shaped = dict(item, arguments=[dict(argument, expression=replacement)])
    return dict(subquery, node=dict(node, select_list=[shaped]))


def _list_of(value: dict[str, Any]) -> Any:
    """The list of ``x = ANY(<list>)`` / ``x <> ALL(<list>)``; ``None`` for a real subquery."""
    subquery = value.get("subquery")
    if value.get("subquery_type") != "ANY" or not isinstance(subquery, dict):
        return None
    shaped = _list_argument(subquery, None)
    if shaped is None or _strip_locations(shaped) != _list_subquery():
        return None
    return subquery["node"]["select_list"][0]["arguments"][0]["expression"]


@lru_cache(maxsize=1)
def _template() -> dict[str, Any]:
    import duckdb

    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        return _serialize(con, f"SELECT * FROM {ROWS_TABLE} WHERE TRUE")["statements"][0]["node"]
    finally:
        con.close()


def _without(node: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in keys}


def check_where(text: str) -> str:
    """The filter as DuckDB renders it after checking; ``UnsafeFilter`` saying why otherwise."""
    import duckdb

    if len(text) > MAX_WHERE_CHARS:
        raise UnsafeFilter(f"the filter is {len(text)} characters long; at most {MAX_WHERE_CHARS} are allowed")
    if "\x00" in text:
        raise UnsafeFilter("the filter holds a NUL character")
    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        parsed = _serialize(con, f"SELECT * FROM {ROWS_TABLE} WHERE {text}")
        if parsed.get("error"):
            if ";" in text:
                raise UnsafeFilter("the filter must be one condition, not several statements (no ';')")
            message = str(parsed.get("error_message") or "it does not parse").splitlines()[0]
            raise UnsafeFilter(f"not a valid SQL condition: {message}")
        statements = parsed.get("statements") or []
        if len(statements) != 1:
            raise UnsafeFilter("the filter must be one condition, not several statements (no ';')")
        node = statements[0]["node"]
        template = _template()
        if _strip_locations(_without(node, "where_clause")) != _strip_locations(_without(template, "where_clause")):
            raise UnsafeFilter("the filter must be a condition only (no UNION, ORDER BY, LIMIT, GROUP BY, "
                               "or anything else after it)")
        _check_expression(node["where_clause"])
        rendered = dict(template, where_clause=node["where_clause"])
        document = json.dumps({"error": False, "statements": [{"node": rendered}]})
        sql = con.execute("SELECT json_deserialize_sql(?::JSON)", [document]).fetchall()[0][0]
    except duckdb.Error as exc:
        raise UnsafeFilter(f"not a valid SQL condition: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    prefix = f"SELECT * FROM {ROWS_TABLE} WHERE "
    if not sql.startswith(prefix):
        raise UnsafeFilter("the filter could not be checked")
    return sql[len(prefix):]


def _strip_locations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_locations(v) for k, v in value.items() if not k.startswith("query_location")}
    if isinstance(value, list):
        return [_strip_locations(v) for v in value]
    return value


def _check_expression(value: Any) -> None:
    """Walk the parsed expression; refuse anything that could look beyond the rows."""
    if isinstance(value, list):
        for item in value:
            _check_expression(item)
        return
    if not isinstance(value, dict):
        return
    kind = value.get("class")
    if kind == "SUBQUERY" and set(value) >= {"child", "subquery"}:
        listed = _list_of(value)  # x = ANY([1, 3]): a subquery over the list only, no FROM
        if listed is not None:
            _check_expression(value["child"])
            _check_expression(listed)
            return
    if kind == "SUBQUERY" or "subquery" in value or "node" in value:
        raise UnsafeFilter("subqueries are not allowed: the filter may only look at the file's own rows "
                           "(ANY and ALL take a list: x = ANY([1, 3]))")
    if kind == "PARAMETER":
        raise UnsafeFilter("parameters ($1, ?) are not allowed")
    if kind == "COLUMN_REF" and len(value.get("column_names") or []) > 1:
        raise UnsafeFilter(f"name columns directly, without a table or schema ({'.'.join(value['column_names'])})")
    if kind == "FUNCTION":
        name = str(value.get("function_name", "")).lower()
        if value.get("catalog") or value.get("schema"):
            raise UnsafeFilter(f"qualified function names are not allowed ({name})")
        if name in _REFUSED or (name.startswith(_REFUSED_PREFIXES) and name not in _CLOCK):
            raise UnsafeFilter(f"function {name}() is not allowed: it looks beyond the file's rows")
        if name not in _scalar_functions():
            raise UnsafeFilter(f"function {name}() is not allowed: only built-in scalar functions are")
        if name in _lambda_functions():
            for argument in value.get("arguments") or []:
                lam = argument.get("expression") if isinstance(argument, dict) else None
                if isinstance(lam, dict) and lam.get("class") == "LAMBDA" and lam.get("syntax_type") == "SINGLE_ARROW":
                    raise UnsafeFilter(
                        f"{name}() has a lambda written with the old arrow (x -> ...), which DuckDB 2.0 "
                        f"no longer runs: write 'lambda x: ...' instead of 'x -> ...', e.g. "
                        f"list_filter(l, lambda x: x > 1)")
    for item in value.values():
        _check_expression(item)


def filter_rows(con: duckdb.DuckDBPyConnection, select_rows: str, params: dict[str, Any],
                where: str) -> duckdb.DuckDBPyConnection:
    """Read the rows into memory, lock the connection down, then apply the checked filter.

    ``con`` must be a fresh connection made with ``SANDBOX_CONFIG``; it is unusable for files
    afterwards (external access is off and the configuration locked). ``FilterFailed`` when the
    filter fails on the rows.
    """
    import duckdb

    condition = check_where(where)
    con.execute(f"CREATE TEMP TABLE {ROWS_TABLE} AS {select_rows}", params)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    try:  # run it to the end here, so what fails from now on is the filter's doing
        con.execute(f"CREATE TEMP TABLE {ROWS_TABLE}_kept AS SELECT * FROM {ROWS_TABLE} WHERE {condition}")
    except duckdb.Error as exc:
        raise FilterFailed((str(exc).strip().splitlines() or [type(exc).__name__])[0]) from exc
    return con.execute(f"SELECT * FROM {ROWS_TABLE}_kept")
