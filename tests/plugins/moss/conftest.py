"""Small random MOSS instances shared by the tests."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # so the tests can import moss_helpers


from moss_helpers import instance


@pytest.fixture
def tiny() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return instance()
