"""What MOSS returns: a ``RuleSet`` (a regression model) and the ``Frontier`` of Pareto points."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from glasswork.contract.model import Classifier, Model
from glasswork.display.console import fmt_gap, fmt_number

from .rules import Rule


def _num(v: float) -> str:
    return f"{v:+.4g}"


class RuleSet(Model):
    """``y = intercept + sum_i w_i f_i(x)``, f_i the rule's output inside / outside its region.

    With the ``sirus`` encoding a rule reads ``if <rule> then a else b``; with ``indicator`` and
    ``node_value`` it adds ``a`` when the rule holds and nothing otherwise.
    """

    kind: ClassVar[str] = "rule_set"

    def __init__(
        self,
        rules: list[Rule],
        weights: np.ndarray,
        inside: np.ndarray,
        outside: np.ndarray,
        pi: np.ndarray,
        intercept: float,
        *,
        encoding: str,
        h1: float | None = None,
        h2: float | None = None,
        epsilon: float | None = None,
    ) -> None:
        self.task = "regression"
        self.rules = list(rules)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.inside = np.asarray(inside, dtype=np.float64)
        self.outside = np.asarray(outside, dtype=np.float64)
        self.pi = np.asarray(pi, dtype=np.float64)
        self.intercept = float(intercept)
        self.encoding = encoding
        self.h1 = h1
        self.h2 = h2
        self.epsilon = epsilon

    @property
    def features_used(self) -> list[int]:
        """The matrix columns the rules' conditions read: a row missing one gets no prediction in exports."""
        return sorted({int(j) for rule in self.rules for j, _, _ in rule.key})

    @property
    def size(self) -> int:
        return len(self.rules)

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        out = np.full(X.shape[0], self.intercept)
        for rule, w, a, b in zip(self.rules, self.weights, self.inside, self.outside):
            out += w * np.where(rule.covers(X), a, b)
        return out

    def to_text(self) -> str:
        lines = [f"start at {self.intercept:.6g}"]
        for rule, w, a, b, p in zip(self.rules, self.weights, self.inside, self.outside, self.pi):
            if w * b != 0.0:
                lines.append(f"if {rule.text} then {_num(w * a)} else {_num(w * b)}   (Pi {p:.3f})")
            else:
                lines.append(f"if {rule.text} then {_num(w * a)}   (Pi {p:.3f})")
        tail = []
        if self.h1 is not None:
            tail.append(f"stability H1 = {self.h1:.4g}")
        if self.h2 is not None:
            tail.append(f"ridge loss H2 = {self.h2:.6g}")
        if tail:
            lines.append("; ".join(tail))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "task": self.task,
            "encoding": self.encoding,
            "intercept": self.intercept,
            "epsilon": self.epsilon,
            "h1": self.h1,
            "h2": self.h2,
            "rules": [
                {
                    "text": r.text,
                    "conditions": r.conditions(),
                    "pi": float(p),
                    "weight": float(w),
                    "value_inside": float(w * a),
                    "value_outside": float(w * b),
                }
                for r, w, a, b, p in zip(self.rules, self.weights, self.inside, self.outside, self.pi)
            ],
        }


class RuleSetClassifier(RuleSet, Classifier):
    """The classification variant: ``P(class 1) = sigmoid(offset + sum_i w_i f_i(x))``."""

    kind: ClassVar[str] = "rule_set"

    def __init__(self, *args: Any, classes: np.ndarray, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.task = "binary"
        self.classes = np.asarray(classes)

    def score(self, X: np.ndarray) -> np.ndarray:
        return RuleSet.predict(self, X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = 0.5 * (1.0 + np.tanh(0.5 * self.score(X)))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Encoded labels (indices into ``classes``), as the Problem's ``y`` is encoded."""
        return (self.score(X) > 0).astype(np.int64)

    def to_text(self) -> str:
        text = RuleSet.to_text(self).replace("start at", "log-odds of " + str(self.classes[1]) + ": start at", 1)
        return text.replace("ridge loss H2", "logistic loss H2")

    def to_dict(self) -> dict[str, Any]:
        out = RuleSet.to_dict(self)
        out["task"] = "binary"
        out["classes"] = [str(c) for c in self.classes]
        out["link"] = "logit"
        return out


@dataclass
class FrontierRow:
    """One point of the stability / loss frontier with its certificate."""

    epsilon: float
    h1: float | None  # None: no rule set meets the run's fairness limit at this point
    h2: float | None
    lower_bound: float | None
    gap: float | None
    status: str
    rules: list[str]
    weights: list[float]
    iterations: int = 0
    cuts: int = 0
    seconds: float = 0.0
    rashomon_count: int | None = None  # the point's Rashomon set, when the spec asks for one
    rashomon_complete: bool | None = None
    rashomon_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        if self.rashomon_count is None:  # no set asked for (or the run stopped before this point's)
            del out["rashomon_count"], out["rashomon_complete"], out["rashomon_seconds"]
        return out


@dataclass
class Frontier:
    """The frontier in sweep order (epsilon descending) and the index of the chosen point."""

    rows: list[FrontierRow] = field(default_factory=list)
    chosen: int = 0
    requested: int = 0

    def to_dict(self) -> list[dict[str, Any]]:
        return [{"point": i + 1, "chosen": i == self.chosen, **r.to_dict()} for i, r in enumerate(self.rows)]

    def to_text(self) -> str:
        columns = (("#", 3), ("epsilon", 9), ("H1", 9), ("H2", 12), ("lower", 12), ("gap", 10), ("status", -12))
        head = " ".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}" for c, w in columns) + f" {'k':>3} {'cuts':>5}"
        sets = any(r.rashomon_count is not None for r in self.rows)
        if sets:
            head += f" {'rashomon':>9}"
        lines = [head, "-" * len(head)]
        for i, r in enumerate(self.rows):
            mark = "*" if i == self.chosen else " "
            line = (
                f"{i + 1:>3}{mark}{fmt_number(r.epsilon, 4):>9} {fmt_number(r.h1, 4):>9} {fmt_number(r.h2):>12} "
                f"{fmt_number(r.lower_bound):>12} {fmt_gap(r.h2, r.lower_bound, compact=True):>10} {r.status:<12} "
                f"{len(r.rules):>3} {r.cuts:>5}"
            )
            if sets:
                count = "-" if r.rashomon_count is None else f"{r.rashomon_count}{'' if r.rashomon_complete else '+'}"
                line += f" {count:>9}"
            lines.append(line)
        if self.requested > len(self.rows):
            lines.append(f"({len(self.rows)} of {self.requested} points computed before the search stopped)")
        return "\n".join(lines)


def knee(h1: np.ndarray, h2: np.ndarray) -> int:
    """Index of the point farthest below the chord joining the frontier's ends (normalised axes)."""
    if h1.size < 3:
        return 0
    x = (h1 - h1.min()) / max(np.ptp(h1), 1e-300)
    y = (h2 - h2.min()) / max(np.ptp(h2), 1e-300)
    x0, y0, x1, y1 = x[0], y[0], x[-1], y[-1]
    dist = np.abs((y1 - y0) * x - (x1 - x0) * y + x1 * y0 - y1 * x0)
    return int(np.argmax(dist))
