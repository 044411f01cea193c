"""``constraints.fairness`` for score cards: which cards meet it, and what the compiled exact search
needs to decide it as ``glasswork.fairness.figures.within`` does.

A card predicts the positive class where its points total plus its intercept is above 0 (its risk
above 50 %, ``ScoreCard.predict``): that is the decision threshold the constraint holds at, for
the exact policy's cards (multiplier 1) and the beam's (any multiplier: dividing by it keeps the
sign). The figures are the audit's: rows weighted by ``data.weights`` (class weights shape the loss,
never the rates), every protected group against every other row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from glasswork.fairness.figures import METRICS, group_rates, within
from glasswork.plugins.fasterrisk.engine import IntegerModel

MAX_GROUPS = 6  # the compiled search codes each row's groups in the bits of one byte with its label


@dataclass(frozen=True)
class FairnessTarget:
    """The constraint on the training rows: ``metric <= at_most`` for each protected group."""

    metric: str
    at_most: float
    masks: tuple[np.ndarray, ...]  # per group, which training rows are in it
    weights: np.ndarray | None = None  # the audit's row weights (``data.weights``)

    @property
    def code(self) -> int:
        """The metric's index in ``fairness.METRICS`` (the kernel's metric code)."""
        return METRICS.index(self.metric)

    def group_bits(self) -> np.ndarray:
        """Each row's groups as bits (group g is bit g)."""
        bits = np.zeros(self.masks[0].shape[0], dtype=np.int64)
        for g, mask in enumerate(self.masks):
            bits |= np.asarray(mask, dtype=np.int64) << g
        return bits

    def meets(self, y: np.ndarray, pred: np.ndarray) -> bool:
        """Whether predictions ``pred`` of the training rows meet the constraint (``within``)."""
        labels = np.asarray(y) > 0
        return all(
            within(self.metric, self.at_most, *group_rates(labels, pred, mask, self.weights)) for mask in self.masks
        )

    def figure(self, y: np.ndarray, pred: np.ndarray) -> float | None:
        """The metric of ``pred``, the worst over the groups (``None`` when one is undefined)."""
        from glasswork.fairness.figures import prediction_metrics

        labels = np.asarray(y) > 0
        out: list[float] = []
        for mask in self.masks:
            value = prediction_metrics(*group_rates(labels, pred, mask, self.weights))[self.metric]
            if value is None:
                return None
            out.append(value)
        return max(out)

    def label_scale(self, y: np.ndarray, loss_weights: np.ndarray | None) -> tuple[float, float]:
        """The audit weight of a row over its loss weight, by label (negative, positive): the loss
        weights are the audit's times one class weight per label, so one factor per label undoes
        them."""
        labels = np.asarray(y) > 0
        audit = np.ones(labels.size) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        loss = np.ones(labels.size) if loss_weights is None else np.asarray(loss_weights, dtype=np.float64)
        out = []
        for label in (False, True):
            rows = (labels == label) & (loss > 0)
            if not rows.any():
                out.append(1.0)
                continue
            ratio = audit[rows] / loss[rows]
            if not np.allclose(ratio, ratio[0], rtol=1e-12, atol=0.0):
                raise ValueError("the loss weights are not the audit weights times one factor per class")
            out.append(float(ratio[0]))
        return out[0], out[1]


def card_predictions(
    X: np.ndarray, columns: Sequence[int] | np.ndarray, points: np.ndarray, intercept: float
) -> np.ndarray:
    """A card's 0/1 predictions: points total plus intercept above 0 (its multiplier keeps the sign)."""
    X = np.asarray(X, dtype=np.float64)
    score = X[:, list(columns)] @ np.asarray(points, dtype=np.float64) if len(columns) else np.zeros(X.shape[0])
    return (score + intercept > 0).astype(np.int64)


def _loss_minimiser(score: np.ndarray, signs: np.ndarray, s: np.ndarray, multiplier: float, start: float) -> float:
    """The real intercept minimising the card's loss (convex in it): safeguarded 1-D Newton."""

    def loss(b: float) -> float:
        return float(s @ np.logaddexp(0.0, -signs * (score + b) / multiplier))

    b, current = float(start), loss(float(start))
    for _ in range(100):
        p = 0.5 * (1.0 - np.tanh(0.5 * signs * (score + b) / multiplier))  # sigma(-margin)
        grad = -float(s @ (signs * p)) / multiplier
        hess = float(s @ (p * (1.0 - p))) / multiplier**2
        if hess <= 0.0 or abs(grad) <= 1e-12 * max(1.0, current):
            break
        step = grad / hess
        while step != 0.0 and loss(b - step) > current:
            step /= 2.0
        if abs(step) < 1e-12:
            break
        b -= step
        current = loss(b)
    return b


def fairest_intercept(
    score: np.ndarray,
    intercept: float,
    multiplier: float,
    y: np.ndarray,
    loss_weights: np.ndarray | None,
    target: FairnessTarget,
) -> tuple[float, float] | None:
    """The best (lowest loss) integer intercept at which a card with row totals ``score`` (and its
    multiplier) meets the constraint, with its loss; ``None`` when no integer intercept does.

    The predictions change only where ``-intercept`` crosses a row total, so the integers between
    two consecutive distinct totals give one prediction pattern each (a run). The loss is convex in
    the intercept, so within a run its best integer is the floor or the ceiling of the real
    minimiser, clipped into the run: two candidates per run, each pattern checked once.
    """
    signs = np.where(np.asarray(y) > 0, 1.0, -1.0)
    s = np.ones(signs.size) if loss_weights is None else np.asarray(loss_weights, dtype=np.float64)
    centre = _loss_minimiser(score, signs, s, multiplier, intercept)
    totals = np.unique(score)
    edges = np.concatenate([[-np.inf], totals, [np.inf]])
    best: tuple[float, float] | None = None
    for lo_total, hi_total in zip(edges[:-1], edges[1:], strict=True):
        # the run where rows with total >= hi_total are positive: -hi_total < b <= -lo_total
        low = math.floor(-hi_total) + 1 if math.isfinite(hi_total) else -math.inf
        high = math.floor(-lo_total) if math.isfinite(lo_total) else math.inf
        if low > high:
            continue
        candidates = sorted({float(min(max(v, low), high)) for v in (math.floor(centre), math.ceil(centre))})
        if not target.meets(y, (score + candidates[0] > 0).astype(np.int64)):
            continue
        for b in candidates:
            loss = float(s @ np.logaddexp(0.0, -signs * (score + b) / multiplier))
            if best is None or loss < best[1]:
                best = (b, loss)
    return best


def keep_fair(
    pool: Sequence[IntegerModel],
    X: np.ndarray,
    y: np.ndarray,
    loss_weights: np.ndarray | None,
    target: FairnessTarget,
) -> tuple[list[IntegerModel], int]:
    """The beam's pool reduced to the cards that meet the constraint, best first: a card that misses
    it at its own intercept takes the best integer intercept that meets it (``fairest_intercept``),
    or leaves the pool. Returns the cards and how many had their intercept moved."""
    kept: list[IntegerModel] = []
    moved = 0
    X = np.asarray(X, dtype=np.float64)
    for card in pool:
        columns = [int(c) for c in card.features]
        score = X[:, columns] @ np.asarray(card.points, dtype=np.float64) if columns else np.zeros(X.shape[0])
        if target.meets(y, (score + card.intercept > 0).astype(np.int64)):
            kept.append(card)
            continue
        found = fairest_intercept(score, card.intercept, card.multiplier, y, loss_weights, target)
        if found is not None:
            kept.append(replace(card, intercept=found[0], loss=found[1]))
            moved += 1
    kept.sort(key=lambda c: c.loss)
    return kept, moved
