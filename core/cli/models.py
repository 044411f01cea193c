"""``glasswork export`` and ``glasswork report``: a recorded run's model (or a member of its
Rashomon set) as code, SQL, a document, a table, or a model card people can read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from glasswork.cli.app import (
    DB_OPTION,
    EXIT_INVALID,
    cli,
    export_target_options,
    fail,
    file_option,
    model_choice_options,
)
from glasswork.cli.runs import resolve_runs, store_at
from glasswork.export.formats import FORMATS

if TYPE_CHECKING:
    from glasswork.rashomon import SetSummary


@cli.command("export")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    required=True,
    help="python: a self-contained module with predict(row) and predict_proba(row); sql: a "
    "query with one CASE expression per output over the raw table; json: the "
    "glasswork.model document (glasswork.load_model reads it); markdown: a table.",
)
@export_target_options("Write to this file (default: stdout).", "The raw table the SQL reads.")
@model_choice_options(
    "Export",
    "Export the prediction of the run's whole Rashomon set (python or sql): per row the kept members' "
    "vote share, their lowest and highest risk, and whether they disagree.",
)
@DB_OPTION
def export(
    run_ref: str, fmt: str, output: Path | None, table: str, member: int | None, whole_set: bool, db: str | None
) -> None:
    """Export the model of RUN (an id prefix or 'latest') to run outside glasswork."""
    from glasswork.export import ExportError, export_run, write_file

    store = store_at(db)
    [run_id] = resolve_runs(store, (run_ref,))
    if member is not None and whole_set:
        fail("give --member RANK or --set, not both", EXIT_INVALID)
    if whole_set:
        export_set_of(store, run_id, fmt, output, table)
        return
    if member is not None:
        export_member(store, run_id, member, fmt, output, table)
        return
    try:
        text = export_run(store.details(run_id), fmt, table=table)
        if output is not None:
            write_file(output, text)
    except ExportError as exc:
        fail(f"cannot export run {run_id[:12]}: {exc}", EXIT_INVALID)
    emit_export(text, output, fmt)


def emit_export(text: str, output: Path | None, fmt: str) -> None:
    """An export's text on stdout (control codes escaped on a terminal), or the note that it was
    written to ``output``."""
    if output is None:
        if _to_terminal():  # names and values are data: no control code of theirs reaches a terminal
            from glasswork.quoting import printable

            shown = printable(text, newlines=True)
            click.echo(shown, nl=False)
            if shown != text:
                click.echo(
                    "(control characters in the model's names or values are shown escaped; "
                    "write the exact text with -o FILE)",
                    err=True,
                )
            return
        click.echo(text, nl=False, color=True)  # the exact text (click would strip ANSI codes from a label)
        return
    click.echo(f"wrote {output} ({fmt})", err=True)


def _to_terminal() -> bool:
    """Whether standard output is a terminal (an export printed there shows control codes escaped)."""
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


@cli.command("report")
@click.argument("run_ref", metavar="RUN")
@file_option("-o", "--output", help="The HTML file (default: <name>-<run id>.html).")
@DB_OPTION
def report(run_ref: str, output: Path | None, db: str | None) -> None:
    """Write the report of RUN: one self-contained HTML file, no network. The model card, and for
    a run with a Rashomon set the set explorer: its members to sort, filter by figure and by the
    features they use or avoid, and compare, in the browser."""
    from glasswork.display.report import write_report
    from glasswork.export import ExportError

    store = store_at(db)
    [run_id] = resolve_runs(store, (run_ref,))
    summary = store.rashomon_summary(run_id)
    try:
        path = write_report(store, run_id, output)
    except ExportError as exc:
        fail(f"cannot report run {run_id[:12]}: {exc}", EXIT_INVALID)
    if summary is None:
        what = "model card; the run has no Rashomon set, so no set explorer"
    elif summary.kept == 0:
        what = "model card; its Rashomon set keeps no member, so no set explorer"
    else:
        what = f"model card and set explorer of {summary.kept:,} member{'s' if summary.kept != 1 else ''}"
    click.echo(f"wrote {path} ({path.stat().st_size:,} bytes: {what})", err=True)


# -- a member of a run's Rashomon set (glasswork rashomon, export --member) ---------------------


def set_of(store: Any, run_id: str, *, as_json: bool = False) -> SetSummary:
    """The run's set in summary; exit 2 with a message when the run has none."""
    summary = store.rashomon_summary(run_id)
    if summary is None:
        fail(
            f"run {run_id[:12]} has no Rashomon set (its spec has no 'rashomon:' section, or it failed before "
            "enumerating one); add 'rashomon: {epsilon: 0.05}' to the spec and run it again",
            EXIT_INVALID,
            as_json=as_json,
        )
    return summary


def member_at(
    store: Any, run_id: str, rank: int, *, want_model: bool, as_json: bool = False, point: int | None = None
) -> Any:
    """Member ``rank`` of the run's set (or of sweep point ``point``'s); exit 2 when it is out of
    range or, with ``want_model``, was kept as a summary (no model to show or export)."""
    found = store.rashomon_members(run_id, rank=rank, point=point)
    if not found:
        kept = (
            store.rashomon_summary(run_id).kept if point is None else len(store.rashomon_members(run_id, point=point))
        )
        whose = "its Rashomon set" if point is None else f"the Rashomon set of its point {point}"
        fail(
            f"run {run_id[:12]} keeps {kept:,} member(s) of {whose}"
            + (f" (ranks 1 to {kept:,})" if kept else "")
            + f"; there is no rank {rank}",
            EXIT_INVALID,
            as_json=as_json,
        )
    member = found[0]
    if want_model and member.model is None:
        fail(
            f"member {rank} of run {run_id[:12]} was kept as a summary (rashomon.keep: summary), so it has no "
            "model to show or export; run the spec again with 'keep: model'",
            EXIT_INVALID,
            as_json=as_json,
        )
    return member


def export_member(
    store: Any, run_id: str, rank: int, fmt: str, output: Path | None, table: str, *, point: int | None = None
) -> None:
    """Export member ``rank`` of the run's set (or of sweep point ``point``'s) as any run's model is exported."""
    from glasswork.export import ExportError, export_run, member_details, write_file

    if point is None:
        set_of(store, run_id)
    member = member_at(store, run_id, rank, want_model=True, point=point)
    assert member.model is not None
    details = member_details(
        store.details(run_id),
        rank,
        member.objective,
        member.model,
        point=point,
        metrics=member.metrics,
        fairness=member.fairness,
    )
    try:
        text = export_run(details, fmt, table=table)
        if output is not None:
            write_file(output, text)
    except ExportError as exc:
        fail(f"cannot export member {rank} of run {run_id[:12]}: {exc}", EXIT_INVALID)
    emit_export(text, output, fmt)


def kept_members(store: Any, run_id: str) -> list[Any]:
    """Every kept member of the run's set, with its model; exit 2 when the run has no set, it
    keeps no member, or its members were kept as summaries (no model to predict with)."""
    summary = set_of(store, run_id)
    members = store.rashomon_members(run_id)
    if not members:
        fail(f"the Rashomon set of run {run_id[:12]} keeps no member (it counts {summary.count:,})", EXIT_INVALID)
    if any(m.model is None for m in members):
        fail(
            f"the Rashomon set of run {run_id[:12]} was kept as summaries (rashomon.keep: summary), so its "
            "members have no model to predict with; run the spec again with 'keep: model'",
            EXIT_INVALID,
        )
    return list(members)


def export_set_of(store: Any, run_id: str, fmt: str, output: Path | None, table: str) -> None:
    """Export the prediction of the run's whole set (``glasswork.export.sets``)."""
    from glasswork.export import ExportError, write_file
    from glasswork.export.sets import SET_FORMATS, Member, export_set

    if fmt not in SET_FORMATS:
        fail(f"a Rashomon set exports as {' or '.join(SET_FORMATS)} (--format), not {fmt}", EXIT_INVALID)
    members = kept_members(store, run_id)
    summary = store.rashomon_summary(run_id)
    try:
        text = export_set(
            store.details(run_id),
            [Member(m.rank, m.objective, m.model) for m in members],
            fmt,
            table=table,
            count=summary.count,
        )
        if output is not None:
            write_file(output, text)
    except ExportError as exc:
        fail(f"cannot export the Rashomon set of run {run_id[:12]}: {exc}", EXIT_INVALID)
    emit_export(text, output, fmt)
