"""The ``glasswork`` command line.

Exit status: 0 for a finished run (also one stopped at a limit), 1 for a solver failure, 2 for an
invalid spec or bad data (nothing runs, nothing is written), 130 when interrupted.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

import click

from glasswork._version import __version__

EXIT_OK, EXIT_SOLVER, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


# Commands whose module is imported only when they are used (Textual is heavy to import).
LAZY_COMMANDS = {
    "monitor": "glasswork.tui.commands:monitor",
    "tui": "glasswork.tui.commands:tui",
}


class _Group(click.Group):
    """Loads plugin-contributed commands only when a name is not a built-in one, so that
    ``glasswork --version`` and the built-in commands never pay for importing every plugin."""

    _plugins_loaded = False

    def _lazy(self, name: str) -> click.Command | None:
        target = LAZY_COMMANDS.get(name)
        if target is None or name in self.commands:
            return self.commands.get(name)
        module_name, attr = target.split(":")
        try:
            import importlib

            command = getattr(importlib.import_module(module_name), attr)
        except ImportError as exc:
            raise click.ClickException(f"'glasswork {name}' is not available: {exc}") from None
        self.add_command(command, name)
        return command

    def _load_plugin_commands(self) -> None:
        if not self._plugins_loaded:
            self._plugins_loaded = True
            from glasswork.registry import get_registry

            for error in get_registry().register_commands(self):
                click.echo(f"warning: plugin command failed to load: {error}", err=True)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name) or self._lazy(cmd_name)
        if command is None:
            self._load_plugin_commands()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugin_commands()
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="glasswork")
def cli() -> None:
    """glasswork: glass-box models built by optimization, with certificates of how good they are.

    Write a problem spec (YAML or JSON), check it with `glasswork validate`, run it with
    `glasswork run`. `glasswork plugins` lists the installed solvers.
    """


# -- helpers -------------------------------------------------------------------------------------


def fail(message: str, code: int, *, as_json: bool = False, extra: dict[str, Any] | None = None) -> NoReturn:
    """End a command: the message on stderr (and as a JSON document with ``--json``), exit ``code``."""
    if as_json:
        click.echo(json.dumps({"error": message, **(extra or {})}, indent=2))
    click.echo(message, err=True)
    sys.exit(code)


def print_spec_error(error: Any) -> None:
    """Every issue of a ``SpecError``, one ``FILE:LINE:COL: field: message`` line each."""
    for issue in error.issues:
        click.echo(str(issue), err=True)


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


DB_OPTION = click.option(
    "--db", type=click.Path(dir_okay=False, path_type=str), default=None,
    help="Run store file (default: $GLASSWORK_DB, else ./glasswork.duckdb).",
)


# -- commands ------------------------------------------------------------------------------------


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result document on stdout.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE",
              help="Override a spec field, e.g. --set objective.regularization=0.01 (repeatable).")
@click.option("--events", "events_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also append every event to this JSON-lines file, for following the run live.")
@click.option("-q", "--quiet", is_flag=True, help="No live progress line on stderr.")
@click.option("--debug", is_flag=True, help="Print the full traceback when the solver fails.")
@DB_OPTION
@click.option("--no-store", is_flag=True, help="Do not record this run in the run store.")
def run(spec: str, as_json: bool, overrides: tuple[str, ...], events_file: Path | None,
        quiet: bool, debug: bool, db: str | None, no_store: bool) -> None:
    """Run the problem described by SPEC and print the model, its certificate and metrics.

    The run is recorded in the run store (./glasswork.duckdb, or --db, $GLASSWORK_DB, or the
    spec's store.path) unless --no-store or the spec's store.enabled is false.
    """
    from rich.console import Console

    from glasswork.console import ProgressSink, render_outcome
    from glasswork.data import DataError
    from glasswork.events import JsonLinesSink
    from glasswork.launch import Launch
    from glasswork.runner import RunAborted, SolverFailure
    from glasswork.spec import SpecError
    from glasswork.store import StoreError

    try:
        launch = Launch.from_file(spec, overrides, db=db, no_store=no_store)
    except SpecError as exc:
        print_spec_error(exc)
        fail(f"{spec}: invalid spec ({len(exc.issues)} error(s)); nothing was run.", EXIT_INVALID,
             as_json=as_json, extra={"issues": [i.to_dict() for i in exc.issues]})
    try:
        launch.prepare()  # before the store opens: bad data writes nothing
        launch.open_store()
    except DataError as exc:
        fail(f"{spec}: data error: {exc}", EXIT_INVALID, as_json=as_json)
    except StoreError as exc:
        fail(f"{spec}: {exc}; nothing was run.", EXIT_SOLVER, as_json=as_json)

    sinks: list[Any] = []
    if not quiet:
        sinks.append(ProgressSink())
    if events_file is not None:
        sinks.append(JsonLinesSink(events_file))
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        outcome = launch.run(sinks)
    except DataError as exc:
        fail(f"{spec}: data error: {exc}", EXIT_INVALID, as_json=as_json)
    except SolverFailure as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        hint = "" if debug else " (run with --debug for the traceback)"
        fail(f"{spec}: {exc}{hint}", EXIT_SOLVER, as_json=as_json)
    except RunAborted:
        fail(f"{spec}: run abandoned by a second interrupt; no result.", EXIT_INTERRUPTED, as_json=as_json)
    except KeyboardInterrupt:
        fail(f"{spec}: interrupted before the search started; nothing was run.", EXIT_INTERRUPTED,
             as_json=as_json)
    finally:
        signal.signal(signal.SIGTERM, previous)

    for warning in launch.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        document = outcome.to_dict()
        if launch.store is None:
            document["run_id"] = None  # nothing to look it up in
        click.echo(json.dumps(document, indent=2, allow_nan=False))
    else:
        render_outcome(outcome, Console(soft_wrap=False))
    if outcome.interrupted:
        click.echo(f"{spec}: interrupted; status {outcome.status}.", err=True)
        sys.exit(EXIT_INTERRUPTED)


@cli.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def validate(specs: tuple[str, ...], as_json: bool) -> None:
    """Check spec files without running them; exit 2 if any is invalid."""
    from glasswork.spec import SpecError, load_spec

    report = []
    for spec in specs:
        try:
            loaded = load_spec(spec)
        except SpecError as exc:
            if not as_json:
                print_spec_error(exc)
            report.append({"file": spec, "valid": False, "issues": [i.to_dict() for i in exc.issues]})
        else:
            if not as_json:
                click.echo(f"{spec}: ok ({loaded.spec.solver}, {loaded.spec.name!r})")
            report.append({"file": spec, "valid": True, "solver": loaded.spec.solver,
                           "name": loaded.spec.name, "spec_hash": loaded.spec.spec_hash()})
    if as_json:
        click.echo(json.dumps(report, indent=2))
    invalid = sum(not r["valid"] for r in report)
    if invalid:
        if not as_json:
            click.echo(f"{invalid} of {len(report)} spec(s) invalid.", err=True)
        sys.exit(EXIT_INVALID)


@cli.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the schema to this file instead of stdout.")
@click.option("--builtin-only", is_flag=True,
              help="Only the built-in solvers (how the copy in specs/ is generated).")
def schema(output: Path | None, builtin_only: bool) -> None:
    """Print the JSON Schema of spec files for every installed solver (editor completion).

    Point your editor at it, e.g. with `# yaml-language-server: $schema=glasswork.schema.json`.
    """
    from glasswork.registry import Registry
    from glasswork.spec import json_schema

    registry = Registry(entry_points=False, disabled=()) if builtin_only else None
    text = json.dumps(json_schema(registry), indent=2, sort_keys=True) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the plugin list as JSON.")
def plugins(as_json: bool) -> None:
    """List solver plugins with their version, origin, solvers and any load error."""
    from rich.console import Console
    from rich.table import Table

    from glasswork.registry import get_registry

    registry = get_registry()
    rows = [info.to_dict() for info in registry.plugins.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="glasswork plugins", title_justify="left")
    for column in ("name", "version", "origin", "solvers", "status"):
        table.add_column(column)
    for row in rows:
        status = {"ok": "[green]ok[/green]", "disabled": "[dim]disabled[/dim]"}.get(
            row["status"], f"[red]error[/red]: {row['error']}")
        table.add_row(row["name"], row["version"], row["origin"], ", ".join(row["solvers"]) or "-", status)
    Console().print(table)


@cli.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=str))
@click.option("--executor", default="local", show_default=True, metavar="local|dask|dask:local|dask:ADDRESS",
              help="Where the points run: a local process pool, or a dask.distributed cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address (with --executor dask).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core).")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a spec field.")
@DB_OPTION
@click.option("--no-store", is_flag=True, help="Do not record the runs (the sweep cannot be resumed).")
@click.option("--restart", is_flag=True, help="Run every point again, even those already finished.")
@click.option("--summary", "summary_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the summary table to FILE.csv or FILE.parquet.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw the path (metric and model size against the swept value) to a PNG.")
@click.option("--dry-run", is_flag=True, help="Validate and list the points without running them.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary and every point as JSON.")
def sweep(spec: str, executor: str, scheduler: str | None, jobs: int | None, overrides: tuple[str, ...],
          db: str | None, no_store: bool, restart: bool, summary_file: Path | None, plot_file: Path | None,
          dry_run: bool, as_json: bool) -> None:
    """Run the grid, path or cross-validation in SPEC's sweep: section.

    Every point is validated before any runs. Running the same sweep again resumes it: points
    already finished are not run again (unless --restart).
    """
    from rich.console import Console
    from rich.table import Table

    from glasswork.console import fmt_number
    from glasswork.registry import get_registry
    from glasswork.spec import SpecError, apply_overrides, read_spec_document
    from glasswork.store import RunStore, StoreError, default_db_path
    from glasswork import sweep as sweeps

    path = Path(spec)
    try:
        document, positions = read_spec_document(path)
        apply_overrides(document, overrides)
        plan = sweeps.expand(document, get_registry(), file=spec, positions=positions, path=path.resolve())
    except SpecError as exc:
        print_spec_error(exc)
        fail(f"{spec}: invalid sweep ({len(exc.issues)} error(s)); nothing was run.", EXIT_INVALID, as_json=as_json,
              extra={"issues": [i.to_dict() for i in exc.issues]})
    if dry_run:
        for point in plan.points:
            click.echo(f"{point.index:>4}  {point.label()}")
        click.echo(f"{len(plan.points)} point(s) in sweep {plan.sweep_id}", err=True)
        return

    store = None
    if not no_store and (db is not None or plan.loaded.spec.store.enabled):
        try:
            store = RunStore(default_db_path(db, plan.loaded.spec.store.path, plan.loaded.base_dir)).open()
        except StoreError as exc:
            fail(f"{spec}: {exc}; nothing was run.", EXIT_SOLVER, as_json=as_json)
    try:
        pool = sweeps.make_executor(executor, jobs=jobs, scheduler=scheduler)
    except Exception as exc:
        fail(f"{spec}: cannot start the {executor} executor: {exc}", EXIT_SOLVER, as_json=as_json)

    total = len(plan.points)
    done = [0]

    def progress(outcome: Any) -> None:
        done[0] += 1
        result = outcome.result
        what = f"{result['status']} {fmt_number(result['objective'])}" if result else f"failed: {outcome.error}"
        click.echo(f"[{done[0]}/{total - len(report_resumed)}] {outcome.point.label()}: {what}", err=True)

    report_resumed: dict[str, str] = store.sweep_points(plan.sweep_id) if (store and not restart) else {}
    if report_resumed:
        click.echo(f"resuming sweep {plan.sweep_id}: {len(report_resumed)} of {total} point(s) already done",
                   err=True)
    try:
        report = sweeps.run_sweep(plan, pool, store=store, restart=restart, on_outcome=progress)
    except KeyboardInterrupt:
        fail(f"{spec}: sweep abandoned by a second interrupt; finished points are stored, "
              "run it again to resume.", EXIT_INTERRUPTED, as_json=as_json)
    finally:
        pool.close()

    rows = sweeps.summarise(report, store)
    if summary_file is not None:
        sweeps.write_summary(rows, summary_file)
        click.echo(f"wrote {summary_file}", err=True)
    if plot_file is not None:
        try:
            sweeps.plot_path(report, rows, plot_file)
            click.echo(f"wrote {plot_file}", err=True)
        except ValueError as exc:
            click.echo(f"no plot: {exc}", err=True)
    if as_json:
        click.echo(json.dumps({
            "sweep_id": plan.sweep_id, "metric": plan.metric, "points": total,
            "resumed": len(report.resumed), "failed": [
                {"point": o.point.to_dict(), "error": o.error} for o in report.failed],
            "summary": [r.to_dict() for r in rows],
        }, indent=2, default=str))
    else:
        table = Table(title=f"sweep {plan.sweep_id} ({plan.metric}, {'higher' if plan.maximise else 'lower'} is better)",
                      title_justify="left")
        names = list(plan.spec.grid) or ["point"]
        train = plan.metric.replace("test_", "train_", 1)
        metrics = [m for m in dict.fromkeys(("objective", train, plan.metric, "model_size"))
                   if any(m in r.values for r in rows)]
        for name in ["", *names, "status", *metrics]:
            table.add_column(name.replace("objective.", "").replace("constraints.", "").replace("search.", ""),
                             justify="left" if name in ("", "status") else "right")
        for row in rows:
            cells = ["*" if row.best else ""]
            cells += [fmt_number(row.coords.get(n)) for n in names] if plan.spec.grid else ["base"]
            cells.append(", ".join(f"{k} {v}" for k, v in sorted(row.statuses.items())))
            for m in metrics:
                mean, sd = row.values.get(m, (None, None))
                cells.append("-" if mean is None else (f"{mean:.4g}±{sd:.1g}" if plan.spec.folds else f"{mean:.4g}"))
            table.add_row(*cells, style="bold green" if row.best else None)
        table.caption = "* the best point" + (f"; mean±sd over {plan.spec.folds} folds" if plan.spec.folds else "")
        Console().print(table)
        for outcome in report.failed:
            click.echo(f"failed: {outcome.point.label()}: {outcome.error}", err=True)
    if report.interrupted:
        click.echo(f"{spec}: interrupted; the points that finished are stored. Run it again to resume.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if report.failed:
        sys.exit(EXIT_SOLVER)


# -- the run store --------------------------------------------------------------------------------


@cli.group()
def runs() -> None:
    """Browse, compare, export and delete recorded runs (RUN is an id prefix or 'latest')."""


def _store(db: str | None) -> Any:
    from glasswork.store import RunStore, StoreError, default_db_path

    path = default_db_path(db)
    if not path.exists():
        fail(f"no run store at {path} (run a spec first, or point --db / $GLASSWORK_DB at one)", EXIT_INVALID)
    try:
        return RunStore(path).open()
    except StoreError as exc:
        fail(str(exc), EXIT_SOLVER)


def _resolve(store: Any, refs: tuple[str, ...]) -> list[str]:
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
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs_list(db: str | None, solver: str | None, state: str | None, name: str | None, sweep_id: str | None,
              limit: int, as_json: bool) -> None:
    """List recorded runs, newest first (with the sweep each belongs to)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from glasswork.console import fmt_number

    from glasswork.console import fmt_when

    rows = _store(db).list_runs(solver=solver, state=state, name=name, sweep=sweep_id, limit=limit)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in rows], indent=2, default=str))
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    with_sweep = any(r.sweep_id for r in rows)
    columns = ["run", "name", "solver", "status", "objective", "gap", "started", "elapsed"]
    if with_sweep:
        columns.insert(2, "sweep")
    for column in columns:
        table.add_column(column, justify="right" if column in ("objective", "gap", "elapsed") else "left",
                         no_wrap=column != "name", min_width=12 if column == "name" else None)
    for r in rows:
        # status is the certificate's; runs without one (running, failed) show their state
        cells = [r.run_id[:8], r.name, r.solver, r.status or r.state, fmt_number(r.objective, 5),
                 "-" if r.gap is None else f"{r.gap:.2%}", fmt_when(r.started_at)[5:16],
                 "-" if r.elapsed is None else f"{r.elapsed:.1f}s"]
        if with_sweep:
            cells.insert(2, (r.sweep_id or "-")[:8])
        table.add_row(*cells)
    Console().print(table)


@runs.command("show")
@click.argument("run_ref", metavar="RUN")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
def runs_show(run_ref: str, db: str | None, as_json: bool) -> None:
    """Show a run's spec, certificate, metrics and model."""
    from rich.console import Console
    from ruamel.yaml import YAML

    from glasswork.console import fmt_number, fmt_when
    from glasswork.display import model_view

    store = _store(db)
    [run_id] = _resolve(store, (run_ref,))
    doc = store.details(run_id)
    if as_json:
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    console = Console()
    console.print(f"[bold]run {doc['run_id']}[/bold]  {doc['name']}  solver {doc['solver']} {doc['solver_version']}")
    console.print(f"state {doc['state']}  started {fmt_when(store.get_run(run_id).started_at)}  "
                  f"host {doc['host']} pid {doc['pid']}  events {doc['n_events']:,}")
    if doc["error"]:
        console.print(f"[red]error[/red]: {doc['error']}")
    console.print("\n[bold]Certificate[/bold]")
    for key in ("status", "objective", "lower_bound", "gap"):
        console.print(f"  {key:<12} {fmt_number(doc[key], 10)}")
    if doc["metrics"]:
        console.print("\n[bold]Metrics[/bold]")
        for key, value in doc["metrics"].items():
            console.print(f"  {key:<16} {fmt_number(value)}")
    for model in doc["models"]:
        console.print(f"\n[bold]Model[/bold] ({model['kind']})")
        console.print(model_view(model["model"], model["text"]))
    console.print("\n[bold]Spec[/bold]")
    yaml = YAML()
    yaml.default_flow_style = False
    import io

    buffer = io.StringIO()
    yaml.dump(doc["spec"], buffer)
    console.print(buffer.getvalue(), markup=False, highlight=False)


@runs.command("compare")
@click.argument("run_refs", metavar="RUN RUN...", nargs=-1, required=True)
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def runs_compare(run_refs: tuple[str, ...], db: str | None, as_json: bool) -> None:
    """Line up runs: the spec keys that differ, certificates, metrics and timings."""
    from rich.console import Console
    from rich.table import Table

    from glasswork.console import fmt_number
    from glasswork.spec import flatten

    if len(run_refs) < 2:
        fail("compare needs at least two runs", EXIT_INVALID)
    store = _store(db)
    docs = [store.details(r) for r in _resolve(store, run_refs)]
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
        click.echo(json.dumps({"runs": [d["run_id"] for d in docs],
                               "rows": [{"field": k, "values": v} for k, v in rows]}, indent=2, default=str))
        return
    table = Table(title_justify="left")
    table.add_column("field")
    for d in docs:
        table.add_column(f"{d['run_id'][:12]}\n{d['name']}", justify="right")
    for key, values in rows:
        table.add_row(key, *(fmt_number(v) if not isinstance(v, (dict, list)) else json.dumps(v) for v in values))
    Console().print(table)
    if not differing:
        click.echo("(the specs are identical)")


@runs.command("export")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "parquet"]), default="json", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="File (json) or file prefix (csv, parquet: PREFIX.runs.EXT and PREFIX.events.EXT). "
                   "JSON goes to stdout when omitted.")
def runs_export(run_refs: tuple[str, ...], db: str | None, fmt: str, output: Path | None) -> None:
    """Export runs with their event series, as JSON, CSV or Parquet."""
    store = _store(db)
    run_ids = _resolve(store, run_refs)
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
    store = _store(db)
    run_ids = _resolve(store, run_refs)
    if not yes:
        click.confirm(f"Delete {len(run_ids)} run(s) ({', '.join(r[:12] for r in run_ids)})?", abort=True)
    click.echo(f"deleted {store.delete(run_ids)} run(s)")


def main() -> None:
    """Console-script entry point: an unexpected error is a message and exit 1, not a traceback."""
    try:
        cli(standalone_mode=True)
    except SystemExit:
        raise
    except Exception as exc:  # a bug of ours or a plugin's; say so plainly
        if os.environ.get("GLASSWORK_TRACEBACK"):
            traceback.print_exc()
        click.echo(f"glasswork: internal error: {type(exc).__name__}: {exc}\n"
                   "Set GLASSWORK_TRACEBACK=1 for the traceback, and please report it.", err=True)
        sys.exit(EXIT_SOLVER)
