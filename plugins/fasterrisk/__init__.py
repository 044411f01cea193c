"""Built-in ``fasterrisk`` solver: sparse integer risk score cards (Liu et al., NeurIPS 2022).

``FasterRiskSolver`` is the plugin, ``ScoreCard`` its model, and ``RiskScoreClassifier`` (imported
lazily, it pulls in scikit-learn's estimator machinery) the scikit-learn estimator.
"""

from __future__ import annotations

from typing import Any

from glasswork.hookspecs import hookimpl
from glasswork.plugins.fasterrisk.views import monitor_panels, render_model  # noqa: F401  (hook implementations)
from glasswork.plugins.fasterrisk.export import export_model, load_model  # noqa: F401  (hook implementations)
from glasswork.plugins.fasterrisk.model import ScoreCard
from glasswork.plugins.fasterrisk.solver import FasterRiskSolver
from glasswork.plugins.fasterrisk.spec import FasterRiskSpec

__all__ = ["FasterRiskSolver", "FasterRiskSpec", "RiskScoreClassifier", "ScoreCard"]


def __getattr__(name: str) -> Any:
    if name == "RiskScoreClassifier":
        from glasswork.plugins.fasterrisk.estimator import RiskScoreClassifier

        return RiskScoreClassifier
    raise AttributeError(name)


@hookimpl
def register_solvers(register: Any) -> None:
    register(FasterRiskSolver)
