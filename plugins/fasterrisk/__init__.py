"""Built-in ``fasterrisk`` solver: sparse integer risk score cards (Liu et al., NeurIPS 2022).

``FasterRiskSolver`` is the solver, ``ScoreCard`` its model and ``RiskScoreClassifier`` the
scikit-learn estimator; ``plugin`` holds the hook implementations glasswork loads.
"""

from __future__ import annotations

from typing import Any

from glasswork.plugins.fasterrisk.model import ScoreCard
from glasswork.plugins.fasterrisk.solver import FasterRiskSolver
from glasswork.plugins.fasterrisk.spec import FasterRiskSpec

__all__ = ["FasterRiskSolver", "FasterRiskSpec", "RiskScoreClassifier", "ScoreCard"]


def __getattr__(name: str) -> Any:
    # scikit-learn's estimator machinery loads when an estimator is asked for
    if name in ("RiskScoreClassifier",):
        from glasswork.plugins.fasterrisk import estimator

        return getattr(estimator, name)
    raise AttributeError(name)
