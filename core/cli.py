"""The ``glasswork`` command line.

Exit status: 0 for a finished run (also one stopped at a limit), 1 for a solver failure, 2 for an
invalid spec or bad data (nothing runs, nothing is written), 130 when interrupted.
"""

from __future__ import annotations

import json
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

import click

from glasswork._version import __version__

EXIT_OK, EXIT_SOLVER, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Group(click.Group):
    """Loads plugin-contributed commands only when a name is not a built-in one, so that
    ``glasswork --version`` and the built-in commands never pay for importing every plugin."""

    _plugins_loaded = False

    def _load_plugin_commands(self) -> None:
        if not self._plugins_loaded:
            self._plugins_loaded = True
            from glasswork.registry import get_registry

            for error in get_registry().register_commands(self):
                click.echo(f"warning: plugin command failed to load: {error}", err=True)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            self._load_plugin_commands()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugin_commands()
        return super().list_commands(ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="glasswork")
def cli() -> None:
    """glasswork: glass-box models built by optimization, with certificates of how good they are.

    Write a problem spec (YAML or JSON), check it with `glasswork validate`, run it with
    `glasswork run`. `glasswork plugins` lists the installed solvers.
    """


# -- helpers -------------------------------------------------------------------------------------


def _fail(message: str, code: int, *, as_json: bool = False, extra: dict[str, Any] | None = None) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"error": message, **(extra or {})}, indent=2))
    click.echo(message, err=True)
    sys.exit(code)


def _apply_overrides(document: dict[str, Any], overrides: tuple[str, ...]) -> None:
    """``--set objective.regularization=0.01`` style edits, values parsed as YAML scalars."""
    from ruamel.yaml import YAML

    from glasswork.spec import SpecError, SpecIssue

    yaml = YAML(typ="safe")
    for item in overrides:
        path, sep, raw = item.partition("=")
        if not sep or not path.strip():
            raise SpecError([SpecIssue("--set", 1, 1, "", f"expected PATH=VALUE, got {item!r}")])
        keys = path.strip().split(".")
        node = document
        for key in keys[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        node[keys[-1]] = yaml.load(raw) if raw.strip() else None


def _load(spec_path: str, overrides: tuple[str, ...] = ()) -> Any:
    from glasswork.registry import get_registry
    from glasswork.spec import LoadedSpec, read_spec_document, validate_spec

    path = Path(spec_path)
    document, positions = read_spec_document(path)
    _apply_overrides(document, overrides)
    spec = validate_spec(document, get_registry(), file=spec_path, positions=positions)
    return LoadedSpec(spec=spec, path=path.resolve())


def _print_spec_error(error: Any) -> None:
    for issue in error.issues:
        click.echo(str(issue), err=True)


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


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
def run(spec: str, as_json: bool, overrides: tuple[str, ...], events_file: Path | None,
        quiet: bool, debug: bool) -> None:
    """Run the problem described by SPEC and print the model, its certificate and metrics."""
    from rich.console import Console

    from glasswork.console import ProgressSink, render_outcome
    from glasswork.data import DataError
    from glasswork.events import JsonLinesSink
    from glasswork.runner import RunAborted, Runner, SolverFailure
    from glasswork.spec import SpecError

    try:
        loaded = _load(spec, overrides)
    except SpecError as exc:
        _print_spec_error(exc)
        _fail(f"{spec}: invalid spec ({len(exc.issues)} error(s)); nothing was run.", EXIT_INVALID,
              as_json=as_json, extra={"issues": [i.to_dict() for i in exc.issues]})

    sinks: list[Any] = []
    if not quiet:
        sinks.append(ProgressSink())
    if events_file is not None:
        sinks.append(JsonLinesSink(events_file))
    runner = Runner(sinks=sinks)
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        outcome = runner.run(loaded)
    except DataError as exc:
        _fail(f"{spec}: data error: {exc}", EXIT_INVALID, as_json=as_json)
    except SolverFailure as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        hint = "" if debug else " (run with --debug for the traceback)"
        _fail(f"{spec}: {exc}{hint}", EXIT_SOLVER, as_json=as_json)
    except RunAborted:
        _fail(f"{spec}: run abandoned by a second interrupt; no result.", EXIT_INTERRUPTED, as_json=as_json)
    except KeyboardInterrupt:
        _fail(f"{spec}: interrupted before the search started; nothing was run.", EXIT_INTERRUPTED,
              as_json=as_json)
    finally:
        signal.signal(signal.SIGTERM, previous)

    for problem in runner.sink_errors:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        click.echo(json.dumps(outcome.to_dict(), indent=2, allow_nan=False))
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
    from glasswork.spec import SpecError

    report = []
    for spec in specs:
        try:
            loaded = _load(spec)
        except SpecError as exc:
            if not as_json:
                _print_spec_error(exc)
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


def main() -> None:
    """Console-script entry point."""
    cli()
