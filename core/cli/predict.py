"""``glasswork predict``: predictions for the rows of a data file from a stored run's model, a
member of its Rashomon set, or the whole set (``glasswork.predict``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from glasswork.cli.app import DB_OPTION, EXIT_INVALID, cli, fail, file_option, model_choice_options
from glasswork.cli.models import emit_export, kept_members, member_at, set_of
from glasswork.cli.runs import resolve_runs, store_at

if TYPE_CHECKING:
    from glasswork.export.documents import LoadedModel


@cli.command("predict")
@click.argument("run_ref", metavar="RUN")
@click.argument("data", metavar="DATA", type=click.Path(path_type=Path, dir_okay=False))
@model_choice_options(
    "Predict with",
    "Predict with every kept member of the run's Rashomon set: per row the members' vote share, "
    "their lowest and highest risk, and whether they disagree.",
)
@click.option(
    "--keep",
    "keep",
    multiple=True,
    metavar="COLUMN",
    help="Copy this column of DATA to the output, after row (repeatable): an id to join on, say.",
)
@click.option("--keep-all", is_flag=True, help="Copy every column of DATA to the output, after row.")
@file_option("-o", "--output", help="Write to this file: Parquet for .parquet/.pq, else CSV (default: CSV on stdout).")
@DB_OPTION
def predict(
    run_ref: str,
    data: Path,
    member: int | None,
    whole_set: bool,
    keep: tuple[str, ...],
    keep_all: bool,
    output: Path | None,
    db: str | None,
) -> None:
    """Predict the rows of DATA (a CSV or Parquet file with the columns the run was trained on)
    with the model of RUN (an id prefix or 'latest'). A row with no usable value in a column the
    model reads gets no prediction; the column no_prediction says why. --keep COLUMN copies
    columns of DATA (an id) to every row of the output, as the file writes them."""
    from glasswork.data.problem import DataError
    from glasswork.export import ExportError, trained_where
    from glasswork.quoting import printable
    from glasswork.predict import (
        Kept,
        csv_text,
        member_model,
        predict_model,
        predict_set,
        run_model,
        write_predictions,
    )

    if member is not None and whole_set:
        fail("give --member RANK or --set, not both", EXIT_INVALID)
    if keep and keep_all:
        fail("give --keep COLUMN or --keep-all, not both", EXIT_INVALID)
    kept = Kept(keep, keep_all)
    store = store_at(db)
    [run_id] = resolve_runs(store, (run_ref,))
    details = store.details(run_id)
    try:
        if whole_set:
            models = set_models(store, run_id, details)
            predictions = predict_set(models, data, details, kept)
            summary = set_of(store, run_id)
            predictions.notes.append(
                f"over the {len(models):,} kept member(s) of the {summary.count:,} the set counts"
                + ("" if summary.complete else " (the set is not complete)")
            )
        elif member is not None:
            set_of(store, run_id)
            row = member_at(store, run_id, member, want_model=True)
            predictions = predict_model(
                member_model(details, member, row.objective, row.model), data, details, f"member {member}", kept
            )
        else:
            predictions = predict_model(run_model(details), data, details, keep=kept)
        if output is not None:
            write_predictions(predictions, output)
    except DataError as exc:
        fail(f"cannot predict {data}: {exc}", EXIT_INVALID)
    except ExportError as exc:
        fail(f"cannot predict with run {run_id[:12]}: {exc}", EXIT_INVALID)
    if output is None:  # on a terminal, a value's control characters are shown escaped
        emit_export(csv_text(predictions), None, "csv")
    missing = predictions.without_prediction
    said = [f"{predictions.n_rows:,} row(s) of {predictions.source}"]
    if missing:
        said.append(
            f"{missing:,} without a prediction (a column the model reads has no usable value; see no_prediction)"
        )
    said.extend(predictions.notes)
    where = trained_where(details)
    if where is not None:
        said.append(
            f"the model was trained only on the rows where {' '.join(str(where).split())}; every row is predicted"
        )
    target = f"wrote {output}: " if output is not None else ""
    click.echo(printable(target + "; ".join(said)), err=True)


def set_models(store: Any, run_id: str, details: dict[str, Any]) -> list[LoadedModel]:
    """Every kept member of the run's set, rebuilt (``kept_members`` says why not, exit 2)."""
    from glasswork.predict import member_model

    return [member_model(details, m.rank, m.objective, m.model) for m in kept_members(store, run_id)]
