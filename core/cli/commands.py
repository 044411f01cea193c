"""``glasswork run``, ``validate``, ``schema`` and ``plugins``: the commands on spec files and on
the installed solvers."""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from glasswork.cli.app import (
    DB_OPTION,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_SOLVER,
    cli,
    fail,
    fail_run,
    file_option,
    interrupted,
    overrides_option,
    raise_keyboard_interrupt,
)
from glasswork.export.formats import ALL_FORMATS
from glasswork.running.exits import run_failure

if TYPE_CHECKING:
    from glasswork.data.problem import LimitReached


# Members of a Rashomon set in ``run --json``: enough to see the set's shape, never megabytes
# (a set may keep a million members; ``glasswork rashomon RUN --json`` lists them from the store).
JSON_RASHOMON_MODELS = 100


@cli.command()
@click.argument("spec", type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result document on stdout.")
@overrides_option("Override a spec field, e.g. --set objective.regularization=0.01 (repeatable).")
@file_option(
    "--events", "events_file", help="Also append every event to this JSON-lines file, for following the run live."
)
@click.option("-q", "--quiet", is_flag=True, help="No live progress line on stderr.")
@click.option("--debug", is_flag=True, help="Print the full traceback when the solver fails.")
@DB_OPTION
@click.option("--no-store", is_flag=True, help="Do not record this run in the run store.")
@click.option(
    "--export",
    "exports",
    multiple=True,
    metavar="FORMAT[:FILE]",
    help="Then export the model (python, sql, json, markdown, or html: the report), to FILE or "
    "<name>-<run id>.<ext> (repeatable; needs the run store).",
)
@click.option(
    "--executor",
    default="local",
    show_default=True,
    metavar="local|dask:local|dask:HOST:PORT",
    help="Where the search runs: this process, or spread over a Dask cluster (solvers that can, e.g. corels).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Worker processes of --executor dask:local (default: one per core).",
)
@click.option(
    "--rashomon-models",
    type=click.IntRange(min=0),
    default=JSON_RASHOMON_MODELS,
    show_default=True,
    help="With --json: the Rashomon set's models listed, best first (its count is always exact; "
    "'glasswork rashomon RUN --json' lists every kept one).",
)
def run(
    spec: str,
    as_json: bool,
    overrides: tuple[str, ...],
    events_file: Path | None,
    quiet: bool,
    debug: bool,
    db: str | None,
    no_store: bool,
    exports: tuple[str, ...],
    executor: str,
    workers: int | None,
    rashomon_models: int,
) -> None:
    """Run the problem described by SPEC and print the model, its certificate and metrics.

    The run is recorded in the run store (./glasswork.duckdb, or --db, $GLASSWORK_DB, or the
    spec's store.path) unless --no-store or the spec's store.enabled is false.
    """
    for item in exports:  # a typo in --export is caught before the run, not after it
        if item.partition(":")[0] not in ALL_FORMATS:
            fail(
                f"--export {item}: unknown format {item.partition(':')[0]!r} ({', '.join(ALL_FORMATS)}); "
                "nothing was run.",
                EXIT_INVALID,
                as_json=as_json,
            )
    if exports and no_store:
        fail("--export needs the run store (drop --no-store); nothing was run.", EXIT_INVALID, as_json=as_json)
    stage = "reading the spec"  # where a Ctrl-C before the search lands, for its message
    try:
        from glasswork.contract.solver import ClusterExecutor
        from glasswork.hooks.extras import require

        cluster = ClusterExecutor.parse(executor, workers=workers)
        if cluster is not None:
            require("dask", f"--executor {executor}")
    except KeyboardInterrupt as exc:  # the imports take a moment: a Ctrl-C there exits 130 too
        interrupted(run_failure(exc, stage=stage).message(spec), as_json=as_json)
    except ValueError as exc:  # MissingExtra is one too
        fail(f"--executor {executor}: {exc}; nothing was run.", EXIT_INVALID, as_json=as_json)
    # a local cluster starts while the spec and the data are read; closed on every way out if unused
    with nullcontext() if cluster is None else cluster.started_early():
        from glasswork.contract.events import JsonLinesSink
        from glasswork.data.problem import LimitReached
        from glasswork.display.console import ProgressSink, make_console, render_outcome, stdout_closed
        from glasswork.running.launch import Launch
        from glasswork.running.runner import SolverFailure

        try:
            launch = Launch.from_file(spec, overrides, db=db, no_store=no_store, executor=cluster)
            stage = "loading the data"
            problem = launch.prepare()  # before the store opens: bad data writes nothing
            if quiet:  # otherwise the progress display prints them from the run's log as it starts
                for note in problem.warnings:
                    click.echo(f"warning: {note}", err=True)
            stage = "opening the run store"
            launch.open_store()
        except KeyboardInterrupt as exc:
            interrupted(run_failure(exc, stage=stage).message(spec), as_json=as_json)
        except LimitReached as exc:  # a run stopped at its limit while reading: no model, exit 0
            _stopped_before_search(spec, launch, exc, as_json)
        except Exception as exc:
            fail_run(spec, exc, as_json=as_json)

        sinks: list[Any] = []
        if not quiet:
            sinks.append(ProgressSink())
        if events_file is not None:
            sinks.append(JsonLinesSink(events_file))
        previous = signal.signal(signal.SIGTERM, raise_keyboard_interrupt)
        try:
            with _stdout_kept_for_json(as_json):
                outcome = launch.run(sinks)
        except (Exception, KeyboardInterrupt) as exc:
            if debug and isinstance(exc, SolverFailure) and exc.__cause__ is not None:
                traceback.print_exception(exc.__cause__, file=sys.stderr)
            fail_run(spec, exc, as_json=as_json, hint="" if debug else " (run with --debug for the traceback)")
        finally:
            signal.signal(signal.SIGTERM, previous)

        for warning in launch.warnings:
            click.echo(f"warning: {warning}", err=True)
        try:  # the run is stored by now; a reader that left (| head) must not stop its exports
            if as_json:
                document = outcome.to_dict()
                if "rashomon" in document:  # the count exact, the models capped
                    document["rashomon"]["models"] = document["rashomon"]["models"][:rashomon_models]
                if launch.store is None:
                    document["run_id"] = None  # nothing to look it up in
                click.echo(json.dumps(document, indent=2, allow_nan=False))
            else:
                render_outcome(outcome, make_console())
            sys.stdout.flush()
        except BrokenPipeError:
            stdout_closed()
        _export_after_run(launch, outcome, exports)
        if launch.store_sink is not None and launch.store_sink.disk_full:
            click.echo(
                f"{spec}: the result above is not in the run store: its disk is full (the warning above says "
                "what is kept); exit 1",
                err=True,
            )
            sys.exit(EXIT_SOLVER)
        if outcome.interrupted:
            click.echo(f"{spec}: interrupted; status {outcome.status}.", err=True)
            sys.exit(EXIT_INTERRUPTED)


def _stopped_before_search(spec: str, launch: Any, error: LimitReached, as_json: bool) -> NoReturn:
    """A run whose limit ended it while the data were read: its status (``stopped_time`` or
    ``stopped_memory``) and no model, on stdout (``--json``: the result document's fields,
    ``model`` null), exit 0 as every stopped run."""
    from glasswork.running.exits import EXIT_OK, stopped_before_search

    message = f"{spec}: {stopped_before_search(error)}"
    if as_json:
        document = {
            "run_id": None,
            "name": launch.loaded.spec.name,
            "solver": launch.loaded.spec.solver,
            "status": error.status,
            "objective": None,
            "lower_bound": None,
            "gap": None,
            "model": None,
            "message": message,
        }
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(message)
    sys.exit(EXIT_OK)


@contextmanager
def _stdout_kept_for_json(as_json: bool) -> Iterator[None]:
    """With ``--json``, stdout is the result document alone: whatever a solver prints while it
    runs (Python ``print`` or C code writing to file descriptor 1) goes to stderr instead."""
    if not as_json:
        yield
        return
    sys.stdout.flush()
    try:
        real_stdout = sys.stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):  # a test runner's in-memory stream
        real_stdout = False
    saved = os.dup(1) if real_stdout else None
    if saved is not None:
        os.dup2(2, 1)
    python_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stdout = python_stdout
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _export_after_run(launch: Any, outcome: Any, exports: tuple[str, ...]) -> None:
    """``run --export FORMAT[:FILE]``: write the recorded run's model in each format asked."""
    if not exports:
        return
    from glasswork.display.report import write_report
    from glasswork.export import ExportError, write_export

    if launch.store is None:  # the spec's store.enabled is false
        fail("--export needs the run store (the spec disables it); the run itself is done.", EXIT_INVALID)
    run_id = outcome.to_dict()["run_id"]
    for item in exports:
        fmt, _, path = item.partition(":")
        try:
            written = (
                write_report(launch.store, run_id, path or None)
                if fmt == "html"
                else write_export(launch.store, run_id, fmt, path or None)
            )
        except ExportError as exc:
            fail(f"--export {item}: {exc}", EXIT_INVALID)
        click.echo(f"wrote {written} ({fmt})", err=True)


@cli.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@overrides_option("Override a spec field as run --set does (repeatable).")
@click.option(
    "--no-data",
    is_flag=True,
    help="Check the specs alone, without reading their data (e.g. data that are not on this machine).",
)
def validate(specs: tuple[str, ...], as_json: bool, overrides: tuple[str, ...], no_data: bool) -> None:
    """Check spec files as run does before its search: the spec, then the data (file, target,
    labels, types) against the solver, and the solver's size estimate; nothing is solved or
    recorded. Exit 2 if any spec would make run exit 2."""
    from glasswork.running.validation import validate_file

    found = []
    for spec in specs:
        try:
            checked = validate_file(spec, overrides, read_data=not no_data)
        except KeyboardInterrupt:
            interrupted(f"{spec}: interrupted while validating; nothing was run.", as_json=as_json)
        found.append(checked)
        if as_json:
            continue
        if checked.issues:
            for issue in checked.issues:
                click.echo(str(issue), err=True)  # as print_spec_error says them
        elif checked.data_error is not None:
            click.echo(f"{spec}: data error: {checked.data_error}", err=True)  # as run says it
        elif checked.solver_error is not None:
            click.echo(f"{spec}: {checked.solver_error}", err=True)
        elif checked.loaded is not None:
            shape = checked.data_summary()
            click.echo(
                f"{spec}: ok ({checked.loaded.spec.solver}, {checked.loaded.spec.name!r})"
                + (f": {shape}" if shape else " (data not read)")
            )
            if checked.stopped is not None:
                click.echo(
                    f"warning: {spec}: run would stop ({checked.stopped.status}) while reading: {checked.stopped}",
                    err=True,
                )
            for note in [] if checked.problem is None else checked.problem.warnings:  # as run logs them (an ID column)
                click.echo(f"warning: {note}", err=True)
            if checked.size is not None:
                summary, warning = checked.size
                click.echo(f"{spec}: {summary}")
                if warning is not None:
                    click.echo(f"warning: {spec}: {warning}", err=True)
    if as_json:
        click.echo(json.dumps([checked.to_dict() for checked in found], indent=2))
    invalid = sum(not checked.valid for checked in found)
    if invalid:
        if not as_json:
            click.echo(f"{invalid} of {len(found)} spec(s) invalid.", err=True)
        sys.exit(EXIT_INVALID)
    if any(checked.solver_error is not None for checked in found):
        sys.exit(EXIT_SOLVER)


@cli.command()
@file_option("-o", "--output", help="Write the schema to this file instead of stdout.")
@click.option("--builtin-only", is_flag=True, help="Only the built-in solvers (how the copy in specs/ is generated).")
def schema(output: Path | None, builtin_only: bool) -> None:
    """Print the JSON Schema of spec files for every installed solver (editor completion).

    Point your editor at it, e.g. with `# yaml-language-server: $schema=glasswork.schema.json`.
    """
    from glasswork.hooks.registry import Registry
    from glasswork.spec.load import json_schema

    registry = Registry(entry_points=False, disabled=()) if builtin_only else None
    text = json.dumps(json_schema(registry), indent=2, sort_keys=True) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the plugins and backends as JSON.")
def plugins(as_json: bool) -> None:
    """List solver plugins with their version, origin, solvers and any load error, and which
    optional backends (glasswork's extras) are installed."""
    from glasswork.display.console import make_console, plain_text
    from glasswork.hooks.extras import report
    from glasswork.hooks.registry import get_registry
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    registry = get_registry()
    rows = [info.to_dict() for info in registry.plugins.values()]
    for row in rows:  # which of its solvers enumerate Rashomon sets (`rashomon:`) and walk a fairness frontier
        for key, flag in (("rashomon", "supports_rashomon"), ("fairness_frontier", "supports_fairness_frontier")):
            row[key] = [s for s in row["solvers"] if getattr(registry.solvers.get(s), flag, False)]
    backends = report()
    if as_json:
        click.echo(json.dumps({"plugins": rows, "backends": backends}, indent=2))
        return
    table = Table(title="glasswork plugins", title_justify="left")
    for column in ("name", "version", "origin", "solvers", "rashomon", "fairness frontier", "status"):
        table.add_column(column)
    for row in rows:  # names, origins and errors are the plugins' data: text, never markup
        status = {"ok": Text("ok", style="green"), "disabled": Text("disabled", style="dim")}.get(
            row["status"], Text.assemble(("error", "red"), ": ", plain_text(row["error"]))
        )
        table.add_row(
            plain_text(row["name"]),
            plain_text(row["version"]),
            plain_text(row["origin"]),
            plain_text(", ".join(row["solvers"]) or "-"),
            plain_text(", ".join(row["rashomon"]) or "-"),
            plain_text(", ".join(row["fairness_frontier"]) or "-"),
            status,
        )
    extras = Table(title="optional backends", title_justify="left")
    for column in ("extra", "for", "status"):
        extras.add_column(column)
    for backend in backends:
        available = (
            "[green]installed[/green]"
            if backend["available"]
            else f"[yellow]missing[/yellow] {', '.join(backend['missing'])}: {escape(backend['install'])}"
        )
        extras.add_row(backend["extra"], backend["purpose"], available)
    console = make_console()
    console.print(table)
    console.print(extras)
