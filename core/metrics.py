"""Model quality figures the runner attaches to every result (train and, when held out, test)."""

from __future__ import annotations

import numpy as np

from glasswork.result import Classifier, Model


def accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.mean(y == pred)) if y.size else float("nan")


def roc_auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve by the rank statistic (ties count half); NaN with one class."""
    y = np.asarray(y).astype(bool)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(score.size, dtype=np.float64)
    sorted_scores = score[order]
    # average ranks over tied scores
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def log_loss(y: np.ndarray, proba: np.ndarray, eps: float = 1e-15) -> float:
    """Mean negative log-likelihood of encoded labels ``y`` under ``(n, K)`` probabilities."""
    p = np.clip(proba[np.arange(y.size), y.astype(np.int64)], eps, 1.0)
    return float(-np.mean(np.log(p)))


def brier(y: np.ndarray, p_positive: np.ndarray) -> float:
    return float(np.mean((p_positive - y) ** 2))


def r2(y: np.ndarray, pred: np.ndarray) -> float:
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    ss_res = float(np.sum((y - pred) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


def evaluate(model: Model, X: np.ndarray, y: np.ndarray, prefix: str) -> dict[str, float]:
    """The standard figures for ``model`` on ``(X, y)``, keys prefixed (``train_``, ``test_``)."""
    out: dict[str, float] = {}
    if y.size == 0:
        return out
    pred = np.asarray(model.predict(X))
    if model.task == "regression":
        out[f"{prefix}r2"] = r2(y, pred.astype(np.float64))
        out[f"{prefix}rmse"] = float(np.sqrt(np.mean((y - pred) ** 2)))
        return out
    out[f"{prefix}accuracy"] = accuracy(y, pred)
    if isinstance(model, Classifier):
        proba = np.asarray(model.predict_proba(X), dtype=np.float64)
        out[f"{prefix}log_loss"] = log_loss(y, proba)
        if proba.shape[1] == 2:
            out[f"{prefix}auc"] = roc_auc(y, proba[:, 1])
            out[f"{prefix}brier"] = brier(y, proba[:, 1])
    return out
