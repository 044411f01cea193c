"""Reading the shared data sets in the FasterRisk tests (a module, not conftest: test folders
each have a conftest.py, so importing helpers from 'conftest' is ambiguous)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]


def shared_data() -> Path:
    return Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))


def read_csv(relative: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """First column the label, the rest the features; skips when the data folder is absent."""
    path = shared_data() / relative
    if not path.exists():
        pytest.skip(f"shared data set {relative} absent: set GLASSWORK_DATA or provide ../shared/datasets")
    names = path.read_text().split("\n", 1)[0].strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, 1:], data[:, 0], names[1:]
