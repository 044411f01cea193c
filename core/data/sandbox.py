"""The ``where`` row filter, sandboxed: a spec is data, so its filter may only look at the rows.

A spec can come from anyone (a colleague's mail, a paper, a generated sweep), so ``data.where``
is checked with DuckDB's own parser before anything runs, and then run in a connection that can
reach nothing but the rows already read:

- checked: it must parse as exactly one boolean expression standing alone in
  ``SELECT * FROM rows WHERE <expression>`` (no second statement, no ``UNION``, ``ORDER BY``,
  subquery, parameter or qualified name), nested at most ``MAX_WHERE_DEPTH`` deep; every
  function it calls must be on an allow list of built-ins that read only their arguments and
  allocate no more than them (no environment, catalog, sleep, ``range``/``repeat``-style
  allocation, or macro beyond a few plain ones). ``x = ANY([1, 3])`` and
  ``x <> ALL([1, 3])``, which DuckDB parses as a subquery over ``unnest`` of the list, are
  allowed in exactly that shape (no ``FROM``). The old lambda arrow (``x -> x + 1``), which
  DuckDB 2.0 parses but refuses when it runs, is refused here with what to write instead. What
  runs is DuckDB's re-rendering of the checked expression, never the text as written.
- run: the connection has a memory limit (``SANDBOX_MEMORY_LIMIT``) and a thread count
  (``SANDBOX_THREADS``) of its own; the file is read into an in-memory table first; then
  external access is switched off (no file, no network, no ``ATTACH``, no extension install or
  load), the configuration is locked so the filter cannot switch any of it back, and only then
  is the filter applied.
- bounded: every DuckDB call runs through ``run_bounded``, which stops it with
  ``interrupt()`` at the run's time or memory limit or on Ctrl-C (DuckDB itself does not see
  Python's signals while it works).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from glasswork.memory import memory_reached, resident_memory

T = TypeVar("T")

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class Bounds:
    """How long (seconds, from when the bounds are made) and how much resident memory (bytes)
    reading and filtering may take: a run's ``limits.time`` and ``limits.memory``. ``None``: no
    bound beyond DuckDB's own (``SANDBOX_MEMORY_LIMIT``); Ctrl-C stops it either way."""

    time: float | None = None
    memory: int | None = None
    deadline: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.time is not None:
            object.__setattr__(self, "deadline", time.monotonic() + self.time)


MAX_WHERE_CHARS = 4096
ROWS_TABLE = "gw_rows"

# The functions a filter may call: an allow list (a deny list would let through whatever a new
# DuckDB version adds). Each one reads only its arguments, returns in time linear in them, and
# allocates no more than its arguments' size times the filter's length. Left out on purpose:
# whatever reads the environment, settings, catalog, sequences or files (getenv, current_setting,
# nextval, read_*, glob, duckdb_*, query); whatever sleeps (sleep_ms, pg_sleep); whatever
# allocates without bound (range, generate_series, repeat, lpad, rpad, list_resize, array_resize,
# bar, printf, format, to_base, ...); random values (random, uuid); and every macro not listed in
# _ALLOWED_MACROS (macros expand to SQL of their own, some to subqueries: get_block_size,
# format_type).
_OPERATORS = frozenset(
    {
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "^",
        "&",
        "|",
        "<<",
        ">>",
        "~",
        "!__postfix",
        "||",
        "~~",
        "!~~",
        "~~*",
        "!~~*",
        "~~~",
        "^@",
        "->>",
        "@>",
        "<@",
        "&&",
        "like_escape",
        "not_like_escape",
        "ilike_escape",
        "not_ilike_escape",
    }
)
_ALLOWED_FUNCTIONS = _OPERATORS | frozenset(
    {
        # numbers
        "abs",
        "acos",
        "acosh",
        "add",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "bit_count",
        "cbrt",
        "ceil",
        "ceiling",
        "cos",
        "cosh",
        "cot",
        "degrees",
        "divide",
        "even",
        "exp",
        "factorial",
        "floor",
        "fmod",
        "gamma",
        "gcd",
        "greatest",
        "greatest_common_divisor",
        "isfinite",
        "isinf",
        "isnan",
        "lcm",
        "least",
        "least_common_multiple",
        "lgamma",
        "ln",
        "log",
        "log10",
        "log2",
        "mod",
        "multiply",
        "nextafter",
        "pi",
        "pow",
        "power",
        "radians",
        "round",
        "round_even",
        "roundbankers",
        "sign",
        "signbit",
        "sin",
        "sinh",
        "sqrt",
        "subtract",
        "tan",
        "tanh",
        "trunc",
        "xor",
        # text
        "ascii",
        "bit_length",
        "char_length",
        "character_length",
        "chr",
        "concat",
        "concat_ws",
        "contains",
        "damerau_levenshtein",
        "ends_with",
        "hamming",
        "instr",
        "jaccard",
        "jaro_similarity",
        "jaro_winkler_similarity",
        "lcase",
        "left",
        "left_grapheme",
        "len",
        "length",
        "length_grapheme",
        "levenshtein",
        "lower",
        "ltrim",
        "md5",
        "mismatches",
        "nfc_normalize",
        "octet_length",
        "ord",
        "position",
        "prefix",
        "regexp_escape",
        "regexp_extract",
        "regexp_extract_all",
        "regexp_full_match",
        "regexp_matches",
        "regexp_split_to_array",
        "reverse",
        "right",
        "right_grapheme",
        "rtrim",
        "sha1",
        "sha256",
        "split",
        "starts_with",
        "str_split",
        "str_split_regex",
        "string_split",
        "string_split_regex",
        "string_to_array",
        "strip_accents",
        "strlen",
        "strpos",
        "substr",
        "substring",
        "substring_grapheme",
        "suffix",
        "translate",
        "trim",
        "ucase",
        "unicode",
        "upper",
        "hash",
        # dates and times
        "age",
        "century",
        "date_diff",
        "date_part",
        "date_sub",
        "date_trunc",
        "datediff",
        "datepart",
        "datesub",
        "datetrunc",
        "day",
        "dayname",
        "dayofmonth",
        "dayofweek",
        "dayofyear",
        "decade",
        "epoch",
        "epoch_ms",
        "epoch_ns",
        "epoch_us",
        "era",
        "hour",
        "isodow",
        "isoyear",
        "julian",
        "last_day",
        "make_date",
        "make_time",
        "make_timestamp",
        "microsecond",
        "millennium",
        "millisecond",
        "minute",
        "month",
        "monthname",
        "nanosecond",
        "quarter",
        "second",
        "strftime",
        "strptime",
        "time_bucket",
        "to_days",
        "to_hours",
        "to_microseconds",
        "to_milliseconds",
        "to_minutes",
        "to_months",
        "to_seconds",
        "to_timestamp",
        "to_weeks",
        "to_years",
        "today",
        "try_strptime",
        "week",
        "weekday",
        "weekofyear",
        "year",
        "yearweek",
        "current_date",
        "current_localtime",
        "current_localtimestamp",
        "now",
        "get_current_time",
        "get_current_timestamp",
        # lists, structs, maps and JSON values held in the row (no constructor that takes a length)
        "array_contains",
        "array_distinct",
        "array_extract",
        "array_has",
        "array_has_all",
        "array_has_any",
        "array_indexof",
        "array_length",
        "array_position",
        "array_slice",
        "array_sort",
        "array_value",
        "cardinality",
        "element_at",
        "flatten",
        "list_contains",
        "list_distinct",
        "list_element",
        "list_extract",
        "list_has",
        "list_has_all",
        "list_has_any",
        "list_indexof",
        "list_position",
        "list_slice",
        "list_sort",
        "list_reverse_sort",
        "list_unique",
        "list_value",
        "list_select",
        "list_where",
        "list_grade_up",
        "list_cat",
        "list_concat",
        "array_cat",
        "array_concat",
        "list_zip",
        "list_intersect",
        "array_intersect",
        "map_extract",
        "map_extract_value",
        "map_contains",
        "map_keys",
        "map_values",
        "struct_extract",
        "struct_pack",
        "row",
        "json_extract",
        "json_extract_string",
        "json_extract_path",
        "json_extract_path_text",
        "json_exists",
        "json_valid",
        "json_type",
        "json_array_length",
        "json_keys",
        "json_contains",
        "json_value",
        # conditions
        "constant_or_null",
        "typeof",
    }
)
# Macros DuckDB ships that are plain expressions over their arguments.
_ALLOWED_MACROS = frozenset(
    {
        "if",
        "nullif",
        "split_part",
        "fdiv",
        "list_sum",
        "list_avg",
        "list_min",
        "list_max",
        "list_count",
        "list_bool_and",
        "list_bool_or",
        "list_first",
        "list_last",
        "array_reverse",
        "list_reverse",
        "days_in_month",
        "date_add",
    }
)
# Refused with the reason, beside every function that takes a lambda (list_filter, list_transform,
# list_reduce, ...): a lambda's body runs once per element and may name the whole row again, so
# nested lambdas grow a row's values exponentially in the filter's length (list_reduce with a
# doubling body: 4.96 GB from 184 characters).
_GROWING = {
    "list_aggregate": "it calls any aggregate function by name, past this allow list",
    "list_aggr": "it calls any aggregate function by name, past this allow list",
    "array_aggregate": "it calls any aggregate function by name, past this allow list",
    "array_aggr": "it calls any aggregate function by name, past this allow list",
    "replace": "its output can be longer than its input, so nested calls multiply a value's size",
    "regexp_replace": "its output can be longer than its input, so nested calls multiply a value's size",
}
MAX_WHERE_DEPTH = 64  # nesting of the filter's expression (brackets, and operators chained without them)

# DuckDB's own default is 80 % of the machine's memory and one thread per core; a data file or a
# filter (``repeat('x', 10^10)``) should not take the machine from the solver, or from the other
# runs of a sweep. 4 GB holds data sets far larger than the solvers can search.
SANDBOX_MEMORY_LIMIT = "4GB"
SANDBOX_THREADS = 2
# How much resident memory reading and filtering may add when the run sets no limits.memory: the
# watch in run_bounded stops DuckDB there (its memory_limit does not count every vector).
SANDBOX_RESIDENT_BYTES = 4 * 10**9
SANDBOX_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "memory_limit": SANDBOX_MEMORY_LIMIT,
    "threads": SANDBOX_THREADS,
}
_POLL = 0.05  # seconds between looks at the clock and the memory while DuckDB works
_INTERRUPT_GRACE = 10.0  # seconds Ctrl-C waits for DuckDB to stop before giving up on it


def sandbox_config(memory: int | None = None) -> dict[str, Any]:
    """``SANDBOX_CONFIG`` with the memory limit lowered to ``memory`` bytes (a run's
    ``limits.memory``) when that is below ``SANDBOX_MEMORY_LIMIT``."""
    if memory is None or memory >= 4 * 10**9:
        return dict(SANDBOX_CONFIG)
    return dict(SANDBOX_CONFIG, memory_limit=f"{max(memory // 2**20, 16)}MiB")


def run_bounded(con: duckdb.DuckDBPyConnection, work: Callable[[], T], bounds: Any, what: str) -> T:
    """``work()`` (DuckDB calls on ``con``) on a helper thread, stopped by ``con.interrupt()`` at
    ``bounds.deadline``, past ``bounds.memory`` bytes of resident memory, or on Ctrl-C.

    DuckDB does not look at Python's signals while it runs, so without this a slow filter
    (or a pipe that never ends) ignores Ctrl-C and every limit. Raises ``LimitReached`` at a
    limit and ``KeyboardInterrupt`` on Ctrl-C.
    """
    from glasswork.data.problem import LimitReached

    box: dict[str, Any] = {}
    done = threading.Event()  # not Thread.join: a join cut by Ctrl-C marks a live thread as ended (bpo-45274)

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    # without limits.memory, the backstop: what DuckDB's memory_limit does not count (its vectors)
    memory = bounds.memory if bounds.memory is not None else resident_memory() + SANDBOX_RESIDENT_BYTES
    threading.Thread(target=target, name="glasswork-data", daemon=True).start()
    stop: str | None = None
    try:
        while not done.wait(_POLL):
            if bounds.deadline is not None and time.monotonic() >= bounds.deadline:
                stop = "time"
            elif memory_reached(memory):
                stop = "memory"
            if stop:
                con.interrupt()
                done.wait(_INTERRUPT_GRACE)  # a call that never looks at its interrupt is left behind
                break
    except KeyboardInterrupt:
        con.interrupt()
        done.wait(_INTERRUPT_GRACE)  # DuckDB stops at its next check; a second Ctrl-C need not wait
        raise
    if stop == "time":
        raise LimitReached(
            f"{what} took longer than limits.time ({bounds.time:g} s) allows; stopped",
            status="stopped_time",
            hint="raise limits.time, or simplify data.where / use a smaller file",
        )
    if stop == "memory":
        raise LimitReached(
            f"{what} went past limits.memory ({bounds.memory} bytes); stopped"
            if bounds.memory is not None
            else f"{what} took {SANDBOX_RESIDENT_BYTES / 1e9:g} GB more memory than glasswork lets reading "
            "data take without limits.memory; stopped",
            status="stopped_memory",
            hint="raise limits.memory, or simplify data.where / use a smaller file",
        )
    if "error" in box:
        raise box["error"]
    return box["value"]


class UnsafeFilter(ValueError):
    """A ``where`` filter that is not a plain condition over the rows' columns."""


class FilterFailed(ValueError):
    """A checked filter that failed on the rows (a cast of a text value, a bad pattern): the
    filter's fault, not the file's."""


def _serialize(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, Any]:
    rows = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()
    try:
        return json.loads(rows[0][0])
    except RecursionError:
        raise UnsafeFilter(_TOO_DEEP) from None


_TOO_DEEP = (
    f"the filter nests too deeply (at most {MAX_WHERE_DEPTH} levels of brackets, functions and "
    f"chained operators); split it into simpler conditions"
)


def _bracket_depth(text: str) -> int:
    """How deep ``(``, ``[`` and ``{`` nest outside quotes: checked on the text, before DuckDB's
    parser or Python's recursion meets it."""
    depth = deepest = 0
    quote: str | None = None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def _tree_depth(value: Any) -> int:
    """Nesting of the parsed expression's JSON, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


@cache
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
    return _functions("function_type = 'scalar'")


def _macros() -> frozenset[str]:
    return _functions("function_type = 'macro'")


def _lambda_functions() -> frozenset[str]:
    """The functions that take a lambda (``list_transform``, ``list_filter``, ...)."""
    return _functions("list_contains(parameter_types, 'LAMBDA')")


@lru_cache(maxsize=1)
def _list_subquery() -> dict[str, Any]:
    """The subquery DuckDB makes of ``x = ANY([...])``: ``SELECT unnest(<list>)`` and nothing else."""
    import duckdb

    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        where = _serialize(con, f"SELECT * FROM {ROWS_TABLE} WHERE 1 = ANY([1])")["statements"][0]["node"][
            "where_clause"
        ]
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
    depth = _bracket_depth(text)
    if depth > MAX_WHERE_DEPTH:
        raise UnsafeFilter(f"the filter nests {depth} brackets deep; at most {MAX_WHERE_DEPTH} are allowed")
    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        parsed = _serialize(con, f"SELECT * FROM {ROWS_TABLE} WHERE {text}")
        if parsed.get("error"):
            if ";" in text:
                raise UnsafeFilter("the filter must be one condition, not several statements (no ';')")
            message = str(parsed.get("error_message") or "it does not parse").splitlines()[0]
            if "expression depth" in message:
                raise UnsafeFilter(_TOO_DEEP)
            raise UnsafeFilter(f"not a valid SQL condition: {message}")
        statements = parsed.get("statements") or []
        if len(statements) != 1:
            raise UnsafeFilter("the filter must be one condition, not several statements (no ';')")
        node = statements[0]["node"]
        template = _template()
        if _strip_locations(_without(node, "where_clause")) != _strip_locations(_without(template, "where_clause")):
            raise UnsafeFilter(
                "the filter must be a condition only (no UNION, ORDER BY, LIMIT, GROUP BY, or anything else after it)"
            )
        if _tree_depth(node["where_clause"]) > 6 * MAX_WHERE_DEPTH:  # about 3 JSON levels per SQL level
            raise UnsafeFilter(_TOO_DEEP)
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
    return sql[len(prefix) :]


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
        raise UnsafeFilter(
            "subqueries are not allowed: the filter may only look at the file's own rows "
            "(ANY and ALL take a list: x = ANY([1, 3]))"
        )
    if kind == "PARAMETER":
        raise UnsafeFilter("parameters ($1, ?) are not allowed")
    if kind == "COLUMN_REF" and len(value.get("column_names") or []) > 1:
        raise UnsafeFilter(f"name columns directly, without a table or schema ({'.'.join(value['column_names'])})")
    if kind == "FUNCTION":
        name = str(value.get("function_name", "")).lower()
        if value.get("catalog") or value.get("schema"):
            raise UnsafeFilter(f"qualified function names are not allowed ({name})")
        if name in _GROWING or name in _lambda_functions():
            raise UnsafeFilter(
                f"function {name}() is not allowed in a filter: "
                + (
                    "it takes a lambda, and a lambda (lambda x: ..., x -> ...) can make a row's values "
                    "grow with every call nested in it"
                    if name in _lambda_functions()
                    else _GROWING[name]
                )
                + "; write the condition with plain functions and operators (see docs/security.md)"
            )
        if name in _macros() and name not in _ALLOWED_MACROS:
            raise UnsafeFilter(
                f"function {name}() is not allowed: it is a macro, which runs SQL of its own "
                f"(see docs/security.md for the functions a filter may call)"
            )
        if name not in _ALLOWED_FUNCTIONS | _ALLOWED_MACROS or name not in _scalar_functions() | _macros():
            raise UnsafeFilter(
                f"function {name}() is not allowed in a filter: only built-in functions that "
                f"read nothing but their arguments and allocate no more than them are "
                f"(see docs/security.md for the list)"
            )
    for item in value.values():
        _check_expression(item)


def filter_rows(
    con: duckdb.DuckDBPyConnection, select_rows: str, params: dict[str, Any], where: str, bounds: Any = None
) -> duckdb.DuckDBPyConnection:
    """Read the rows into memory, lock the connection down, then apply the checked filter.

    ``con`` must be a fresh connection made with ``SANDBOX_CONFIG``; it is unusable for files
    afterwards (external access is off and the configuration locked). ``FilterFailed`` when the
    filter fails on the rows.
    """
    import duckdb

    bounds = bounds or Bounds()
    condition = check_where(where)
    run_bounded(
        con, lambda: con.execute(f"CREATE TEMP TABLE {ROWS_TABLE} AS {select_rows}", params), bounds, "reading the file"
    )
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    try:  # run it to the end here, so what fails from now on is the filter's doing
        run_bounded(
            con,
            lambda: con.execute(f"CREATE TEMP TABLE {ROWS_TABLE}_kept AS SELECT * FROM {ROWS_TABLE} WHERE {condition}"),
            bounds,
            "the 'where' filter",
        )
    except duckdb.Error as exc:
        raise FilterFailed((str(exc).strip().splitlines() or [type(exc).__name__])[0]) from exc
    return con.execute(f"SELECT * FROM {ROWS_TABLE}_kept")
