"""The compiled kernels against plain numpy formulas (specification §1.2, §2.0, §2.6, §3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from glasswork.cython_ext import fasterrisk as K
from scipy.optimize import minimize


def signed(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The kernels' layout: coordinate 0 the intercept, column j = y * x_j, stored by column."""
    return np.ascontiguousarray(np.column_stack([y, X * y[:, None]]).T)


def loss_np(X, y, s, w, w0, lam2=0.0):
    z = y * (X @ w + w0)
    return float(s @ np.logaddexp(0.0, -z) + lam2 * w @ w)


def grad_np(X, y, s, w, w0, lam2=0.0):
    z = y * (X @ w + w0)
    r = -s * y / (1.0 + np.exp(z))
    return np.concatenate([[r.sum()], X.T @ r + 2 * lam2 * w])


@pytest.fixture
def mixed():
    rng = np.random.default_rng(3)
    n, p = 400, 6
    X = rng.integers(0, 2, size=(n, p)).astype(float)
    X[:, 4] = rng.integers(1, 11, n)  # small integers (table-coded)
    X[:, 5] = rng.normal(size=n)  # real-valued (not coded)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    s = rng.uniform(0.5, 2.0, n)
    return X, y, s


def test_column_coding_by_value_and_label():
    rng = np.random.default_rng(1)
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    X = np.column_stack([rng.integers(0, 2, 300), rng.integers(1, 11, 300), rng.normal(size=300)])
    X[:150, 2] = 0.0  # a real column that is half zeros: zeros coded, the rest partly escaped
    codes, nvals, vals = K.encode_columns(signed(X, y))
    assert list(nvals[:3]) == [1, 2, 10] and nvals[3] == -64
    for j in range(4):
        x = np.ones(300) if j == 0 else X[:, j - 1]
        coded = codes[j] != 255
        assert np.array_equal(vals[j][codes[j][coded] // 2], x[coded])
        assert np.array_equal(codes[j][coded] % 2, (y[coded] > 0).astype(np.uint8))
    assert (codes[3] == 255).sum() == 150 - 63  # 64 table values: 0.0 and the first 63 others


def test_gradient_loss_and_lipschitz_match_numpy(mixed):
    X, y, s = mixed
    lam2 = 1e-3
    d = K.Design(signed(X, y), s, np.full(7, -5.0), np.full(7, 5.0), lam2)
    w = np.array([0.3, 0.5, 0.0, -1.0, 0.0, 0.2, -0.4])
    d.set_point(w)
    assert d.loss() == pytest.approx(loss_np(X, y, s, w[1:], w[0], lam2), rel=1e-12)
    assert np.allclose(d.gradient(), grad_np(X, y, s, w[1:], w[0], lam2), rtol=1e-10, atol=1e-10)
    lip = d.lipschitz
    assert lip[0] == pytest.approx(0.25 * s.sum())
    assert np.allclose(lip[1:], 0.25 * (s @ X**2) + 2 * lam2)


def test_coordinate_steps_never_increase_loss_and_stay_in_box(mixed):
    X, y, s = mixed
    lo = np.array([-np.inf, -1, 0, -5, -5, -0.5, -5.0])
    hi = np.array([np.inf, 1, 5, 0, 5, 0.5, 5.0])
    d = K.Design(signed(X, y), s, lo, hi)
    d.set_point(np.zeros(7))
    previous = d.loss()
    for _sweep in range(30):
        for j in range(7):
            d.step(j)
            now = d.loss()
            assert now <= previous + 1e-9 * abs(previous)
            previous = now
    w = d.point
    assert np.all(w >= lo) and np.all(w <= hi)
    # margins were kept incrementally; they must equal a fresh X.w
    assert np.allclose(d.margins, y * (X @ w[1:] + w[0]), atol=1e-9)


def test_screen_matches_independent_one_dimensional_steps(mixed):
    X, y, s = mixed
    d = K.Design(signed(X, y), s, np.full(7, -5.0), np.full(7, 5.0))
    w = np.array([-0.2, 0.0, 0.7, 0.0, 0.0, 0.0, 0.0])
    d.set_point(w)
    cands = np.array([1, 3, 4, 5, 6], dtype=np.int64)
    a = np.zeros(5)
    losses = np.zeros(5)
    assert d.screen(cands, 10, 0.0, a, losses)
    lip = d.lipschitz
    for k, j in enumerate(cands):
        t = 0.0
        for _ in range(10):
            v = w.copy()
            v[j] += t
            g = grad_np(X, y, s, v[1:], v[0])[j]
            t = float(np.clip(t - g / lip[j], -5, 5))
        assert a[k] == pytest.approx(t, abs=1e-10)
        v = w.copy()
        v[j] += t
        assert losses[k] == pytest.approx(loss_np(X, y, s, v[1:], v[0]), rel=1e-12)
    # the state is untouched by screening
    assert np.allclose(d.point, w)


def test_screen_honours_the_stop_flag(mixed):
    X, y, s = mixed
    d = K.Design(signed(X, y), s, np.full(7, -5.0), np.full(7, 5.0))
    a = np.zeros(3)
    assert not d.screen(np.array([1, 2, 3], dtype=np.int64), 10, 0.0, a, None, np.ones(1, np.uint8))


def test_finetune_reaches_the_box_constrained_optimum(mixed):
    X, y, s = mixed
    A = signed(X, y)
    lo = np.array([-np.inf, -0.3, -5, -5, -5, -5, -5.0])
    hi = np.array([np.inf, 0.3, 5, 5, 5, 5, 5.0])
    w = np.zeros(7)
    got = K.finetune(A, s, w, lo, hi, 0.0, 5000, 1e-14, 10, True)
    res = minimize(
        lambda v: loss_np(X, y, s, v[1:], v[0]),
        np.zeros(7),
        jac=lambda v: grad_np(X, y, s, v[1:], v[0]),
        method="L-BFGS-B",
        bounds=list(zip(lo, hi)),
        options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10000},
    )
    assert got == pytest.approx(res.fun, rel=1e-7)
    assert got == pytest.approx(loss_np(X, y, s, w[1:], w[0]), rel=1e-12)
    assert w[1] == pytest.approx(res.x[1], abs=1e-4)


@pytest.mark.parametrize("lam2", [0.0, 1e-3])
def test_newton_finetune_reaches_the_same_optimum(mixed, lam2):
    X, y, s = mixed
    A = signed(X, y)
    lo = np.array([-np.inf, -0.3, -5, 0, -5, -5, -5.0])
    hi = np.array([np.inf, 0.3, 5, 5, 5, 5, 5.0])
    w_cd, w_nt = np.zeros(7), np.zeros(7)
    cd = K.finetune(A, s, w_cd, lo, hi, lam2, 20000, 1e-15, 10, True)
    nt = K.finetune_newton(A, s, w_nt, lo, hi, lam2)
    assert nt == pytest.approx(cd, rel=1e-9)
    assert nt == pytest.approx(loss_np(X, y, s, w_nt[1:], w_nt[0], lam2), rel=1e-12)
    assert np.allclose(w_nt, w_cd, atol=1e-4)
    assert np.all(w_nt >= lo) and np.all(w_nt <= hi)


def test_newton_beats_a_hundred_cd_sweeps_on_correlated_columns():
    rng = np.random.default_rng(8)
    base = rng.normal(size=(800, 1))
    X = base + 0.05 * rng.normal(size=(800, 4))  # nearly collinear real-valued columns
    y = np.where(rng.random(800) < 1 / (1 + np.exp(-2 * base[:, 0])), 1.0, -1.0)
    A, s = signed(X, y), np.ones(800)
    lo, hi = np.r_[-np.inf, np.full(4, -5.0)], np.r_[np.inf, np.full(4, 5.0)]
    cd = K.finetune(A, s, np.zeros(5), lo, hi)
    nt = K.finetune_newton(A, s, np.zeros(5), lo, hi)
    assert nt <= cd + 1e-9


def test_finetune_on_merged_rows_equals_full_rows():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(500, 3)).astype(float)
    y = np.where(rng.random(500) < 0.5, 1.0, -1.0)
    full = np.zeros(4)
    loss_full = K.finetune(signed(X, y), np.ones(500), full, np.full(4, -5.0), np.full(4, 5.0))
    rows = np.column_stack([y, X])
    uniq, inv = np.unique(rows, axis=0, return_inverse=True)
    counts = np.bincount(inv.ravel()).astype(float)
    merged = np.zeros(4)
    loss_merged = K.finetune(signed(uniq[:, 1:], uniq[:, 0]), counts, merged, np.full(4, -5.0), np.full(4, 5.0))
    assert len(uniq) <= 16
    assert loss_merged == pytest.approx(loss_full, rel=1e-9)
    assert np.allclose(merged, full, atol=1e-6)


# -- AuxiliaryLossRounding (specification §6.1 item 3, Theorem 3.1) ------------------------------


def _random_rounding_case(seed: int):
    rng = np.random.default_rng(seed)
    n, q = int(rng.integers(20, 200)), int(rng.integers(2, 7))
    X = rng.normal(size=(n, q - 1)) if seed % 2 else rng.integers(0, 2, (n, q - 1)).astype(float)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    s = rng.uniform(0.2, 3.0, n)
    wc = rng.uniform(-5, 5, q)
    if seed % 3 == 0:
        wc[1] = 2.0  # an integer input
    m = float(rng.uniform(0.5, 3.0))
    return signed(X, y), s, wc, 1.0 / m


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("plus_one,shortcut", [(False, False), (True, True)])
def test_rounding_invariants_and_theorem(seed, plus_one, shortcut):
    A, s, wc, inv_m = _random_rounding_case(seed)
    out, U = K.auxiliary_rounding(A, s, wc, inv_m, plus_one, shortcut)
    # every coordinate is the floor or the ceiling; integers (intercept included) unchanged
    assert np.all((out == np.floor(wc)) | (out == np.ceil(wc)))
    integral = wc == np.round(wc)
    assert np.all(out[integral] == wc[integral])
    # the final auxiliary loss recomputed from scratch
    z_sign = A * inv_m
    gam = np.where(z_sign > 0, np.floor(wc)[:, None], (np.floor(wc) + 1)[:, None] if plus_one else np.ceil(wc)[:, None])
    l = 1.0 / (1.0 + np.exp((z_sign * gam).sum(axis=0)))
    resid = l * ((A * inv_m).T @ (out - wc))
    assert U == pytest.approx(float(s @ resid**2), rel=1e-9, abs=1e-12)
    u = wc - np.floor(wc)
    cap = float(s @ (l[:, None] ** 2 * (A.T * inv_m) ** 2 @ (u * (1 - u))))
    assert U <= cap * (1 + 1e-9) + 1e-12
    # Theorem 3.1 with the true-ceiling Lipschitz constants
    surrogate_cap, loss_cap = K.rounding_bound(A, s, wc, inv_m)
    if not plus_one:
        assert surrogate_cap == pytest.approx(cap, rel=1e-9, abs=1e-15)
    if not plus_one:  # the theorem's constants are the true-ceiling ones
        increase = K.logistic_loss(A, s, out, inv_m) - K.logistic_loss(A, s, wc, inv_m)
        assert increase <= loss_cap + 1e-9


def test_rounding_ties_go_up():
    # one fractional coordinate at exactly one half: U(up) == U(down), so it rounds up
    A = signed(np.ones((4, 1)), np.array([1.0, -1.0, 1.0, -1.0]))
    out, _ = K.auxiliary_rounding(A, np.ones(4), np.array([0.0, 1.5]), 1.0)
    assert out[1] == 2.0
    out, _ = K.auxiliary_rounding(A, np.ones(4), np.array([0.0, -2.5]), 1.0)
    assert out[1] == -2.0


def test_rounding_is_greedy_optimal_per_step():
    # with one fractional coordinate the choice must be the exact argmin of U over {floor, ceil}
    rng = np.random.default_rng(5)
    for _ in range(20):
        X = rng.normal(size=(50, 1))
        y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
        A = signed(X, y)
        s = np.ones(50)
        wc = np.array([1.0, rng.uniform(-3, 3)])
        out, U = K.auxiliary_rounding(A, s, wc, 1.0)
        vals = []
        for v in (np.floor(wc[1]), np.ceil(wc[1])):
            cand = np.array([1.0, v])
            l = 1.0 / (1.0 + np.exp((A * np.where(A > 0, np.floor(wc)[:, None], np.ceil(wc)[:, None])).sum(0)))
            vals.append(float(s @ (l * (A.T @ (cand - wc))) ** 2))
        assert U == pytest.approx(min(vals), rel=1e-9)


def test_star_ray_scans_the_grid_and_keeps_the_best():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (200, 3)).astype(float)
    y = np.where(X @ [1.0, -1.0, 0.5] + rng.normal(0, 1, 200) > 0, 1.0, -1.0)
    A = signed(X, y)
    s = np.ones(200)
    w = np.array([-0.2, 1.3, -1.1, 0.6])
    grid = np.linspace(1.0, 5 / 1.3, 20)
    best, m, loss, tried = K.star_ray(A, s, w, grid)
    assert tried == 20
    losses = []
    for g in grid:
        out, _ = K.auxiliary_rounding(A, s, w * g, 1.0 / g)
        losses.append(K.logistic_loss(A, s, out, 1.0 / g))
    assert loss == pytest.approx(min(losses))
    assert m == pytest.approx(grid[int(np.argmin(losses))])
    # early stop: the first multiplier within the tolerance ends the scan
    cont = K.logistic_loss(A, s, w, 1.0)
    _, _, _, tried = K.star_ray(A, s, w, grid, 10.0, cont)
    assert tried == 1
    assert math.isfinite(loss)


# -- rounding with forced features (constraints.include): never 0 points -------------------------


def _targets(v: float, allowed: int) -> list[float]:
    """The two targets of a forced coordinate: floor and ceil, 0 replaced by -1 / +1 if allowed."""
    up, dn = math.ceil(v), math.floor(v)
    out = []
    if up != 0 or allowed & 1:
        out.append(float(up if up != 0 else 1))
    if dn != 0 or allowed & 2:
        out.append(float(dn if dn != 0 else -1))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_forced_coordinates_never_round_to_zero(seed):
    A, s, wc, inv_m = _random_rounding_case(seed)
    rng = np.random.default_rng(1000 + seed)
    q = wc.size
    forced = np.zeros(q, dtype=np.uint8)
    for j in range(1, q):
        if rng.random() < 0.6:
            forced[j] = int(rng.choice([1, 2, 3]))
            wc[j] = rng.uniform(-1, 1) if rng.random() < 0.7 else 0.0
            if forced[j] == 1:
                wc[j] = abs(wc[j])  # a monotone box [0, hi]: the point is >= 0
            elif forced[j] == 2:
                wc[j] = -abs(wc[j])
    for plus_one, shortcut in ((False, False), (True, True)):
        out, _ = K.auxiliary_rounding(A, s, wc, inv_m, plus_one, shortcut, forced)
        for j in range(q):
            if forced[j]:
                assert out[j] != 0 and out[j] in _targets(wc[j], int(forced[j]))
                assert (forced[j] & 1 or out[j] < 0) and (forced[j] & 2 or out[j] > 0)
            else:
                assert out[j] in (math.floor(wc[j]), math.ceil(wc[j]))
    # no forced coordinate: exactly Algorithm 6
    same, U0 = K.auxiliary_rounding(A, s, wc, inv_m, False, False, np.zeros(q, dtype=np.uint8))
    plain, U1 = K.auxiliary_rounding(A, s, wc, inv_m, False, False)
    assert np.array_equal(same, plain) and U0 == U1


def test_forced_rounding_is_greedy_optimal_over_its_targets():
    """One forced coordinate between -1 and 1: the choice is the argmin of U over {-1, +1}, with
    the Lipschitz constants taken over the box the two targets span."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        X = rng.normal(size=(50, 1))
        y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
        A = signed(X, y)
        s = np.ones(50)
        wc = np.array([1.0, rng.uniform(-1, 1)])
        out, U = K.auxiliary_rounding(A, s, wc, 1.0, False, False, np.array([0, 3], dtype=np.uint8))
        gam_lo, gam_hi = np.array([1.0, -1.0]), np.array([1.0, 1.0])
        l = 1.0 / (1.0 + np.exp((A * np.where(A > 0, gam_lo[:, None], gam_hi[:, None])).sum(0)))
        vals = {v: float(s @ (l * (A.T @ (np.array([1.0, v]) - wc))) ** 2) for v in (-1.0, 1.0)}
        assert out[1] == min(vals, key=lambda v: (vals[v], -v))
        assert U == pytest.approx(vals[out[1]], rel=1e-9)


def test_star_ray_keeps_forced_features_on_every_card():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, (200, 3)).astype(float)
    y = np.where(X @ [1.0, -1.0, 0.0] + rng.normal(0, 1, 200) > 0, 1.0, -1.0)
    A = signed(X, y)
    s = np.ones(200)
    w = np.array([-0.2, 1.3, -1.1, 0.0])  # the forced third feature has no weight at all
    grid = np.linspace(1.0, 5 / 1.3, 8)
    forced = np.array([0, 0, 0, 3], dtype=np.uint8)
    best, m, loss, tried = K.star_ray(A, s, w, grid, forced=forced)
    assert tried == 8 and best[3] in (-1.0, 1.0)
    losses = []
    for g in grid:  # the best over the grid of the forced roundings
        out, _ = K.auxiliary_rounding(A, s, w * g, 1.0 / g, False, False, forced)
        assert out[3] != 0
        losses.append(K.logistic_loss(A, s, out, 1.0 / g))
    assert loss == pytest.approx(min(losses)) and m == pytest.approx(grid[int(np.argmin(losses))])
    unforced, *_ = K.star_ray(A, s, w, grid)
    assert unforced[3] == 0
