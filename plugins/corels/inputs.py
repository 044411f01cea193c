"""What the CORELS search is given and what it gives back: the antecedents of a problem (mined from
0/1 features, or pre-mined), its class weights and sample counts, and the rule list of a prefix,
labelled as the search labels it."""

from __future__ import annotations

import numpy as np
from glasswork.class_weights import class_weight_factors
from glasswork.cython_ext import bitset
from glasswork.data import DataError, Problem
from glasswork.plugins.corels.model import Rule, RuleList
from glasswork.plugins.corels.spec import CorelsConstraints, CorelsObjective


def antecedents_for(
    problem: Problem, c: CorelsConstraints, lam: float
) -> tuple[list[str], np.ndarray, list[list[tuple[int, int]]]]:
    """Names, packed bits and feature items of the antecedents to search.

    Pre-mined data (a ``.out`` source) are used as they are, each antecedent a column of X; other
    data are mined from 0/1 features with the constraints' mining options.
    """
    from glasswork.data.rules import Antecedents, mine_antecedents

    if problem.extras.get("premined"):
        ants = problem.extras.get("antecedents")
        if not isinstance(ants, Antecedents):
            ants = Antecedents.from_matrix(problem.X, problem.feature_names)
        return list(ants.names), ants.bits, [[(m, 1)] for m in range(len(ants.names))]
    require_binary_features(problem)
    min_support = min(c.mining_support(lam), 0.5)
    ants = mine_antecedents(
        problem.X, problem.feature_names, max_card=c.max_card, min_support=min_support, negations=c.negations
    )
    assert ants.items is not None  # mined antecedents carry their (column, value) items
    items = [list(row) for row in ants.items]
    return list(ants.names), ants.bits, items


def require_binary_features(problem: Problem) -> None:
    """CORELS mines its antecedents from 0/1 features (a pre-mined ``.out`` source has them)."""
    if not problem.extras.get("premined") and not problem.is_binary_matrix:
        raise DataError(
            "CORELS mines antecedents from 0/1 features, but the features are not 0/1",
            file=problem.source,
            hint="add 'binarize:' to the data section",
        )


def class_weight_vector(problem: Problem, objective: CorelsObjective) -> np.ndarray | None:
    """The weight of each class in the loss (``glasswork.class_weights``), ``balanced`` counted
    over the rows each sample stands for."""
    return class_weight_factors(
        objective.class_weight, problem.classes, problem.y, integer_multiplicity(problem.sample_weight)
    )


def integer_multiplicity(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """Integer sample weights act as multiplicities; the bit-parallel bounds need integer counts."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if np.any(w < 0) or np.any(w != np.round(w)):
        raise DataError(
            "CORELS takes only non-negative integer sample weights (counts)",
            hint="use objective.class_weight for weighted classes, or round the weights",
        )
    return w.astype(np.int64)


def build_rule_list(
    prefix: list[int],
    names: list[str],
    bits: np.ndarray,
    items: list[list[tuple[int, int]]],
    problem: Problem,
    weights: np.ndarray | None,
    multiplicity: np.ndarray | None,
) -> RuleList:
    """The rule list of a prefix, labels by (weighted) majority as in the search."""
    n = problem.n_samples
    C = len(problem.classes) if problem.classes is not None else int(problem.y.max()) + 1
    w = np.ones(C) if weights is None else weights
    mult = np.ones(n, dtype=np.int64) if multiplicity is None else multiplicity
    y = np.asarray(problem.y, dtype=np.int64)
    open_ = np.ones(n, dtype=bool)
    rules = []
    caps = bitset.unpack_rows(np.ascontiguousarray(bits[prefix]), n).astype(bool) if prefix else []
    for pos, m in enumerate(prefix):
        hit = open_ & caps[pos]
        counts = np.bincount(y[hit], weights=mult[hit], minlength=C).astype(np.int64)
        rules.append(Rule(names[m], list(items[m]), _majority(counts, w), counts.tolist()))
        open_ &= ~hit
    counts = np.bincount(y[open_], weights=mult[open_], minlength=C).astype(np.int64)
    classes = problem.classes if problem.classes is not None else np.arange(C)
    label_names = problem.extras.get("label_names")
    if label_names is not None and len(label_names) != C:
        label_names = None
    return RuleList(
        rules,
        _majority(counts, w),
        counts.tolist(),
        classes,
        task=problem.task,
        target=problem.extras.get("target"),
        label_names=label_names,
        class_weights=None if weights is None else list(weights),
    )


def _majority(counts: np.ndarray, w: np.ndarray) -> int:
    """Weighted majority, ties to the higher class (as the search decides them)."""
    weighted = counts * w
    return int(len(weighted) - 1 - np.argmax(weighted[::-1]))
