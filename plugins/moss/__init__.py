"""MOSS: stable rule sets on the accuracy / stability Pareto frontier (Liu & Mazumder, KDD 2025).

Candidate rules come from a random forest on quantile-binned features; the ridge loss H2 is
minimised over at most k rules subject to a stability floor H1 = Pi'z >= epsilon, exactly by a
perspective branch and bound or an outer-approximation (cutting-plane) method with a persistent
HiGHS master, by the MIO models through cvxpy (MOSEK or SCIP), or approximately by coordinate
descent (MOSS-L).

``MossSolver`` is the solver, ``RuleSet`` its model and ``RuleSetRegressor`` /
``RuleSetClassifier`` the scikit-learn estimators; ``plugin`` holds the hook implementations
glasswork loads.
"""

from __future__ import annotations

from typing import Any

from glasswork.plugins.moss.model import Frontier, RuleSet
from glasswork.plugins.moss.solver import MossSolver
from glasswork.plugins.moss.spec import MossSpec

__all__ = ["Frontier", "MossSolver", "MossSpec", "RuleSet", "RuleSetClassifier", "RuleSetRegressor"]


def __getattr__(name: str) -> Any:
    # scikit-learn's estimator machinery loads when an estimator is asked for
    if name in ("RuleSetRegressor", "RuleSetClassifier"):
        from glasswork.plugins.moss import estimator

        return getattr(estimator, name)
    raise AttributeError(name)
