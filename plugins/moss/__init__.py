"""MOSS: stable rule sets on the accuracy / stability Pareto frontier (Liu & Mazumder, KDD 2025).

Candidate rules come from a random forest on quantile-binned features; the ridge loss H2 is
minimised over at most k rules subject to a stability floor H1 = Pi'z >= epsilon, exactly by a
perspective branch and bound or an outer-approximation (cutting-plane) method with a persistent
HiGHS master, by the MIO models through cvxpy (MOSEK or SCIP), or approximately by coordinate
descent (MOSS-L).

``MossSolver`` is the plugin, ``RuleSet`` its model, and ``RuleSetRegressor`` /
``RuleSetClassifier`` (imported lazily: scikit-learn's estimator machinery) the estimators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glasswork.hookspecs import hookimpl
from glasswork.solver import Solver
from glasswork.plugins.moss.model import Frontier, RuleSet
from glasswork.plugins.moss.solver import MossSolver
from glasswork.plugins.moss.spec import MossSpec
from glasswork.plugins.moss.views import monitor_panels, render_model, sweep_defaults  # noqa: F401  (hook implementations)
from glasswork.plugins.moss.export import export_model, load_model  # noqa: F401  (hook implementations)

__all__ = ["Frontier", "MossSolver", "MossSpec", "RuleSet", "RuleSetClassifier", "RuleSetRegressor"]


def __getattr__(name: str) -> Any:
    if name in ("RuleSetRegressor", "RuleSetClassifier"):
        from glasswork.plugins.moss import estimator

        return getattr(estimator, name)
    raise AttributeError(name)


@hookimpl
def register_solvers(register: Callable[[type[Solver]], None]) -> None:
    register(MossSolver)
