"""Formula-level oracles of specification §6.1 (cards, multiplier grid, complements, reduction)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from glasswork.plugins.fasterrisk.engine import Constraints, Engine, Settings, multiplier_grid
from glasswork.plugins.fasterrisk.model import ScoreCard, expected_calibration_error, reliability


def card(points, intercept, multiplier, names=None, **kw) -> ScoreCard:
    names = names or [f"f{j}" for j in range(len(points))]
    return ScoreCard(
        features=names,
        columns=list(range(len(points))),
        points=points,
        intercept=intercept,
        multiplier=multiplier,
        **kw,
    )


@pytest.mark.parametrize(
    "w0,m,score,risk",
    [
        (-2, 3.278, -7, 6.0),  # Fig. 1 (mammo)
        (-2, 3.278, 2, 50.0),
        (-2, 3.278, 4, 64.8),
        (-3, 1.585, 4, 65.3),  # adult Table 3
        (-3, 3.064, 12, 95.0),  # FICO Table 30
        (-3, 1.6009213, 7, 92.4),  # adult reference card (§6.3)
        (-3, 1.6009213, -8, 0.1),
        (4, 0.97368, -8, 1.62),  # mushroom Table 1(b), shrink-grid multiplier
    ],
)
def test_score_to_risk_table(w0, m, score, risk):
    c = card([1], w0, m)
    decimals = 2 if risk == 1.62 else 1
    assert round(100 * float(c.risk(score)), decimals) == pytest.approx(risk, abs=0.1 if decimals == 1 else 0.01)


@pytest.mark.parametrize("w0,m", [(-2, 3.278), (7, 1.718), (-75, 8.48), (0, 0.5)])
def test_score_minus_intercept_is_fifty_percent(w0, m):
    assert float(card([2, -3], w0, m).risk(-w0)) == 0.5


def test_multiplier_grid_shrink_case_is_the_papers():
    grid = multiplier_grid(1.0, 20)
    assert np.allclose(grid, [1 - 0.5 * i / 19 for i in range(20)])
    # mushroom/spambase cards show the 2nd-4th points of the shrink grid
    assert np.allclose(grid[1:4], [0.97368, 0.94737, 0.92105], atol=1e-5)


def test_multiplier_grid_reaches_the_box_exactly(binary_data):
    X, y = binary_data
    eng = Engine(X, y, None, Settings.preset("paper", k=3))
    w = np.zeros(12)
    w[[0, 3, 7]] = [1.2, -2.5, 0.8]
    grid = eng.multiplier_grid(w, -0.3)
    assert grid.size == 20 and grid[0] == 1.0
    assert np.max(np.abs(grid[-1] * w)) == pytest.approx(5.0)
    w[3] = -5.0  # a coefficient at the bound: shrink
    assert np.allclose(eng.multiplier_grid(w, -0.3), multiplier_grid(1.0, 20))
    # sign-aware per-feature bounds: [0, 2] caps the positive coefficient
    cons = Constraints.box(12)
    cons.upper[0] = 2
    eng = Engine(X, y, None, Settings.preset("paper", k=3), cons)
    w[3] = -2.5
    assert eng.multiplier_grid(w, -0.3)[-1] == pytest.approx(2 / 1.2)
    # the reference code also caps |m w0| at 100
    eng = Engine(X, y, None, Settings.preset("reference", k=3))
    assert eng.multiplier_grid(np.full(12, 1e-3), 50.0)[-1] == pytest.approx(2.0)


def test_intercept_only_start_is_the_null_loss(binary_data):
    X, y = binary_data
    eng = Engine(X, y, None, Settings.preset("paper", k=3))
    start = eng.initial()
    pos, n = (y > 0).sum(), y.size
    assert start.w[0] == pytest.approx(np.log(pos / (n - pos)))
    entropy = -(pos / n) * np.log(pos / n) - (1 - pos / n) * np.log(1 - pos / n)
    assert start.loss == pytest.approx(n * entropy)


def test_complement_feature_leaves_risks_and_loss_unchanged(binary_data):
    X, y = binary_data
    a = card([3, -2], -1, 1.7)
    Xc = X[:, :2].copy()
    Xc[:, 1] = 1 - Xc[:, 1]  # x -> 1 - x
    b = card([3, 2], -1 - 2, 1.7)  # negated points, intercept shifted by the old points
    assert np.allclose(a.predict_proba(X[:, :2]), b.predict_proba(Xc))
    assert a.logistic_loss(X[:, :2], y) == pytest.approx(b.logistic_loss(Xc, y))


def test_gcd_reduction_keeps_every_risk():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (50, 3)).astype(float)
    # Table 67 (mushroom, from Table 6): -5, -5, -5 with w0 = 3, m = 0.947
    before = card([-5, -5, -5], 3, 0.947)
    after = ScoreCard.from_solution(X, ["a", "b", "c"], [0, 1, 2], [-5, -5, -5], 3, 0.947)
    assert after.points == [-1, -1, -1] and after.reduced_by == 5
    assert np.allclose(before.predict_proba(X), after.predict_proba(X))
    assert round(100 * float(after.risk(-1)), 1) == 10.8 and round(100 * float(after.risk(0)), 1) == 96.0
    # Table 68 (COMPAS, from Table 7): -4, -4, +4, w0 = 3, m = 4.248
    compas = ScoreCard.from_solution(X, ["a", "b", "c"], [0, 1, 2], [-4, -4, 4], 3, 4.248)
    risks = [round(100 * float(compas.risk(s)), 1) for s in (-2, -1, 0, 1)]
    assert risks == [23.6, 44.1, 67.0, 83.9]
    kept = ScoreCard.from_solution(X, ["a", "b", "c"], [0, 1, 2], [-4, -4, 4], 3, 4.248, reduce_points=False)
    assert kept.points == [-4, -4, 4] and np.allclose(kept.predict_proba(X), compas.predict_proba(X))


def test_g2_reencoding_keeps_the_table():
    # Table 69 -> 70: two overlapping indicators become three exclusive ones
    rng = np.random.default_rng(1)
    prev = rng.integers(0, 30, 200)
    old = np.column_stack([(prev <= 10) | (prev > 20), prev <= 20]).astype(float)
    new = np.column_stack([prev <= 10, (prev > 10) & (prev <= 20), prev > 20]).astype(float)
    a = card([-3, -5], 7, 1.718)
    b = card([-8, -5, -3], 7, 1.718)
    assert np.allclose(a.predict_proba(old), b.predict_proba(new))


def test_auc_depends_only_on_points(binary_data):
    from glasswork.running.metrics import roc_auc

    X, y = binary_data
    y01 = (y > 0).astype(int)
    scores = [
        roc_auc(y01, card([2, -3, 1], w0, m).predict_proba(X[:, [0, 3, 7]])[:, 1])
        for w0, m in [(-1, 1.0), (4, 0.6), (-7, 3.3)]
    ]
    assert scores[0] == pytest.approx(scores[1]) == pytest.approx(scores[2])


def test_card_text_dict_and_round_trip():
    c = card(
        [-4, -2, -2, 3, 4],
        -3,
        1.6009213,
        names=["NoHS", "HSDiploma", "Age_22_to_29", "AnyCapitalGains", "Married"],
        classes=[-1, 1],
    )
    text = c.to_text()
    assert "NoHS" in text and "SCORE |" in text and "RISK  |" in text and "50.0%" in text
    assert text.count("points") == 5
    d = c.to_dict()
    json.dumps(d)
    assert d["kind"] == "score_card" and d["points"] == [-4, -2, -2, 3, 4]
    scores = [row["score"] for row in d["table"]]
    assert scores == [-8, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7]  # the §6.3 card's rows
    back = ScoreCard.from_dict(d)
    X = np.random.default_rng(0).integers(0, 2, (20, 5)).astype(float)
    assert np.allclose(back.predict_proba(X), c.predict_proba(X))
    assert np.array_equal(back.predict(X), c.predict(X))


def test_real_valued_features_use_score_quantiles():
    rng = np.random.default_rng(4)
    X = rng.integers(1, 11, (300, 2)).astype(float)
    c = ScoreCard.from_solution(X, ["Clump", "Size"], [0, 1], [3, 5], -30, 4.0)
    assert c.binary == [False, False] and 2 <= len(c.scores) <= 20
    assert "Clump x" in c.to_text()


def test_reliability_table_and_ece():
    y = np.array([0, 0, 1, 1, 1, 0])
    p = np.array([0.1, 0.15, 0.9, 0.95, 0.5, 0.5])
    table = reliability(y, p, bins=5)
    assert sum(r["count"] for r in table) == 6
    assert [r["observed"] for r in table] == [0.0, 0.5, 1.0]
    assert expected_calibration_error(table) == pytest.approx((2 * 0.125 + 0 + 2 * 0.075) / 6)


def test_reliability_equals_calibration_curve_and_honours_weights():
    """Unit weights: sklearn's calibration_curve, bin for bin; integer weights: the table of the
    rows repeated that many times. (A probability exactly on an inner edge goes to the lower bin,
    as in scikit-learn 1.9; older releases put it in the upper one, so the comparison avoids them.)"""
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(size=200), [0.0, 1.0]])
    y = (rng.uniform(size=p.size) < p).astype(int)
    table = reliability(y, p, bins=5)
    observed, predicted = calibration_curve(y, p, n_bins=5)
    np.testing.assert_allclose([r["observed"] for r in table], observed)
    np.testing.assert_allclose([r["mean_predicted"] for r in table], predicted)
    assert [r["count"] for r in reliability([0, 1], [0.2, 0.2000001], bins=5)] == [1, 1]
    p = np.concatenate([p, [0.2, 0.4, 0.6, 0.8]])
    y = np.concatenate([y, [0, 1, 0, 1]])
    w = rng.integers(0, 4, size=p.size)
    weighted = reliability(y, p, bins=5, sample_weight=w)
    repeated = reliability(np.repeat(y, w), np.repeat(p, w), bins=5)
    for a, b in zip(weighted, repeated, strict=True):
        assert a["weight"] == b["count"]
        assert a["observed"] == pytest.approx(b["observed"])
        assert a["mean_predicted"] == pytest.approx(b["mean_predicted"])
    assert expected_calibration_error(weighted) == pytest.approx(expected_calibration_error(repeated))
