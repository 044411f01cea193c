"""The cvxpy MIO models agree with the cutting plane and brute force; MOSEK licence handling."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.plugins.moss.cutting_plane import CuttingPlane, InfeasibleEpsilon
from glasswork.plugins.moss.loss import H2Oracle, epsilon_grid
from glasswork.plugins.moss.mio import (
    BackendUnavailable,
    choose_backend,
    mosek_licence,
    solve_mio,
)
from moss_helpers import brute_force, instance

pytest.importorskip("cvxpy")
pytest.importorskip("pyscipopt")
GAMMA = 0.3
HAS_MOSEK, MOSEK_WHY = mosek_licence()


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
@pytest.mark.parametrize("formulation", ["perspective", "bigm"])
def test_scip_equals_cutting_plane_and_brute_force(formulation):
    M, y, counts = instance(n=30, m=12, seed=11)
    k = 3
    pi = counts / 50.0
    cp = CuttingPlane(H2Oracle(M, y, GAMMA), counts.astype(float), k, pi_scale=50)
    for thr in epsilon_grid(counts, k)[[1, 4]]:
        p = cp.solve(float(thr))
        r = solve_mio(M, y, pi, k, GAMMA, thr / 50, formulation=formulation, solver="SCIP")
        exact, support = brute_force(M, y, counts.astype(float), k, float(thr), GAMMA)
        assert r.status is Status.OPTIMAL and r.backend_status in ("optimal", "gaplimit")  # SCIP's own word
        assert r.gap is not None and r.gap <= 1e-4  # solve_mio's default mip_gap
        assert r.objective == pytest.approx(exact, rel=1e-6)
        assert p.h2 == pytest.approx(exact, rel=1e-6)
        assert r.lower_bound is not None and r.lower_bound <= exact * (1 + 1e-9)
        assert r.support == support == p.support


def test_mio_reports_infeasible_above_eps_max():
    M, y, counts = instance(n=20, m=8, seed=12)
    pi = counts / 50.0
    eps_max = np.sort(pi)[::-1][:2].sum()
    with pytest.raises(InfeasibleEpsilon):
        solve_mio(M, y, pi, 2, GAMMA, eps_max + 1e-6, formulation="bigm", solver="SCIP")


def test_backend_choice_without_mosek_licence(monkeypatch):
    from glasswork.plugins.moss import mio

    monkeypatch.setattr(mio, "mosek_licence", lambda: (False, "no usable MOSEK licence (test)"))
    assert choose_backend("auto", "perspective", False) == ("SCIP", None)
    with pytest.raises(BackendUnavailable) as err:
        choose_backend("mosek", "perspective", False)
    text = str(err.value)
    assert "mosek.lic" in text and "scip: ok" in text and "search.fallback: true" in text
    solver, warning = choose_backend("mosek", "perspective", True)
    assert solver == "SCIP" and "Using 'scip' instead" in warning


@pytest.mark.skipif(not HAS_MOSEK, reason=f"MOSEK licence missing: {MOSEK_WHY}")
def test_mosek_perspective_equals_brute_force():
    M, y, counts = instance(n=30, m=12, seed=13)
    pi = counts / 50.0
    thr = float(epsilon_grid(counts, 3)[3])
    r = solve_mio(M, y, pi, 3, GAMMA, thr / 50, formulation="perspective", solver="MOSEK")
    assert r.objective == pytest.approx(brute_force(M, y, counts.astype(float), 3, thr, GAMMA)[0], rel=1e-6)


def test_an_unreadable_optimal_inaccurate_is_never_optimal(monkeypatch):
    """cvxpy before 1.8 handed back neither SCIP's status nor its dual bound, and said
    "optimal_inaccurate" for a gap-limit and for a time-limit solve alike: such a solve is not
    a proof, so it is reported heuristic, with no bound, never optimal."""
    import cvxpy as cp
    from glasswork.plugins.moss import mio

    solve = cp.Problem.solve

    def inaccurate(self, *args, **kwargs):
        out = solve(self, *args, **kwargs)
        self._status = "optimal_inaccurate"
        return out

    monkeypatch.setattr(cp.Problem, "solve", inaccurate)
    monkeypatch.setattr(mio, "_backend_status", lambda prob, solver: None)
    monkeypatch.setattr(mio, "_dual_bound", lambda prob, solver: None)
    M, y, counts = instance(n=30, m=12, seed=11)
    thr = epsilon_grid(counts, 3)[1]
    r = solve_mio(M, y, counts / 50.0, 3, GAMMA, thr / 50, solver="SCIP")
    assert r.status is Status.HEURISTIC and r.lower_bound is None
    assert r.backend_status == "optimal_inaccurate"
