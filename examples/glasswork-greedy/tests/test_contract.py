"""glasswork's plugin contract suite, run against the greedy solver (see ``glasswork.testing``)."""

from __future__ import annotations

from typing import Any

from glasswork.testing import SolverContract
from glasswork_greedy import GreedySolver, plugin


class TestGreedyContract(SolverContract):
    solver_class = GreedySolver
    plugin = plugin  # the entry point's module: its display hooks are checked too

    def spec_document(self) -> dict[str, Any]:
        return {
            "name": "contract",
            "solver": "greedy",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            "objective": {"regularization": 0.005},
            "constraints": {"max_rules": 5},
        }
