"""Perspective branch and bound and its relaxation against brute force, cvxpy and the cutting plane."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.plugins.moss.branch_and_bound import BranchAndBound
from glasswork.plugins.moss.cutting_plane import CuttingPlane, InfeasibleEpsilon
from glasswork.plugins.moss.loss import H2Oracle, epsilon_grid
from glasswork.plugins.moss.relaxation import FREE, IN, OUT, PerspectiveRelaxation
from glasswork.plugins.moss.rules import build_pool
from moss_helpers import brute_force, instance


def _thresholds(counts: np.ndarray, k: int) -> list[float]:
    grid = epsilon_grid(counts, k)
    return [float(t) for t in list(grid[:5]) + [grid[len(grid) // 2], grid[-1]]]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gamma", [0.05, 0.5, 5.0])
def test_branch_and_bound_equals_brute_force(seed, gamma):
    M, y, counts = instance(n=30, m=12, seed=seed)
    k = 3 + seed % 2
    stab = counts.astype(float)
    bb = BranchAndBound(H2Oracle(M, y, gamma), stab, k, pi_scale=50)
    for thr in _thresholds(counts, k):
        p = bb.solve(thr)
        value, support = brute_force(M, y, stab, k, thr, gamma)
        assert p.status is Status.OPTIMAL
        assert p.h2 == pytest.approx(value, rel=1e-6)
        assert p.lower_bound <= p.h2 + 1e-9 * p.h2
        assert p.h2 - p.lower_bound <= 1e-6 * p.h2
        assert len(p.support) <= k and stab[list(p.support)].sum() >= thr - 1e-9
        if abs(p.h2 - value) < 1e-12 * value:
            assert p.support == support


def test_fractional_pi_and_infeasible_above_eps_max():
    M, y, _ = instance(n=25, m=10, seed=7)
    pi = np.random.default_rng(7).uniform(size=10)
    bb = BranchAndBound(H2Oracle(M, y, 0.5), pi, 3)
    for thr in epsilon_grid(pi, 3)[:5]:
        assert bb.solve(float(thr)).h2 == pytest.approx(brute_force(M, y, pi, 3, float(thr), 0.5)[0], rel=1e-6)
    with pytest.raises(InfeasibleEpsilon):
        bb.solve(float(np.sort(pi)[-3:].sum()) + 1e-6)


def _rule_instance(n: int = 300, trees: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    y = 2 * X[:, 0] + 3 * (X[:, 1] > 0.3) + X[:, 2] * X[:, 3] + rng.normal(size=n)
    y = y / y.std()
    pool = build_pool(X, y, [f"x{j}" for j in range(8)], trees=trees, depth=2, seed=seed, max_rules_pool=120)
    return pool, y - pool.y_mean


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_rule_pool_matches_the_cutting_plane_and_fixes_most_rules():
    """Real rule columns (correlated, many near-duplicates): the fixings path and the sub-problem."""
    pool, yc = _rule_instance()
    counts = pool.counts.astype(float)
    k, gamma = 6, 0.01
    bb = BranchAndBound(H2Oracle(pool.M, yc, gamma), counts, k, pi_scale=pool.n_trees)
    cp = CuttingPlane(H2Oracle(pool.M, yc, gamma), counts, k, pi_scale=pool.n_trees, relaxation=False)
    sizes = []
    for thr in epsilon_grid(pool.counts, k)[[0, 1, 2, 3, 4, 6, 9, 12, 20]]:
        a, b = bb.solve(float(thr)), cp.solve(float(thr))
        assert a.status is b.status is Status.OPTIMAL
        assert a.h2 == pytest.approx(b.h2, rel=1e-6)
        assert a.lower_bound <= a.h2 and a.h2 - a.lower_bound <= 1e-6 * a.h2  # "optimal" is earned
        sizes.append(bb.last_sub_size)
    assert min(sizes) < pool.m  # the root relaxation ruled rules out


def test_epm_sweep_equals_independent_solves():
    M, y, counts = instance(n=40, m=16, seed=5)
    k, gamma = 4, 0.3
    grid = epsilon_grid(counts, k, points=10)
    swept = BranchAndBound(H2Oracle(M, y, gamma), counts.astype(float), k).sweep(grid)
    alone = [BranchAndBound(H2Oracle(M, y, gamma), counts.astype(float), k).solve(float(t)) for t in grid]
    np.testing.assert_allclose([p.h2 for p in swept], [p.h2 for p in alone], rtol=1e-9)
    assert all(b.h2 <= a.h2 * (1 + 1e-9) for a, b in itertools.pairwise(swept))  # OPT falls with eps


def test_stop_reports_the_stop_and_a_valid_bound():
    M, y, counts = instance(n=40, m=16, seed=8)
    thr = float(epsilon_grid(counts, 5)[6])
    bb = BranchAndBound(H2Oracle(M, y, 50.0), counts.astype(float), 5, stop=lambda nodes: Status.CANCELLED)
    p = bb.solve(thr)
    exact = brute_force(M, y, counts.astype(float), 5, thr, 50.0)[0]
    assert p.status in (Status.CANCELLED, Status.OPTIMAL)
    assert p.lower_bound <= exact * (1 + 1e-9) and exact <= p.h2 * (1 + 1e-9)
    if p.status is Status.CANCELLED:
        assert bb.stopped is Status.CANCELLED


# -- the relaxation --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_dual_bound_is_valid_under_random_fixings(seed):
    """D never exceeds the best rule set the fixings allow, at any multipliers tried."""
    M, y, counts = instance(n=30, m=12, seed=seed)
    k, gamma = 4, 0.5
    stab = counts.astype(float)
    oracle = H2Oracle(M, y, gamma)
    relax = PerspectiveRelaxation(oracle.gram, gamma, stab, k)
    rng = np.random.default_rng(seed)
    thr = float(epsilon_grid(counts, k)[3])
    for _ in range(6):
        state = rng.choice([FREE, FREE, FREE, IN, OUT], size=12).astype(np.int8)
        best = np.inf
        for size in range(k + 1):
            for s in itertools.combinations(range(12), size):
                chosen = np.zeros(12, bool)
                chosen[list(s)] = True
                if np.any(chosen[state == OUT]) or not np.all(chosen[state == IN]):
                    continue
                if stab[list(s)].sum() >= thr - 1e-9:
                    best = min(best, oracle.value(s))
        bound = relax.solve(thr, state)
        assert bound.value <= best * (1 + 1e-9)
        if np.isfinite(best):  # fixing by the bound never removes the best allowed set
            out, into = relax.fixings(bound, state, best * (1 + 1e-9))
            optimum = [
                s
                for size in range(k + 1)
                for s in itertools.combinations(range(12), size)
                if (not set(s) & set(np.flatnonzero(state == OUT)))
                and set(np.flatnonzero(state == IN)) <= set(s)
                and stab[list(s)].sum() >= thr - 1e-9
                and oracle.value(s) <= best * (1 + 1e-12)
            ][0]
            assert not set(out) & set(optimum) and set(into) <= set(optimum)
        else:
            assert bound.value == np.inf or not relax.feasible(thr, state) or bound.value > 0


def test_relaxation_value_equals_the_perspective_relaxation_solved_by_cvxpy():
    """Spec §2.2: at the optimal multipliers D is the perspective relaxation of (MIO-P)."""
    cp = pytest.importorskip("cvxpy")
    M, y, counts = instance(n=40, m=15, seed=3)
    k, gamma = 4, 0.2
    stab = counts.astype(float)
    thr = float(epsilon_grid(counts, k)[2])
    bound = PerspectiveRelaxation(H2Oracle(M, y, gamma).gram, gamma, stab, k).solve(thr, np.zeros(15, np.int8))
    w, z, s = cp.Variable(15), cp.Variable(15), cp.Variable(15, nonneg=True)
    prob = cp.Problem(
        cp.Minimize(0.5 * cp.sum_squares(y - M @ w) + 0.5 / gamma * cp.sum(s)),
        [z >= 0, z <= 1, cp.sum(z) <= k, stab @ z >= thr, cp.SOC(s + z, cp.vstack([2 * w, s - z]), axis=0)],
    )
    prob.solve(solver="CLARABEL")
    assert bound.value == pytest.approx(prob.value, rel=1e-5)
    assert bound.value <= prob.value * (1 + 1e-7)  # a dual value never exceeds the primal optimum


def test_cutting_plane_with_relaxation_equals_without():
    M, y, counts = instance(n=60, m=80, seed=9)
    k = 4
    grid = epsilon_grid(counts, k, points=6)
    fast = CuttingPlane(H2Oracle(M, y, 0.05), counts.astype(float), k, pi_scale=50).sweep(grid)
    plain = CuttingPlane(H2Oracle(M, y, 0.05), counts.astype(float), k, pi_scale=50, relaxation=False).sweep(grid)
    np.testing.assert_allclose([p.h2 for p in fast], [p.h2 for p in plain], rtol=1e-6)
    assert all(p.status is Status.OPTIMAL for p in fast)


@pytest.mark.parametrize("seed", range(3))
def test_coordinate_descent_minimises_the_reverse_huber_problem(seed):
    """The compiled kernel against a general-purpose minimiser of the same convex function."""
    from glasswork.cython_ext.moss import perspective_cd
    from scipy.optimize import minimize

    M, y, counts = instance(n=30, m=8, seed=seed)
    gamma = 0.3
    G, b = np.ascontiguousarray(M.T @ M), M.T @ y
    lam = np.random.default_rng(seed).uniform(-0.5, 3.0, size=8)
    state = np.array([0, 0, 0, 0, 0, 1, -1, 0], dtype=np.int8)

    def penalty(v: float, lam_i: float, st: int) -> float:
        if st < 0:
            return 0.0
        if st > 0 or lam_i <= 0:
            return v * v / (2 * gamma) + lam_i
        theta = np.sqrt(2 * gamma * lam_i)
        return np.sqrt(2 * lam_i / gamma) * abs(v) if abs(v) <= theta else v * v / (2 * gamma) + lam_i

    def F(v: np.ndarray) -> float:
        v = np.where(state < 0, 0.0, v)
        return 0.5 * v @ G @ v - b @ v + sum(penalty(v[i], lam[i], state[i]) for i in range(8))

    w = np.zeros(8)
    g = -b.copy()
    perspective_cd(G, b, gamma, lam, state, w, g, 1e-15, 1.0)
    live = state >= 0  # the gradient of a rule forced out is left stale by design
    np.testing.assert_allclose(g[live], (G @ w - b)[live], atol=1e-9)
    assert w[6] == 0.0
    ref = min(
        (
            minimize(F, x0, method="Powell", options={"xtol": 1e-10, "ftol": 1e-14, "maxfev": 200000})
            for x0 in (np.zeros(8), w + 0.1)
        ),
        key=lambda r: r.fun,
    )
    assert F(w) <= ref.fun + 1e-7 * max(1.0, abs(ref.fun))


def test_optimal_is_earned_on_the_benchmark_shape():
    """The bench's n = 150, m = 250, k = 15 instance: here a Lagrangian relaxation can be integral
    yet violate the stability row it prices, and such a node must be split, not closed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 20))
    y = 2 * X[:, 0] + 3 * (X[:, 1] > 0.3) + X[:, 2] * X[:, 3] - 2 * (X[:, 4] < -0.5) * (X[:, 5] > 0)
    y = (y + rng.normal(size=150)) / np.std(y + rng.normal(size=150))
    pool = build_pool(X, y, [f"x{j}" for j in range(20)], trees=1000, depth=2, seed=0, max_rules_pool=250)
    yc = y - pool.y_mean
    counts = pool.counts.astype(float)
    bb = BranchAndBound(H2Oracle(pool.M, yc, 1e-3), counts, 15, pi_scale=pool.n_trees)
    cp = CuttingPlane(H2Oracle(pool.M, yc, 1e-3), counts, 15, pi_scale=pool.n_trees)
    for thr in epsilon_grid(pool.counts, 15)[:8]:
        a, b = bb.solve(float(thr)), cp.solve(float(thr))
        assert a.status is b.status is Status.OPTIMAL
        assert a.h2 == pytest.approx(b.h2, rel=1e-6)
        assert a.h2 - a.lower_bound <= 1e-6 * a.h2


# -- the compiled search pieces -----------------------------------------------------------------


def test_compiled_h2_equals_the_oracle():
    from glasswork.cython_ext.moss import h2

    M, y, _ = instance(n=50, m=20, seed=4)
    oracle = H2Oracle(M, y, 0.7)
    rng = np.random.default_rng(4)
    for size in (0, 1, 3, 7):
        s = tuple(sorted(rng.choice(20, size=size, replace=False).tolist()))
        assert h2(oracle.gram.G, oracle.gram.b, oracle.gram.yy, 0.7, s) == pytest.approx(oracle.value(s), rel=1e-12)
    with pytest.raises(IndexError):
        h2(oracle.gram.G, oracle.gram.b, oracle.gram.yy, 0.7, (3, 20))


def _first_improvement_swaps(oracle, stab, k, threshold, support, candidates, budget):
    """Reference for the compiled local search: first improving swap, candidates in the given
    order, members in rule order, at most ``budget`` evaluations."""
    best, value, spent, improved = tuple(support), oracle.value(support), 0, True
    while improved and spent < budget:
        improved = False
        for i in (int(c) for c in candidates):
            if i in best:
                continue
            for j in best:
                trial = tuple(sorted(set(best) - {j} | {i}))
                if len(trial) > k or stab[list(trial)].sum() < threshold - 1e-9 * max(1.0, abs(threshold)):
                    continue
                spent += 1
                if oracle.value(trial) < value * (1 - 1e-12):
                    best, value, improved = trial, oracle.value(trial), True
                    break
            if improved or spent >= budget:
                break
    return best, value


@pytest.mark.parametrize("seed", range(4))
def test_compiled_local_search_makes_the_same_moves_as_the_reference(seed):
    """The compiled swap search takes the first improving swap in the same order as a plain
    Python reference, so both end at the same rule set, under a tight and a loose budget."""
    M, y, counts = instance(n=40, m=18, seed=seed)
    k, gamma = 4, 0.4
    stab = counts.astype(float)
    thr = float(epsilon_grid(counts, k)[4])
    bb = BranchAndBound(H2Oracle(M, y, gamma), stab, k)
    reference = H2Oracle(M, y, gamma)
    start = bb._start(thr, None)
    candidates = np.random.default_rng(seed).permutation(18)
    for budget in (3, 3000):
        a = bb._local_search(start, thr, candidates, budget)
        support, value = _first_improvement_swaps(reference, stab, k, thr, start.support, candidates, budget)
        assert a.support == support
        assert a.value == pytest.approx(value, rel=1e-10)
        assert bb.feasible(a.support, thr)
    # at the end of an unlimited search no single swap with a candidate improves
    members = set(a.support)
    for i in set(candidates.tolist()) - members:
        for j in a.support:
            trial = tuple(sorted(members - {j} | {i}))
            if bb.feasible(trial, thr):
                assert reference.value(trial) >= a.value * (1 - 1e-12)


def _round_reference(z, w, stab, k, threshold):
    """Reference for the compiled rounding: k largest z (ties by |w|, then index), then the least
    stable chosen rule swapped for the most stable rule left until the threshold is met."""
    floor = threshold - 1e-9 * max(1.0, abs(threshold))
    order = np.lexsort((-np.abs(w), -z))
    chosen = [int(i) for i in order[:k] if z[i] > 0]
    if not chosen:
        return None
    if stab[chosen].sum() < floor:
        rest = [int(i) for i in np.argsort(-stab, kind="stable") if int(i) not in chosen]
        chosen.sort(key=lambda i: stab[i])
        while rest and stab[chosen].sum() < floor:
            if len(chosen) >= k:
                chosen.pop(0)
            chosen.append(rest.pop(0))
        if stab[chosen].sum() < floor:
            return None
    return tuple(sorted(chosen))


@pytest.mark.parametrize("seed", range(6))
def test_compiled_rounding_equals_the_reference(seed):
    from glasswork.cython_ext.moss import rounding

    rng = np.random.default_rng(seed)
    m, k = 25, 5
    stab = rng.integers(1, 40, size=m).astype(float)
    z = np.where(rng.uniform(size=m) < 0.4, rng.choice([0.25, 0.5, 1.0], size=m), 0.0)  # ties in z
    w = rng.normal(size=m)
    sums = np.sort(stab)[::-1]
    for threshold in (0.0, float(sums[:k].sum()) * 0.8, float(sums[:k].sum()), float(sums[:k].sum()) + 1):
        assert rounding(z, w, stab, k, threshold) == _round_reference(z, w, stab, k, threshold)
    assert rounding(np.zeros(m), w, stab, k, 0.0) is None


def test_node_search_counts_nodes_and_reports_a_valid_bound_when_stopped_at_a_node_limit():
    """Stopped by the node limit mid-search: the status says so, and the lower bound (the least
    bound of the open nodes) still lies below the true optimum."""
    M, y, counts = instance(n=40, m=16, seed=8)
    k, gamma = 5, 50.0
    stab = counts.astype(float)
    for thr in epsilon_grid(counts, k)[3:9]:
        full = BranchAndBound(H2Oracle(M, y, gamma), stab, k).solve(float(thr))
        if full.iterations < 3:
            continue
        bb = BranchAndBound(H2Oracle(M, y, gamma), stab, k, max_nodes=2)
        p = bb.solve(float(thr))
        exact = brute_force(M, y, stab, k, float(thr), gamma)[0]
        assert p.status is Status.STOPPED_NODES and p.iterations == 2
        assert p.lower_bound <= exact * (1 + 1e-9) <= p.h2 * (1 + 2e-9)
        break
    else:
        pytest.fail("no threshold needed a search of three nodes or more")


def test_compiled_entry_points_refuse_rule_numbers_out_of_range():
    from glasswork.cython_ext.moss import local_search

    M, y, counts = instance(n=30, m=10, seed=2)
    g = H2Oracle(M, y, 0.5).gram
    stab = counts.astype(float)
    with pytest.raises(IndexError):
        local_search(g.G, g.b, g.yy, 0.5, stab, 3, 0.0, (0, 1, 2), 1.0, np.array([3, 10], dtype=np.intp), 10)
    with pytest.raises(IndexError):
        local_search(g.G, g.b, g.yy, 0.5, stab, 3, 0.0, (0, 1, 12), 1.0, np.array([3], dtype=np.intp), 10)
