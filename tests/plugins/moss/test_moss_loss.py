"""The exact oracles of the MOSS specification §7.1 (items 1-7) for H2, its gradient and the cuts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork.plugins.moss.loss import (
    H2Oracle,
    epsilon_grid,
    h2_dense,
    h2_grad_dense,
    top_k,
)
from moss_helpers import instance

GAMMA = 0.3


def test_closed_form_equals_ridge_and_half_y_r(tiny):
    M, y, _ = tiny
    oracle = H2Oracle(M, y, GAMMA)
    for support in [(0,), (1, 4, 7), (2, 3, 5, 8, 11)]:
        ev = oracle(support)
        z = np.zeros(M.shape[1])
        z[list(support)] = 1
        dense = h2_dense(M, y, GAMMA, z)
        Mk = M[:, list(support)]
        w = np.linalg.solve(Mk.T @ Mk + np.eye(len(support)) / GAMMA, Mk.T @ y)
        r = y - Mk @ w
        ridge = 0.5 * r @ r + 0.5 / GAMMA * w @ w
        assert ev.value == pytest.approx(dense, rel=1e-10)
        assert ev.value == pytest.approx(ridge, rel=1e-10)
        assert ev.value == pytest.approx(0.5 * y @ r, rel=1e-10)
        np.testing.assert_allclose(ev.weights, w, rtol=1e-9)


def test_gradient_matches_central_differences(tiny):
    M, y, _ = tiny
    rng = np.random.default_rng(1)
    z = rng.uniform(0.2, 0.9, size=M.shape[1])
    g = h2_grad_dense(M, y, GAMMA, z)
    h = 1e-6
    fd = np.array(
        [(h2_dense(M, y, GAMMA, z + h * e) - h2_dense(M, y, GAMMA, z - h * e)) / (2 * h) for e in np.eye(M.shape[1])]
    )
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    assert np.all(g <= 0)


def test_binary_gradient_is_the_dense_gradient(tiny):
    M, y, _ = tiny
    ev = H2Oracle(M, y, GAMMA)((0, 5, 9))
    z = np.zeros(M.shape[1])
    z[[0, 5, 9]] = 1
    np.testing.assert_allclose(ev.grad, h2_grad_dense(M, y, GAMMA, z), rtol=1e-9, atol=1e-12)


def test_relaxation_identity(tiny):
    M, y, _ = tiny
    z = np.random.default_rng(2).uniform(0.05, 1.0, size=M.shape[1])
    w = np.linalg.solve(M.T @ M + np.diag(1.0 / (GAMMA * z)), M.T @ y)
    r = y - M @ w
    persp = 0.5 * r @ r + 0.5 / GAMMA * np.sum(w * w / z)
    assert h2_dense(M, y, GAMMA, z) == pytest.approx(persp, rel=1e-9)


def test_convex_and_coordinatewise_nonincreasing(tiny):
    M, y, _ = tiny
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.uniform(size=(2, M.shape[1]))
        mid = h2_dense(M, y, GAMMA, (a + b) / 2)
        assert mid <= 0.5 * (h2_dense(M, y, GAMMA, a) + h2_dense(M, y, GAMMA, b)) + 1e-12
        i = rng.integers(M.shape[1])
        bigger = a.copy()
        bigger[i] = min(1.0, a[i] + 0.3)
        assert h2_dense(M, y, GAMMA, bigger) <= h2_dense(M, y, GAMMA, a) + 1e-12


def test_bounds(tiny):
    M, y, _ = tiny
    oracle = H2Oracle(M, y, GAMMA)
    assert oracle(()).value == pytest.approx(0.5 * y @ y)
    for support in itertools.combinations(range(M.shape[1]), 3):
        ev = oracle(support)
        assert 0 <= ev.value <= 0.5 * y @ y
        assert np.linalg.norm(ev.weights) <= np.sqrt(GAMMA) * np.linalg.norm(y) + 1e-12


def test_cuts_underestimate_everywhere_and_are_tight(tiny):
    M, y, _ = tiny
    oracle = H2Oracle(M, y, GAMMA)
    m = M.shape[1]
    supports = list(itertools.combinations(range(m), 2)) + list(itertools.combinations(range(m), 3))
    cut_points = supports[::17]
    for cp in cut_points:
        ev = oracle(cp)
        zc = np.zeros(m)
        zc[list(cp)] = 1
        for s in supports:
            z = np.zeros(m)
            z[list(s)] = 1
            assert ev.value + ev.grad @ (z - zc) <= oracle.value(s) + 1e-10
        assert ev.value + ev.grad @ (zc - zc) == pytest.approx(ev.value)


def test_epsilon_grid_and_top_k():
    counts = np.array([5, 9, 9, 1, 3, 7])
    grid = epsilon_grid(counts, 2)
    assert grid[0] == 18 == counts[top_k(counts, 2)].sum()
    assert np.all(np.diff(grid) < 0)  # descending and deduplicated
    assert list(grid) == [18, 16, 12, 8, 4]
    assert len(epsilon_grid(counts, 2, points=3)) == 3


def test_memo_counts_distinct_supports():
    M, y, _ = instance(seed=4)
    oracle = H2Oracle(M, y, GAMMA)
    oracle((3, 1))
    oracle((1, 3))
    assert oracle.evaluations == 1
