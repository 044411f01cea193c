"""Every outside address under a deadline: a Dask scheduler at a port that accepts and never
answers is an exit 1 naming the address within the connect timeout (it hung about 3 minutes,
past the time limit, ignored one Ctrl-C and ended blaming "a fault in that plugin")."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from glasswork.contract.solver import CONNECT_TIMEOUT, ClusterExecutor

pytest.importorskip("distributed")


@contextmanager
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts every connection and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in accepted:
            conn.close()
        server.close()


@pytest.mark.slow  # 10 to 22 s (a timeout waited out, or every character tried): .ci/run's slow step
def test_connect_to_a_silent_scheduler_fails_within_the_timeout_naming_it():
    with silent_port() as port:
        started = time.monotonic()
        with pytest.raises(OSError, match=f"cannot reach the Dask scheduler at '127.0.0.1:{port}'.*no answer"):
            ClusterExecutor(f"127.0.0.1:{port}").connect()
        assert time.monotonic() - started < CONNECT_TIMEOUT + 5


def test_a_stop_ends_the_connect_at_once():
    """The run's first Ctrl-C (its stop flag) ends a connect in progress, not only the second."""
    with silent_port() as port:
        asked = time.monotonic() + 0.5
        executor = ClusterExecutor(f"127.0.0.1:{port}")
        started = time.monotonic()
        with pytest.raises(OSError, match="cancelled"):
            executor.connect(cancelled=lambda: time.monotonic() >= asked)
        assert time.monotonic() - started < 3


@pytest.mark.slow  # 10 to 22 s (a timeout waited out, or every character tried): .ci/run's slow step
def test_run_on_a_silent_scheduler_is_exit_1_naming_it(tiny_csv: Path, tmp_path: Path):
    spec = tmp_path / "c.yaml"
    spec.write_text(f"name: c\nsolver: corels\ndata:\n  source: {tiny_csv}\n  target: label\nlimits:\n  time: 60\n")
    with silent_port() as port:
        started = time.monotonic()
        executor = f"dask:127.0.0.1:{port}"
        proc = subprocess.run(
            [sys.executable, "-m", "glasswork", "run", "-q", "--no-store", "--executor", executor, str(spec)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        took = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    assert f"cannot reach the Dask scheduler at '127.0.0.1:{port}'" in proc.stderr
    assert "internal error" not in proc.stderr
    assert took < CONNECT_TIMEOUT + 20  # the import of dask and the data, on a loaded machine
