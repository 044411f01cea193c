"""Shared fixtures for the FasterRisk tests: small synthetic sets."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def binary_data() -> tuple[np.ndarray, np.ndarray]:
    """300 rows, 12 binary features; the label depends on features 0, 3 and 7."""
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(300, 12)).astype(float)
    logit = 1.5 * X[:, 0] - 2.0 * X[:, 3] + 1.0 * X[:, 7] - 0.3
    y = np.where(rng.random(300) < 1 / (1 + np.exp(-logit)), 1.0, -1.0)
    return X, y
