"""MOSS: stable rule sets on the accuracy / stability Pareto frontier (Liu & Mazumder, KDD 2025).

Candidate rules come from a random forest on quantile-binned features; the ridge loss H2 is
minimised over at most k rules subject to a stability floor H1 = Pi'z >= epsilon, exactly by an
outer-approximation (cutting-plane) method with a persistent HiGHS master, by the MIO models
through cvxpy (MOSEK or SCIP), or approximately by coordinate descent (MOSS-L).
"""

from glasswork import hookimpl
from glasswork.plugins.moss.views import monitor_panels, render_model, sweep_defaults  # noqa: F401  (hook implementations)

from .solver import MossSolver


@hookimpl
def register_solvers(register):  # type: ignore[no-untyped-def]
    register(MossSolver)


__all__ = ["MossSolver"]
