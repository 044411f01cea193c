"""Out-of-sample evaluation as the paper defines it: k-fold test R^2 and empirical stability.

Empirical stability is the mean pairwise Dice-Sorensen coefficient between the rule sets learned
on the folds (spec §1.1; the paper's eq. 2 normalisation is a typo for this mean). Rules are
compared by their canonical key, so the candidate thresholds must be shared across folds: the
quantile grid is fitted once on all rows (unsupervised, it uses no y), as the spec recommends.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def dsc(a: set[Any], b: set[Any]) -> float:
    if not a and not b:
        return 1.0
    return 2.0 * len(a & b) / (len(a) + len(b))


def jaccard(a: set[Any], b: set[Any]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def ochiai(a: set[Any], b: set[Any]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return len(a & b) / float(np.sqrt(len(a) * len(b)))


def pog(a: set[Any], b: set[Any]) -> float:
    """Proportion of a's rules found in b (asymmetric)."""
    return len(a & b) / len(a) if a else 1.0


def empirical_stability(sets: Sequence[set[Any]], measure: Callable[[set[Any], set[Any]], float] = dsc) -> float:
    """Mean similarity over pairs: unordered pairs, or ordered pairs for the asymmetric POG."""
    if len(sets) < 2:
        return 1.0
    pairs = itertools.permutations(sets, 2) if measure is pog else itertools.combinations(sets, 2)
    return float(np.mean([measure(a, b) for a, b in pairs]))


@dataclass
class CrossValidation:
    r2: list[float]
    rule_sets: list[set[Any]]

    @property
    def mean_r2(self) -> float:
        return float(np.mean(self.r2))

    @property
    def stability(self) -> float:
        return empirical_stability(self.rule_sets)

    def to_dict(self) -> dict[str, Any]:
        return {"folds": len(self.r2), "test_r2": self.r2, "mean_test_r2": self.mean_r2,
                "empirical_stability": self.stability,
                "jaccard": empirical_stability(self.rule_sets, jaccard),
                "ochiai": empirical_stability(self.rule_sets, ochiai),
                "pog": empirical_stability(self.rule_sets, pog)}


def cross_validate(spec: Any, problem: Any, folds: int = 10, seed: int = 0) -> CrossValidation:
    """Fit the spec's MOSS model on each training fold; test R^2 and the fold rule sets' keys.

    Rules are identified by (feature name, op, threshold value) on a quantile grid shared by all
    folds, so identical rules from two folds compare equal.
    """
    from glasswork.data import Problem
    from glasswork.metrics import r2
    from glasswork.solver import SolveContext
    from sklearn.model_selection import KFold

    from .solver import MossSolver

    scores: list[float] = []
    sets: list[set[Any]] = []
    solver = MossSolver(spec)
    grid_X = problem.X
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(problem.X):
        sub = Problem(name=problem.name, X=problem.X[train], y=problem.y[train],
                      feature_names=list(problem.feature_names), task="regression")
        sub.extras["moss_grid_X"] = grid_X
        result = solver.solve(sub, SolveContext())
        model = result.model
        scores.append(r2(problem.y[test], model.predict(problem.X[test])))
        sets.append({tuple((c["feature"], c["op"], round(float(c["threshold"]), 12)) for c in rule["conditions"])
                     for rule in model.to_dict()["rules"]})
    return CrossValidation(scores, sets)
