"""Model quality figures the runner attaches to every result (train and, when held out, test).

Computed with ``sklearn.metrics`` and the rows' weights (``data.weights``), so a weighted problem
is scored as it was fitted: a row of weight 2 counts as two rows.
"""

from __future__ import annotations

import math

import numpy as np

from glasswork.result import Classifier, Model


def accuracy(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(y, pred, sample_weight=sample_weight)) if np.size(y) else float("nan")


def roc_auc(y: np.ndarray, score: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Area under the ROC curve (ties count half); NaN when only one class is present."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y).astype(bool)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, score, sample_weight=sample_weight))


def log_loss(y: np.ndarray, proba: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Mean negative log-likelihood of encoded labels ``y`` (``0..K-1``) under ``(n, K)`` probabilities."""
    from sklearn.metrics import log_loss as sk_log_loss

    proba = np.asarray(proba, dtype=np.float64)
    return float(sk_log_loss(np.asarray(y, dtype=np.int64), proba, sample_weight=sample_weight,
                             labels=list(range(proba.shape[1]))))


def brier(y: np.ndarray, p_positive: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    from sklearn.metrics import brier_score_loss

    return float(brier_score_loss(np.asarray(y, dtype=np.int64), p_positive, sample_weight=sample_weight,
                                  pos_label=1))


def r2(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """R²; NaN for a constant target (sklearn would report a perfect or a meaningless figure)."""
    from sklearn.metrics import r2_score

    y = np.asarray(y, dtype=np.float64)
    if y.size < 2 or np.all(y == y[0]):
        return float("nan")
    return float(r2_score(y, pred, sample_weight=sample_weight))


def rmse(y: np.ndarray, pred: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    from sklearn.metrics import mean_squared_error

    return math.sqrt(float(mean_squared_error(y, pred, sample_weight=sample_weight)))


def evaluate(model: Model, X: np.ndarray, y: np.ndarray, prefix: str,
             sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """The standard figures for ``model`` on ``(X, y)``, keys prefixed (``train_``, ``test_``)."""
    out: dict[str, float] = {}
    if y.size == 0 or (sample_weight is not None and not np.any(np.asarray(sample_weight) > 0)):
        return out  # no rows, or none that counts: no figure to report
    w = sample_weight
    pred = np.asarray(model.predict(X))
    if model.task == "regression":
        out[f"{prefix}r2"] = r2(y, pred.astype(np.float64), w)
        out[f"{prefix}rmse"] = rmse(y, pred.astype(np.float64), w)
        return out
    out[f"{prefix}accuracy"] = accuracy(y, pred, w)
    if isinstance(model, Classifier):
        proba = np.asarray(model.predict_proba(X), dtype=np.float64)
        out[f"{prefix}log_loss"] = log_loss(y, proba, w)
        if proba.shape[1] == 2:
            out[f"{prefix}auc"] = roc_auc(y, proba[:, 1], w)
            out[f"{prefix}brier"] = brier(y, proba[:, 1], w)
    return out
