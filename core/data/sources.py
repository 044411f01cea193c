"""Where data come from: path resolution (spec folder, ``data:`` / ``$GLASSWORK_DATA``, ``${VAR}``)
and reading CSV / Parquet files (through DuckDB), scikit-learn's bundled data sets and OpenML data
sets (downloaded once into a cache) into columns.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from glasswork.data.problem import DataError
from glasswork.data.sandbox import Bounds
from glasswork.duckdb_rows import first_row
from glasswork.quoting import sql_literal, sql_name
from glasswork.values import WHITESPACE, is_missing

DATA_ENV = "GLASSWORK_DATA"
DATA_PREFIX = "data:"
SKLEARN_PREFIX = "sklearn:"
SKLEARN_SETS = ("breast_cancer", "iris", "wine", "diabetes")
SKLEARN_TARGET = "target"
OPENML_PREFIX = "openml:"
OPENML_CACHE_ENV = "GLASSWORK_OPENML_CACHE"
ROW_COLUMN = "__gw_row"

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Table:
    """Columns read from a source, with each row's number in the file (1-based) for messages.

    ``columns`` holds plain numpy arrays (text as object arrays); ``missing`` marks NULL/NaN
    cells per column. ``header_lines`` turns a row number into a file line (CSV: 1). ``target``
    is the column the source itself labels as the target (scikit-learn, OpenML), used when the
    spec names none.
    """

    origin: str
    names: list[str]
    columns: dict[str, np.ndarray]
    missing: dict[str, np.ndarray]
    rows: np.ndarray
    header_lines: int = 0
    target: str | None = None
    # columns whose name the header writes twice (the reader renamed the second ``age`` to
    # ``age_1``): each name, as read, to the names of that group
    repeated: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return int(self.rows.shape[0])

    def take(self, keep: np.ndarray) -> Table:
        return Table(
            self.origin,
            self.names,
            {k: v[keep] for k, v in self.columns.items()},
            {k: v[keep] for k, v in self.missing.items()},
            self.rows[keep],
            self.header_lines,
            self.target,
            self.repeated,
        )

    def where(self, name: str, index: int) -> dict[str, Any]:
        """DataError keywords naming the cell at position ``index`` of column ``name``."""
        row = int(self.rows[index])
        line = row + self.header_lines if self.header_lines else None
        return {"file": self.origin, "column": name, "row": row, "line": line}


def resolve_path(source: str, base_dir: Path) -> Path:
    """A file source as an existing regular file; ``DataError`` naming what is wrong otherwise.

    A pipe, a device (``/dev/stdin``), a socket or a folder is refused before anything opens it:
    reading one could wait forever.
    """
    text = _expand_vars(source)
    if text.startswith(DATA_PREFIX):
        root = os.environ.get(DATA_ENV)
        if not root:
            raise DataError(
                f"source {source!r} needs the environment variable {DATA_ENV}, which is not set",
                hint=f"export {DATA_ENV}=/path/to/datasets (the folder holding the named data sets)",
            )
        path = Path(root) / text[len(DATA_PREFIX) :]
    else:
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = base_dir / path
    shown = shown_path(path, source)
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        mode = None
    if mode is None:
        hint = "relative paths start at the spec file's folder"
        if text.startswith(DATA_PREFIX):
            hint = f"{DATA_ENV}={os.environ.get(DATA_ENV)!r}; check the folder and the file name"
        if source != text and _VAR.search(
            source
        ):  # never echo what ${VAR} expanded to: a shared spec could read secrets so
            raise DataError(
                f"data file not found: {source} (after expanding its ${{...}} variables)",
                file=source,
                hint="check the variables it uses and the file name",
            )
        raise DataError(f"data file not found: {path}", file=source, hint=hint)
    if stat.S_ISDIR(mode):
        raise DataError(f"{shown} is a folder, not a data file", file=source, hint="name a .csv, .parquet or .out file")
    if not stat.S_ISREG(mode):
        kind = (
            "a pipe (FIFO)"
            if stat.S_ISFIFO(mode)
            else "a character device"
            if stat.S_ISCHR(mode)
            else "a block device"
            if stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise DataError(
            f"{shown} is {kind}, not a data file",
            file=source,
            hint="save the data to a .csv or .parquet file and name that file",
        )
    return path


def shown_path(path: Path, source: str) -> str:
    """How messages name a file: the spec's own text when it uses ``${VAR}`` (whose value must
    never be printed: docs/security.md), the resolved path otherwise."""
    return source if _VAR.search(source) else str(path)


def hide_vars(error: DataError, *sources: str | None) -> DataError:
    """``error`` with the value of every ``${VAR}`` the sources use put back as ``${VAR}`` (in its
    message, file and hint), for errors raised with the expanded path (CORELS files, DuckDB's
    own messages)."""
    for source in sources:
        for name in _VAR.findall(source or ""):
            value = (os.environ.get(name) or "").rstrip("/")
            if len(value) < 2:  # "" or "/" is no secret, and replacing it would garble the text
                continue
            for attr in ("message", "file", "hint"):
                text = getattr(error, attr)
                if text:
                    setattr(error, attr, text.replace(value, "${" + name + "}"))
    return error


def _expand_vars(source: str) -> str:
    def sub(m: re.Match[str]) -> str:
        value = os.environ.get(m.group(1))
        if not value:
            raise DataError(
                f"source {source!r} uses ${{{m.group(1)}}}, but that environment variable is not set",
                hint=f"export {m.group(1)}=... before running",
            )
        return value.rstrip("/")

    return _VAR.sub(sub, source)


def missing_mask(col: np.ndarray) -> np.ndarray:
    """``is_missing`` over a column (vectorised for float columns)."""
    if col.dtype.kind == "f":
        return np.isnan(col)
    if col.dtype.kind == "O":
        return np.fromiter((is_missing(v) for v in col.tolist()), dtype=bool, count=col.shape[0])
    if col.dtype.kind in "US":
        return missing_mask(col.astype(object))
    return np.zeros(col.shape[0], dtype=bool)


def is_parquet(path: Path) -> bool:
    """Whether glasswork reads ``path`` as a Parquet file (its columns typed by the file), not as CSV
    (its cells read as text, typed by glasswork)."""
    return path.suffix.lower() in (".parquet", ".pq")


def read_table(
    source: str,
    base_dir: Path,
    where: str | None = None,
    types: Mapping[str, str] | None = None,
    bounds: Bounds | None = None,
) -> Table:
    """Read a CSV/Parquet file, a scikit-learn or an OpenML data set into a ``Table``.

    ``types`` overrides the type of named columns (``category``, ``numeric``, ``boolean``);
    ``bounds`` limits the time and memory reading and filtering may take (Ctrl-C always stops it).
    """
    if source.startswith((SKLEARN_PREFIX, OPENML_PREFIX)):
        if where is not None:
            raise DataError(
                "'where' filters only CSV and Parquet files",
                file=source,
                hint="remove 'where' or export the data set to a CSV file",
            )
        table = _read_sklearn(source) if source.startswith(SKLEARN_PREFIX) else _read_openml(source)
        for name, col in table.columns.items():  # the same missing-value rule as for files
            table.missing[name] = table.missing[name] | missing_mask(col)
        return _override_types(table, dict(types or {}))
    return read_file(resolve_path(source, base_dir), source, where, types, bounds)


def _names_with_line_breaks(path: Path) -> list[str]:
    """The header's column names that hold a line break (valid CSV inside quotes, but a CRLF file
    with a bare LF in a name defeats DuckDB's sniffer), read from the file's first 64 KiB."""
    import csv
    import io

    try:
        with open(path, "rb") as f:
            head = f.read(65536).decode("utf-8", errors="replace")
        names = next(csv.reader(io.StringIO(head, newline="")), [])
    except (OSError, csv.Error):
        return []
    return [n for n in names if "\n" in n or "\r" in n]


def _first_line(path: Path) -> str:
    """The file's first line (at most 4 KiB), without a UTF-8 byte order mark."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return ""
    return head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", errors="replace")


def _not_utf8(path: Path) -> tuple[int, int] | None:
    """The line and byte value of the first byte that is not UTF-8, or None when the file is."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    start = max(exc.start, 0)
                    return line + chunk[:start].count(b"\n"), chunk[start] if start < len(chunk) else 0
                line += chunk.count(b"\n")
    except OSError:
        return None
    return None


def _is_blank(path: Path) -> bool:
    """Whether a CSV file holds nothing but whitespace (DuckDB reads it as a column 'column0')."""
    try:
        if path.stat().st_size > 65536:
            return False
        return not path.read_bytes().lstrip(b"\xef\xbb\xbf").strip()
    except OSError:
        return False


def _repeated_names(con: Any, path: Path, names: list[str]) -> dict[str, list[str]]:
    """The columns whose name the header writes twice: DuckDB renames the second ``age`` to
    ``age_1``, a column the user's table lacks. Only a header where such a rename can have
    happened is read again; each name as read maps to its group (``age``, ``age_1``)."""
    renamed = [n for n in names if (m := re.fullmatch(r"(.+)_[0-9]+", n, re.S)) and m.group(1) in names]
    if not renamed:
        return {}
    header = first_row(
        con, "SELECT * FROM read_csv($path, header=false, all_varchar=true) LIMIT 1", {"path": str(path)}
    )
    if header is None or len(header) != len(names):
        return {}
    groups: dict[str, list[str]] = {}
    for written, read in zip(header, names):
        groups.setdefault(str(written), []).append(read)
    return {read: group for group in groups.values() if len(group) > 1 for read in group}


def read_file(
    path: Path,
    label: str,
    where: str | None = None,
    types: Mapping[str, str] | None = None,
    bounds: Bounds | None = None,
) -> Table:
    """Read a CSV or Parquet file through DuckDB, keeping file row numbers.

    The file is read into a table first (a CSV as text: each column's
    type from what is written, ``_column_kinds``), then typed, then filtered; every step runs
    under ``bounds``.
    """
    import duckdb
    from glasswork.data.sandbox import FilterFailed, UnsafeFilter, filter_rows, run_bounded, sandbox_config

    bounds = bounds or Bounds()
    shown = shown_path(path, label)
    other = _OTHER_FORMATS.get(path.suffix.lower())
    if other is not None:  # DuckDB's CSV reader would take it for a CSV of one odd column
        raise DataError(
            f"this is a file of another format ({other}); glasswork reads CSV and Parquet files",
            file=shown,
            hint="save it as a .csv or .parquet file and name that file"
            + (
                f", e.g. duckdb -c \"COPY (SELECT * FROM read_json('{path.name}')) TO '{path.stem}.parquet'\""
                if other.startswith("JSON") and path.name.isprintable() and not {"'", '"', "\\"} & set(path.name)
                else ""
            ),
        )
    parquet = is_parquet(path)
    reader = "read_parquet($path)" if parquet else "read_csv($path, sample_size=-1, all_varchar=true)"
    config = sandbox_config(bounds.memory)
    con = duckdb.connect(config=config)

    def scrub(text: str) -> str:
        return text.replace(str(path), shown) if shown != str(path) else text

    if not parquet and _is_blank(path):
        con.close()
        raise DataError(
            "the file is empty",
            file=shown,
            hint="write the column names on the first line, then one line per row",
        )
    first_line = "" if parquet else _first_line(path).strip()
    if re.fullmatch(r"sep=.?", first_line, re.S):
        con.close()
        raise DataError(
            f"the first line {first_line!r} is a spreadsheet's note of the delimiter, not the header",
            file=shown,
            line=1,
            hint="delete that line from the file (the delimiter is found without it)",
        )
    try:
        run_bounded(
            con,
            lambda: con.execute(f"CREATE TEMP TABLE {RAW_TABLE} AS SELECT * FROM {reader}", {"path": str(path)}),
            bounds,
            "reading the file",
        )
        described = con.execute(f"DESCRIBE {RAW_TABLE}").fetchall()
        names = [str(r[0]) for r in described]
        with_nul = next((n for n in names if "\x00" in n), None)
        if with_nul is not None:  # no SQL engine, nor any export, can name such a column
            raise DataError(
                f"the column name {with_nul!r} holds a NUL character, which no SQL engine accepts",
                file=shown,
                hint="rename the column in the file (without the NUL)",
            )
        repeated = {} if parquet else _repeated_names(con, path, names)
        raw_types = {str(r[0]): str(r[1]) for r in described}
        unknown = [c for c in (types or {}) if c not in raw_types]
        if unknown:
            raise DataError(
                f"data.types names column(s) {', '.join(map(repr, unknown))}, which {shown} lacks",
                file=shown,
                hint=f"fix data.types.{unknown[0]}; columns are: {', '.join(names)}",
                field=f"data.types.{unknown[0]}",
            )
        row_column = _row_column(names)
        kinds = run_bounded(
            con, lambda: _column_kinds(con, raw_types, dict(types or {}), parquet), bounds, "reading the file"
        )
        _check_overrides(con, kinds, dict(types or {}), shown, 0 if parquet else 1, bounds)
        select = ", ".join(
            [
                f"row_number() OVER () AS {sql_name(row_column)}",
                *(f"{_typed(n, kinds[n])} AS {sql_name(n)}" for n in names),
            ]
        )
        select_rows = f"SELECT {select} FROM {RAW_TABLE}"
        if where is None:
            rel = run_bounded(con, lambda: con.execute(select_rows), bounds, "reading the file")
        else:
            rel = filter_rows(con, select_rows, {}, where, bounds)
        raw = run_bounded(con, rel.fetchnumpy, bounds, "reading the file")
    except UnsafeFilter as exc:
        raise DataError(
            f"the 'where' filter {where!r} is refused: {exc}",
            file=shown,
            hint='write a condition over the file\'s columns, e.g. "age >= 18"',
        ) from None
    except FilterFailed as exc:
        raise DataError(
            f"the 'where' filter {where!r} failed: {scrub(str(exc))}",
            file=shown,
            hint="fix the condition (TRY_CAST gives NULL where a cast fails)",
        ) from None
    except duckdb.Error as exc:
        first = scrub(str(exc).strip().splitlines()[0])
        if where is not None and (
            "Binder" in type(exc).__name__ or "Parser" in type(exc).__name__ or "Permission" in type(exc).__name__
        ):
            raise DataError(
                f"the 'where' filter {where!r} failed: {first}",
                file=shown,
                hint="write an SQL condition over the file's columns",
            ) from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise DataError(
                f"cannot read the file: {first}",
                file=shown,
                hint=f"the file does not fit in the {config['memory_limit']} glasswork gives DuckDB "
                f"to read data; keep fewer rows or columns (data.columns, data.where)",
            ) from None
        bad_byte = None if parquet else _not_utf8(path)
        if bad_byte is not None:
            raise DataError(
                f"the file is not UTF-8: byte 0x{bad_byte[1]:02x} is not valid UTF-8 text",
                file=shown,
                line=bad_byte[0],
                hint="save the file as UTF-8 (in Excel: 'CSV UTF-8'; or iconv -f cp1252 -t utf-8)",
            ) from None
        broken = [] if parquet else _names_with_line_breaks(path)
        if broken:
            raise DataError(
                f"cannot read the file: the column name {broken[0]!r} holds a line break, which DuckDB's CSV "
                "reader cannot always read",
                file=shown,
                hint="rename the column in the file's first line (no line break inside the quotes)",
            ) from None
        raise DataError(
            f"cannot read the file: {first}", file=shown, hint="check that it is a well-formed CSV or Parquet file"
        ) from None
    finally:
        try:
            con.close()
        except duckdb.Error:  # still busy after Ctrl-C: DuckDB closes it when the work stops
            pass
    columns: dict[str, np.ndarray] = {}
    missing: dict[str, np.ndarray] = {}
    for name in names:
        col = raw[name]
        mask = np.ma.getmaskarray(col) if np.ma.isMaskedArray(col) else np.zeros(len(col), bool)
        data = np.asarray(np.ma.getdata(col))
        if data.dtype.kind in "mM":  # dates and times stored as such (Parquet): text categories
            data = data.astype(str).astype(object)
        elif data.dtype.kind in "US":
            data = data.astype(object)
        if data.dtype.kind == "f":  # text cells were made NULL by the same rule in SQL (_typed)
            mask = mask | np.isnan(data)
        if data.dtype.kind == "O":
            data = data.astype(object)  # a copy: the reader's array stays as read
            data[mask] = None
        columns[name] = data
        missing[name] = mask
    rows = np.asarray(raw[row_column], dtype=np.int64)
    return Table(shown, names, columns, missing, rows, header_lines=0 if parquet else 1, repeated=repeated)


RAW_TABLE = "gw_raw"
# File kinds people name as data that are neither CSV nor Parquet, by suffix.
_OTHER_FORMATS = {
    ".json": "JSON",
    ".jsonl": "JSON lines",
    ".ndjson": "JSON lines",
    ".xlsx": "Excel",
    ".xls": "Excel",
    ".ods": "OpenDocument spreadsheet",
    ".feather": "Arrow/Feather",
    ".arrow": "Arrow/Feather",
    ".sav": "SPSS",
    ".dta": "Stata",
    ".sas7bdat": "SAS",
    ".rds": "R",
    ".pkl": "pickle",
    ".pickle": "pickle",
}
TYPE_NAMES = ("category", "numeric", "boolean")

# What a CSV cell must look like to be read as a number (the missing-value rule comes first):
# plain decimal or scientific notation, optionally with whitespace around it. No leading '+',
# no leading zeros (``01``, ``003`` are codes), no hex, no thousands separators, no inf.
_WS = "[" + "".join(f"\\x{{{ord(c):02x}}}" for c in WHITESPACE) + "]"  # glasswork.values.WHITESPACE, as RE2
_MISSING_RE = f"{_WS}*(?i:nan)?{_WS}*"
_NUMBER_OR_MISSING_RE = f"{_WS}*(-?((0|[1-9][0-9]*)(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?|(?i:nan))?{_WS}*"
# what a ``numeric`` override accepts on top: a leading '+' and leading zeros
_LOOSE_NUMBER_RE = f"{_WS}*[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?{_WS}*"
_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")


def _row_column(names: list[str]) -> str:
    """The internal row-number column's name: ``__gw_row``, lengthened until no column of the
    file has it (any text can be a CSV header, so no fixed name is safe)."""
    taken = {n.lower() for n in names}
    name = ROW_COLUMN
    while name.lower() in taken:
        name += "_"
    return name


def _is_missing_sql(column: str) -> str:
    return f"({column} IS NULL OR regexp_full_match({column}, {sql_literal(_MISSING_RE)}))"


def _stripped(column: str) -> str:
    return f"regexp_replace({column}, {sql_literal('^' + _WS + '+|' + _WS + '+$')}, '', 'g')"


def _column_kinds(con: Any, raw_types: dict[str, str], types: dict[str, str], parquet: bool) -> dict[str, str]:
    """Each column's kind: ``text`` (VARCHAR read as written), ``integer`` / ``double`` (text
    that is a number as written), ``boolean`` (override), or ``stored`` (Parquet's own type).

    A CSV is read as text; a column is a number only when every non-missing cell is a number as
    written (``_NUMBER_OR_MISSING_RE``; integers that fit in 64 bits become BIGINT; a column with
    no value at all is numeric, and entirely missing). BOOLEAN and dates are never inferred.
    """
    kinds: dict[str, str] = {}
    checks: list[str] = []
    for name, sql_type in raw_types.items():
        wanted = types.get(name)
        if sql_type != "VARCHAR":  # a type the file stores (Parquet): kept unless overridden
            if (
                wanted is None
                or (wanted == "numeric" and _is_number_type(sql_type))
                or (wanted == "boolean" and sql_type == "BOOLEAN")
            ):
                kinds[name] = "stored"
            else:
                kinds[name] = {"category": "to_text", "numeric": "to_double", "boolean": "to_boolean"}[wanted]
            continue
        if wanted == "category" or (parquet and wanted is None):
            kinds[name] = "text"
        elif wanted == "numeric":
            kinds[name] = "loose_double"
        elif wanted == "boolean":
            kinds[name] = "text_boolean"
        else:
            c = sql_name(name)  # one regular expression per cell; the rest is cheap
            checks += [
                f"bool_and({c} IS NULL OR regexp_full_match({c}, {sql_literal(_NUMBER_OR_MISSING_RE)}))",
                f"bool_or(regexp_matches({c}, '[.eE]'))",
                f"max(length({c}))",
            ]
            kinds[name] = "infer"
    inferred = [n for n, k in kinds.items() if k == "infer"]
    if inferred:
        answers = first_row(con, f"SELECT {', '.join(checks)} FROM {RAW_TABLE}")
        for j, name in enumerate(inferred):
            number, fraction, longest = answers[3 * j : 3 * j + 3]
            if number and not fraction and (longest or 0) >= 19:  # an integer past 64 bits is an id: text
                c = sql_name(name)
                number = first_row(
                    con,
                    f"SELECT bool_and({c} IS NULL OR {_is_missing_sql(c)} OR TRY_CAST({_stripped(c)} AS BIGINT) "
                    f"IS NOT NULL) FROM {RAW_TABLE}",
                )[0]
            kinds[name] = ("double" if fraction else "integer") if number else "text"
    return kinds


def _is_number_type(sql_type: str) -> bool:
    return sql_type.split("(")[0] in (
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL",
    )


def _typed(name: str, kind: str) -> str:
    """The SQL giving column ``name`` its kind; a missing text cell becomes NULL."""
    c = sql_name(name)
    missing = _is_missing_sql(c)
    if kind == "stored":
        return c
    if kind == "text":
        return f"CASE WHEN {missing} THEN NULL ELSE {c} END"
    if kind in ("integer", "double", "loose_double"):  # the plain cast first: most cells need no more
        sql_type = "BIGINT" if kind == "integer" else "DOUBLE"
        value = (
            f"COALESCE(TRY_CAST({c} AS {sql_type}), "
            f"CASE WHEN {missing} THEN NULL ELSE CAST({_stripped(c)} AS {sql_type}) END)"
        )
        return value if kind == "integer" else f"nullif({value}, 'NaN'::DOUBLE)"  # 'nan' text is missing
    if kind == "text_boolean":
        value = f"lower({_stripped(c)})"
        true = ", ".join(map(sql_literal, _TRUE))
        return f"CASE WHEN {missing} THEN NULL WHEN {value} IN ({true}) THEN TRUE ELSE FALSE END"
    if kind == "to_text":
        return f"CAST({c} AS VARCHAR)"
    if kind == "to_double":
        return f"CAST({c} AS DOUBLE)"
    if kind == "to_boolean":
        return f"CASE WHEN {c} IS NULL THEN NULL ELSE {c} <> 0 END"
    raise AssertionError(kind)


def _check_overrides(
    con: Any, kinds: dict[str, str], types: dict[str, str], shown: str, header_lines: int, bounds: Bounds
) -> None:
    """A ``numeric`` or ``boolean`` override on a column with other values: name the first one."""
    from glasswork.data.sandbox import run_bounded

    for name, kind in kinds.items():
        v = "v"
        if kind == "loose_double":
            bad = f"NOT {_is_missing_sql(v)} AND NOT regexp_full_match(v, {sql_literal(_LOOSE_NUMBER_RE)})"
            what, fix = "is not a number", "fix the value, or remove the override"
        elif kind == "text_boolean":
            yes_no = ", ".join(map(sql_literal, _TRUE + _FALSE))
            bad = f"NOT {_is_missing_sql(v)} AND lower({_stripped(v)}) NOT IN ({yes_no})"
            what, fix = "is not a yes/no value", f"use one of {', '.join(_TRUE)} / {', '.join(_FALSE)}"
        elif kind == "to_boolean":
            bad = "v IS NOT NULL AND v NOT IN (0, 1)"
            what, fix = "is not 0 or 1", "remove the override"
        else:
            continue
        sql = (
            f"SELECT n, v FROM (SELECT row_number() OVER () AS n, {sql_name(name)} AS v FROM {RAW_TABLE}) "
            f"WHERE {bad} ORDER BY n LIMIT 1"
        )
        found = run_bounded(con, functools.partial(first_row, con, sql), bounds, "reading the file")
        if found is not None:
            row, value = int(found[0]), found[1]
            raise DataError(
                f"value {value!r} {what}, but data.types.{name} is {types[name]}",
                file=shown,
                line=row + header_lines if header_lines else None,
                column=name,
                row=row,
                hint=fix,
            )


def _as_written(value: Any) -> str:
    """A number as text the way a CSV would hold it: ``3.0`` is ``"3"``, ``0.1`` is ``"0.1"``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def _override_types(table: Table, types: dict[str, str]) -> Table:
    """``data.types`` on a source DuckDB does not read (scikit-learn, OpenML)."""
    for name, wanted in types.items():
        if name not in table.columns:
            raise DataError(
                f"data.types names column {name!r}, which the data set lacks",
                file=table.origin,
                hint=f"fix data.types.{name}; columns are: {', '.join(table.names)}",
                field=f"data.types.{name}",
            )
        col, gap = table.columns[name], table.missing[name]
        values = col.tolist()
        if wanted == "category":
            out = np.empty(len(values), dtype=object)
            out[:] = [None if g else _as_written(v) for v, g in zip(values, gap)]
        elif wanted == "numeric":
            out = np.zeros(len(values), dtype=np.float64)
            for i, (v, g) in enumerate(zip(values, gap)):
                if g:
                    out[i] = np.nan
                    continue
                try:
                    out[i] = float(v)
                except (TypeError, ValueError):
                    raise DataError(
                        f"value {v!r} is not a number, but data.types.{name} is numeric",
                        **table.where(name, i),
                        hint="fix the value, or remove the override",
                    ) from None
        else:
            out = np.zeros(len(values), dtype=bool)
            for i, (v, g) in enumerate(zip(values, gap)):
                text = _as_written(v).strip(WHITESPACE).lower()
                if g:
                    continue
                if text not in _TRUE + _FALSE:
                    raise DataError(
                        f"value {v!r} is not a yes/no value, but data.types.{name} is boolean",
                        **table.where(name, i),
                        hint=f"use one of {', '.join(_TRUE)} / {', '.join(_FALSE)}",
                    )
                out[i] = text in _TRUE
        table.columns[name] = out
    return table


# scikit-learn's bundled CSV data sets: the file in sklearn/datasets/data and the feature names
# its loader gives (they are written in its code, not in the file). Reading the file directly saves
# importing scikit-learn (about 1.7 CPU-s, most of the README example's start-up); a test checks
# the values and names against scikit-learn's own loaders.
_MEASURES = (
    "radius",
    "texture",
    "perimeter",
    "area",
    "smoothness",
    "compactness",
    "concavity",
    "concave points",
    "symmetry",
    "fractal dimension",
)
BUNDLED_CSV: dict[str, tuple[str, tuple[str, ...]]] = {
    "breast_cancer": (
        "breast_cancer.csv",
        (*(f"mean {m}" for m in _MEASURES), *(f"{m} error" for m in _MEASURES), *(f"worst {m}" for m in _MEASURES)),
    ),
    "iris": ("iris.csv", ("sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)")),
    "wine": (
        "wine_data.csv",
        (
            "alcohol",
            "malic_acid",
            "ash",
            "alcalinity_of_ash",
            "magnesium",
            "total_phenols",
            "flavanoids",
            "nonflavanoid_phenols",
            "proanthocyanins",
            "color_intensity",
            "hue",
            "od280/od315_of_diluted_wines",
            "proline",
        ),
    ),
}


def _read_bundled_csv(name: str) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """``(feature names, X, labels)`` of a scikit-learn data set read from its bundled CSV file
    without importing scikit-learn; ``None`` when the set is not such a file or the file is not
    where it is expected (then scikit-learn's loader reads it).

    The file's first line is ``n_samples,n_features,label names...``; each row is the features
    then the class code, as scikit-learn's ``load_csv_data`` reads them.
    """
    import csv
    import importlib.util

    if name not in BUNDLED_CSV:
        return None
    file_name, feature_names = BUNDLED_CSV[name]
    try:
        spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / "datasets" / "data" / file_name
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                reader = csv.reader(fh)
                header = next(reader)
                n_rows, n_features, labels = int(header[0]), int(header[1]), header[2:]
                X = np.empty((n_rows, n_features), dtype=np.float64)
                codes = np.empty(n_rows, dtype=np.int64)
                read_rows = 0
                for row in reader:
                    X[read_rows] = np.asarray(row[:-1], dtype=np.float64)
                    codes[read_rows] = int(row[-1])
                    read_rows += 1
        except (OSError, StopIteration, ValueError, IndexError):
            continue  # not there or not the expected layout: scikit-learn's loader decides
        if n_features != len(feature_names) or read_rows != n_rows:
            continue
        return list(feature_names), X, np.asarray(labels, dtype=object)[codes]
    return None


def _read_sklearn(source: str) -> Table:
    name = source[len(SKLEARN_PREFIX) :]
    if name not in SKLEARN_SETS:
        raise DataError(
            f"unknown scikit-learn data set {name!r}",
            file=source,
            hint=f"choose one of: {', '.join(SKLEARN_PREFIX + n for n in SKLEARN_SETS)}",
        )
    read = _read_bundled_csv(name)
    if read is not None:
        feature_names, X, y = read
    else:
        from sklearn import datasets

        bunch: Any = getattr(datasets, f"load_{name}")()
        feature_names = [str(n) for n in bunch.feature_names]
        X = np.asarray(bunch.data, dtype=np.float64)
        y = np.asarray(bunch.target)
        if name != "diabetes" and hasattr(bunch, "target_names"):
            y = np.asarray(bunch.target_names, dtype=object)[y]
    names = [n.replace(" ", "_") for n in feature_names]
    columns = {n: X[:, j] for j, n in enumerate(names)}
    columns[SKLEARN_TARGET] = y
    missing = {n: np.zeros(len(y), bool) for n in columns}
    return Table(source, [*names, SKLEARN_TARGET], columns, missing, np.arange(1, len(y) + 1), target=SKLEARN_TARGET)


def _read_openml(source: str) -> Table:
    """An OpenML data set by id: every usable column (target included), nominal ones as text.

    Nominal columns come back as their category labels, like a CSV's text columns, so the same
    path handles them (one-hot under ``binarize:``). The target is the data set's default target
    when it names exactly one column.
    """
    text = source[len(OPENML_PREFIX) :]
    if not text.isdigit() or int(text) < 1:
        raise DataError(
            f"{source!r} does not name an OpenML data set",
            file=source,
            hint="write openml:ID with the data set's numeric id, e.g. openml:1027",
        )
    bunch = _fetch_openml(int(text), source)
    data: Any = bunch.data
    X = np.asarray(data.toarray() if hasattr(data, "toarray") else data, dtype=np.float64)
    categories: dict[str, list[str]] = bunch.categories or {}
    names = [str(n) for n in bunch.feature_names]
    columns: dict[str, np.ndarray] = {}
    missing: dict[str, np.ndarray] = {}
    for j, name in enumerate(names):
        col, gap = X[:, j], np.isnan(X[:, j])
        if name in categories:  # ordinal codes back to labels; a missing cell becomes None
            labels = np.empty(len(categories[name]) + 1, dtype=object)
            labels[:-1] = categories[name]
            col = labels[np.where(gap, len(categories[name]), col).astype(np.int64)]
        columns[name] = col
        missing[name] = gap
    default = str((bunch.details or {}).get("default_target_attribute") or "")
    targets = [t for t in default.split(",") if t in columns]
    return Table(
        source, names, columns, missing, np.arange(1, X.shape[0] + 1), target=targets[0] if len(targets) == 1 else None
    )


def _fetch_openml(data_id: int, source: str) -> Any:
    """scikit-learn's ``fetch_openml`` with its failures turned into ``DataError``.

    The ARFF parser is pure Python (the pandas one would make pandas a dependency); the cache is
    ``$GLASSWORK_OPENML_CACHE`` or scikit-learn's data home, so a pre-filled cache works offline.
    """
    import warnings
    from urllib.error import HTTPError, URLError

    from sklearn.datasets import fetch_openml, get_data_home
    from sklearn.datasets._openml import OpenMLError

    home = os.environ.get(OPENML_CACHE_ENV) or None
    cache = Path(get_data_home(home)) / "openml"
    offline = (
        f"connect to the network once to cache it in {cache}, or copy that folder from a "
        f"machine that has it ({OPENML_CACHE_ENV}=DIR keeps the cache in DIR/openml)"
    )
    try:
        with warnings.catch_warnings():  # the retries' own warnings; the error below says it all
            warnings.filterwarnings("ignore", message="A network error occurred")
            return fetch_openml(data_id=data_id, data_home=home, target_column=None, as_frame=False, parser="liac-arff")
    except OpenMLError as exc:  # OpenML's "no such data set" (HTTP 412)
        raise DataError(
            f"OpenML has no data set with id {data_id} ({exc})",
            file=source,
            hint="check the id on https://www.openml.org/search?type=data",
        ) from None
    except HTTPError as exc:
        raise DataError(
            f"cannot download OpenML data set {data_id}: the server answered HTTP {exc.code} {exc.reason}",
            file=source,
            hint=offline,
        ) from None
    except (URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DataError(
            f"cannot download OpenML data set {data_id} and it is not cached: {reason}", file=source, hint=offline
        ) from None
    except (OSError, ValueError, KeyError) as exc:  # corrupt cache, STRING columns, bad metadata
        raise DataError(
            f"cannot load OpenML data set {data_id}: {exc}",
            file=source,
            hint=f"check its cached files under {cache}, or delete them",
        ) from None
