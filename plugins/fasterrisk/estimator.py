"""``RiskScoreClassifier``: FasterRisk as a scikit-learn estimator (binary targets only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from glasswork.data.binarize import Binarizer, estimator_columns, has_text
from glasswork.data.spec import BinarizeSpec
from glasswork.plugins.fasterrisk.engine import Constraints, Engine, Preset, Settings
from glasswork.plugins.fasterrisk.model import ScoreCard
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

# the estimator's parameters that are the spec's ``search:`` knobs, by the same names
SEARCH_KNOBS = ("beam_width", "pool_gap", "swap_attempts", "multipliers", "pool_size", "reduce_points")


@dataclass(eq=False, repr=False)  # its fields are its parameters: scikit-learn reads them from the __init__ written
class RiskScoreClassifier(ClassifierMixin, BaseEstimator):
    """A sparse integer risk score card fitted by FasterRisk.

    ``k`` non-zero points in ``[lower, upper]``; the other arguments are the ``search:`` knobs
    of the spec (``None`` takes them from ``defaults``). After ``fit``: ``card_`` (the best
    ``ScoreCard``), ``pool_`` (all cards, best first) and ``classes_``.
    """

    k: int = 5
    lower: int = -5
    upper: int = 5
    defaults: Preset = "paper"
    beam_width: int | None = None
    pool_gap: float | None = None
    swap_attempts: int | None = None
    multipliers: int | None = None
    pool_size: int | None = None
    reduce_points: bool = True
    feature_names: list[str] | None = None

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RiskScoreClassifier:
        columns, y = estimator_columns(self, X, y, reset=True)
        # a DataFrame's text columns are one-hot encoded, numbers kept (a spec's default binarize:)
        self.binarizer_ = (
            Binarizer(BinarizeSpec(numeric="keep")).fit(columns, list(columns)) if has_text(columns) else None
        )
        encoded, X = self._encoded(columns)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2 or type_of_target(y) != "binary":
            raise ValueError(
                f"Only binary classification is supported: RiskScoreClassifier got {self.classes_.size} class(es)"
            )
        if not (isinstance(self.k, (int, np.integer)) and self.k >= 1):
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        if not self.lower <= 0 <= self.upper:
            raise ValueError("need lower <= 0 <= upper")
        weights = _check_sample_weight(sample_weight, X)
        signs = np.where(y == self.classes_[1], 1.0, -1.0)
        settings = Settings.preset(self.defaults, k=int(self.k), **{name: getattr(self, name) for name in SEARCH_KNOBS})
        cons = Constraints.box(X.shape[1], int(self.lower), int(self.upper))
        names = list(self.feature_names) if self.feature_names is not None else encoded
        integer, _ = Engine(X, signs, weights, settings, cons).run()
        self.pool_ = ScoreCard.from_pool(X, names, integer, classes=self.classes_, reduce_points=settings.reduce_points)
        self.card_ = self.pool_[0]
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """(score + intercept) / multiplier: the log-odds of ``classes_[1]``."""
        check_is_fitted(self, "card_")
        _, X = self._encoded(estimator_columns(self, X, reset=False)[0])
        return (self.card_.score(X) + self.card_.intercept) / self.card_.multiplier

    def _encoded(self, columns: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
        """The feature names and matrix of ``columns``: through the binarizer when fit saw text."""
        binarizer: Binarizer | None = getattr(self, "binarizer_", None)
        if binarizer is not None:
            names, B = binarizer.transform(columns)
            return list(names), np.asarray(B, dtype=np.float64)
        if not columns:
            return [], np.empty((0, 0))
        return list(columns), np.column_stack([np.asarray(c, dtype=np.float64) for c in columns.values()])

    def predict_proba(self, X: Any) -> np.ndarray:
        d = self.decision_function(X)
        p = np.exp(-np.logaddexp(0.0, -d))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "card_")
        return self.classes_[(self.decision_function(X) > 0).astype(np.int64)]
