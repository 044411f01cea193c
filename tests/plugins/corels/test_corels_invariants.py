"""The structural invariants of specification §9.1, checked on the compiled search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from corels_reference import audit_live_figures, brute_force, random_instance
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels.search import engine
from grids import covering_grid


def _search(X, y, lam, C=2, **kw):
    units = engine.make_units(
        bitset.pack_columns(np.asarray(X, np.uint8)), np.asarray(y), C, compress=kw.pop("compress", True)
    )
    return engine.make_search(units, lam, **kw)


def _solve(X, y, lam, **kw):
    s = _search(X, y, lam, **kw)
    assert engine.run_to_end(s) == ccorels.DONE
    return s


def test_empty_list_and_global_minority_bound() -> None:
    """Item 1: b(()) = 0, R = minority fraction, default = majority, sum theta <= R*."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        X, y = random_instance(rng)
        s = _search(X, y, 0.01)
        ev = s.evaluate([])
        assert ev["b"] == 0.0
        n1 = int(y.sum())
        assert ev["objective"] == pytest.approx(min(n1, len(y) - n1) / len(y))
        assert ev["default"] == (1 if n1 >= len(y) - n1 else 0)
        assert engine.run_to_end(s) == ccorels.DONE
        assert ev["b0"] <= s.objective + 1e-12


def _scratch(X, y, prefix, lam):
    """Direct recomputation of b, b0, R (no incremental state)."""
    n = len(y)
    rows = {tuple(r) for r in X}
    open_ = np.ones(n, bool)
    err = 0
    for j in prefix:
        cap = open_ & (X[:, j] == 1)
        k1 = int(y[cap].sum())
        err += min(k1, int(cap.sum()) - k1)
        open_ &= X[:, j] == 0
    k1 = int(y[open_].sum())
    default_err = min(k1, int(open_.sum()) - k1)
    b0 = 0
    for r in rows:
        same = np.all(X == np.asarray(r), axis=1)
        majority = 1 if 2 * int(y[same].sum()) >= int(same.sum()) else 0  # ties: higher label
        b0 += int((same & open_ & (y != majority)).sum())
    return (err / n + lam * len(prefix), b0 / n, (err + default_err) / n + lam * len(prefix))


def test_incremental_bounds_equal_scratch_and_are_hierarchical() -> None:
    """Items 2-4: incremental b, b0, R match scratch values; b and b + b0 grow by >= lambda."""
    rng = np.random.default_rng(5)
    lam = 0.02
    for _ in range(15):
        X, y = random_instance(rng, max_m=5)
        s = _search(X, y, lam)
        M = X.shape[1]
        for k in range(0, min(M, 3) + 1):
            for prefix in itertools.permutations(range(M), k):
                ev = s.evaluate(list(prefix))
                b, b0, R = _scratch(X, y, prefix, lam)
                assert ev["b"] == pytest.approx(b, abs=1e-12)
                assert ev["b0"] == pytest.approx(b0, abs=1e-12)
                assert ev["objective"] == pytest.approx(R, abs=1e-12)
                assert R >= ev["b"] + ev["b0"] - 1e-12  # item 3
                for j in range(M):
                    if j in prefix:
                        continue
                    child = s.evaluate(list(prefix) + [j])
                    assert child["b"] >= ev["b"] + lam - 1e-12  # item 2
                    assert child["b"] + child["b0"] >= ev["b"] + ev["b0"] + lam - 1e-12
                    assert child["b0"] <= ev["b0"] + 1e-12


def test_permutations_keep_captured_set_and_default() -> None:
    """Item 5: a permuted prefix has the same default error and b0; same labels -> same R."""
    rng = np.random.default_rng(9)
    for _ in range(15):
        X, y = random_instance(rng, max_m=5)
        s = _search(X, y, 0.01)
        M = X.shape[1]
        for prefix in itertools.permutations(range(M), min(3, M)):
            ev = s.evaluate(list(prefix))
            for perm in itertools.permutations(prefix):
                other = s.evaluate(list(perm))
                assert other["b0"] == pytest.approx(ev["b0"], abs=1e-12)
                assert other["captured"] == pytest.approx(ev["captured"], abs=1e-12)
                assert (other["objective"] - other["b"]) == pytest.approx(ev["objective"] - ev["b"], abs=1e-12)
                if len(set(ev["rule_labels"] + other["rule_labels"])) == 1:
                    assert other["objective"] == pytest.approx(ev["objective"], abs=1e-12)


def test_optimal_rules_satisfy_the_support_bounds_and_length_bound() -> None:
    """Items 6 and 7: Theorems 10, 11, 21 on every rule; length <= floor(R(empty)/lambda), <= M."""
    rng = np.random.default_rng(13)
    for _ in range(25):
        X, y = random_instance(rng)
        lam = float(rng.choice([0.005, 0.01, 0.05]))
        s = _solve(X, y, lam)
        n = len(y)
        open_ = np.ones(n, bool)
        prefix = s.best_prefix
        for j in prefix:
            cap = open_ & (X[:, j] == 1)
            k1 = int(y[cap].sum())
            correct = max(k1, int(cap.sum()) - k1)
            assert cap.sum() / n >= lam - 1e-12
            assert correct / n >= lam - 1e-12
            assert cap.sum() / n <= open_.sum() / n - lam + 1e-12
            open_ &= ~cap
        empty = s.evaluate([])["objective"]
        assert len(prefix) <= min(int(np.floor(empty / lam + 1e-9)), X.shape[1])


def test_large_lambda_keeps_the_empty_list() -> None:
    """Item 9: lambda >= R(empty) makes the empty list optimal (strict improvement only)."""
    rng = np.random.default_rng(17)
    for _ in range(10):
        X, y = random_instance(rng)
        empty = _search(X, y, 0.0).evaluate([])["objective"]
        s = _solve(X, y, empty)
        assert s.best_prefix == []
        assert s.objective == pytest.approx(empty)


def test_perfect_antecedent_gives_lambda() -> None:
    """Item 10: an antecedent equal to the positive label gives R* = lambda, one rule."""
    rng = np.random.default_rng(19)
    n = 200
    y = (rng.random(n) < 0.4).astype(np.int64)
    X = (rng.random((n, 5)) < 0.5).astype(np.uint8)
    X[:, 3] = y
    lam = 0.01
    for policy in engine.POLICIES:
        s = _solve(X, y, lam, policy=policy)
        assert s.objective == pytest.approx(lam)
        assert s.best_prefix == [3]
        ev = s.evaluate([3])
        assert ev["rule_labels"] == [1] and ev["default"] == 0


def lookahead_counterexample() -> tuple[np.ndarray, np.ndarray]:
    """§8 item 1: 60 negatives, 40 positives; s holds on all 40 positives and 30 negatives."""
    y = np.array([0] * 60 + [1] * 40, dtype=np.int64)
    s = np.zeros(100, np.uint8)
    s[30:] = 1
    return s[:, None], y


@pytest.mark.parametrize("smap", engine.SYMMETRY_MAPS)
@pytest.mark.parametrize("policy", engine.POLICIES)
def test_lookahead_counterexample(policy: str, smap: str) -> None:
    """Item 11: R* = 0.35 with (s -> 1; else 0); 0.40 would be the lookahead-before-scoring bug."""
    X, y = lookahead_counterexample()
    s = _solve(X, y, 0.05, policy=policy, symmetry_map=smap)
    assert s.objective == pytest.approx(0.35)
    assert s.best_prefix == [0]
    ev = s.evaluate([0])
    assert ev["rule_labels"] == [1] and ev["default"] == 0
    assert brute_force(X, y, 0.05)[0] == pytest.approx(0.35)


def test_duplicate_antecedent_changes_nothing_and_is_pruned_by_captured_map() -> None:
    """Item 12: a duplicated vector never changes R*; the captured map prunes the copy."""
    rng = np.random.default_rng(23)
    for _ in range(10):
        X, y = random_instance(rng, max_m=5)
        Xd = np.hstack([X, X[:, :1]])
        a = _solve(X, y, 0.01)
        b = _solve(Xd, y, 0.01, symmetry_map="captured")
        assert a.objective == pytest.approx(b.objective, abs=1e-12)
    X = (rng.random((300, 6)) < 0.4).astype(np.uint8)
    y = (X[:, 0] | X[:, 1]).astype(np.int64) ^ (rng.random(300) < 0.1)
    Xd = np.hstack([X, X])
    s = _solve(Xd, y, 0.005, symmetry_map="captured")
    assert s.counters()["pruned_map"] > 0


def test_certified_queue_empty_and_interrupted_bounds_bracket_the_optimum() -> None:
    """Item 13: a certified run ends with an empty queue; a stopped one has LB <= R* <= R^c."""
    rng = np.random.default_rng(29)
    X = (rng.random((500, 14)) < 0.3).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | X[:, 2] | (X[:, 3] & ~X[:, 4] & 1)).astype(np.int64)
    y ^= (rng.random(500) < 0.25).astype(np.int64)
    full = _solve(X, y, 0.002)
    assert full.queue_size == 0 and full.trie_size == 0
    optimum = full.objective
    stopped_some = False
    for policy in engine.POLICIES:
        for budget in (50, 500, 5000):
            s = _search(X, y, 0.002, policy=policy)
            code = engine.run_to_end(s, max_evaluations=budget)
            lb = s.lower_bound()
            assert lb <= optimum + 1e-12
            assert s.objective >= optimum - 1e-12
            if code == ccorels.NODE_LIMIT:
                stopped_some = True
                assert s.n_evaluated >= budget
    assert stopped_some


def test_stop_flag_is_polled() -> None:
    rng = np.random.default_rng(31)
    X = (rng.random((500, 14)) < 0.3).astype(np.uint8)
    y = (rng.random(500) < 0.5).astype(np.int64)
    s = _search(X, y, 0.0005)
    flag = np.ones(1, dtype=np.uint8)
    assert s.run(10.0, flag, -1) == ccorels.STOPPED
    assert s.n_evaluated == 0


@pytest.mark.parametrize(
    ("M", "K", "expected"), [(100, 5, 9.1296e9), (122, 5, 2.5087e10), (122, 10, 5.0459e20), (1000, 10, 9.5683e29)]
)
def test_remaining_search_space_matches_the_counting_oracles(M: int, K: int, expected: float) -> None:
    """§9.2: a lone root with f = K gives Proposition 8's count sum_{k<=K} P(M, k)."""
    assert engine.log10_remaining({(0, K): 1}, M) == pytest.approx(np.log10(expected), abs=1e-4)
    # two queued prefixes of length 1 count twice the (M-1, K-1) sum
    two = engine.log10_remaining({(1, K - 1): 2}, M)
    direct = sum(np.prod(np.arange(M - 1, M - 1 - k, -1, dtype=float)) for k in range(K))
    assert two == pytest.approx(np.log10(2 * direct), abs=1e-9)


def test_progress_summary_reports_live_queue() -> None:
    rng = np.random.default_rng(37)
    X = (rng.random((400, 12)) < 0.3).astype(np.uint8)
    y = (rng.random(400) < 0.5).astype(np.int64)
    s = _search(X, y, 0.002)
    engine.run_to_end(s, max_evaluations=3000)
    lengths, pairs = s.queue_summary()
    assert sum(lengths.values()) == sum(pairs.values()) > 0
    assert all(L >= 1 for L in lengths)
    assert np.isfinite(engine.log10_remaining(pairs, X.shape[1]))


@pytest.mark.parametrize(
    "policy, smap",
    covering_grid(  # every policy and every map by default, without a map on the quick dfs
        [engine.POLICIES, engine.SYMMETRY_MAPS],
        edges=[
            ("dfs", "none"),
            ("lower_bound", "prefix"),
            ("bfs", "captured"),
            ("curiosity", "prefix"),
            ("objective", "captured"),
        ],
        strength=1,
    ),
)
def test_incremental_progress_figures_equal_a_full_scan(policy: str, smap: str) -> None:
    """The lower bound and both histograms, kept as entries come and go, equal a heap scan."""
    rng = np.random.default_rng(41)
    for trial in range(4):
        X = (rng.random((300, 12)) < rng.uniform(0.15, 0.45)).astype(np.uint8)
        y = ((X[:, 0] & X[:, 1]) | X[:, 2]).astype(np.int64) ^ (rng.random(300) < 0.3)
        ablation = {"garbage_collection": False} if trial == 3 else None
        s = _search(X, y.astype(np.int64), 0.002, policy=policy, symmetry_map=smap, ablation=ablation)
        audit_live_figures(s, rng, 20, 400)
