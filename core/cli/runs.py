"""``glasswork runs``: browse, compare, export and delete recorded runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from glasswork.cli.app import COUNT, DB_OPTION, EXIT_INVALID, EXIT_SOLVER, cli, fail, file_option


@cli.group()
def runs() -> None:
    """Browse, compare, export and delete recorded runs (RUN is an id prefix or 'latest')."""


def store_at(db: str | None) -> Any:
    """The run store at ``--db`` (or the default), opened; a message and exit 2 when there is none,
    1 when it cannot be used. Every command that reads recorded runs starts here."""
    from glasswork.store import RunStore, StoreError, default_db_path

    path = default_db_path(db)
    if not path.exists():
        fail(f"no run store at {path} (run a spec first, or point --db / $GLASSWORK_DB at one)", EXIT_INVALID)
    try:
        return RunStore(path).open()
    except StoreError as exc:
        fail(str(exc), EXIT_SOLVER)


def resolve_runs(store: Any, refs: tuple[str, ...]) -> list[str]:
    """Run ids for RUN arguments (id prefixes or 'latest'); a message and exit 2 for one that
    names no run or several."""
    from glasswork.store import StoreError

    try:
        return store.resolve(refs)
    except StoreError as exc:
        fail(str(exc), EXIT_INVALID)


@runs.command("list")
@DB_OPTION
@click.option("--solver", help="Only runs of this solver.")
@click.option("--state", type=click.Choice(["running", "finished", "stopped", "cancelled", "failed"]))
@click.option("--name", help="Only runs whose spec name contains this text.")
@click.option("--sweep", "sweep_id", help="Only the runs of this sweep (an id prefix).")
@click.option("--limit", type=COUNT, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs_list(
    db: str | None,
    solver: str | None,
    state: str | None,
    name: str | None,
    sweep_id: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List recorded runs, newest first (with the sweep each belongs to)."""
    from rich import box
    from rich.table import Table

    from glasswork.console import fmt_gap, fmt_number, fmt_when, make_console, plain_text

    rows = store_at(db).list_runs(solver=solver, state=state, name=name, sweep=sweep_id, limit=limit)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in rows], indent=2, default=str))
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    with_sweep = any(r.sweep_id for r in rows)
    columns = ["run", "name", "solver", "status", "objective", "gap", "started", "elapsed"]
    if with_sweep:
        columns.insert(2, "sweep")
    for column in columns:
        table.add_column(
            column,
            justify="right" if column in ("objective", "gap", "elapsed") else "left",
            no_wrap=column != "name",
            min_width=12 if column == "name" else None,
        )
    for r in rows:
        # status is the certificate's; runs without one (running, failed) show their state
        cells = [
            r.run_id[:8],
            r.name,
            r.solver,
            r.status or r.state,
            fmt_number(r.objective, 5),
            fmt_gap(r.objective, r.lower_bound, r.status),
            fmt_when(r.started_at)[5:16],
            "-" if r.elapsed is None else f"{r.elapsed:.1f}s",
        ]
        if with_sweep:
            cells.insert(2, (r.sweep_id or "-")[:8])
        table.add_row(*(plain_text(c) for c in cells))  # names are data: no markup, no control codes
    make_console().print(table)


@runs.command("show")
@click.argument("run_ref", metavar="RUN")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
def runs_show(run_ref: str, db: str | None, as_json: bool) -> None:
    """Show a run's spec, certificate, metrics and model."""
    from ruamel.yaml import YAML

    from rich.text import Text

    from glasswork.console import fmt_gap, fmt_number, fmt_when, make_console, plain_text
    from glasswork.display import model_view

    store = store_at(db)
    [run_id] = resolve_runs(store, (run_ref,))
    doc = store.details(run_id)
    if as_json:
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    console = make_console()
    # every value from the run is data: printed as Text (no markup read) with control codes escaped
    console.print(
        Text.assemble(
            plain_text(f"run {doc['run_id']}", "bold"),
            plain_text(f"  {doc['name']}  solver {doc['solver']} {doc['solver_version']}"),
        )
    )
    console.print(
        plain_text(
            f"state {doc['state']}  started {fmt_when(store.get_run(run_id).started_at)}  "
            f"host {doc['host']} pid {doc['pid']}  events {doc['n_events']:,}"
        )
    )
    if doc["error"]:
        console.print(Text.assemble(("error", "red"), plain_text(f": {doc['error']}", newlines=True)))
    uncertified = doc["state"] == "failed" and doc["objective"] is not None
    console.print(
        "\n[bold]Certificate[/bold]"
        + (" [dim](not certified: the last incumbent and bound its events recorded)[/dim]" if uncertified else "")
    )
    for key in ("status", "objective", "lower_bound"):
        console.print(plain_text(f"  {key:<12} {fmt_number(doc[key], 10)}"))
    console.print(plain_text(f"  {'gap':<12} {fmt_gap(doc['objective'], doc['lower_bound'], doc['status'])}"))
    if doc["metrics"]:
        console.print("\n[bold]Metrics[/bold]")
        for key, value in doc["metrics"].items():
            console.print(plain_text(f"  {key:<16} {fmt_number(value)}"))
    for model in doc["models"]:
        console.print(Text.assemble("\n", ("Model", "bold"), plain_text(f" ({model['kind']})")))
        console.print(model_view(model["model"], model["text"]))
    if doc.get("no_model"):  # infeasible, or stopped before any model met the constraints
        console.print("\n[bold]Model[/bold]")
        console.print(plain_text(f"  {doc['no_model']}"))
    from glasswork.console import fairness_tables

    for table in fairness_tables(doc.get("fairness")):
        console.print()
        console.print(table)
    if doc.get("rashomon"):  # the set in summary; 'glasswork rashomon RUN' lists its members
        from glasswork.console import multiplicity_text, rashomon_summary_text
        from glasswork.rashomon import SetSummary

        summary = SetSummary.from_dict(doc["rashomon"])
        console.print("\n[bold]Rashomon set[/bold]")
        console.print(plain_text(f"  {rashomon_summary_text(summary)}"))
        line = multiplicity_text(summary.multiplicity)
        if line:
            console.print(plain_text(f"  {line}"))
        console.print(plain_text(f"  members: glasswork rashomon {run_id[:12]}", "dim"))
    console.print("\n[bold]Spec[/bold]")
    yaml = YAML()
    yaml.default_flow_style = False
    import io

    buffer = io.StringIO()
    yaml.dump(doc["spec"], buffer)
    console.print(plain_text(buffer.getvalue(), newlines=True), highlight=False)


@runs.command("compare")
@click.argument("run_refs", metavar="RUN RUN...", nargs=-1, required=True)
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def runs_compare(run_refs: tuple[str, ...], db: str | None, as_json: bool) -> None:
    """Line up runs: the spec keys that differ, certificates, metrics and timings."""
    from rich.table import Table

    from glasswork.console import fmt_gap, fmt_number, make_console, plain_text
    from glasswork.spec import flatten

    if len(run_refs) < 2:
        fail("compare needs at least two runs", EXIT_INVALID)
    store = store_at(db)
    docs = [store.details(r) for r in resolve_runs(store, run_refs)]
    specs = [flatten(d["spec"]) for d in docs]
    keys = sorted({k for s in specs for k in s})
    differing = [k for k in keys if len({json.dumps(s.get(k), sort_keys=True) for s in specs}) > 1]
    rows: list[tuple[str, list[Any]]] = [(f"spec.{k}", [s.get(k) for s in specs]) for k in differing]
    for key in ("solver", "status", "objective", "lower_bound", "gap", "elapsed", "peak_memory"):
        rows.append((key, [d.get(key) for d in docs]))
    for key in sorted({m for d in docs for m in d["metrics"]}):
        rows.append((key, [d["metrics"].get(key) for d in docs]))
    for key in ("nodes",):
        rows.append((key, [d["stats"].get(key) for d in docs]))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "runs": [d["run_id"] for d in docs],
                    "names": [d["name"] for d in docs],
                    "rows": [{"field": k, "values": v} for k, v in rows],
                },
                indent=2,
                default=str,
            )
        )
        return
    table = Table(title_justify="left")
    table.add_column("field")
    for d in docs:
        table.add_column(plain_text(f"{d['run_id'][:12]}\n{d['name']}", newlines=True), justify="right")
    for key, values in rows:
        if key == "gap":  # the one gap form, from each run's objective and bound
            cells = [fmt_gap(d.get("objective"), d.get("lower_bound"), d.get("status")) for d in docs]
        else:
            cells = [fmt_number(v) if not isinstance(v, (dict, list)) else json.dumps(v) for v in values]
        table.add_row(plain_text(key), *(plain_text(c) for c in cells))
    make_console().print(table)
    if not differing:
        click.echo("(the specs are identical)")


@runs.command("export")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "parquet"]), default="json", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="File (json) or file prefix (csv, parquet: PREFIX.runs.EXT and PREFIX.events.EXT). "
    "JSON goes to stdout when omitted.",
)
def runs_export(run_refs: tuple[str, ...], db: str | None, fmt: str, output: Path | None) -> None:
    """Export runs with their event series, as JSON, CSV or Parquet."""
    store = store_at(db)
    run_ids = resolve_runs(store, run_refs)
    if fmt == "json":
        docs = []
        for run_id in run_ids:
            doc = store.details(run_id)
            doc["events"] = store.events(run_id)
            docs.append(doc)
        text = json.dumps(docs, indent=2, default=str)
        if output is None:
            click.echo(text)
        else:
            output.write_text(text + "\n", encoding="utf-8")
            click.echo(f"wrote {output}", err=True)
        return
    if output is None:
        fail(f"--format {fmt} needs -o PREFIX", EXIT_INVALID)
    for table, path in store.export(run_ids, output, fmt):
        click.echo(f"wrote {path} ({table})", err=True)


@runs.command("delete")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@DB_OPTION
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def runs_delete(run_refs: tuple[str, ...], db: str | None, yes: bool) -> None:
    """Delete runs and everything recorded with them."""
    store = store_at(db)
    run_ids = resolve_runs(store, run_refs)
    if not yes:
        click.confirm(f"Delete {len(run_ids)} run(s) ({', '.join(r[:12] for r in run_ids)})?", abort=True)
    click.echo(f"deleted {store.delete(run_ids)} run(s)")


@runs.command("check")
@DB_OPTION
@file_option("--salvage", "salvage_to", help="Copy every readable run into a new store at this path.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def runs_check(db: str | None, salvage_to: Path | None, as_json: bool) -> None:
    """Read the whole store without writing to it: damaged tables, inconsistent runs, runs
    waiting to be recovered. Exit 0 when it is sound, 1 when not."""
    from glasswork.store import RunStore, StoreError, default_db_path

    path = default_db_path(db)
    if not path.exists():
        fail(f"no run store at {path} (point --db / $GLASSWORK_DB at one)", EXIT_INVALID)
    if salvage_to is not None and salvage_to.exists():  # a user mistake: say so before reading anything
        fail(f"{salvage_to} exists; salvage writes a new store, choose a new file name", EXIT_INVALID, as_json=as_json)
    store = RunStore(path)
    report = store.check()
    if salvage_to is not None:
        try:
            report["salvaged"] = {"file": str(salvage_to), "rows": store.salvage(salvage_to)}
        except StoreError as exc:
            fail(str(exc), EXIT_SOLVER, as_json=as_json)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(f"{path}: {'sound' if report['ok'] else 'NOT sound'}")
        for table, rows in report["tables"].items():
            click.echo(f"  {table:<10} {'unreadable' if rows is None else f'{rows:,} rows'}")
        for problem in report["problems"]:
            click.echo(f"  problem: {problem}")
        if report.get("live_logs"):
            click.echo(f"  {len(report['live_logs'])} live run(s) writing their journal (folded when they end)")
        if report["pending_logs"]:
            click.echo(
                f"  {len(report['pending_logs'])} journal(s) of ended runs waiting to be folded (any "
                "command that opens the store folds them)"
            )
        if "salvaged" in report:
            rows = ", ".join(f"{k} {v:,}" for k, v in report["salvaged"]["rows"].items())
            click.echo(f"salvaged into {salvage_to}: {rows}")
        elif len(report["problems"]) > len(report["refused_logs"]) + len(report["quarantined_logs"]):
            # the tables themselves (not only journals): copying them out is the way
            click.echo(f"Copy what is readable with: glasswork runs check --db {path} --salvage NEW.duckdb", err=True)
    if not report["ok"]:
        raise SystemExit(EXIT_SOLVER)
