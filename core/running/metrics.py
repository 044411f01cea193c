"""Model quality figures the runner attaches to every result (train and, when held out, test).

Plain NumPy, computed as ``sklearn.metrics`` computes them (tests/running/test_metrics.py compares them on
random inputs with ties, constant predictions and single-class targets), so ``glasswork run``
does not pay scikit-learn's import time (about 1.4 s) for six formulas. Every figure honours the
rows' weights (``data.weights``): a row of weight 2 counts as two rows. Where scikit-learn would
raise or return a conventional number on degenerate input (a single class for AUC, a constant
target for R²), the figure here is NaN.
"""

from __future__ import annotations

import math

import numpy as np
from glasswork.contract.model import Classifier, Model


def _weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)


def accuracy(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Weighted share of rows predicted right (``accuracy_score``)."""
    y, pred = np.asarray(y), np.asarray(pred)
    if not y.size:
        return float("nan")
    return float(np.average(y == pred, weights=_weights(sample_weight, y.size)))


def roc_auc(y: np.ndarray, score: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Area under the ROC curve, tied scores counting half (``roc_auc_score``'s trapezoids over
    the distinct thresholds); NaN when only one class has weight."""
    y = np.asarray(y).astype(bool)
    score = np.asarray(score, dtype=np.float64)
    w = _weights(sample_weight, y.size)
    order = np.argsort(-score, kind="mergesort")
    score, y, w = score[order], y[order], w[order]
    tps = np.cumsum(w * y)
    fps = np.cumsum(w * ~y)
    last = np.r_[np.flatnonzero(np.diff(score)), y.size - 1]  # the end of each run of equal scores
    tps, fps = np.r_[0.0, tps[last]], np.r_[0.0, fps[last]]
    if tps[-1] <= 0 or fps[-1] <= 0:
        return float("nan")
    area = float(np.sum(np.diff(fps) * (tps[1:] + tps[:-1])) / 2)
    return area / float(tps[-1] * fps[-1])


def log_loss(y: np.ndarray, proba: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Mean negative log-likelihood of encoded labels ``y`` (``0..K-1``) under ``(n, K)``
    probabilities, clipped to ``[eps, 1 - eps]`` (float64's eps) as ``log_loss`` does."""
    proba = np.asarray(proba, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    eps = np.finfo(np.float64).eps
    p = np.clip(proba[np.arange(y.size), y], eps, 1 - eps)
    return float(np.average(-np.log(p), weights=_weights(sample_weight, y.size)))


def brier(y: np.ndarray, p_positive: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Weighted mean squared difference between the 0/1 label and the positive class's probability."""
    y = (np.asarray(y, dtype=np.int64) == 1).astype(np.float64)
    diff = y - np.asarray(p_positive, dtype=np.float64)
    return float(np.average(diff * diff, weights=_weights(sample_weight, y.size)))


def r2(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """R²; NaN for a constant target (sklearn would report 1.0 or 0.0 there, a meaningless figure)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < 2 or np.all(y == y[0]):
        return float("nan")
    w = _weights(sample_weight, y.size)
    residual = float(np.sum(w * (y - np.asarray(pred, dtype=np.float64)) ** 2))
    total = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
    return float("nan") if total == 0 else 1.0 - residual / total


def rmse(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Root of the weighted mean squared error."""
    diff = np.asarray(y, dtype=np.float64) - np.asarray(pred, dtype=np.float64)
    return math.sqrt(float(np.average(diff * diff, weights=_weights(sample_weight, diff.size))))


def evaluate(
    model: Model, X: np.ndarray, y: np.ndarray, prefix: str, sample_weight: np.ndarray | None = None
) -> dict[str, float]:
    """The standard figures for ``model`` on ``(X, y)``, keys prefixed (``train_``, ``test_``)."""
    if y.size == 0 or (sample_weight is not None and not np.any(np.asarray(sample_weight) > 0)):
        return {}  # no rows, or none that counts: no figure to report
    pred = np.asarray(model.predict(X))
    proba = np.asarray(model.predict_proba(X), dtype=np.float64) if isinstance(model, Classifier) else None
    return of_predictions(model.task, y, pred, proba, prefix, sample_weight)


def of_predictions(
    task: str,
    y: np.ndarray,
    pred: np.ndarray,
    proba: np.ndarray | None,
    prefix: str,
    sample_weight: np.ndarray | None = None,
) -> dict[str, float]:
    """The figures of ``evaluate`` from predictions already made (``proba`` ``None`` for a model
    without probabilities): what a Rashomon set's members are scored by, each predicted once."""
    out: dict[str, float] = {}
    if y.size == 0 or (sample_weight is not None and not np.any(np.asarray(sample_weight) > 0)):
        return out
    w = sample_weight
    if task == "regression":
        out[f"{prefix}r2"] = r2(y, pred.astype(np.float64), w)
        out[f"{prefix}rmse"] = rmse(y, pred.astype(np.float64), w)
        return out
    out[f"{prefix}accuracy"] = accuracy(y, pred, w)
    if proba is not None:
        out[f"{prefix}log_loss"] = log_loss(y, proba, w)
        if proba.shape[1] == 2:
            out[f"{prefix}auc"] = roc_auc(y, proba[:, 1], w)
            out[f"{prefix}brier"] = brier(y, proba[:, 1], w)
    return out
