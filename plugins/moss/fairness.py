"""``constraints.fairness`` for MOSS: whether a rule set's predictions on the training rows meet it.

A classifier rule set predicts ``1`` where ``offset + sum_i w_i f_i(x) > 0``, with ``w`` the ridge
logistic fit on its rules: its predictions, and so every group rate, depend on the rule set as a
whole and on no linear function of ``z``. The exact search therefore asks this check about every
rule set it would keep, and removes each one that fails from its master (``CuttingPlane``,
no-good rows); the answer is the product's own test, ``glasswork.fairness.figures.within``, on the
predictions of the model the run would return, for every protected group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from glasswork.fairness import figures as fairness


class FairnessCheck:
    """Memoised per rule set: the frontier's thresholds revisit the same rule sets often."""

    def __init__(
        self,
        metric: str,
        at_most: float,
        y: np.ndarray,
        groups: Sequence[np.ndarray],
        weights: np.ndarray | None,
        predict: Callable[[tuple[int, ...]], np.ndarray],
    ) -> None:
        self.metric = metric
        self.at_most = float(at_most)
        self.y = np.asarray(y)
        self.groups = [np.asarray(g, dtype=bool) for g in groups]
        self.weights = weights
        self.predict = predict
        self._memo: dict[tuple[int, ...], bool] = {}
        self.checked = 0

    def figure(self, support: tuple[int, ...]) -> float | None:
        """The worst group's figure of the rule set (``None`` when undefined for some group)."""
        pred = self.predict(support)
        values = []
        for mask in self.groups:
            p, r = fairness.group_rates(self.y, pred, mask, self.weights)
            value = fairness.prediction_metrics(p, r)[self.metric]
            if value is None:
                return None
            values.append(value)
        return max(values)

    def __call__(self, support: tuple[int, ...]) -> bool:
        key = tuple(sorted(support))
        hit = self._memo.get(key)
        if hit is None:
            self.checked += 1
            pred = self.predict(key)
            hit = self._memo[key] = all(
                fairness.within(self.metric, self.at_most, *fairness.group_rates(self.y, pred, mask, self.weights))
                for mask in self.groups
            )
        return hit
