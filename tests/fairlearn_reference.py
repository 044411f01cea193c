"""fairlearn's figures of the six fairness metrics, the reference the product's own figures
(``glasswork.fairness.figures``) are tested against, shared by the tests that need it."""

from __future__ import annotations

import numpy as np
import pytest

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")


def fairlearn_reference(y, pred, protected, w):
    """fairlearn's between-groups differences of the rates each metric compares (two groups:
    the absolute difference); ``None`` where a group has no weight in the rate's denominator."""
    from sklearn.metrics import precision_score

    def ppv(y_true, y_pred, sample_weight=None):
        if not np.any(np.asarray(sample_weight) > 0):  # scikit-learn refuses a group of weight 0
            return np.nan
        return precision_score(y_true, y_pred, sample_weight=sample_weight, zero_division=np.nan)

    def npv(y_true, y_pred, sample_weight=None):
        return ppv(1 - np.asarray(y_true), 1 - np.asarray(y_pred), sample_weight)

    def weighed(metric):
        def call(y_true, y_pred, sample_weight=None):
            if not np.any(np.asarray(sample_weight) > 0):
                return np.nan
            return metric(y_true, y_pred, sample_weight=sample_weight)

        return call

    frame = fairlearn_metrics.MetricFrame(
        metrics={
            "sr": weighed(fairlearn_metrics.selection_rate),
            "ppv": ppv,
            "npv": npv,
            "fpr": weighed(fairlearn_metrics.false_positive_rate),
            "fnr": weighed(fairlearn_metrics.false_negative_rate),
        },
        y_true=y,
        y_pred=pred,
        sensitive_features=protected.astype(int),
        sample_params={k: {"sample_weight": w} for k in ("sr", "ppv", "npv", "fpr", "fnr")},
    )
    by_group = frame.by_group
    protected_in = protected & (w > 0)
    reference_in = ~protected & (w > 0)

    def defined(rate: str, p_rows: np.ndarray, r_rows: np.ndarray) -> bool:
        return bool(np.any(w[protected_in & p_rows] > 0) and np.any(w[reference_in & r_rows] > 0))

    def diff(rate: str, p_rows: np.ndarray, r_rows: np.ndarray) -> float | None:
        if not defined(rate, p_rows, r_rows):
            return None
        return float(abs(by_group[rate][1] - by_group[rate][0]))

    everyone = np.ones(y.size, dtype=bool)
    pos_pred, neg_pred, pos, neg = pred == 1, pred == 0, y == 1, y == 0
    sp = diff("sr", everyone, everyone)
    pp = diff("ppv", pos_pred, pos_pred)
    pe = diff("fpr", neg, neg)
    eo = diff("fnr", pos, pos)
    npv_gap = diff("npv", neg_pred, neg_pred)
    return {
        "statistical_parity": sp,
        "predictive_parity": pp,
        "predictive_equality": pe,
        "equal_opportunity": eo,
        "equalized_odds": None if pe is None or eo is None else pe + eo,
        "conditional_use_accuracy_equality": None if pp is None or npv_gap is None else pp + npv_gap,
    }
