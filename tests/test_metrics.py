"""The runner's metrics honour the rows' weights, as scikit-learn computes them."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as sk

from glasswork import metrics


def test_a_weight_of_two_counts_as_two_rows() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    p = np.clip(rng.random(50), 0.01, 0.99)
    w = rng.integers(0, 4, 50).astype(float)
    repeated = np.repeat(np.arange(50), w.astype(int))
    proba = np.column_stack([1 - p, p])
    pred = (p > 0.5).astype(int)
    assert metrics.accuracy(y, pred, w) == pytest.approx(metrics.accuracy(y[repeated], pred[repeated]))
    assert metrics.roc_auc(y, p, w) == pytest.approx(metrics.roc_auc(y[repeated], p[repeated]))
    assert metrics.log_loss(y, proba, w) == pytest.approx(metrics.log_loss(y[repeated], proba[repeated]))
    assert metrics.brier(y, p, w) == pytest.approx(metrics.brier(y[repeated], p[repeated]))
    t = rng.normal(size=50)
    f = t + rng.normal(scale=0.5, size=50)
    assert metrics.r2(t, f, w) == pytest.approx(metrics.r2(t[repeated], f[repeated]))
    assert metrics.rmse(t, f, w) == pytest.approx(np.sqrt(sk.mean_squared_error(t[repeated], f[repeated])))
    assert metrics.accuracy(y, pred, w) != pytest.approx(metrics.accuracy(y, pred))  # the weights matter here


def test_degenerate_cases_are_nan_not_errors() -> None:
    assert np.isnan(metrics.roc_auc(np.ones(5), np.linspace(0, 1, 5)))
    assert np.isnan(metrics.r2(np.full(4, 3.0), np.arange(4.0)))


def test_the_runner_scores_test_rows_with_their_weights(tmp_path, toy_registry) -> None:
    from glasswork.launch import Launch

    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 200)
    label = np.where(rng.random(200) < 0.8, a, 1 - a)
    w = np.where(a == label, 1.0, 5.0)  # the rows the stump gets wrong weigh more
    lines = ["a,label,w"] + [f"{i},{j},{k}" for i, j, k in zip(a, label, w)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.yaml").write_text(
        "name: w\nsolver: toy\ndata:\n  source: d.csv\n  target: label\n  weights: w\n"
        "  split: {kind: holdout, test_size: 0.5, seed: 0}\n")
    launch = Launch.from_file(tmp_path / "s.yaml", registry=toy_registry, no_store=True)
    outcome = launch.run()
    problem = launch.problem
    pred = outcome.result.model.predict(problem.X_test)
    expected = sk.accuracy_score(problem.y_test, pred, sample_weight=problem.test_sample_weight)
    assert outcome.result.metrics["test_accuracy"] == pytest.approx(expected)
    assert outcome.result.metrics["test_accuracy"] != pytest.approx(sk.accuracy_score(problem.y_test, pred))
