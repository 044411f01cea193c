"""The runner's metrics honour the rows' weights, as scikit-learn computes them."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.running import metrics
from sklearn import metrics as sk


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
    from glasswork.running.launch import Launch

    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 200)
    label = np.where(rng.random(200) < 0.8, a, 1 - a)
    w = np.where(a == label, 1.0, 5.0)  # the rows the stump gets wrong weigh more
    lines = ["a,label,w"] + [f"{i},{j},{k}" for i, j, k in zip(a, label, w)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.yaml").write_text(
        "name: w\nsolver: toy\ndata:\n  source: d.csv\n  target: label\n  weights: w\n"
        "  split: {kind: holdout, test_size: 0.5, seed: 0}\n"
    )
    launch = Launch.from_file(tmp_path / "s.yaml", registry=toy_registry, no_store=True)
    outcome = launch.run()
    problem = launch.problem
    pred = outcome.result.model.predict(problem.X_test)
    expected = sk.accuracy_score(problem.y_test, pred, sample_weight=problem.test_sample_weight)
    assert outcome.result.metrics["test_accuracy"] == pytest.approx(expected)
    assert outcome.result.metrics["test_accuracy"] != pytest.approx(sk.accuracy_score(problem.y_test, pred))


# -- the NumPy figures against scikit-learn's -------------------------------------------------


def _cases(seed: int):
    """Random inputs with many ties, constant predictions, zero weights and single-class slices."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    y = rng.integers(0, 2, n)
    if seed % 5 == 0:
        y[:] = y[0]  # one class only
    kind = seed % 4
    if kind == 0:
        p = rng.random(n)
    elif kind == 1:
        p = rng.integers(0, 4, n) / 3  # many ties, including 0 and 1 exactly
    elif kind == 2:
        p = np.full(n, rng.random())  # a constant prediction
    else:
        p = np.round(rng.random(n), 1)
    w = None if seed % 3 == 0 else rng.integers(0, 4, n).astype(float) + (seed % 2) * rng.random(n)
    if w is not None and not np.any(w > 0):
        w[0] = 1.0
    return y, p, w


@pytest.mark.parametrize("seed", range(60))
def test_classification_figures_equal_scikit_learns(seed: int) -> None:
    y, p, w = _cases(seed)
    pred = (p > 0.5).astype(int)
    proba = np.column_stack([1 - p, p])
    assert metrics.accuracy(y, pred, w) == pytest.approx(sk.accuracy_score(y, pred, sample_weight=w))
    assert metrics.brier(y, p, w) == pytest.approx(sk.brier_score_loss(y, p, sample_weight=w, pos_label=1))
    assert metrics.log_loss(y, proba, w) == pytest.approx(
        sk.log_loss(y, proba, sample_weight=w, labels=[0, 1]), rel=1e-9
    )
    weighted = np.ones(len(y), bool) if w is None else w > 0
    if len(np.unique(y[weighted])) == 2:
        assert metrics.roc_auc(y, p, w) == pytest.approx(sk.roc_auc_score(y, p, sample_weight=w), abs=1e-12)
    else:  # scikit-learn raises "Only one class present"; the runner reports NaN
        assert np.isnan(metrics.roc_auc(y, p, w))


def test_log_loss_clips_certain_mistakes_as_scikit_learn_does() -> None:
    y = np.array([0, 1, 1, 0])
    proba = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    assert metrics.log_loss(y, proba) == pytest.approx(sk.log_loss(y, proba, labels=[0, 1]))
    three = np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 1.0], [0.1, 0.8, 0.1]])
    assert metrics.log_loss(np.array([2, 0, 1]), three) == pytest.approx(
        sk.log_loss([2, 0, 1], three, labels=[0, 1, 2])
    )


@pytest.mark.parametrize("seed", range(20))
def test_regression_figures_equal_scikit_learns(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 50))
    t = rng.normal(size=n) if seed % 4 else rng.integers(0, 3, n).astype(float)
    f = t + rng.normal(scale=0.5, size=n) if seed % 5 else np.full(n, 0.3)
    w = None if seed % 3 == 0 else rng.random(n) + 0.1
    if np.all(t == t[0]):
        assert np.isnan(metrics.r2(t, f, w))  # scikit-learn says 1.0 or 0.0 here; see the module
    else:
        assert metrics.r2(t, f, w) == pytest.approx(sk.r2_score(t, f, sample_weight=w))
    assert metrics.rmse(t, f, w) == pytest.approx(np.sqrt(sk.mean_squared_error(t, f, sample_weight=w)))


def test_metrics_do_not_import_scikit_learn() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\nfrom glasswork.running import metrics\n"
        "y = np.array([0, 1, 1]); p = np.array([0.2, 0.7, 0.4])\n"
        "metrics.roc_auc(y, p); metrics.log_loss(y, np.column_stack([1 - p, p])); metrics.brier(y, p)\n"
        "metrics.r2(p, y); metrics.rmse(p, y); metrics.accuracy(y, y)\n"
        "print('sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
