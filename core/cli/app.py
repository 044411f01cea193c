"""The root group of the ``glasswork`` command line and the helpers every command shares: exit
codes (defined in ``glasswork.running.exits``), ``fail``, ``fail_run``, ``interrupted``, ``print_spec_error``,
``DB_OPTION``.

The command modules (``commands``, ``sweeps``, ``runs``, ``models``) and ``glasswork.tui.commands``
import these from here, and ``glasswork.cli`` imports the command modules, so nothing imports
back into a package that is still being imported.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeVar

import click
from glasswork._version import __version__
from glasswork.running.exits import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, EXIT_SOLVER  # noqa: F401 (re-exported)
from glasswork.startup import discard_output

F = TypeVar("F", bound=Callable[..., Any])


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
            from glasswork.hooks.registry import get_registry

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

    def invoke(self, ctx: click.Context) -> Any:
        """A store found damaged (or locked) only after it opened, mid-command, ends the command
        with the store's own message (the file and the way out), not as an internal error; Ctrl-C
        that no command handled itself ends it with one line and exit 130; a reader of stdout that
        left (``| head``) drops the rest of the output, exit 0 (click's own answer is exit 1)."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            from glasswork.display.console import stdout_closed

            stdout_closed()
            return None
        except KeyboardInterrupt:
            interrupted(f"glasswork {ctx.invoked_subcommand or 'command'}: interrupted.")
        except Exception as exc:
            from glasswork.store import StoreError

            if not isinstance(exc, StoreError):
                raise
            fail(str(exc), EXIT_SOLVER)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="glasswork")
def cli() -> None:
    """glasswork: glass-box models built by optimization, with certificates of how good they are.

    Write a problem spec (YAML or JSON), check it with `glasswork validate`, run it with
    `glasswork run`. `glasswork plugins` lists the installed solvers.
    """


# -- helpers -------------------------------------------------------------------------------------


def stderr_closed() -> None:
    """The reader of stderr went away (``glasswork run spec 2>&1 | head -1``, a closed log pipe):
    messages and progress go to the null device from now on; the command goes on and ends with its
    own exit status (a bad spec still exits 2)."""
    discard_output(sys.stderr)


class ClosableStderr:
    """``sys.stderr`` for a command (installed by ``glasswork.cli.main``; it lives here, not in
    ``glasswork.display.console``, so start-up does not load rich): a write or flush whose reader has gone
    is dropped (``stderr_closed``) rather than raising ``BrokenPipeError`` out of whatever was
    reporting progress or an error, which would end a sweep early or turn a bad spec's exit 2 into
    the broken pipe's exit 0. Everything else is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            stderr_closed()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            stderr_closed()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def fail(message: str, code: int, *, as_json: bool = False, extra: dict[str, Any] | None = None) -> NoReturn:
    """End a command: the message on stderr (and as a JSON document with ``--json``), exit ``code``."""
    if as_json:
        click.echo(json.dumps({"error": message, **(extra or {})}, indent=2))
    click.echo(message, err=True)
    sys.exit(code)


def fail_run(subject: str, error: BaseException, *, as_json: bool = False, hint: str = "") -> NoReturn:
    """End a command whose run (or its spec, data or store) failed, with the exit code and message
    of ``glasswork.running.exits.run_failure``; a spec's issues are printed first, ``hint`` follows a
    solver failure. An error it does not expect (a bug) goes on to ``main``: an internal error."""
    from glasswork.running.exits import run_failure
    from glasswork.running.runner import SolverFailure
    from glasswork.spec.document import SpecError

    failure = run_failure(error)
    if not failure.expected:
        raise error
    if isinstance(error, KeyboardInterrupt):  # the way every Ctrl-C ends (interrupted: never status -2)
        interrupted(failure.message(subject), as_json=as_json)
    extra = None
    if isinstance(error, SpecError):
        print_spec_error(error)
        extra = {"issues": [i.to_dict() for i in error.issues]}
    message = failure.message(subject) + (hint if isinstance(error, SolverFailure) else "")
    fail(message, failure.code, as_json=as_json, extra=extra)


def interrupted(message: str, *, as_json: bool = False) -> NoReturn:
    """End a command that Ctrl-C stopped before it changed anything: the message, exit 130.

    The process ends with ``os._exit`` once the output is flushed (the command's own ``finally``
    blocks have run by then): with an ordinary exit, an interrupt that landed while the plugins
    were imported sometimes left CPython re-raising SIGINT on itself at exit (status -2, seen about
    one time in eight), presumably its "unhandled KeyboardInterrupt" mark set by import code run
    through the C API, instead of exiting 130.
    Run in-process (not as the ``glasswork`` command), it raises ``SystemExit(130)`` instead.
    """
    from glasswork import startup

    if not startup.started_as_command():  # in-process (click's CliRunner, a host program)
        fail(message, EXIT_INTERRUPTED, as_json=as_json)
    if as_json:
        click.echo(json.dumps({"error": message}, indent=2))
    click.echo(message, err=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(EXIT_INTERRUPTED)


def print_spec_error(error: Any) -> None:
    """Every issue of a ``SpecError``, one ``FILE:LINE:COL: field: message`` line each."""
    for issue in error.issues:
        click.echo(str(issue), err=True)


def raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    """A signal handler (SIGTERM) that stops a command as Ctrl-C does: exit 130, the run cancelled."""
    raise KeyboardInterrupt


# A count or rank the store compares in SQL (a BIGINT): a larger one is a mistake said as such,
# never DuckDB's overflow.
COUNT = click.IntRange(min=1, max=2**63 - 1)

DB_OPTION = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="Run store file (default: $GLASSWORK_DB, else ./glasswork.duckdb).",
)


def file_option(*names: str, help: str) -> Callable[[F], F]:
    """An option naming a file the command writes (a ``Path``; a folder is refused)."""
    return click.option(*names, type=click.Path(dir_okay=False, path_type=Path), help=help)


def export_target_options(output_help: str, table_help: str) -> Callable[[F], F]:
    """``-o/--output`` and ``--table``: the file an export goes to and the raw table its SQL reads
    (``glasswork export``, ``glasswork rashomon --pick``)."""
    table = click.option("--table", default="data", show_default=True, help=table_help)
    output = file_option("-o", "--output", help=output_help)
    return lambda command: output(table(command))


def model_choice_options(verb: str, whole_set_help: str) -> Callable[[F], F]:
    """``--member RANK`` and ``--set``: which of a run's models a command uses, its own, one member
    of its Rashomon set or the whole set (``glasswork export``, ``glasswork predict``)."""
    member = click.option(
        "--member",
        type=COUNT,
        metavar="RANK",
        help=f"{verb} member RANK of the run's Rashomon set instead of its model ('glasswork rashomon RUN').",
    )
    whole_set = click.option("--set", "whole_set", is_flag=True, help=whole_set_help)
    return lambda command: member(whole_set(command))


def overrides_option(help: str) -> Callable[[F], F]:
    """``--set PATH=VALUE``, repeatable, into ``overrides``: spec fields changed on the command line."""
    return click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help=help)
