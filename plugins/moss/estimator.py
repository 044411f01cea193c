"""``RuleSetRegressor`` and ``RuleSetClassifier``: MOSS as scikit-learn estimators.

Candidate rules come from a forest on the training rows; the rule set is the best one of at most
``max_rules`` rules whose stability reaches the threshold (``min_stability``, or the
``stability_rank``-th value of the epsilon grid), certified by the spec's exact policy or stopped
at ``time_limit`` with its gap (see ``certificate_``). Column names of a DataFrame are kept
(``feature_names_in_``) and name the rules.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal

import numpy as np
from glasswork.contract.solver import Limits, SolveContext
from glasswork.data import Problem
from glasswork.plugins.moss.model import RuleSet
from glasswork.plugins.moss.model import RuleSetClassifier as ClassifierRuleSet
from glasswork.plugins.moss.solver import MossSolver
from glasswork.plugins.moss.spec import MossSpec
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data


@dataclass(eq=False, repr=False)  # its fields are its parameters: scikit-learn reads them from the __init__ written
class _RuleSetEstimator(BaseEstimator):
    """What the regressor and the classifier share: the spec built from the parameters, the solve."""

    max_rules: int = 10
    _: KW_ONLY
    min_stability: float | None = None
    stability_rank: int | None = None
    gamma: float = 1e-3
    trees: int = 200
    depth: int = 2
    quantiles: int = 10
    max_candidates: int = 1000
    encoding: str = "sirus"
    policy: str | None = None
    seed: int = 0
    time_limit: float | None = 60.0

    def _spec(self) -> MossSpec:
        """The ``moss`` spec these parameters stand for (its data come in memory, not from a file)."""
        search: dict[str, Any] = {} if self.policy is None else {"policy": self.policy}
        constraints: dict[str, Any] = {"max_rules": self.max_rules}
        if self.min_stability is not None:
            constraints["min_stability"] = self.min_stability
        if self.stability_rank is not None:
            constraints["stability_rank"] = self.stability_rank
        return MossSpec.model_validate(
            {
                "name": type(self).__name__,
                "solver": "moss",
                "data": {"source": "in-memory", "target": "y"},
                "objective": {
                    "gamma": self.gamma,
                    "encoding": self.encoding,
                    "candidates": {
                        "trees": self.trees,
                        "depth": self.depth,
                        "quantiles": self.quantiles,
                        "max_candidates": self.max_candidates,
                        "seed": self.seed,
                    },
                },
                "constraints": constraints,
                "search": search,
            }
        )

    def _names(self, n: int) -> list[str]:
        return [str(c) for c in getattr(self, "feature_names_in_", [f"x{j}" for j in range(n)])]

    def _solve(
        self, X: np.ndarray, y: np.ndarray, task: Literal["binary", "regression"], classes: np.ndarray | None
    ) -> None:
        if X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples to grow rules; got n_samples = {X.shape[0]}"
            )
        problem = Problem(
            name=type(self).__name__, X=X, y=y, feature_names=self._names(X.shape[1]), task=task, classes=classes
        )
        result = MossSolver(self._spec()).solve(problem, SolveContext(Limits(time=self.time_limit)))
        assert isinstance(result.model, RuleSet)
        self.model_ = result.model
        self.certificate_ = result.certificate
        self.stats_ = result.stats

    def _X(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "model_")
        return validate_data(self, X, dtype=np.float64, reset=False)

    def to_text(self) -> str:
        check_is_fitted(self, "model_")
        return self.model_.to_text()


class RuleSetRegressor(RegressorMixin, _RuleSetEstimator):
    """A stable sparse rule set for a numeric target (MOSS, squared loss).

    After ``fit``: ``model_`` (the ``RuleSet``), ``certificate_`` (status, objective, bound, gap)
    and ``stats_``.
    """

    def fit(self, X: Any, y: Any) -> RuleSetRegressor:
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._solve(X, np.asarray(y, dtype=np.float64), "regression", None)
        return self

    def predict(self, X: Any) -> np.ndarray:
        X = self._X(X)
        model: RuleSet = self.model_
        return np.asarray(model.predict(X), dtype=np.float64)


class RuleSetClassifier(ClassifierMixin, _RuleSetEstimator):
    """A stable sparse rule set for a binary target (MOSS's classification variant: the logistic
    loss, solved by the cutting plane).

    After ``fit``: ``model_``, ``certificate_``, ``stats_`` and ``classes_``.
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X: Any, y: Any) -> RuleSetClassifier:
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if self.classes_.size != 2 or type_of_target(y) != "binary":
            raise ValueError(
                f"Only binary classification is supported: RuleSetClassifier got {self.classes_.size} class(es)"
            )
        self._solve(X, encoded.astype(np.int64), "binary", self.classes_)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        X = self._X(X)
        model = self.model_
        assert isinstance(model, ClassifierRuleSet)  # fit on a binary target made it
        return np.asarray(model.predict_proba(X), dtype=np.float64)

    def predict(self, X: Any) -> np.ndarray:
        X = self._X(X)
        return self.classes_[np.asarray(self.model_.predict(X), dtype=np.int64)]
