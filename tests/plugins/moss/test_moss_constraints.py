"""Constraints hold on every policy (issue 23, item 4). MOSS accepts ``max_rules`` (k) and a
stability target (``min_stability`` or ``stability_rank``); every policy, branch and bound,
cutting plane, mio and the heuristic, returns at most k rules whose stability reaches the
target, and the exact ones the optimum that enumeration of the same candidate pool finds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.contract.solver import SolveContext
from glasswork.data import load_problem
from glasswork.hooks.registry import get_registry
from glasswork.plugins.moss import MossSolver
from glasswork.plugins.moss import solver as moss_solver
from glasswork.spec.load import validate_spec
from grids import covering_grid
from moss_helpers import brute_force

POLICIES = {
    "branch_and_bound": {"policy": "branch_and_bound"},
    "cutting_plane": {"policy": "cutting_plane"},
    "mio": {"policy": "mio", "backend": "scip", "formulation": "bigm"},
    "heuristic": {"policy": "heuristic"},
}
CASES = [  # (candidate seed, max_rules, target)
    (0, 2, {"stability_rank": 1}),
    (1, 3, {"stability_rank": 3}),
    (2, 3, {"min_stability": 0.5}),
    (3, 1, {"stability_rank": 2}),
]


@pytest.mark.parametrize(
    "policy, case",
    covering_grid([list(POLICIES), CASES], ids=[str, lambda c: f"seed{c[0]}-k{c[1]}"], strength=1),
)
def test_max_rules_and_stability_hold_on_every_policy(policy: str, case: tuple, monkeypatch) -> None:
    if policy == "mio":
        pytest.importorskip("pyscipopt")
    pools = []
    real_build = moss_solver.build_pool

    def recording_build(*args, **kwargs):
        pools.append(real_build(*args, **kwargs))
        return pools[-1]

    monkeypatch.setattr(moss_solver, "build_pool", recording_build)
    seed, k, target = case
    doc = {
        "name": "moss-constraints",
        "solver": "moss",
        "data": {"source": "sklearn:diabetes"},
        "objective": {"gamma": 0.001, "candidates": {"trees": 30, "depth": 2, "seed": seed, "max_candidates": 12}},
        "constraints": {"max_rules": k, **target},
        "search": POLICIES[policy],
    }
    spec = validate_spec(doc, get_registry())
    problem = load_problem(spec.data)
    result = MossSolver(spec).solve(problem, SolveContext())
    pool = pools[-1]
    B = float(pool.n_trees)
    threshold = math.ceil(result.stats["epsilon"] * B - 1e-9)
    if "min_stability" in target:
        assert threshold == math.ceil(target["min_stability"] * B - 1e-9)
    model = result.model
    chosen = [pool.rules.index(r) for r in model.rules]
    assert 1 <= len(chosen) <= k
    assert pool.counts[chosen].sum() >= threshold  # the stability target, in whole trees
    assert model.h1 == pytest.approx(pool.counts[chosen].sum() / B)
    y = problem.y / np.std(problem.y)
    truth, _ = brute_force(pool.M, y - pool.y_mean, pool.counts.astype(float), k, threshold, spec.objective.gamma)
    if policy == "heuristic":
        assert result.certificate.status is Status.HEURISTIC
        assert model.h2 >= truth - 1e-9 * abs(truth)
    else:
        assert result.certificate.status is Status.OPTIMAL
        assert model.h2 == pytest.approx(truth, rel=1e-4 if policy == "mio" else 1e-6)
