"""MOSS-L coordinate descent (spec §7.1 item 11)."""

from __future__ import annotations

import itertools

import numpy as np
from glasswork.plugins.moss.heuristic import coordinate_descent, moss_l, objective
from moss_helpers import instance

GAMMA = 0.2


def test_objective_never_increases():
    M, y, counts = instance(n=50, m=20, seed=21)
    penalty = 0.5 - 0.01 * counts
    trace: list[float] = []
    coordinate_descent(M, y, GAMMA, penalty, trace=trace)
    start = objective(M, y, np.zeros(20), GAMMA, penalty)
    values = [start] + trace
    assert all(b <= a + 1e-10 for a, b in itertools.pairwise(values))


def test_accepted_coordinates_obey_the_threshold_test():
    M, y, _ = instance(n=50, m=20, seed=22)
    penalty = np.full(20, 2.0)
    w = coordinate_descent(M, y, GAMMA, penalty)
    r = y - M @ w
    denom = (M * M).sum(0) + 1 / GAMMA
    for j in range(20):
        rj = r + M[:, j] * w[j]
        gain = (M[:, j] @ rj) ** 2 / (2 * denom[j])
        assert (w[j] != 0) == (gain > penalty[j])


def test_large_lam1_gives_zero_and_no_penalty_gives_ridge():
    M, y, _ = instance(n=50, m=20, seed=23)
    assert not coordinate_descent(M, y, GAMMA, np.full(20, 1e9)).any()
    w = coordinate_descent(M, y, GAMMA, np.zeros(20), max_sweeps=5000)
    ridge = np.linalg.solve(M.T @ M + np.eye(20) / GAMMA, M.T @ y)
    np.testing.assert_allclose(w, ridge, atol=1e-7)


def test_moss_l_respects_k_and_stability_weight_raises_stability():
    M, y, counts = instance(n=60, m=30, seed=24)
    pi = counts / 50.0
    plain, _ = moss_l(M, y, pi, 5, GAMMA, 0.0)
    stable, _ = moss_l(M, y, pi, 5, GAMMA, 3.0)
    assert 1 <= len(plain) <= 5 and 1 <= len(stable) <= 5
    assert pi[list(stable)].sum() >= pi[list(plain)].sum()
