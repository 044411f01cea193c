"""Ctrl-C while the ``glasswork`` command starts: exit 130 with one line, never a traceback.

Importing glasswork and the libraries it stands on takes a second or more, before the command
line's own handling exists. When this process is the command (the ``glasswork`` script or
``python -m glasswork``), the package's first import installs a SIGINT handler that ends the
process at once (``os._exit``): nothing has been read or written yet. ``glasswork.cli.main``
puts Python's own handler back (Ctrl-C raises ``KeyboardInterrupt``) as soon as the commands can
say where they were interrupted. Importing glasswork as a library never touches the signal
handlers.

The command also lets OpenBLAS's idle threads sleep at once (``idle_blas_threads``): their
spinning at NumPy's import costs more CPU than a short run's search, and writes on into the null
device once the reader of its stdout or stderr has gone (``discard_output``). On pydantic before
2.11 it skips the check of pydantic's own schemas, during which a Ctrl-C is a Rust panic with a
backtrace (``skip_pydantic_self_schema_check``).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from typing import Any

EXIT_INTERRUPTED = 130


def started_as_command() -> bool:
    """Whether this process is ``glasswork ...`` or ``python -m glasswork ...``."""
    argv = list(getattr(sys, "orig_argv", ()))
    if "-m" in argv:
        module = argv[argv.index("-m") + 1 : argv.index("-m") + 2]
        if module in (["glasswork"], ["glasswork.cli"]):
            return True
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    return script in ("glasswork", "glasswork.exe")


def _interrupted_while_starting(signum: int, frame: Any) -> None:
    """Exit at once: nothing is open yet, and an exception raised here could land in a compiled
    module's import code, which turns anything into an ImportError with a traceback (numpy's
    import of ``datetime`` did)."""
    os.write(2, b"glasswork: interrupted while starting; nothing was run.\n")
    os._exit(EXIT_INTERRUPTED)


def guard() -> None:
    """Install the start-up handler, when this process is the command and Ctrl-C is not ignored."""
    if threading.current_thread() is not threading.main_thread() or not started_as_command():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted_while_starting)
        atexit.register(_ignore_interrupts_from_here)  # first registered: the last to run


def _ignore_interrupts_from_here() -> None:
    """The last exit handler (registered first): the command has ended and its status is set.
    Python's finalization next puts the default SIGINT action back, so a Ctrl-C in the last
    moments of shutdown would kill the process by the signal, without a word, whatever the run's
    status; ignored from here on (exit handlers before this one stay interruptible)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def release() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt``, which the commands turn into exit 130."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is _interrupted_while_starting
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


# OpenBLAS (NumPy's BLAS) starts its worker threads when NumPy is imported, and each spins for
# 2**28 cycles (about 0.1 s of a core) waiting for work before it sleeps: 0.07-0.12 CPU-s of the
# README example's 0.6 s overhead on 2 cores (bench/startup.py), a core's worth per thread on a
# larger machine. 2**4 cycles lets them sleep at once; a BLAS call wakes them (microseconds), so
# solvers keep their threads. The user's own setting wins.
BLAS_THREAD_TIMEOUT = "4"


def idle_blas_threads() -> None:
    """Let OpenBLAS's idle threads sleep instead of spinning, when this process is the command
    (read by OpenBLAS when NumPy loads it; child processes inherit it)."""
    if started_as_command():
        os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)


# pydantic before 2.11 checks every schema it builds against pydantic-core's own "self-schema", a
# validator built once per process on first use; a Ctrl-C that lands while it is built is turned
# by pydantic-core (Rust) into a panic, whose backtrace reaches the user's terminal before any
# Python handler runs. The check only guards hand-written core schemas (glasswork writes none),
# and pydantic 2.11 and later skip it by default; the command skips it on older ones too.
SKIP_SELF_SCHEMA_CHECK = "PYDANTIC_SKIP_VALIDATING_CORE_SCHEMAS"


def skip_pydantic_self_schema_check() -> None:
    """When this process is the command, tell older pydantic not to build its self-schema
    validator (read by pydantic at each schema build; a user's own setting stays)."""
    if started_as_command():
        os.environ.setdefault(SKIP_SELF_SCHEMA_CHECK, "1")


guard()  # on the package's first import (glasswork/__init__.py imports this module first)
idle_blas_threads()
skip_pydantic_self_schema_check()


def discard_output(stream: Any) -> None:
    """What is still written to ``stream`` (stdout or stderr, whose reader went away), and Python's
    flush at exit, go to the null device: the file descriptor is pointed there."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor behind the stream (in-process)
        pass
