"""The classification variant (spec §1.7): logistic H, its Danskin gradient, exactness, the model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.contract.solver import SolveContext
from glasswork.data import load_problem
from glasswork.hooks.registry import get_registry
from glasswork.plugins.moss import MossSolver
from glasswork.plugins.moss.cutting_plane import CuttingPlane
from glasswork.plugins.moss.loss import LogisticOracle, epsilon_grid, logistic_relaxed
from glasswork.spec.load import validate_spec
from scipy.optimize import minimize

GAMMA = 0.5


def data(seed=0, n=60, m=10):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(n, m))
    y = np.where(M[:, 0] + M[:, 1] + rng.normal(size=n) > 0.5, 1.0, -1.0)
    b0 = float(np.log((y > 0).mean() / (y < 0).mean()))
    return M, y, b0, rng.integers(1, 50, size=m)


def test_binary_value_equals_the_relaxation_at_ones():
    M, y, b0, _ = data()
    oracle = LogisticOracle(M, y, GAMMA, b0)
    for s in [(0,), (0, 3, 5), (1, 2, 7, 9)]:
        assert oracle.value(s) == pytest.approx(
            logistic_relaxed(M[:, list(s)], y, GAMMA, np.ones(len(s)), b0), rel=1e-7
        )
    assert oracle.value(()) == pytest.approx(oracle.h0)


def test_gradient_matches_finite_differences_of_the_relaxation():
    M, y, b0, _ = data(1, m=6)
    z = np.random.default_rng(1).uniform(0.3, 0.9, size=6)

    def fun(w):
        u = b0 + M @ w
        return np.logaddexp(0, -y * u).sum() + 0.5 / GAMMA * np.sum(w * w / z)

    w = minimize(fun, np.zeros(6), method="BFGS", options={"gtol": 1e-10}).x
    alpha = -y / (1 + np.exp(y * (b0 + M @ w)))
    grad = -0.5 * GAMMA * (M.T @ alpha) ** 2
    h = 1e-4
    fd = [
        (logistic_relaxed(M, y, GAMMA, z + h * e, b0) - logistic_relaxed(M, y, GAMMA, z - h * e, b0)) / (2 * h)
        for e in np.eye(6)
    ]
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-6)


def test_cutting_plane_equals_brute_force_for_logistic():
    M, y, b0, counts = data(2)
    oracle = LogisticOracle(M, y, GAMMA, b0)
    cp = CuttingPlane(oracle, counts.astype(float), 3, pi_scale=50)
    for thr in epsilon_grid(counts, 3)[:6]:
        p = cp.solve(float(thr))
        best = min(oracle.value(s) for s in itertools.combinations(range(10), 3) if counts[list(s)].sum() >= thr)
        assert p.status is Status.OPTIMAL
        assert p.h2 == pytest.approx(best, rel=1e-6)


def test_breast_cancer_rule_set_classifies():
    doc = {
        "name": "bc",
        "solver": "moss",
        "data": {"source": "sklearn:breast_cancer"},
        "objective": {"gamma": 0.01, "candidates": {"trees": 60, "max_candidates": 80}},
        "constraints": {"max_rules": 4},
    }
    spec = validate_spec(doc, get_registry())
    problem = load_problem(spec.data)
    result = MossSolver(spec).solve(problem, SolveContext())
    model = result.model
    assert result.certificate.status is Status.OPTIMAL
    proba = model.predict_proba(problem.X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.predict(problem.X_test) == problem.y_test) > 0.85
    assert "log-odds" in model.to_text() and model.to_dict()["task"] == "binary"
