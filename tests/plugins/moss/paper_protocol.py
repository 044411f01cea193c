"""The paper's evaluation protocol (test code: the replication tests use it, the product does not).

Out-of-sample evaluation as the paper defines it: k-fold test R^2 and empirical stability.

Empirical stability is the mean pairwise Dice-Sorensen coefficient between the rule sets learned
on the folds (spec §1.1; the paper's eq. 2 normalisation is a typo for this mean). Rules are
compared by their canonical key, so the candidate thresholds must be shared across folds: the
quantile grid is fitted once on all rows (unsupervised, it uses no y), as the spec recommends.

The second half holds the paper's cross-data-set comparison (spec §5.3, §5.6): per-data-set ranks,
average and combined ranks, the "within one SE" test and relative differences. A results table is
a mapping ``data set -> method -> value``; every data set must score every method.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Table = Mapping[str, Mapping[str, float]]
"""Results of several methods on several data sets: ``table[dataset][method]``."""

STABILITY_SE_DEFINITION = (
    "sample standard deviation (ddof=1) of the pairwise DSC values between the fold rule sets "
    "(45 pairs for 10 folds); a dispersion, not the SE of their mean, chosen because the paper's "
    "Table 6 values (0.04-0.27) are of that size (spec §8 item 12)"
)


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


def pairwise_similarities(
    sets: Sequence[set[Any]], measure: Callable[[set[Any], set[Any]], float] = dsc
) -> list[float]:
    """Similarity of every pair of rule sets: unordered pairs, or ordered pairs for the asymmetric POG."""
    pairs = itertools.permutations(sets, 2) if measure is pog else itertools.combinations(sets, 2)
    return [measure(a, b) for a, b in pairs]


def empirical_stability(sets: Sequence[set[Any]], measure: Callable[[set[Any], set[Any]], float] = dsc) -> float:
    """Mean similarity over pairs (spec §1.1); a single rule set is trivially stable."""
    if len(sets) < 2:
        return 1.0
    return float(np.mean(pairwise_similarities(sets, measure)))


def standard_error(values: Iterable[float]) -> float:
    """SE of the mean, sd(ddof=1)/sqrt(n): the paper's "(SE)" over folds and over data sets.

    NaN when there are fewer than two values, since a spread cannot be estimated from one.
    """
    v = np.asarray(list(values), dtype=float)
    if v.size < 2:
        return math.nan
    return float(v.std(ddof=1) / math.sqrt(v.size))


def stability_se(sets: Sequence[set[Any]], measure: Callable[[set[Any], set[Any]], float] = dsc) -> float:
    """The "SE" reported next to empirical stability; see ``STABILITY_SE_DEFINITION``.

    The paper does not define it (spec §8 item 12). The pairwise values share folds, so they are
    not independent and sd/sqrt(pairs) would overstate the precision; we report their spread,
    which matches the size of the paper's Table 6 values. NaN with fewer than two pairs.
    """
    v = pairwise_similarities(sets, measure)
    return float(np.std(v, ddof=1)) if len(v) >= 2 else math.nan


def _json_float(x: float) -> float | None:
    """NaN is not valid JSON; an undefined SE is written as null."""
    return None if math.isnan(x) else x


@dataclass
class CrossValidation:
    """Per-fold test R^2 and fold rule sets, with the summaries the paper reports (Tables 3-6)."""

    r2: list[float]
    rule_sets: list[set[Any]]

    @property
    def mean_r2(self) -> float:
        return float(np.mean(self.r2))

    @property
    def r2_se(self) -> float:
        """SE of the mean test R^2 over the folds (Table 4)."""
        return standard_error(self.r2)

    @property
    def stability(self) -> float:
        return empirical_stability(self.rule_sets)

    @property
    def stability_se(self) -> float:
        """Spread of the pairwise DSC values (Table 6); defined in ``STABILITY_SE_DEFINITION``."""
        return stability_se(self.rule_sets)

    def to_dict(self) -> dict[str, Any]:
        return {
            "folds": len(self.r2),
            "test_r2": self.r2,
            "mean_test_r2": self.mean_r2,
            "test_r2_se": _json_float(self.r2_se),
            "empirical_stability": self.stability,
            "empirical_stability_se": _json_float(self.stability_se),
            "empirical_stability_se_definition": STABILITY_SE_DEFINITION,
            "jaccard": empirical_stability(self.rule_sets, jaccard),
            "ochiai": empirical_stability(self.rule_sets, ochiai),
            "pog": empirical_stability(self.rule_sets, pog),
        }


def cross_validate(spec: Any, problem: Any, folds: int = 10, seed: int = 0) -> CrossValidation:
    """Fit the spec's MOSS model on each training fold; test R^2 and the fold rule sets' keys.

    Rules are identified by (feature name, op, threshold value) on a quantile grid shared by all
    folds, so identical rules from two folds compare equal.
    """
    from glasswork.contract.solver import SolveContext
    from glasswork.data import Problem
    from glasswork.plugins.moss.solver import MossSolver
    from glasswork.running.metrics import r2
    from sklearn.model_selection import KFold

    scores: list[float] = []
    sets: list[set[Any]] = []
    solver = MossSolver(spec)
    grid_X = problem.X
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(problem.X):
        sub = Problem(
            name=problem.name,
            X=problem.X[train],
            y=problem.y[train],
            feature_names=list(problem.feature_names),
            task="regression",
        )
        sub.extras["moss_grid_X"] = grid_X
        result = solver.solve(sub, SolveContext())
        model = result.model
        scores.append(r2(problem.y[test], model.predict(problem.X[test])))
        sets.append(
            {
                tuple((c["feature"], c["op"], round(float(c["threshold"]), 12)) for c in rule["conditions"])
                for rule in model.to_dict()["rules"]
            }
        )
    return CrossValidation(scores, sets)


# --- Comparing methods across data sets (spec §5.3, §5.6) ---------------------------------------


@dataclass(frozen=True)
class MeanSE:
    """A mean over data sets with its SE across data sets (the error bars of Fig. 7)."""

    mean: float
    se: float


@dataclass(frozen=True)
class MeanMedian:
    """Mean and median of per-data-set relative differences (Figs. 10-12 quote both)."""

    mean: float
    median: float


def _methods(table: Table) -> list[str]:
    """The methods of a table, in first-seen order; every data set must have all of them."""
    methods = list(next(iter(table.values())))
    for dataset, row in table.items():
        if set(row) != set(methods):
            raise ValueError(f"data set {dataset!r} scores {sorted(row)}, expected {sorted(methods)}")
    return methods


def rank(scores: Mapping[str, float], higher_is_better: bool = True) -> dict[str, float]:
    """Rank methods on one data set, 1 = best; tied methods share the average of their ranks.

    Average ranks keep the rank sum at n(n+1)/2, so averages over data sets stay comparable.
    Ties are exact equality of the values given (round first to rank at printed precision).
    """
    sign = -1.0 if higher_is_better else 1.0
    keys = list(scores)
    values = [sign * scores[k] for k in keys]
    out: dict[str, float] = {}
    for k, v in zip(keys, values):
        better = sum(w < v for w in values)
        equal = sum(w == v for w in values)
        out[k] = better + (equal + 1) / 2.0
    return out


def per_dataset_ranks(table: Table, higher_is_better: bool = True) -> dict[str, dict[str, float]]:
    """``rank`` applied to each data set of the table."""
    _methods(table)
    return {dataset: rank(row, higher_is_better) for dataset, row in table.items()}


def average_ranks(table: Table, higher_is_better: bool = True) -> dict[str, MeanSE]:
    """Mean rank of each method over data sets with its SE across data sets (Tables 3/5, Fig. 7)."""
    ranks = per_dataset_ranks(table, higher_is_better)
    return {
        m: MeanSE(float(np.mean([r[m] for r in ranks.values()])), standard_error(r[m] for r in ranks.values()))
        for m in _methods(table)
    }


def combined_ranks(accuracy: Table, stability: Table) -> dict[str, MeanSE]:
    """Mean over data sets of (accuracy rank + stability rank) / 2, both higher-is-better (§4.2 table).

    The mean equals the average of the two average ranks; the SE is of the per-data-set mean.
    """
    if set(accuracy) != set(stability):
        raise ValueError("accuracy and stability tables cover different data sets")
    acc = per_dataset_ranks(accuracy)
    stab = per_dataset_ranks(stability)
    out: dict[str, MeanSE] = {}
    for m in _methods(accuracy):
        both = [(acc[d][m] + stab[d][m]) / 2.0 for d in accuracy]
        out[m] = MeanSE(float(np.mean(both)), standard_error(both))
    return out


def within_one_se(a: float, se_a: float, b: float, se_b: float) -> bool:
    """Whether two estimates are within one SE: ``|a - b| <= max(se_a, se_b)``.

    This is the rule that reproduces the paper's "24 of 30" stability claim (spec §5.6); pass
    ``se_b=0`` to test against ``se_a`` alone.
    """
    return abs(a - b) <= max(se_a, se_b)


def relative_difference(value: float, reference: float) -> float:
    """``(value - reference) / reference``, e.g. ``(R2_H - R2_SIRUS) / R2_SIRUS``; not symmetric."""
    return (value - reference) / reference


def relative_differences(
    table: Table, method: str, reference: str, datasets: Iterable[str] | None = None
) -> dict[str, float]:
    """``relative_difference(table[d][method], table[d][reference])`` for each chosen data set."""
    chosen = list(table) if datasets is None else list(datasets)
    return {d: relative_difference(table[d][method], table[d][reference]) for d in chosen}


def mean_median(values: Iterable[float]) -> MeanMedian:
    """Mean and median; the median guards against one data set dominating (auto_price vs FIRE)."""
    v = np.asarray(list(values), dtype=float)
    return MeanMedian(float(np.mean(v)), float(np.median(v)))


def method_means(table: Table) -> dict[str, float]:
    """Unweighted mean of each method's value over the data sets."""
    return {m: float(np.mean([row[m] for row in table.values()])) for m in _methods(table)}
