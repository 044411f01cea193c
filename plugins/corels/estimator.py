"""``RuleListClassifier``: CORELS as a scikit-learn estimator.

Numeric or text columns are binarized on the training rows (thresholds at quantiles, one-hot for
text), antecedents are mined from the 0/1 features, and the rule list is certified (or stopped at
``time_limit`` / ``max_nodes`` with its gap, see ``certificate_``). Integer ``sample_weight`` act as
repetitions of the samples, exactly.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
from glasswork.contract.solver import Limits, SolveContext
from glasswork.data import Problem
from glasswork.data.binarize import Binarizer, estimator_columns
from glasswork.plugins.corels.model import RuleList
from glasswork.plugins.corels.solver import run_corels
from glasswork.plugins.corels.spec import CorelsConstraints, CorelsObjective, CorelsSearch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted


@dataclass(eq=False, repr=False)  # its fields are its parameters: scikit-learn reads them from the __init__ written
class RuleListClassifier(ClassifierMixin, BaseEstimator):
    """A certifiably optimal rule list (CORELS) over binarized features.

    Parameters mirror the ``corels`` spec: ``regularization`` (lambda per rule), ``max_card``,
    ``min_support`` and ``negations`` for mining, ``max_prefix_length``, ``policy``,
    ``symmetry_map``; ``thresholds`` per numeric column for binarizing; ``time_limit`` (seconds)
    and ``max_nodes`` (prefix evaluations) stop the search early with an honest certificate.
    ``n_jobs`` is scikit-learn's: ``None`` (the default) searches on one thread, so fitting the
    same data twice gives the same list; ``-1`` uses every core, and then among equally good
    lists another may be returned (the objective and the certificate are the same).
    """

    regularization: float = 0.01
    _: KW_ONLY
    max_card: int = 1
    min_support: float | None = None
    negations: bool = True
    max_prefix_length: int | None = None
    policy: str = "lower_bound"
    symmetry_map: str = "prefix"
    thresholds: int = 4
    class_weight: dict | str | None = None
    time_limit: float | None = 60.0
    max_nodes: int | None = None
    n_jobs: int | None = None

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RuleListClassifier:
        from glasswork.data.spec import BinarizeSpec

        if self.n_jobs is not None and self.n_jobs != -1 and not (isinstance(self.n_jobs, int) and self.n_jobs >= 1):
            raise ValueError(
                f"n_jobs must be None (one thread), -1 (every core) or a positive count; got {self.n_jobs!r}"
            )
        columns, y = estimator_columns(self, X, y, reset=True)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"RuleListClassifier needs samples of at least 2 classes; got 1 class ({self.classes_[0]!r})"
            )
        if sample_weight is not None:
            # integer weights are repetitions: expand, so binarizing and mining see them too
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.shape != (len(y),):
                raise ValueError(f"sample_weight has shape {w.shape}, expected ({len(y)},)")
            if np.any(w < 0) or np.any(w != np.round(w)):
                raise ValueError("RuleListClassifier takes non-negative integer sample weights")
            if w.sum() <= 0:
                raise ValueError("sample_weight sums to zero: there is nothing to fit")
            columns = {n: np.repeat(c, w.astype(np.int64)) for n, c in columns.items()}
            y_enc = np.repeat(y_enc, w.astype(np.int64))
            if len(np.unique(y_enc)) < 2:
                raise ValueError("the samples with positive weight are of 1 class only")
        names = list(columns)
        self.binarizer_ = Binarizer(BinarizeSpec(thresholds=self.thresholds, negations=False))
        self.binarizer_.fit(columns, names)
        feature_names, B = self.binarizer_.transform(columns)
        cw: Any = self.class_weight
        if isinstance(cw, dict):  # by the estimator's own labels, in class order
            cw = [float(cw.get(c, 1.0)) for c in self.classes_]
        problem = Problem(
            name="estimator",
            X=B,
            y=y_enc.astype(np.int64),
            feature_names=list(feature_names),
            task="binary" if len(self.classes_) == 2 else "multiclass",
            classes=np.asarray(self.classes_),
        )
        ctx = SolveContext(Limits(time=self.time_limit, nodes=self.max_nodes))
        result = run_corels(
            problem,
            CorelsObjective(regularization=self.regularization, class_weight=cw),
            CorelsConstraints(
                max_prefix_length=self.max_prefix_length,
                max_card=self.max_card,
                min_support=self.min_support,
                negations=self.negations,
            ),
            CorelsSearch(
                policy=self.policy,
                symmetry_map=self.symmetry_map,
                threads=1 if self.n_jobs is None else (None if self.n_jobs == -1 else self.n_jobs),
            ),
            ctx,
        )
        assert isinstance(result.model, RuleList)
        self.rule_list_ = result.model
        self.certificate_ = result.certificate
        self.stats_ = result.stats
        self.feature_names_binarized_ = list(feature_names)
        return self

    def _binary(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        columns, _ = estimator_columns(self, X, reset=False)  # a DataFrame's names: rules read age>30
        return self.binarizer_.transform(columns)[1]

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self.classes_[self.rule_list_.predict(self._binary(X))]

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self.rule_list_.predict_proba(self._binary(X))

    def to_text(self) -> str:
        check_is_fitted(self)
        return self.rule_list_.to_text()
