"""RuleListClassifier: scikit-learn's estimator checks and a real data set."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork import Status
from glasswork.plugins.corels.estimator import RuleListClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks


@parametrize_with_checks([RuleListClassifier(time_limit=10)])
def test_sklearn_estimator_checks(estimator, check) -> None:
    check(estimator)


def test_breast_cancer_rule_list_is_certified_and_accurate() -> None:
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    labels = np.where(y == 1, "benign", "malignant")
    Xtr, Xte, ytr, yte = train_test_split(X, labels, test_size=0.3, random_state=0, stratify=labels)
    clf = RuleListClassifier(regularization=0.01, thresholds=3).fit(Xtr, ytr)
    assert clf.certificate_.status is Status.OPTIMAL
    assert set(clf.predict(Xte)) <= {"benign", "malignant"}
    assert clf.score(Xte, yte) > 0.85
    assert clf.predict_proba(Xte).shape == (len(yte), 2)
    assert "if ({" in clf.to_text()
    assert clf.get_params(deep=True)["regularization"] == 0.01


def test_integer_weights_equal_repetition() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=80) > 0).astype(int)
    w = rng.integers(0, 3, size=80)
    a = RuleListClassifier(regularization=0.02).fit(X, y, sample_weight=w)
    b = RuleListClassifier(regularization=0.02).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.certificate_.objective == pytest.approx(b.certificate_.objective)
    assert np.array_equal(a.predict(X), b.predict(X))
    with pytest.raises(ValueError, match="integer"):
        RuleListClassifier().fit(X, y, sample_weight=np.full(80, 0.5))


def test_dataframe_column_names_name_the_rules() -> None:
    pytest.importorskip("pandas")
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    clf = RuleListClassifier(regularization=0.02, time_limit=30).fit(bunch.data, bunch.target)
    assert list(clf.feature_names_in_) == list(bunch.data.columns)
    text = clf.to_text()
    assert "worst" in text and "x2" not in text
    assert np.array_equal(clf.predict(bunch.data), clf.predict(bunch.data.to_numpy()))


def test_fitting_the_same_data_twice_gives_the_same_list() -> None:
    """scikit-learn expects a fit to be a function of the data (its check_supervised_y_2d fits
    twice): by default one thread, so ties between equally good lists break the same way."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=30, centers=3, random_state=0)  # the data of that check
    texts = {RuleListClassifier(time_limit=10).fit(X, y).to_text() for _ in range(6)}
    assert len(texts) == 1
    fast = RuleListClassifier(time_limit=10, n_jobs=-1).fit(X, y)
    slow = RuleListClassifier(time_limit=10).fit(X, y)
    assert fast.certificate_.objective == pytest.approx(slow.certificate_.objective)
    with pytest.raises(ValueError, match="n_jobs"):
        RuleListClassifier(n_jobs=0).fit(X, y)


def test_a_dataframe_with_text_columns_is_binarized_as_the_docs_say() -> None:
    """Issue 36: a DataFrame with text columns raised "could not convert string to float"."""
    from glasswork.plugins.corels.estimator import RuleListClassifier
    from loans_table import loans_frame

    frame = loans_frame(300)
    y = frame.pop("default")
    model = RuleListClassifier(regularization=0.01, max_prefix_length=3).fit(frame, y)
    assert any(n.startswith("employment:") for n in model.feature_names_binarized_)
    assert set(model.predict(frame)) <= {"no", "yes"}
    assert model.score(frame, y) > 0.7
