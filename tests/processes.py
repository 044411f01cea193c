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


def glasswork(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``glasswork ARGS...`` in a child process, its output captured as text."""
    import sys

    return subprocess.run(
        [sys.executable, "-m", "glasswork", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@contextmanager
def local_cluster(workers: int = 2) -> Iterator[Any]:
    """A Dask ``LocalCluster`` of ``workers`` one-thread worker processes. A test that kills a
    worker takes one of its own: on a loaded machine the killed worker's nanny may take minutes
    to bring it back, or give up, and a cluster shared by a module would then stay one worker
    short (waiting for it to come back once held a test for 600 s)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster


def a_worker_pid(address: str) -> int:
    """The PID of one of the cluster's worker processes, checked never to be this process or its
    parent (a kill test must not take pytest down with it)."""
    import distributed

    with distributed.Client(address) as client:
        pid = next(iter(client.run(os.getpid).values()))
    assert pid not in (0, os.getpid(), os.getppid())
    return int(pid)
