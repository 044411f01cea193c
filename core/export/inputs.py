"""A model's inputs: how each column of its training matrix comes from the raw columns, and what
an exporter is given (``ExportRequest``: the inputs, the table the SQL reads, the run).

A solver's model reads the columns of the ``Problem`` it was trained on, which are often made
by the data layer: thresholds (``age<=25``), one-hot encodings (``sex:Male``), CORELS
antecedents (``sex:Male,priors:>3``). ``ModelInputs`` records how each of those columns comes
from the raw table, as conditions on raw columns, so a model can be written as Python or SQL
that runs on the table the model was trained from. The run store keeps it with every run.

Missing values (one rule for every format and reader; docs/export.md, "Missing values"): a raw
value is missing when it is None / SQL NULL, ``pd.NA`` / ``pd.NaT``, a float NaN of any width,
or a text that, stripped of whitespace (space, tab, CR, LF), is empty or ``nan`` in any case. A
column the model reads as a number also has no usable value when it holds no number: a text that
is not a decimal number (``true`` / ``false`` read as 1 / 0), or an infinite number. A row with no
usable value in a raw column the model reads gets no prediction, in every format alike: SQL gives
NULL for the prediction and every probability, the Python module's ``predict``,
``predict_proba`` and ``score`` return ``None``, and ``LoadedModel.predict`` gives ``None``
(``predict_proba`` a row of NaN). Categories are compared as written (text): ``"003"`` is not 3,
and ``load_model`` refuses a category column that holds numbers instead of misreading it.

Generated code is built from quoted parts (``glasswork.quoting``): every name, label, value and
path reaches Python through ``repr`` and SQL through quoted identifiers and literals, and comments
carry data only as one printable line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from glasswork._version import __version__
from glasswork.quoting import ExportError, plain, printable, python_literal, sql_literal, sql_name
from glasswork.values import WHITESPACE, is_missing, number_of
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from glasswork.data import Problem

Op = Literal["==", "!=", "<=", ">"]


# -- the inputs of a model -------------------------------------------------------------------------


class Condition(BaseModel):
    """``column op value`` on a raw column; ``<=`` and ``>`` compare the column as float64."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    column: str = Field(description="The raw column.")
    op: Op = Field(description="==, != (equality with the value), <=, > (numeric threshold).")
    value: str | int | float | bool = Field(description="The category, or the threshold.")

    @property
    def numeric(self) -> bool:
        """Compared as a number: thresholds, and categories that are numbers (``n-visits:1``) or
        booleans (a yes/no column: True is 1), so a row read as text (csv.DictReader, a sqlite3
        CSV import: ``"1"``, ``"true"``) is judged as the model was. Other categories are text."""
        return self.op in ("<=", ">") or isinstance(self.value, (int, float))

    def holds(self, values: Any) -> np.ndarray:
        """Where the condition holds; a missing value gives False (``missing_values`` finds those rows)."""
        if self.numeric:
            numbers = as_numbers(values)
            value = float(self.value)
            with np.errstate(invalid="ignore"):
                return {"<=": numbers <= value, ">": numbers > value, "==": numbers == value, "!=": numbers != value}[
                    self.op
                ]
        equal = np.asarray(as_texts(self.column, values) == self.value, dtype=bool)
        return equal if self.op == "==" else ~equal

    def sql(self) -> str:
        op = {"==": "=", "!=": "<>"}.get(self.op, self.op)
        if self.numeric:
            return f"{sql_number(self.column)} {op} {sql_literal(float(self.value))}"
        return f"{sql_text(self.column)} {op} {sql_literal(self.value)}"

    def python(self, row: str = "row") -> str:
        if self.numeric:
            return f"_num({row}, {python_literal(self.column)}) {self.op} {python_literal(float(self.value))}"
        return f"_text({row}, {python_literal(self.column)}) {self.op} {python_literal(self.value)}"


class Feature(BaseModel):
    """One column of the model's matrix: a raw column as it is (``column``), or 1 where every
    condition holds and 0 elsewhere (``all``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    column: str | None = Field(None, description="A raw numeric column used as it is.")
    all: list[Condition] | None = Field(None, description="1 where all these conditions hold, else 0.")


class ModelInputs(BaseModel):
    """How every column of the training matrix is computed from the raw table."""

    model_config = ConfigDict(extra="forbid")
    source: str = Field(description="The data source the raw columns come from.")
    features: list[Feature]

    @classmethod
    def of_problem(cls, problem: Problem) -> ModelInputs:
        """The inputs of a problem from the data layer: its binarizer, its CORELS antecedents,
        or (neither) its raw numeric columns."""
        binarizer = problem.extras.get("binarizer")
        if binarizer is not None:
            made = {
                name: Feature(name=name, all=[Condition(column=c, op=op, value=plain(v))])
                for name, c, op, v in binarizer.conditions()
            }
            made.update((name, Feature(name=name, column=name)) for name in binarizer.raw_columns)
            missing = [n for n in problem.feature_names if n not in made]
            if missing:
                raise ExportError(f"the binarizer does not describe feature(s) {', '.join(missing[:5])}")
            features = [made[n] for n in problem.feature_names]
        elif problem.source.lower().endswith(".out"):
            features = [Feature(name=n, all=[_item(i) for i in n.split(",")]) for n in problem.feature_names]
        else:
            features = [Feature(name=n, column=n) for n in problem.feature_names]
        return cls(source=problem.source, features=features)

    def index(self, name: str) -> int:
        for j, feature in enumerate(self.features):
            if feature.name == name:
                return j
        raise ExportError(f"the model uses feature {name!r}, which its inputs do not describe")

    @property
    def columns(self) -> list[str]:
        """The raw columns the features read, in first-use order."""
        return self.columns_of(range(len(self.features)))

    def columns_of(self, features: Iterable[int]) -> list[str]:
        """The raw columns the features ``features`` (matrix column indices) read, in first-use order."""
        seen: dict[str, None] = {}
        for j in sorted(set(int(j) for j in features)):
            f = self.features[j]
            for c in [f.column] if f.column else [c.column for c in f.all or []]:
                seen.setdefault(c, None)
        return list(seen)

    @property
    def numeric_columns(self) -> list[str]:
        """The raw columns read as numbers (a raw feature, a threshold, a number or boolean category)."""
        out: dict[str, None] = {}
        for f in self.features:
            if f.column:
                out.setdefault(f.column, None)
            for c in f.all or []:
                if c.numeric:
                    out.setdefault(c.column, None)
        return list(out)

    def missing(self, columns: Mapping[str, Any], features: Iterable[int] | None = None) -> np.ndarray:
        """Rows with no usable value in a raw column the features read (all features when ``None``):
        missing, or no number in a column read as a number. A category column that holds numbers
        (``"003"`` read as 3) is refused with an ``ExportError``, never misread."""
        reads = self.columns if features is None else self.columns_of(features)
        absent = [c for c in reads if c not in columns]
        if absent:
            raise ExportError(f"the raw data lack column(s) {', '.join(map(repr, absent))}")
        n = len(np.asarray(columns[reads[0]])) if reads else _length(columns)
        out = np.zeros(n, dtype=bool)
        numeric = set(self.numeric_columns)
        for c in reads:
            out |= np.isnan(as_numbers(columns[c])) if c in numeric else missing_values(columns[c])
            if c in self._text_columns:
                as_texts(c, columns[c])
        return out

    @property
    def _text_columns(self) -> set[str]:
        return {c.column for f in self.features for c in f.all or [] if not c.numeric}

    # -- expressions of one feature (``test``: the feature equals ``value``) ----------------------

    def sql_value(self, j: int) -> str:
        """A raw column is read as a number (``sql_number``), as ``matrix`` and the Python export read
        it (a CSV imported by sqlite3 holds text, which would compare as text)."""
        f = self.features[j]
        return sql_number(f.column) if f.column else f"(CASE WHEN {self.sql_test(j)} THEN 1 ELSE 0 END)"

    def sql_test(self, j: int, value: float = 1) -> str:
        f = self.features[j]
        if f.column:
            return f"{self.sql_value(j)} = {sql_literal(float(value))}"
        text = " AND ".join(c.sql() for c in f.all or []) or "1 = 1"
        text = f"({text})"
        return text if value == 1 else (f"NOT {text}" if value == 0 else "1 = 0")

    def python_value(self, j: int, row: str = "row") -> str:
        f = self.features[j]
        return (
            f"_num({row}, {python_literal(f.column)})"
            if f.column
            else f"(1.0 if {self.python_test(j, row=row)} else 0.0)"
        )

    def python_test(self, j: int, value: float = 1, row: str = "row") -> str:
        f = self.features[j]
        if f.column:
            return f"_num({row}, {python_literal(f.column)}) == {python_literal(float(value))}"
        text = "(" + (" and ".join(c.python(row) for c in f.all or []) or "True") + ")"
        return text if value == 1 else (f"(not {text})" if value == 0 else "False")

    def matrix(self, columns: Mapping[str, Any], features: Iterable[int] | None = None) -> np.ndarray:
        """The model's feature matrix computed from raw columns (a mapping name -> values); with
        ``features``, only those columns (the others 0: the model does not read them)."""
        wanted = range(len(self.features)) if features is None else sorted(set(int(j) for j in features))
        reads = self.columns_of(wanted)
        absent = [c for c in reads if c not in columns]
        if absent:
            raise ExportError(f"the raw data lack column(s) {', '.join(map(repr, absent))}")
        n = len(np.asarray(columns[reads[0]])) if reads else _length(columns)
        X = np.zeros((n, len(self.features)), dtype=np.float64)
        for j in wanted:
            f = self.features[j]
            if f.column:
                X[:, j] = as_numbers(columns[f.column])  # NaN where missing
            else:
                hit = np.ones(n, dtype=bool)
                for c in f.all or []:
                    hit &= c.holds(columns[c.column])
                X[:, j] = hit
        return X


def _length(columns: Mapping[str, Any]) -> int:
    return len(np.asarray(next(iter(columns.values())))) if columns else 0


def _data(values: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """The values as an array, and the mask of a masked array."""
    if np.ma.isMaskedArray(values):
        return np.asarray(np.ma.getdata(values)), np.ma.getmaskarray(values)
    return np.asarray(values), None


def missing_values(values: Any) -> np.ndarray:
    """Where ``values`` has no value (the rule of the module docstring): masked, None, ``pd.NA`` /
    ``pd.NaT``, a float NaN of any width, or a text that is blank or ``nan`` once stripped."""
    data, mask = _data(values)
    if data.dtype.kind == "f":
        out = np.isnan(data)
    elif data.dtype.kind in "mM":
        out = np.isnat(data)
    elif data.dtype.kind in "OUS":
        out = np.fromiter((is_missing(v) for v in data.ravel()), dtype=bool, count=data.size).reshape(data.shape)
    else:
        out = np.zeros(data.shape, dtype=bool)
    return out | mask if mask is not None else out


def as_numbers(values: Any) -> np.ndarray:
    """``values`` as float64 (``number_of`` each), NaN where a value is missing or no number."""
    data, mask = _data(values)
    if data.dtype.kind in "biuf":
        out = data.astype(np.float64)
        out[~np.isfinite(out)] = np.nan
    elif data.dtype.kind in "OUS":
        out = np.fromiter(
            (np.nan if (x := number_of(v)) is None else x for v in data.ravel()), dtype=np.float64, count=data.size
        ).reshape(data.shape)
    else:  # dates, times: no number
        out = np.full(data.shape, np.nan)
    if mask is not None:
        out[mask] = np.nan
    return out


def as_texts(column: str, values: Any) -> np.ndarray:
    """A category column's values as they are written (text); a column that holds anything but
    text where it has a value (numbers, booleans: ``"003"`` read as 3) is refused, naming it."""
    data, mask = _data(values)
    if data.dtype.kind == "U":
        return data
    absent = missing_values(values)
    bad = (
        next(
            (v for v, a in zip(data.ravel().tolist(), absent.ravel().tolist()) if not a and not isinstance(v, str)),
            None,
        )
        if data.dtype.kind in "OSbiufcmM"
        else None
    )
    if bad is not None:
        raise ExportError(
            f"column {column!r} holds {printable(repr(bad))} ({type(bad).__name__}, {data.dtype}), but the model "
            f"compares it as text (its categories are written as text, and '003' is not 3): read the column as "
            f"text (pandas: dtype={{{column!r}: str}})"
        )
    return data.astype(object) if data.dtype.kind != "O" else data


def _item(text: str) -> Condition:
    """A CORELS item ``attribute:value`` (``attribute:not-value``) as a condition on a raw column."""
    column, sep, value = text.strip("{}").partition(":")
    if not sep:
        return Condition(column=column, op="==", value=1)
    if value.startswith("not-"):
        return Condition(column=column, op="!=", value=value[4:])
    return Condition(column=column, op="==", value=value)


# -- raw values in SQL -------------------------------------------------------------------------------


def _sql_clean(column: str) -> str:
    """The column's text, stripped of ``WHITESPACE`` and lowercased (every engine casts any type)."""
    return f"LOWER(TRIM(CAST({sql_name(column)} AS VARCHAR), {sql_literal(WHITESPACE)}))"


def sql_text(column: str) -> str:
    """A category column compared as the text it holds (``CAST AS VARCHAR``: a text literal never
    makes an engine cast the column to a number, and "003" stays "003")."""
    return f"CAST({sql_name(column)} AS VARCHAR)"


def sql_number(column: str) -> str:
    """A column read as a number: ``true`` / ``false`` text (a BOOLEAN's text) are 1 / 0, else the
    column cast to DOUBLE PRECISION; ``sql_unusable`` guards it, so every cast succeeds."""
    return (
        f"CASE {_sql_clean(column)} WHEN 'true' THEN 1.0e0 WHEN 'false' THEN 0.0e0 "
        f"ELSE CAST({sql_name(column)} AS DOUBLE PRECISION) END"
    )


_DIGITS = "0123456789"


def sql_unusable(column: str, numeric: bool) -> str:
    """True where ``column`` has no usable value: NULL, a blank or ``nan`` text (a DuckDB NaN's text
    too), and for a column read as a number, any text that is not ``true`` / ``false`` or a decimal
    number (``NUMBER``, checked with functions DuckDB, SQLite and PostgreSQL share), so SQLite never
    reads ``'abc'`` as 0."""
    name, text = sql_name(column), _sql_clean(column)
    if not numeric:
        return f"({name} IS NULL OR {text} IN ('', 'nan'))"
    rest = text
    for d in _DIGITS:  # what is left once the digits are gone: the signs, the point, the exponent
        rest = f"REPLACE({rest}, '{d}', '')"
    tails = ["", ".", "e", "e+", "e-", ".e", ".e+", ".e-"]
    shapes = ", ".join(sql_literal(p + s) for p in ("", "+", "-") for s in tails)
    digit = "(" + ", ".join(f"'{d}'" for d in _DIGITS) + ")"
    point_digit = "(" + ", ".join(f"'.{d}'" for d in _DIGITS) + ")"
    number = (
        f"({rest} IN ({shapes})"  # the right characters, in the right order
        f" AND (SUBSTR({text}, 1, 1) IN ('+', '-') OR SUBSTR({rest}, 1, 1) NOT IN ('+', '-'))"  # a sign first
        f" AND (SUBSTR({text}, 1, 1) IN {digit} OR SUBSTR({text}, 1, 2) IN {point_digit}"  # a digit leads
        f" OR SUBSTR({text}, 2, 1) IN {digit} AND SUBSTR({text}, 1, 1) IN ('+', '-')"
        f" OR SUBSTR({text}, 2, 2) IN {point_digit} AND SUBSTR({text}, 1, 1) IN ('+', '-'))"
        f" AND SUBSTR({text}, LENGTH({text}), 1) IN {digit[:-1]}, '.')"  # ends in a digit or point
        f" AND ({rest} NOT LIKE '%e_' OR {text} LIKE '%e+%' OR {text} LIKE '%e-%'))"
    )  # e's sign follows it
    return f"({name} IS NULL OR NOT ({text} IN ('true', 'false') OR {number}))"


# -- what an exporter is given ------------------------------------------------------------------


def trained_where(run: Mapping[str, Any]) -> str | None:
    """The ``data.where`` filter of the spec a run was made from; ``None`` when it had none."""
    spec = run.get("spec")
    data = spec.get("data") if isinstance(spec, Mapping) else None
    where = data.get("where") if isinstance(data, Mapping) else None
    return where if isinstance(where, str) and where.strip() else None


@dataclass
class SqlOutputs:
    """One SQL export's outputs as ``sql_select`` received them: ``(name, expression)`` pairs with no
    missing-value guard, and the raw columns the expressions read."""

    outputs: list[tuple[str, str]]
    reads: list[str]


@dataclass
class ExportRequest:
    """What the ``export_model`` hook receives besides the model: its inputs (``None`` for runs
    recorded before inputs were kept), the table name the SQL reads, and the run it comes from."""

    format: str
    inputs: ModelInputs | None = None
    table: str = "data"
    run: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)  # the result's stats (the report's drawings)
    # when a list, ``sql_select`` appends each query's outputs to it, unguarded (``SqlOutputs``): how
    # a Rashomon set's SQL (``glasswork.export.sets``) combines its members' expressions
    collected: list[SqlOutputs] | None = None

    def need_inputs(self) -> ModelInputs:
        """The inputs, or the error saying the run does not have them."""
        if self.inputs is None:
            raise ExportError(
                f"run {str(self.run.get('run_id', '?'))[:12]} does not record how its features come from the raw "
                f"columns (it was recorded before glasswork kept a model's inputs), so it cannot be exported as "
                f"{self.format}; run its spec again, or export it as json or markdown"
            )
        return self.inputs

    def header(self, comment: str, body: str = "") -> str:
        """A comment block naming the run, the rows it was trained on and the raw columns ``body``
        reads, for the top of a file; every line printable, so no name or path can end the comment."""
        lines = [
            f"Exported by glasswork {__version__} from run {self.run.get('run_id', '?')}"
            f" ({self.run.get('name', '?')}, solver {self.run.get('solver', '?')})."
        ]
        if self.run.get("spec_hash"):
            lines.append(f"spec {str(self.run['spec_hash'])[:16]}, data {str(self.run.get('data_fingerprint'))[:16]}")
        where = trained_where(self.run)
        if where is not None:  # a model of the filtered rows is not a model of the whole file
            lines.append(f"Trained only on the rows where: {' '.join(where.split())}")
        elif self.run.get("spec"):
            lines.append("Trained on every row of its data (no data.where filter).")
        if self.inputs is not None:
            reads = (
                f"the columns the antecedents of {self.inputs.source} name"
                if self.inputs.source.endswith(".out")
                else f"the raw columns of {self.inputs.source}"
            )
            if body:  # what the code reads: none at all for a model that decides every row alike
                used = [c for c in self.inputs.columns if _mentions(body, c)]
                lines.append(f"Reads {reads}: {', '.join(used)}" if used else f"Reads none of {reads}.")
            else:
                lines.append(f"Reads {reads}: {', '.join(self.inputs.columns)}")
        return "\n".join(f"{comment} {printable(line)}" for line in lines)


def _mentions(body: str, column: str) -> bool:
    return repr(column) in body or ("\x00" not in column and sql_name(column) in body)
