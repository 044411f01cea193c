"""Child processes for tests that signal or kill them: each child runs in its own process group
with SIGINT back to its default (so Ctrl-C reaches it even when pytest itself was started with
SIGINT ignored, as under nohup or in a background job), and the whole group is killed when the
test ends, pass or fail, so no ``glasswork run`` outlives its test."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(command: Sequence[str], **kwargs: Any) -> subprocess.Popen:
    """``Popen`` in a new process group, SIGINT restored to its default in the child."""
    return subprocess.Popen(list(command), start_new_session=True, preexec_fn=_default_sigint, **kwargs)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group (its workers too) and reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            stream.close()


@contextmanager
def running(command: Sequence[str], **kwargs: Any) -> Iterator[subprocess.Popen]:
    """``with running([...]) as proc:``: the child and its group are gone when the block ends."""
    proc = start(command, **kwargs)
    try:
        yield proc
    finally:
        kill_group(proc)
