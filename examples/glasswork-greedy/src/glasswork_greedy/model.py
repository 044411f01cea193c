"""The decision list: an ordered list of one-feature rules and a default label.

Each rule tests one 0/1 feature for a value (1: "the feature holds", 0: its negation) and predicts
a label; the first rule that matches a sample decides it, and samples no rule matches get the
default. Every rule keeps the weighted class counts of the training samples it captured, so
``predict_proba`` is the training class mix of the rule that decides a sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from glasswork import Classifier


@dataclass(frozen=True)
class Rule:
    """``if X[:, feature] == value then predict label``; ``counts`` are its training class mix."""

    feature: int
    value: int  # 1: the feature holds; 0: its negation
    label: int  # index into the list's classes
    counts: tuple[float, float]  # weighted training samples of class 0 and class 1 it captured


def negated_name(name: str) -> str:
    """The readable negation of a feature name: ``x<=3`` becomes ``x>3``, others ``not name``."""
    if "<=" in name:
        return name.replace("<=", ">", 1)
    if ">" in name and ">=" not in name:
        return name.replace(">", "<=", 1)
    return f"not {name}"


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


class DecisionList(Classifier):
    """A binary decision list over 0/1 features (columns indexed like the training matrix)."""

    kind: ClassVar[str] = "decision_list"

    def __init__(
        self,
        rules: list[Rule],
        default_label: int,
        default_counts: tuple[float, float],
        feature_names: list[str],
        classes: np.ndarray,
    ) -> None:
        if len(classes) != 2:
            raise ValueError(f"a decision list here is binary; got {len(classes)} classes")
        self.task = "binary"
        self.rules = list(rules)
        self.default_label = int(default_label)
        self.default_counts = (float(default_counts[0]), float(default_counts[1]))
        self.feature_names = list(feature_names)
        self.classes = np.asarray(classes)

    # -- prediction -------------------------------------------------------------------------

    def decide(self, X: np.ndarray) -> np.ndarray:
        """For each row, the index of the rule that decides it (``len(rules)`` for the default)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != len(self.feature_names):
            raise ValueError(f"expected a matrix with {len(self.feature_names)} columns, got shape {X.shape}")
        which = np.full(X.shape[0], len(self.rules), dtype=np.int64)
        open_ = np.ones(X.shape[0], dtype=bool)
        for i, rule in enumerate(self.rules):
            hit = open_ & ((X[:, rule.feature] != 0) == bool(rule.value))
            which[hit] = i
            open_ &= ~hit
        return which

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Encoded labels (0 or 1), like ``Problem.y``."""
        labels = np.array([r.label for r in self.rules] + [self.default_label], dtype=np.int64)
        return labels[self.decide(X)]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        table = np.array([self._mix(r.counts) for r in self.rules] + [self._mix(self.default_counts)])
        return table[self.decide(X)]

    def _mix(self, counts: tuple[float, float]) -> tuple[float, float]:
        total = counts[0] + counts[1]
        if total <= 0:  # a default that captured nothing: fall back on the training prior
            prior = np.add.reduce([r.counts for r in self.rules] + [self.default_counts])
            total, counts = float(np.sum(prior)), (float(prior[0]), float(prior[1]))
            if total <= 0:
                return (0.5, 0.5)
        return (counts[0] / total, counts[1] / total)

    # -- reading ----------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.rules)

    def condition(self, rule: Rule) -> str:
        name = self.feature_names[rule.feature]
        return name if rule.value else negated_name(name)

    def label_name(self, label: int) -> str:
        return str(_plain(self.classes[label]))

    def to_text(self) -> str:
        lines = [
            f"{'if' if i == 0 else 'else if'} {self.condition(r)} then {self.label_name(r.label)}"
            for i, r in enumerate(self.rules)
        ]
        default = self.label_name(self.default_label)
        lines.append(f"else {default}" if self.rules else f"always {default}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "task": self.task,
            "classes": [_plain(c) for c in self.classes],
            "size": self.size,
            "feature_names": list(self.feature_names),
            "rules": [
                {
                    "feature": r.feature,
                    "name": self.feature_names[r.feature],
                    "value": r.value,
                    "condition": self.condition(r),
                    "prediction": _plain(self.classes[r.label]),
                    "label": r.label,
                    "counts": list(r.counts),
                }
                for r in self.rules
            ],
            "default": {
                "prediction": _plain(self.classes[self.default_label]),
                "label": self.default_label,
                "counts": list(self.default_counts),
            },
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> DecisionList:
        """Rebuild a list stored with ``to_dict`` (e.g. read back from the run store)."""
        if doc.get("kind") != cls.kind:
            raise ValueError(f"not a {cls.kind}: kind is {doc.get('kind')!r}")

        def counts(pair: list[float]) -> tuple[float, float]:
            return (float(pair[0]), float(pair[1]))

        rules = [Rule(int(r["feature"]), int(r["value"]), int(r["label"]), counts(r["counts"])) for r in doc["rules"]]
        default = doc["default"]
        return cls(
            rules,
            int(default["label"]),
            counts(default["counts"]),
            list(doc["feature_names"]),
            np.asarray(doc["classes"]),
        )
