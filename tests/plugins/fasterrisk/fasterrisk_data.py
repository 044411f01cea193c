"""Reading the shared data sets in the FasterRisk tests (a module, not conftest: test folders
each have a conftest.py, so importing helpers from 'conftest' is ambiguous)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def fair_data(tmp: Path) -> str:
    """Three binary features (one a proxy of the group), an audit-only group; the protected rows are
    all positive, so no card gives both groups a precision of 1 (predictive parity 0 is infeasible),
    while statistical parity can be met."""
    rng = np.random.default_rng(8)
    n = 160
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    protected = rng.random(n) < 0.4
    c = (protected ^ (rng.random(n) < 0.15)).astype(np.int64)  # a proxy of the group: the unconstrained card uses it
    label = np.where(protected, 1, a ^ (rng.random(n) < 0.25).astype(np.int64))
    lines = ["a,b,c,grp,label"] + [
        f"{i},{j},{k},{'p' if g else 'r'},{y}" for i, j, k, g, y in zip(a, b, c, protected, label, strict=True)
    ]
    path = tmp / "fair.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def fair_spec(source: str, metric: str, at_most: float, policy: str = "exact", **extra: Any) -> dict[str, Any]:
    """A spec of ``fair_data`` under ``constraints.fairness``."""
    return {
        "name": "fair",
        "solver": "fasterrisk",
        "data": {"source": source, "target": "label", "audit_only": ["grp"]},
        "fairness": {"protected": {"column": "grp", "value": "p"}},
        "constraints": {
            "sparsity": 2,
            "coefficient_bounds": [-3, 3],
            "fairness": {"metric": metric, "at_most": at_most},
        },
        "search": {"policy": policy, "certify_time": 1.0},
        **extra,
    }
