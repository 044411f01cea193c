"""``RiskScoreClassifier`` passes scikit-learn's estimator checks and agrees with the engine."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.plugins.fasterrisk import RiskScoreClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks


@parametrize_with_checks([RiskScoreClassifier(k=3)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_fit_predict_on_string_labels():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (400, 8)).astype(float)
    y = np.where(X[:, 2] + X[:, 5] - X[:, 0] + rng.normal(0, 0.5, 400) > 0.5, "sick", "well")
    clf = RiskScoreClassifier(k=3, feature_names=[f"f{j}" for j in range(8)]).fit(X, y)
    assert list(clf.classes_) == ["sick", "well"]
    assert set(clf.predict(X)) <= {"sick", "well"}
    assert clf.score(X, y) > 0.7
    assert clf.card_.size <= 3 and len(clf.pool_) >= 1
    proba = clf.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1)
    assert np.array_equal(clf.predict(X), clf.classes_[(proba[:, 1] > 0.5).astype(int)])
    assert "f" in clf.card_.to_text()


def test_multiclass_is_refused():
    X = np.eye(6)
    with pytest.raises(ValueError, match="Only binary"):
        RiskScoreClassifier().fit(X, [0, 1, 2, 0, 1, 2])


def test_dataframe_column_names_name_the_card():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.integers(0, 2, (300, 4)).astype(float), columns=["age<30", "smoker", "bmi>30", "male"])
    y = (X["smoker"] + X["bmi>30"] + rng.normal(0, 0.3, 300) > 0.8).astype(int)
    clf = RiskScoreClassifier(k=2).fit(X, y)
    assert list(clf.feature_names_in_) == list(X.columns)
    assert "smoker" in clf.card_.to_text() and "x1" not in clf.card_.to_text()


def test_a_dataframe_with_text_columns_one_hot_encodes_them() -> None:
    """Issue 36: a DataFrame with text columns raised "could not convert string to float"."""
    import pandas as pd
    from glasswork.plugins.fasterrisk.estimator import RiskScoreClassifier

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "employment": rng.choice(["salaried", "self-employed", "unemployed"], 300),
            "late_payments": rng.integers(0, 4, 300),
        }
    )
    risky = (frame.employment == "unemployed") | (frame.late_payments >= 3)
    y = np.where(risky ^ (rng.random(300) < 0.05), "yes", "no")
    model = RiskScoreClassifier(k=2).fit(frame, y)
    assert "employment:unemployed" in model.card_.to_text()
    assert (model.predict(frame) == y).mean() > 0.75
    assert model.predict_proba(frame.head(5)).shape == (5, 2)
