"""The rule list CORELS returns: ordered rules over feature conjunctions, then a default.

Each antecedent is stored as its items, ``(feature index, value)`` pairs over the Problem's
feature columns, so the list predicts from the same matrix it was trained on (for ``.out`` data
the columns are the antecedents themselves and each antecedent is one item ``(m, 1)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from glasswork.contract.model import Classifier, Task


@dataclass
class Rule:
    """``if antecedent then prediction``, with what it captured on the training data."""

    antecedent: str
    items: list[tuple[int, int]]
    prediction: int
    counts: list[int]  # training samples captured, per class (in context of the rules above)

    @property
    def captured(self) -> int:
        return int(sum(self.counts))

    def matches(self, X: np.ndarray) -> np.ndarray:
        hit = np.ones(X.shape[0], dtype=bool)
        for j, value in self.items:
            hit &= X[:, j] == value
        return hit


class RuleList(Classifier):
    """An ordered list of rules and a default rule; the first rule that matches decides."""

    kind: ClassVar[str] = "rule_list"

    def __init__(
        self,
        rules: list[Rule],
        default: int,
        default_counts: list[int],
        classes: np.ndarray,
        *,
        task: Task = "binary",
        target: str | None = None,
        label_names: list[str] | None = None,
        class_weights: list[float] | None = None,
    ) -> None:
        self.rules = list(rules)
        self.default = int(default)
        self.default_counts = list(map(int, default_counts))
        self.classes = np.asarray(classes)
        self.task = task
        self.target = target
        self.label_names = label_names
        self.class_weights = None if class_weights is None else [float(w) for w in class_weights]

    # -- prediction ------------------------------------------------------------------------

    def _leaf_of(self, X: np.ndarray) -> np.ndarray:
        """Index of the rule deciding each row (``len(rules)`` for the default)."""
        X = np.asarray(X)
        leaf = np.full(X.shape[0], len(self.rules), dtype=np.int64)
        open_ = np.ones(X.shape[0], dtype=bool)
        for i, rule in enumerate(self.rules):
            hit = open_ & rule.matches(X)
            leaf[hit] = i
            open_ &= ~hit
        return leaf

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Encoded labels (indices into ``classes``), as the Problem's ``y`` is encoded."""
        labels = np.asarray([r.prediction for r in self.rules] + [self.default], dtype=np.int64)
        return labels[self._leaf_of(X)]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        table = np.asarray(
            [self._proba(r.counts, r.prediction) for r in self.rules] + [self._proba(self.default_counts, self.default)]
        )
        return table[self._leaf_of(X)]

    def _proba(self, counts: list[int], prediction: int) -> np.ndarray:
        """The rule's class shares, weighted by the class weights the list was trained with: a rule
        predicts its weighted majority, so the class it predicts is its likeliest."""
        c = np.asarray(counts, dtype=np.float64) * (
            1.0 if self.class_weights is None else np.asarray(self.class_weights)
        )
        if c.sum() <= 0:
            c = np.zeros(len(self.classes))
            c[prediction] = 1.0
        return c / c.sum()

    # -- reading ---------------------------------------------------------------------------

    def _label(self, k: int) -> str:
        if self.label_names is not None and len(self.label_names) == len(self.classes):
            return self.label_names[k]
        name = str(self.classes[k])
        return f"{self.target}:{name}" if self.target else name

    def to_text(self) -> str:
        """Rendered like the paper's figures: ``if ({a,b}) then ({y:Yes})`` ... ``else ({y:No})``."""
        lines = []
        for i, r in enumerate(self.rules):
            head = "if" if i == 0 else "else if"
            lines.append(f"{head} ({{{r.antecedent}}}) then ({{{self._label(r.prediction)}}})")
        tail = f"({{{self._label(self.default)}}})"
        lines.append(f"else {tail}" if self.rules else tail)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "task": self.task,
            "classes": [c.item() if hasattr(c, "item") else c for c in self.classes],
            "target": self.target,
            "label_names": self.label_names,
            **({} if self.class_weights is None else {"class_weights": self.class_weights}),
            "rules": [
                {
                    "antecedent": r.antecedent,
                    "items": [[int(j), int(v)] for j, v in r.items],
                    "prediction": self._plain(r.prediction),
                    "captured": r.captured,
                    "class_counts": list(map(int, r.counts)),
                }
                for r in self.rules
            ],
            "default": {
                "prediction": self._plain(self.default),
                "captured": int(sum(self.default_counts)),
                "class_counts": list(map(int, self.default_counts)),
            },
        }

    def _plain(self, k: int) -> Any:
        c = self.classes[k]
        return c.item() if hasattr(c, "item") else c

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleList:
        classes = np.asarray(data["classes"], dtype=object)
        index = {c: i for i, c in enumerate(data["classes"])}
        rules = [
            Rule(
                r["antecedent"],
                [(int(j), int(v)) for j, v in r["items"]],
                index[r["prediction"]],
                list(r["class_counts"]),
            )
            for r in data["rules"]
        ]
        d = data["default"]
        return cls(
            rules,
            index[d["prediction"]],
            d["class_counts"],
            classes,
            task=data["task"],
            target=data.get("target"),
            label_names=data.get("label_names"),
            class_weights=data.get("class_weights"),
        )

    @property
    def features_used(self) -> list[int]:
        """The matrix columns the antecedents read: a row missing one gets no prediction in exports."""
        return sorted({int(j) for rule in self.rules for j, _ in rule.items})

    @property
    def size(self) -> int:
        """Rules including the default (the paper's model size)."""
        return len(self.rules) + 1

    def __len__(self) -> int:
        return len(self.rules)
