"""RuleSetRegressor / RuleSetClassifier: scikit-learn's estimator checks, real data, and the
same answer as the solver run from a spec."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork import Status
from glasswork.plugins.moss.estimator import RuleSetClassifier, RuleSetRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks


@parametrize_with_checks(
    [RuleSetRegressor(max_rules=3, trees=30, time_limit=10), RuleSetClassifier(max_rules=3, trees=30, time_limit=10)]
)
def test_sklearn_estimator_checks(estimator, check) -> None:
    check(estimator)


def test_diabetes_rule_set_is_certified_and_stable() -> None:
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    reg = RuleSetRegressor(max_rules=5).fit(X, y)
    assert reg.certificate_.status is Status.OPTIMAL and reg.certificate_.gap == pytest.approx(0, abs=1e-6)
    assert reg.model_.size <= 5 and reg.score(X, y) > 0.35
    assert reg.stats_["candidates"] > 10


def test_breast_cancer_classifier_predicts_its_labels() -> None:
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    labels = np.array(data.target_names)[data.target]  # string labels
    clf = RuleSetClassifier(max_rules=4).fit(data.data, labels)
    assert set(clf.predict(data.data)) <= set(data.target_names) and clf.score(data.data, labels) > 0.85
    proba = clf.predict_proba(data.data)
    assert np.allclose(proba.sum(axis=1), 1)
    assert np.array_equal(clf.predict(data.data), clf.classes_[(proba[:, 1] > 0.5).astype(int)])


def test_dataframe_column_names_name_the_rules() -> None:
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import load_diabetes

    bunch = load_diabetes(as_frame=True)
    reg = RuleSetRegressor(max_rules=3, trees=50).fit(bunch.data, bunch.target)
    assert list(reg.feature_names_in_) == list(bunch.data.columns)
    assert any(name in reg.to_text() for name in ("bmi", "s5", "bp")) and "x2" not in reg.to_text()
    assert isinstance(bunch.data, pd.DataFrame)


def test_a_user_mistake_is_a_value_error_with_the_fix() -> None:
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    with pytest.raises(ValueError, match="min_stability"):
        RuleSetRegressor(max_rules=2, trees=20, min_stability=5.0).fit(X, y)
