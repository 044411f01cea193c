"""Ctrl-C while the ``glasswork`` command starts: exit 130 with one line, never a traceback.

Importing glasswork and the libraries it stands on takes a second or more, before the command
line's own handling exists. When this process is the command (the ``glasswork`` script or
``python -m glasswork``), the package's first import installs a SIGINT handler that ends the
process at once (``os._exit``): nothing has been read or written yet. ``glasswork.cli.main``
puts Python's own handler back (Ctrl-C raises ``KeyboardInterrupt``) as soon as the commands can
say where they were interrupted. Importing glasswork as a library never touches the signal
handlers.
"""

from __future__ import annotations

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


def release() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt``, which the commands turn into exit 130."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is _interrupted_while_starting
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


guard()  # on the package's first import (glasswork/__init__.py imports this module first)
