"""Group fairness figures of a binary classifier: how a protected group fares against every other
row (the reference), from any model's predictions.

The six metrics are the ones FairCORELS names, each an absolute difference between the protected
group ``p`` and the reference ``r`` (positive class ``1``; rows weighted by ``data.weights``, a
row of weight 2 counting as two rows):

``statistical_parity``
    ``|P(ŷ=1 | p) - P(ŷ=1 | r)|``: the selection rates.
``predictive_parity``
    ``|P(y=1 | ŷ=1, p) - P(y=1 | ŷ=1, r)|``: the precisions (positive predictive values).
``predictive_equality``
    ``|P(ŷ=1 | y=0, p) - P(ŷ=1 | y=0, r)|``: the false positive rates.
``equal_opportunity``
    ``|P(ŷ=0 | y=1, p) - P(ŷ=0 | y=1, r)|``: the false negative rates (the same figure as the
    true positive rates' difference).
``equalized_odds``
    predictive equality + equal opportunity (FairCORELS' sum; fairlearn's
    ``equalized_odds_difference`` is the larger of the two instead).
``conditional_use_accuracy_equality``
    predictive parity + ``|P(y=0 | ŷ=0, p) - P(y=0 | ŷ=0, r)|`` (the negative predictive values).

For a model that gives probabilities (a risk score, a rule list's leaf rates) there is also
``calibration``: the positive-class probabilities are cut into ten bins of width 0.1, and the
figure is the mean, over the bins both groups reach, weighted by the bin's total weight, of
``|P(y=1 | bin, p) - P(y=1 | bin, r)|`` (how differently one score is borne out in the groups).

A figure whose rate has no row to be computed on in either group (no predicted positive in the
protected group for predictive parity, a group with no weight) is ``None``: undefined, never a
made-up 0. NumPy only: one weighted ``bincount`` per group and split, no loop over rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

PredictionMetric = Literal[
    "statistical_parity",
    "predictive_parity",
    "predictive_equality",
    "equal_opportunity",
    "equalized_odds",
    "conditional_use_accuracy_equality",
]
"""A metric of binary predictions: the ones a constraint (``constraints.fairness``) may hold."""

Metric = Literal[PredictionMetric, "calibration"]
"""A metric's name, as a spec's ``fairness.metrics`` lists it: one of binary predictions, or of probabilities."""

ALL_METRICS: tuple[Metric, ...] = get_args(Metric)

METRICS: tuple[Metric, ...] = ALL_METRICS[:6]
"""The six metrics of binary predictions, in FairCORELS' order (its ``fairness=1..6``)."""

SCORE_METRICS: tuple[Metric, ...] = ALL_METRICS[6:]
"""Metrics of probabilities (``calibration``), reported when the model gives them."""

CALIBRATION_BINS = 10

RATES: tuple[str, ...] = ("selection_rate", "ppv", "npv", "fpr", "fnr")
"""The per-group rates the metrics compare (shown as bars in the model card)."""


def _ratio(num: float, den: float) -> float | None:
    return None if den <= 0 else float(num / den)


def _gap(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else abs(a - b)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


@dataclass(frozen=True)
class GroupRates:
    """One group's rows, weight and rates (``None`` where the rate's denominator has no weight).

    ``selection_rate`` is ``P(ŷ=1)``, ``ppv`` ``P(y=1 | ŷ=1)``, ``npv`` ``P(y=0 | ŷ=0)``,
    ``fpr`` ``P(ŷ=1 | y=0)``, ``fnr`` ``P(ŷ=0 | y=1)``.
    """

    rows: int
    weight: float
    selection_rate: float | None
    ppv: float | None
    npv: float | None
    fpr: float | None
    fnr: float | None

    @classmethod
    def of_cells(cls, rows: int, cells: np.ndarray) -> GroupRates:
        """From the weights of the confusion cells ``[tn, fp, fn, tp]``."""
        tn, fp, fn, tp = (float(c) for c in cells)
        total = tn + fp + fn + tp
        return cls(
            rows=rows,
            weight=total,
            selection_rate=_ratio(fp + tp, total),
            ppv=_ratio(tp, fp + tp),
            npv=_ratio(tn, tn + fn),
            fpr=_ratio(fp, tn + fp),
            fnr=_ratio(fn, fn + tp),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "weight": self.weight, **{name: getattr(self, name) for name in RATES}}


def _weights(weights: np.ndarray | None, n: int) -> np.ndarray:
    return np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)


def group_rates(
    y: np.ndarray, pred: np.ndarray, protected: np.ndarray, weights: np.ndarray | None = None
) -> tuple[GroupRates, GroupRates]:
    """The protected group's rates and the reference's (every other row), for 0/1 labels ``y``
    and predictions ``pred``. A row of weight 0 counts in ``rows`` but in no rate."""
    y = np.asarray(y).astype(bool)
    pred = np.asarray(pred).astype(bool)
    protected = np.asarray(protected, dtype=bool)
    w = _weights(weights, y.size)
    cell = 2 * y.astype(np.int64) + pred.astype(np.int64)  # 0 tn, 1 fp, 2 fn, 3 tp
    cells = np.bincount(4 * protected.astype(np.int64) + cell, weights=w, minlength=8).reshape(2, 4)
    n_protected = int(np.count_nonzero(protected))
    return GroupRates.of_cells(n_protected, cells[1]), GroupRates.of_cells(y.size - n_protected, cells[0])


def prediction_metrics(p: GroupRates, r: GroupRates) -> dict[str, float | None]:
    """The six metrics from the two groups' rates (module docstring)."""
    predictive_parity = _gap(p.ppv, r.ppv)
    predictive_equality = _gap(p.fpr, r.fpr)
    equal_opportunity = _gap(p.fnr, r.fnr)
    return {
        "statistical_parity": _gap(p.selection_rate, r.selection_rate),
        "predictive_parity": predictive_parity,
        "predictive_equality": predictive_equality,
        "equal_opportunity": equal_opportunity,
        "equalized_odds": _add(predictive_equality, equal_opportunity),
        "conditional_use_accuracy_equality": _add(predictive_parity, _gap(p.npv, r.npv)),
    }


def calibration_gap(
    y: np.ndarray, score: np.ndarray, protected: np.ndarray, weights: np.ndarray | None = None
) -> float | None:
    """The ``calibration`` figure (module docstring) of positive-class probabilities ``score``;
    ``None`` when no bin holds weight in both groups."""
    y = np.asarray(y).astype(np.float64)
    protected = np.asarray(protected, dtype=bool).astype(np.int64)
    w = _weights(weights, y.size)
    bins = np.clip((np.asarray(score, dtype=np.float64) * CALIBRATION_BINS).astype(np.int64), 0, CALIBRATION_BINS - 1)
    key = protected * CALIBRATION_BINS + bins
    size = 2 * CALIBRATION_BINS
    weight = np.bincount(key, weights=w, minlength=size).reshape(2, CALIBRATION_BINS)
    positive = np.bincount(key, weights=w * y, minlength=size).reshape(2, CALIBRATION_BINS)
    both = (weight[0] > 0) & (weight[1] > 0)
    if not both.any():
        return None
    rate = positive[:, both] / weight[:, both]
    bin_weight = weight[:, both].sum(axis=0)
    return float(np.sum(bin_weight * np.abs(rate[1] - rate[0])) / np.sum(bin_weight))


def disparities(
    y: np.ndarray,
    pred: np.ndarray,
    protected: np.ndarray,
    weights: np.ndarray | None = None,
    score: np.ndarray | None = None,
) -> dict[str, float | None]:
    """Every metric of ``pred`` (and ``calibration`` of ``score`` when given) for one protected
    group against the rest."""
    p, r = group_rates(y, pred, protected, weights)
    out = prediction_metrics(p, r)
    if score is not None:
        out["calibration"] = calibration_gap(y, score, protected, weights)
    return out


def within(metric: str, at_most: float, protected: GroupRates, reference: GroupRates) -> bool:
    """Whether one group's ``metric`` is defined and at most ``at_most`` (a constraint's test).

    The one definition every solver's constraint and every check of a constrained model share:
    an undefined figure fails, and the comparison allows the float noise of a sum of weights
    (1e-12 relative), so a model exactly at the limit meets it whichever order its weights were
    added in.
    """
    return meets(prediction_metrics(protected, reference)[metric], at_most)


def meets(figure: float | None, at_most: float) -> bool:
    """Whether a figure (one metric, the worst over the groups) meets a limit: ``within``'s test
    on a figure already computed (a Rashomon member's), with the same tolerance."""
    return figure is not None and figure <= at_most + 1e-12 * max(1.0, at_most)


@dataclass(frozen=True)
class Group:
    """A protected group: its label (``column = value``) and which rows are in it."""

    label: str
    column: str
    values: tuple[Any, ...]
    mask: np.ndarray


def worst(values: Sequence[float | None]) -> float | None:
    """The largest defined figure (several protected groups: the headline is the worst), ``None``
    when none is defined."""
    defined = [v for v in values if v is not None]
    return max(defined) if defined else None


def audit(
    y: np.ndarray,
    pred: np.ndarray,
    groups: Sequence[Group],
    metrics: Sequence[str] = ALL_METRICS,
    weights: np.ndarray | None = None,
    score: np.ndarray | None = None,
) -> dict[str, Any]:
    """One split's audit as JSON values: each asked metric (the worst over the groups), the
    protected and reference rows, and ``groups``: per group its label, metrics and both sides'
    ``GroupRates``. The sizes at the top are the one group's, ``None`` with several (each
    group's are in ``groups``)."""
    asked = [m for m in metrics if m in METRICS or (score is not None and m in SCORE_METRICS)]
    per_group: list[dict[str, Any]] = []
    for group in groups:
        p, r = group_rates(y, pred, group.mask, weights)
        figures = prediction_metrics(p, r)
        if score is not None and "calibration" in asked:
            figures["calibration"] = calibration_gap(y, score, group.mask, weights)
        per_group.append(
            {
                "label": group.label,
                "column": group.column,
                "values": list(group.values),
                **{m: figures[m] for m in asked},
                "protected": p.to_dict(),
                "reference": r.to_dict(),
            }
        )
    out: dict[str, Any] = {m: worst([g[m] for g in per_group]) for m in asked}
    one = per_group[0] if len(per_group) == 1 else None  # several groups: each one's sizes are its own
    out["protected_rows"] = None if one is None else one["protected"]["rows"]
    out["reference_rows"] = None if one is None else one["reference"]["rows"]
    out["groups"] = per_group
    return out
