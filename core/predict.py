"""Predictions for the rows of a data file, from a stored run: its model, a kept member of its
Rashomon set, or the whole set (``glasswork predict``).

The file is read as the run read its data (``glasswork.data.sources.read_table``: the same CSV and
Parquet reader, missing-value rule and the stored spec's ``data.types``); each model computes its
features from the raw columns through the run's recorded inputs (``glasswork.export.ModelInputs``:
the thresholds, one-hot categories and antecedents fixed at training), so a column the run kept
for the audit only is never read. A row with no usable value in a column the model (for a set:
any member) reads gets no prediction, and ``no_prediction`` says which columns, never a guess.

A set's prediction per row (binary classifiers): ``vote_share``, the fraction of the kept members
predicting the positive class; ``risk_min`` and ``risk_max``, the lowest and highest probability
of the positive class among the members (a member without probabilities counts its 0/1
prediction); ``ambiguous``, whether the members disagree on the predicted class.

Columns of the file the user asks to keep (``--keep COL``, ``--keep-all``: an applicant's id, say)
are copied to the output after ``row``, on every row (those without a prediction too): a column
the models do not read as the file holds it (a CSV's cells as text: ``"007"`` stays ``"007"``; a
Parquet file's with their types: integers stay integers), one they read as they read it; a
missing cell is empty. A kept column whose name is an output's is written as ``input_NAME`` (and
so on, until the name is free), and the notes say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.data.problem import DataError
from glasswork.export.documents import LoadedModel, document, load_model, member_details
from glasswork.export.sets import positive_class
from glasswork.export.inputs import ModelInputs, as_numbers, missing_values
from glasswork.quoting import ExportError, plain

if TYPE_CHECKING:
    from glasswork.data.sources import Table

ROW = "row"  # the output column of each row's number in the data file (1 = the first data row)
NO_PREDICTION = "no_prediction"  # why a row has no prediction (empty where it has one)


@dataclass(frozen=True)
class Kept:
    """The columns of the data file to copy to the output: ``names`` in the order asked, or every
    column of the file (``every``)."""

    names: tuple[str, ...] = ()
    every: bool = False


KEEP_NOTHING = Kept()
KEPT_PREFIX = "input_"  # before a kept column's name when an output column has that name


@dataclass
class Predictions:
    """The output table: columns in order (each one value per row of the data file) and what to
    tell the user about it."""

    columns: dict[str, np.ndarray]
    source: str
    notes: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return int(self.columns[ROW].shape[0])

    @property
    def without_prediction(self) -> int:
        return int(sum(1 for reason in self.columns[NO_PREDICTION] if reason))


# -- the models of a stored run ------------------------------------------------------------------------


def run_model(details: dict[str, Any]) -> LoadedModel:
    """The stored run's model, rebuilt by its plugin (``load_model``)."""
    return load_model(document(details).model_dump())


def member_model(details: dict[str, Any], rank: int, objective: float | None, model: dict[str, Any]) -> LoadedModel:
    """Kept member ``rank`` of the run's Rashomon set, rebuilt as any run's model."""
    return load_model(document(member_details(details, rank, objective, model)).model_dump())


# -- reading the data file -------------------------------------------------------------------------------


def read_rows(
    path: Path, details: Mapping[str, Any], inputs: Sequence[ModelInputs], keep: Kept = KEEP_NOTHING
) -> Table:
    """The data file as the run read its data: the stored spec's ``data.types`` for the columns the
    models read, category columns read as written (``"003"`` stays ``"003"``), and so the columns
    ``keep`` names that the models do not read. A ``DataError`` when the file cannot be read, lacks
    a column the models read or ``keep`` names, or holds no number in any row of a column the
    models compare as numbers."""
    from glasswork.data.sources import is_parquet, read_table

    reads = _reads(inputs)
    texts = {c.column for i in inputs for f in i.features for c in f.all or [] if not c.numeric}
    stored = _stored_types(details.get("spec"))
    types = {c: str(t) for c, t in stored.items() if c in reads}
    as_written = () if is_parquet(path) else keep.names  # a Parquet file's columns have their own types
    types.update({c: "category" for c in (*texts, *as_written) if c not in types and c not in reads})
    source = str(path)
    if not source.startswith(("data:", "sklearn:", "openml:")):
        if not path.is_file():
            raise DataError(
                "no such file" if not path.exists() else "not a file",
                file=source,
                hint="give the path of a CSV or Parquet file (relative to the current folder)",
            )
        source = str(path.resolve())
    try:
        table = read_table(source, Path.cwd(), None, types)
    except DataError as exc:
        if not (exc.field or "").startswith("data.types."):
            raise
        table = read_table(source, Path.cwd())  # a column the models read is absent: name them all
    absent = [c for c in reads if c not in table.columns]
    if absent:
        raise DataError(
            f"the file lacks column(s) {', '.join(map(repr, absent))}, which the model reads",
            file=table.origin,
            hint=f"the model reads {', '.join(map(repr, reads))}; its columns are: {', '.join(map(repr, table.names))}",
        )
    unknown = [c for c in dict.fromkeys(keep.names) if c not in table.columns]
    if unknown:
        raise DataError(
            f"the file has no column {', '.join(map(repr, unknown))} to keep (--keep)",
            file=table.origin,
            hint=f"its columns are: {', '.join(map(repr, table.names))}",
        )
    if (
        keep.every
        and not is_parquet(path)
        and (others := [c for c in table.names if c not in reads and c not in types])
    ):
        # every column kept: read again with those the models do not read as text, as --keep reads them
        table = read_table(source, Path.cwd(), None, {**types, **dict.fromkeys(others, "category")})
    numeric = {c for i in inputs for c in i.numeric_columns}
    for c in reads:
        if c in numeric and table.n_rows:
            values = np.ma.masked_array(table.columns[c], mask=table.missing[c])
            present = ~missing_values(values)
            if present.any() and np.isnan(as_numbers(values)[present]).all():
                first = next(v for v, p in zip(values.tolist(), present.tolist()) if p)
                raise DataError(
                    f"column {c!r} holds no number in any row (the first value is {first!r}), but the "
                    "model compares it as a number",
                    file=table.origin,
                    column=c,
                    hint="give the column the model was trained on, its values numbers",
                )
    return table


def _stored_types(spec: Any) -> Mapping[str, Any]:
    """The ``data.types`` of a stored spec (empty when it has none)."""
    data = spec.get("data") if isinstance(spec, Mapping) else None
    types = data.get("types") if isinstance(data, Mapping) else None
    return types if isinstance(types, Mapping) else {}


def raw_columns(table: Table) -> dict[str, Any]:
    """The table's columns with its missing cells masked (the reader fills a missing number with a
    placeholder and marks it in ``Table.missing``), as ``ModelInputs`` reads them."""
    return {
        name: np.ma.masked_array(values, mask=table.missing[name]) if table.missing[name].any() else values
        for name, values in table.columns.items()
    }


def _reads(inputs: Sequence[ModelInputs]) -> list[str]:
    seen: dict[str, None] = {}
    for i in inputs:
        seen.update(dict.fromkeys(i.columns))
    return list(seen)


def _no_prediction(model: LoadedModel, columns: Mapping[str, Any]) -> np.ndarray:
    """Per row: the columns the model reads that hold no usable value there, in words ('' if none)."""
    assert model.inputs is not None
    used = getattr(model.model, "features_used", None)
    reads = model.inputs.columns if used is None else model.inputs.columns_of(used)
    numeric = set(model.inputs.numeric_columns)
    lacking = [(c, np.isnan(as_numbers(columns[c])) if c in numeric else missing_values(columns[c])) for c in reads]
    n = len(next(iter(columns.values()))) if columns else 0
    out = np.empty(n, dtype=object)
    for i in range(n):
        names = [c for c, gap in lacking if gap[i]]
        out[i] = f"no usable value in {', '.join(map(repr, names))}" if names else ""
    return out


def _needs_inputs(model: LoadedModel, what: str) -> ModelInputs:
    if model.inputs is None:
        raise ExportError(
            f"{what} does not record how its features come from the raw columns (it was recorded before "
            "glasswork kept a model's inputs), so it cannot predict from a data file; run its spec again"
        )
    return model.inputs


# -- predicting ------------------------------------------------------------------------------------------


def predict_model(
    model: LoadedModel, path: Path, details: Mapping[str, Any], what: str = "the run", keep: Kept = KEEP_NOTHING
) -> Predictions:
    """One model's predictions: ``prediction``, and for a classifier ``p_<class>`` per class."""
    table = read_rows(path, details, [_needs_inputs(model, what)], keep)
    columns = raw_columns(table)
    out: dict[str, np.ndarray] = {ROW: table.rows.astype(np.int64)}
    out["prediction"] = np.asarray(model.predict(columns), dtype=object)
    classes = getattr(model.model, "classes", None)
    if classes is not None and callable(getattr(model.model, "predict_proba", None)):
        proba = model.predict_proba(columns)
        for k, c in enumerate(classes):
            out[f"p_{plain(c)}"] = proba[:, k]
    reasons = _no_prediction(model, columns)
    out["prediction"][reasons != ""] = None
    out[NO_PREDICTION] = reasons
    return _with_kept(Predictions(out, str(path)), table, keep)


def predict_set(
    models: Sequence[LoadedModel], path: Path, details: Mapping[str, Any], keep: Kept = KEEP_NOTHING
) -> Predictions:
    """The set's prediction per row (module docstring); a row any member cannot predict gets none."""
    positive = positive_class(models)
    inputs = [_needs_inputs(m, f"member {k}") for k, m in enumerate(models, start=1)]
    table = read_rows(path, details, inputs, keep)
    columns = raw_columns(table)
    votes = np.zeros((len(models), table.n_rows), dtype=np.float64)
    risks = np.zeros((len(models), table.n_rows), dtype=np.float64)
    reasons = np.full(table.n_rows, "", dtype=object)
    for k, model in enumerate(models):
        predicted = np.asarray(model.predict(columns), dtype=object)
        votes[k] = [label is not None and label == positive for label in predicted]
        if callable(getattr(model.model, "predict_proba", None)):
            with np.errstate(invalid="ignore"):
                risks[k] = model.predict_proba(columns)[:, 1]
        else:
            risks[k] = votes[k]
        mine = _no_prediction(model, columns)
        reasons = np.where((reasons == "") & (mine != ""), mine, reasons)
    share = votes.mean(axis=0)
    low, high = risks.min(axis=0), risks.max(axis=0)
    ambiguous = np.asarray((share > 0) & (share < 1), dtype=object)
    gap = reasons != ""
    share[gap], low[gap], high[gap] = np.nan, np.nan, np.nan
    ambiguous[gap] = None
    out = {  # the outputs of glasswork.export.sets.OUTPUTS, in that order
        ROW: table.rows.astype(np.int64),
        "vote_share": share,
        "risk_min": low,
        "risk_max": high,
        "ambiguous": ambiguous,
        NO_PREDICTION: reasons,
    }
    return _with_kept(Predictions(out, str(path)), table, keep)


def _with_kept(predictions: Predictions, table: Table, keep: Kept) -> Predictions:
    """``predictions`` with the kept columns of ``table`` after ``row`` (module docstring): a
    missing cell ``None``, a name an output has prefixed with ``input_`` until it is free."""
    names = list(table.names) if keep.every else list(dict.fromkeys(keep.names))
    if not names:
        return predictions
    outputs = dict(predictions.columns)
    taken = {*outputs, *names}
    columns: dict[str, np.ndarray] = {ROW: outputs.pop(ROW)}
    for name in names:
        written = name
        if name in predictions.columns:
            while written in taken:
                written = KEPT_PREFIX + written
        if written != name:
            predictions.notes.append(f"kept column {name!r} is written as {written!r} (an output has its name)")
        taken.add(written)
        values = np.asarray(table.columns[name], dtype=object).copy()
        values[np.asarray(table.missing[name], dtype=bool)] = None
        columns[written] = values
    columns.update(outputs)
    return Predictions(columns, predictions.source, predictions.notes)


# -- writing ---------------------------------------------------------------------------------------------


def _cell(value: Any) -> Any:
    """A value as the CSV holds it: no value is an empty cell, a float its shortest exact text."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return value


def csv_text(predictions: Predictions) -> str:
    """The predictions as CSV text (``csv`` quotes every name and value that needs it)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = list(predictions.columns)
    writer.writerow(names)
    for i in range(predictions.n_rows):
        writer.writerow([_cell(predictions.columns[c][i]) for c in names])
    return buffer.getvalue()


def write_predictions(predictions: Predictions, path: Path) -> None:
    """Write the predictions to ``path``: Parquet for a ``.parquet``/``.pq`` file, CSV otherwise;
    an ``ExportError`` saying why it cannot."""
    from glasswork.export.formats import write_file

    if path.suffix.lower() not in (".parquet", ".pq"):
        write_file(path, csv_text(predictions))
        return
    import duckdb

    from glasswork.quoting import sql_name

    arrays = {}
    for name, values in predictions.columns.items():
        if values.dtype.kind == "O":
            values = np.array(
                [None if _cell(v) == "" else (v.item() if isinstance(v, np.generic) else v) for v in values.tolist()],
                dtype=object,
            )
        arrays[name] = values
    typed = ", ".join(
        f"CAST({sql_name(n)} AS BOOLEAN) AS {sql_name(n)}" if n == "ambiguous" else sql_name(n) for n in arrays
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect()
        try:
            con.register("predictions", arrays)
            con.execute(f"COPY (SELECT {typed} FROM predictions) TO $path (FORMAT parquet)", {"path": str(path)})
        finally:
            con.close()
    except (OSError, duckdb.Error) as exc:
        raise ExportError(f"cannot write {path}: {exc}") from None
