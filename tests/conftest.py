"""Shared fixtures: the toy solver plugin, a tiny binary data set, and the shared data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest_plugins = ["pytester"]  # the contract suite's own tests drive pytest

TESTS = Path(__file__).parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))  # so "toy_plugin" imports, here and in subprocesses via PYTHONPATH

SHARED_DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))
if SHARED_DATA.is_dir():
    # example specs name their data as data:REL; worker processes inherit the variable too
    os.environ.setdefault("GLASSWORK_DATA", str(SHARED_DATA))


@pytest.fixture(autouse=True)
def _sigint_raises_keyboard_interrupt():
    """Ctrl-C tests need SIGINT to raise KeyboardInterrupt: when pytest starts with SIGINT
    ignored (nohup, a background job), ``_thread.interrupt_main`` would do nothing and the test
    would wait for an interrupt that never comes. Restored after each test."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def toy_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Load the toy plugin through GLASSWORK_PLUGIN_MODULES, for this process and subprocesses."""
    from glasswork.hooks.registry import get_registry

    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", "toy_plugin")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    get_registry(refresh=True)
    yield dict(os.environ)
    monkeypatch.undo()
    get_registry(refresh=True)


@pytest.fixture
def toy_registry():
    import toy_plugin
    from glasswork.hooks.registry import Registry

    return Registry(builtins=False, entry_points=False, disabled=(), extra=[("toy", toy_plugin)])


@pytest.fixture
def tiny_csv(tmp_path: Path) -> Path:
    """A 60-row 0/1 data set where feature a decides the label except for 6 rows."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 60)
    b = rng.integers(0, 2, 60)
    y = a.copy()
    y[:6] = 1 - y[:6]
    path = tmp_path / "tiny.csv"
    lines = ["a,b,label"] + [f"{i},{j},{k}" for i, j, k in zip(a, b, y)]
    path.write_text("\n".join(lines) + "\n")
    return path
