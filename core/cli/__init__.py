"""The ``glasswork`` command line: ``main``, and the command modules registered on the root group
(the group and the helpers every command shares are in ``glasswork.cli.app``).

The commands live by concept: ``commands`` (run, validate, schema, plugins), ``sweeps`` (sweep),
``runs`` (the run history) and ``rashomon`` (a run's Rashomon set); ``monitor`` and ``tui`` are
imported from ``glasswork.tui`` only when used, and plugins add theirs through the
``register_commands`` hook.

Exit status: 0 for a finished run (also one stopped at a limit), 1 for a solver failure, 2 for an
invalid spec or bad data (nothing runs, nothing is written), 130 when interrupted. A reader of
stdout that goes away early (``| head``) is not a failure: the rest of the output is dropped, the
command's work (a run, its store record, its exports) is done, and the status is the command's own.
"""

from __future__ import annotations

import os
import sys
import traceback

import click
from glasswork.cli.app import (
    DB_OPTION,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_SOLVER,
    LAZY_COMMANDS,
    ClosableStderr,
    cli,
    fail,
    interrupted,
    print_spec_error,
)


def main() -> None:
    """Console-script entry point: an unexpected error is a message and exit 1, not a traceback;
    Ctrl-C anywhere is one line and exit 130 (click's own "Aborted!" would exit 1)."""
    from glasswork import startup

    startup.release()  # Ctrl-C raises KeyboardInterrupt from here on; the commands say where
    sys.stderr = ClosableStderr(sys.stderr)  # a closed stderr drops messages, the command goes on
    try:
        code = cli.main(standalone_mode=False)
    except SystemExit:
        raise
    except BrokenPipeError:  # stdout's reader left (| head): no traceback, no "Exception ignored"
        from glasswork.display.console import stdout_closed

        stdout_closed()
        sys.exit(EXIT_OK)
    except (KeyboardInterrupt, click.exceptions.Abort):
        interrupted("glasswork: interrupted; nothing was run.")
    except click.ClickException as exc:  # a usage error: click's message, click's exit status
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug of ours or a plugin's; say so plainly
        if _caused_by_interrupt(exc):  # Ctrl-C inside an import Python wraps (RuntimeError, ImportError)
            interrupted("glasswork: interrupted; nothing was run.")
        if os.environ.get("GLASSWORK_TRACEBACK"):
            traceback.print_exc()
        click.echo(
            f"glasswork: internal error: {type(exc).__name__}: {exc}\n"
            "Set GLASSWORK_TRACEBACK=1 for the traceback, and please report it.",
            err=True,
        )
        sys.exit(EXIT_SOLVER)
    except BaseException as exc:  # older pydantic-core: a Ctrl-C while a schema is built is a pyo3 panic
        if type(exc).__name__ == "PanicException" and "KeyboardInterrupt" in str(exc):
            interrupted("glasswork: interrupted; nothing was run.")
        raise
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt lies behind ``exc``: Python wraps one raised while a class body
    or a module runs (``__set_name__``, an import) in another exception."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


# the command modules register themselves on ``cli`` when imported
from glasswork.cli import commands, models, predict, rashomon, runs, sweeps  # noqa: E402,F401

__all__ = [
    "DB_OPTION",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_SOLVER",
    "LAZY_COMMANDS",
    "cli",
    "fail",
    "interrupted",
    "main",
    "print_spec_error",
]
