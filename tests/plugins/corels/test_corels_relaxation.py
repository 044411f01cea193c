"""The order-free relaxation of bench/corels_relaxation.py (docs/maintainers/corels-measurements.md, "Wide
antecedent sets: what was tried", (e)): a valid lower bound on every rule list, at least Theorem 20, and never more
than Theorem 20 plus four rules when the antecedents hold two complementary pairs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from corels_reference import brute_force
from glasswork.cython_ext import bitset
from glasswork.plugins.corels.search import engine

pytest.importorskip("highspy")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from corels_relaxation import order_free_bound, prefix_lift  # noqa: E402


def _relaxation(X: np.ndarray, y: np.ndarray, lam: float) -> tuple[float, float]:
    """(the relaxation's proved bound over both defaults, Theorem 20's bound) on X's units."""
    bits = bitset.pack_rows(np.ascontiguousarray(X.T.astype(np.uint8)))
    units = engine.make_units(bits, y, 2)
    cover = bitset.unpack_rows(units.caps, units.n_units).astype(bool)
    counts = np.asarray(units.counts)
    bound = min(order_free_bound(cover, counts, lam, d, time_limit=20).dual_bound for d in (0, 1))
    return bound, counts.min(axis=1).sum() / counts.sum()


def _instance(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    n, M = int(rng.integers(6, 16)), int(rng.integers(2, 6))
    X = (rng.random((n, M)) < rng.uniform(0.2, 0.8)).astype(np.uint8)
    X[: n // 3] = X[n // 3 : 2 * (n // 3)]  # repeated rows: units of mixed labels
    y = (rng.random(n) < rng.uniform(0.2, 0.6)).astype(np.int64)
    return X, y, float(rng.choice([0.0, 0.02, 0.05, 0.1]))


def test_relaxation_is_a_valid_bound_at_least_theorem_20() -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        X, y, lam = _instance(rng)
        optimum, _ = brute_force(X, y, lam)
        bound, minority = _relaxation(X, y, lam)
        assert minority - 1e-9 <= bound <= optimum + 1e-9


def test_complementary_pairs_cap_the_relaxation_at_theorem_20_plus_four_rules() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        X, y, lam = _instance(rng)
        X = np.hstack([X, 1 - X[:, :2]])  # two antecedents and their negations
        bound, minority = _relaxation(X, y, lam)
        assert bound <= minority + 4 * lam + 1e-9


def test_relaxation_below_a_prefix_bounds_every_extension() -> None:
    rng = np.random.default_rng(5)
    for _ in range(30):
        X, y, lam = _instance(rng)
        counts = np.stack([(y == 0), (y == 1)], axis=1).astype(np.int64)
        prefix = [int(a) for a in rng.choice(X.shape[1], int(rng.integers(1, 3)), replace=False)]
        r = prefix_lift(X.T.astype(bool), counts, lam, prefix, time_limit=20)
        rest = ~X[:, prefix].any(axis=1)
        if not rest.any():
            continue
        # every extension: the prefix's b, then the best list on the rest (lambda scaled to the rest's weight)
        best_rest, _ = brute_force(X[rest], y[rest], lam * len(y) / rest.sum())
        assert r["b0"] - 1e-9 <= r["relaxation"] <= best_rest * rest.sum() / len(y) + 1e-9
