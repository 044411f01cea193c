"""Where data come from: path resolution (spec folder, ``data:`` / ``$GLASSWORK_DATA``, ``${VAR}``)
and reading CSV / Parquet files (through DuckDB), scikit-learn's bundled data sets and OpenML data
sets (downloaded once into a cache) into columns.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glasswork.data.problem import DataError

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
        )

    def where(self, name: str, index: int) -> dict[str, Any]:
        """DataError keywords naming the cell at position ``index`` of column ``name``."""
        row = int(self.rows[index])
        line = row + self.header_lines if self.header_lines else None
        return {"file": self.origin, "column": name, "row": row, "line": line}


def resolve_path(source: str, base_dir: Path) -> Path:
    """A file source as an existing path; ``DataError`` naming what is missing otherwise."""
    text = _expand_vars(source)
    if text.startswith(DATA_PREFIX):
        root = os.environ.get(DATA_ENV)
        if not root:
            raise DataError(
                f"source {source!r} needs the environment variable {DATA_ENV}, which is not set",
                hint=f"export {DATA_ENV}=/path/to/datasets (the folder holding the named data sets)",
            )
        path = Path(root) / text[len(DATA_PREFIX):]
    else:
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = base_dir / path
    if not path.exists():
        hint = "relative paths start at the spec file's folder"
        if text.startswith(DATA_PREFIX):
            hint = f"{DATA_ENV}={os.environ.get(DATA_ENV)!r}; check the folder and the file name"
        if source != text:  # never echo what ${VAR} expanded to: a shared spec could read secrets so
            raise DataError(f"data file not found: {source} (after expanding its ${{...}} variables)",
                            file=source, hint="check the variables it uses and the file name")
        raise DataError(f"data file not found: {path}", file=source, hint=hint)
    if path.is_dir():
        raise DataError(f"{path if source == text else source} is a folder, not a data file", file=source,
                        hint="name a .csv, .parquet or .out file")
    return path


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


def read_table(source: str, base_dir: Path, where: str | None = None) -> Table:
    """Read a CSV/Parquet file, a scikit-learn or an OpenML data set into a ``Table``."""
    if source.startswith((SKLEARN_PREFIX, OPENML_PREFIX)):
        if where is not None:
            raise DataError("'where' filters only CSV and Parquet files", file=source,
                            hint="remove 'where' or export the data set to a CSV file")
        return _read_sklearn(source) if source.startswith(SKLEARN_PREFIX) else _read_openml(source)
    return read_file(resolve_path(source, base_dir), source, where)


def read_file(path: Path, label: str, where: str | None = None) -> Table:
    """Read a CSV or Parquet file through DuckDB, keeping file row numbers."""
    import duckdb

    from glasswork.data.sandbox import SANDBOX_CONFIG, FilterFailed, UnsafeFilter, filter_rows

    parquet = path.suffix.lower() in (".parquet", ".pq")
    reader = "read_parquet($path)" if parquet else "read_csv_auto($path, sample_size=-1)"
    sql = f"SELECT row_number() OVER () AS {ROW_COLUMN}, * FROM {reader}"
    con = duckdb.connect(config=SANDBOX_CONFIG)
    try:
        if where is None:
            rel = con.execute(sql, {"path": str(path)})
        else:
            rel = filter_rows(con, sql, {"path": str(path)}, where)
        names = [d[0] for d in rel.description][1:]
        raw = rel.fetchnumpy()
    except UnsafeFilter as exc:
        raise DataError(f"the 'where' filter {where!r} is refused: {exc}", file=path,
                        hint="write a condition over the file's columns, e.g. \"age >= 18\"") from None
    except FilterFailed as exc:
        raise DataError(f"the 'where' filter {where!r} failed: {exc}", file=path,
                        hint="fix the condition (TRY_CAST gives NULL where a cast fails)") from None
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        if where is not None and ("Binder" in type(exc).__name__ or "Parser" in type(exc).__name__
                                  or "Permission" in type(exc).__name__):
            raise DataError(f"the 'where' filter {where!r} failed: {first}", file=path,
                            hint="write an SQL condition over the file's columns") from exc
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise DataError(f"cannot read the file: {first}", file=path,
                            hint=f"the file does not fit in the {SANDBOX_CONFIG['memory_limit']} glasswork gives DuckDB "
                            f"to read data; keep fewer rows or columns (data.columns, data.where)") from exc
        raise DataError(f"cannot read the file: {first}", file=path,
                        hint="check that it is a well-formed CSV or Parquet file") from exc
    finally:
        con.close()
    columns: dict[str, np.ndarray] = {}
    missing: dict[str, np.ndarray] = {}
    for name in names:
        col = raw[name]
        mask = np.ma.getmaskarray(col) if np.ma.isMaskedArray(col) else np.zeros(len(col), bool)
        data = np.asarray(np.ma.getdata(col))
        if data.dtype.kind in "mM":  # dates and times: treated as text categories
            data = data.astype(str).astype(object)
        elif data.dtype.kind in "US":
            data = data.astype(object)
        if data.dtype.kind == "f":
            mask = mask | np.isnan(data)
        elif data.dtype.kind == "O":
            mask = mask | np.asarray([v is None for v in data], dtype=bool)
        columns[name] = data
        missing[name] = mask
    rows = np.asarray(raw[ROW_COLUMN], dtype=np.int64)
    return Table(str(path), names, columns, missing, rows, header_lines=0 if parquet else 1)


def _read_sklearn(source: str) -> Table:
    name = source[len(SKLEARN_PREFIX):]
    if name not in SKLEARN_SETS:
        raise DataError(f"unknown scikit-learn data set {name!r}", file=source,
                        hint=f"choose one of: {', '.join(SKLEARN_PREFIX + n for n in SKLEARN_SETS)}")
    from sklearn import datasets

    bunch: Any = getattr(datasets, f"load_{name}")()
    names = [str(n).replace(" ", "_") for n in bunch.feature_names]
    X = np.asarray(bunch.data, dtype=np.float64)
    y: np.ndarray = np.asarray(bunch.target)
    if name != "diabetes" and hasattr(bunch, "target_names"):
        y = np.asarray(bunch.target_names, dtype=object)[y]
    columns = {n: X[:, j] for j, n in enumerate(names)}
    columns[SKLEARN_TARGET] = y
    missing = {n: np.zeros(len(y), bool) for n in columns}
    return Table(source, [*names, SKLEARN_TARGET], columns, missing, np.arange(1, len(y) + 1),
                 target=SKLEARN_TARGET)


def _read_openml(source: str) -> Table:
    """An OpenML data set by id: every usable column (target included), nominal ones as text.

    Nominal columns come back as their category labels, like a CSV's text columns, so the same
    path handles them (one-hot under ``binarize:``). The target is the data set's default target
    when it names exactly one column.
    """
    text = source[len(OPENML_PREFIX):]
    if not text.isdigit() or int(text) < 1:
        raise DataError(f"{source!r} does not name an OpenML data set", file=source,
                        hint="write openml:ID with the data set's numeric id, e.g. openml:1027")
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
    return Table(source, names, columns, missing, np.arange(1, X.shape[0] + 1),
                 target=targets[0] if len(targets) == 1 else None)


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
    offline = (f"connect to the network once to cache it in {cache}, or copy that folder from a "
               f"machine that has it ({OPENML_CACHE_ENV}=DIR keeps the cache in DIR/openml)")
    try:
        with warnings.catch_warnings():  # the retries' own warnings; the error below says it all
            warnings.filterwarnings("ignore", message="A network error occurred")
            return fetch_openml(data_id=data_id, data_home=home, target_column=None,
                                as_frame=False, parser="liac-arff")
    except OpenMLError as exc:  # OpenML's "no such data set" (HTTP 412)
        raise DataError(f"OpenML has no data set with id {data_id} ({exc})", file=source,
                        hint="check the id on https://www.openml.org/search?type=data") from None
    except HTTPError as exc:
        raise DataError(f"cannot download OpenML data set {data_id}: the server answered "
                        f"HTTP {exc.code} {exc.reason}", file=source, hint=offline) from None
    except (URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DataError(f"cannot download OpenML data set {data_id} and it is not cached: {reason}",
                        file=source, hint=offline) from None
    except (OSError, ValueError, KeyError) as exc:  # corrupt cache, STRING columns, bad metadata
        raise DataError(f"cannot load OpenML data set {data_id}: {exc}", file=source,
                        hint=f"check its cached files under {cache}, or delete them") from None
