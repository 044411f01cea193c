"""Shared fixtures for the data-layer tests: where the shared data sets live.

A plain module (not conftest.py) so it cannot shadow the top-level tests/conftest.py, which
other test modules import by name. Test modules import the fixtures they use from here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def datasets_dir() -> Path | None:
    root = os.environ.get("GLASSWORK_DATA")
    path = Path(root) if root else REPO.parent / "shared" / "datasets"
    return path if path.is_dir() else None


@pytest.fixture
def datasets(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared data sets folder, also exported as GLASSWORK_DATA; skips when absent."""
    path = datasets_dir()
    if path is None:
        pytest.skip("shared data sets absent: set GLASSWORK_DATA or provide ../shared/datasets")
    monkeypatch.setenv("GLASSWORK_DATA", str(path))
    return path


@pytest.fixture
def corels_dir(datasets: Path) -> Path:
    path = datasets / "corels"
    if not (path / "compas_train.out").exists():
        pytest.skip(f"{path} lacks the CORELS COMPAS files")
    return path
