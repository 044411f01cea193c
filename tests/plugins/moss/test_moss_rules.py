"""Candidate rules: canonical keys, Pi, merging, readable text and the rule matrix (§7.1 item 13)."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.plugins.moss.rules import Grid, Rule, build_pool, canonical_key, threshold_text


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = 2 * (X[:, 0] > 0) + X[:, 1] + rng.normal(scale=0.3, size=200)
    return X, y, ["age", "income", "c", "d"]


def test_key_ignores_condition_order_and_merges_bounds(data):
    X, _, names = data
    grid = Grid.fit(X, names, 10)
    a = canonical_key([(0, "<=", 5), (1, ">", 2)], grid)
    b = canonical_key([(1, ">", 2), (0, "<=", 5)], grid)
    assert a == b
    assert canonical_key([(0, "<=", 5), (0, "<=", 3)], grid) == ((0, -1, 3),)
    assert canonical_key([(0, "<=", 2), (0, ">", 4)], grid) is None  # empty


def test_rule_text_and_coverage_agree(data):
    X, _, names = data
    grid = Grid.fit(X, names, 10)
    rule = Rule(canonical_key([(0, "<=", 5), (1, ">", 2)], grid), grid)
    t0, t1 = grid.thresholds[0][5], grid.thresholds[1][2]
    assert rule.text == f"age <= {threshold_text(t0)} and income > {threshold_text(t1)}"  # exact, read back
    np.testing.assert_array_equal(rule.covers(X), (X[:, 0] <= t0) & (X[:, 1] > t1))
    np.testing.assert_array_equal(rule.covers(X), rule.covers_bins(grid.transform(X)))


def test_pool_pi_complements_and_key_count(data):
    X, y, names = data
    B = 60
    raw = build_pool(
        X, y, names, trees=B, depth=2, seed=1, merge_equivalent=False, max_rules_pool=None, encoding="indicator"
    )
    assert np.all((raw.pi > 0) & (raw.pi <= 1))
    assert raw.m <= 6 * B
    assert len({r.key for r in raw.rules}) == raw.m
    by_key = {r.key: c for r, c in zip(raw.rules, raw.counts)}
    for r, _count in zip(raw.rules, raw.counts):  # the two children of a root split come together
        if len(r.key) == 1:
            j, lo, hi = r.key[0]
            n_bins = raw.grid.n_bins(j)
            if lo == -1:
                twin = ((j, hi, n_bins - 1),)
                if twin in by_key:
                    assert by_key[twin] >= 1
    merged = build_pool(X, y, names, trees=B, depth=2, seed=1, encoding="sirus")
    cols = {tuple(np.round(merged.M[:, i], 12)) for i in range(merged.m)}
    assert len(cols) == merged.m  # no two rules give the same column


def test_matrix_columns_match_the_encoding(data):
    X, y, names = data
    for encoding in ("indicator", "node_value", "sirus"):
        pool = build_pool(X, y, names, trees=30, seed=2, encoding=encoding)
        cols = pool.columns(X, list(range(pool.m)))
        np.testing.assert_allclose(cols, pool.M, atol=1e-12)
        if encoding == "sirus":
            yc = y - y.mean()
            cover = pool.rules[0].covers(X)
            assert pool.inside[0] == pytest.approx(yc[cover].mean())
            assert pool.outside[0] == pytest.approx(yc[~cover].mean())


def test_cap_keeps_the_most_frequent(data):
    X, y, names = data
    full = build_pool(X, y, names, trees=40, seed=3, max_rules_pool=None)
    capped = build_pool(X, y, names, trees=40, seed=3, max_rules_pool=10)
    assert capped.m == 10
    assert capped.counts.min() >= np.sort(full.counts)[::-1][9]
