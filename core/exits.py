"""What ended a run, as the user is told it: one exit code and one message per kind of error.

``glasswork run``, the monitor (``glasswork monitor``, the terminal UI's launches) and the sweep
workers all ask ``run_failure`` rather than each naming the error classes: a bad spec or bad data
is exit 2 (nothing runs, nothing is written), a store that cannot be used or a solver that failed
is exit 1, an interrupt is 130; reading the data past ``limits.time`` or ``limits.memory`` is a
run stopped at its limit before the search (exit 0, as every stopped run, with no model). A run
whose constraints no model meets is a finished run, not a failure: status ``infeasible`` (a proof),
or a stop status with no model yet, exit 0 (it never reaches this module; ``run`` says why).
Anything else is a bug of ours or a plugin's (``expected`` is false): exit 1, with the
exception's type in the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from glasswork.data import LimitReached

EXIT_OK, EXIT_SOLVER, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass(frozen=True)
class RunFailure:
    """How a run that ended without a result is reported."""

    code: int
    title: str  # a heading (the monitor's dialog)
    reason: str  # what went wrong and what was kept, without the file it concerns
    details: tuple[str, ...] = ()  # lines shown before it (a spec's issues, one per line)
    expected: bool = True  # false: not the user's input but a bug (the CLI's "internal error")

    def message(self, subject: str) -> str:
        """One line naming the spec file (or run) it concerns."""
        return f"{subject}: {self.reason}"


def run_failure(error: BaseException, *, stage: str | None = None) -> RunFailure:
    """The report for ``error``, raised by ``glasswork.launch.Launch`` or while reading a spec.

    ``stage`` says what was under way when an interrupt arrived before the search ("loading the
    data"); without it, the interrupt came after the run was set up but before the search started.
    """
    from glasswork.data import DataError, LimitReached
    from glasswork.runner import RunAborted, SolverFailure
    from glasswork.spec import SpecError
    from glasswork.store import StoreError, StorePathError

    if isinstance(error, SpecError):
        reason = f"invalid spec ({len(error.issues)} error(s)); nothing was run."
        return RunFailure(EXIT_INVALID, "Invalid spec", reason, tuple(str(issue) for issue in error.issues))
    if isinstance(error, LimitReached):  # a run stopped at its limit, not bad data: exit 0, as any stop
        return RunFailure(EXIT_OK, "Stopped at a limit", stopped_before_search(error))
    if isinstance(error, DataError):
        return RunFailure(EXIT_INVALID, "Bad data", f"data error: {error}")
    if isinstance(error, StoreError):  # a store path that escapes the spec's folder is the spec's mistake
        code = EXIT_INVALID if isinstance(error, StorePathError) else EXIT_SOLVER
        return RunFailure(code, "The run store cannot be used", f"{error}; nothing was run.")
    if isinstance(error, SolverFailure):
        return RunFailure(EXIT_SOLVER, "The run failed", str(error))
    if isinstance(error, RunAborted):  # before KeyboardInterrupt: it is one
        return RunFailure(EXIT_INTERRUPTED, "Run abandoned", "run abandoned by a second interrupt; no result.")
    if isinstance(error, KeyboardInterrupt):
        when = f"while {stage}" if stage else "before the search started"
        return RunFailure(EXIT_INTERRUPTED, "Interrupted", f"interrupted {when}; nothing was run.")
    return RunFailure(EXIT_SOLVER, "The run failed", f"{type(error).__name__}: {error}", expected=False)


def stopped_before_search(error: LimitReached) -> str:
    """What a run stopped at its limit while reading the data is told: its status, that there
    is no model (the search never started) and what to raise."""
    return (
        f"status {error.status}: {error.message} before the search began, so there is no model and "
        f"no gap to report; nothing was recorded. To get a model, {error.hint}."
    )
