"""A third-party solver whose model forgets ``kind`` and ``task`` (the ``Model`` contract,
docs/plugins.md): glasswork must name the plugin, not report an internal error."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from glasswork import Certificate, Classifier, Problem, Result, SolveContext, Solver, SolverSpec, Status, hookimpl


class KindlessSpec(SolverSpec):
    solver: Literal["kindless"]


class Majority(Classifier):
    """Predicts the most frequent label; sets neither ``kind`` nor ``task``."""

    def __init__(self, label: int, classes: np.ndarray) -> None:
        self.label, self.classes = label, classes

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.full(X.shape[0], self.label)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        proba = np.zeros((X.shape[0], len(self.classes)))
        proba[:, self.label] = 1.0
        return proba

    def to_text(self) -> str:
        return f"predict {self.classes[self.label]}"

    def to_dict(self) -> dict[str, Any]:
        return {"label": int(self.label)}


class KindlessSolver(Solver):
    name = "kindless"
    version = "0.1"
    spec_model = KindlessSpec
    description = "A solver whose model lacks kind and task (tests)."

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        label = int(np.bincount(problem.y).argmax())
        model = Majority(label, problem.classes if problem.classes is not None else np.array([0, 1]))
        objective = float(np.mean(problem.y != label))
        ctx.incumbent(objective, model, nodes=1)
        status = Status.CANCELLED if ctx.cancelled else Status.HEURISTIC
        return Result(model, Certificate(status=status, objective=objective, lower_bound=0.0))


@hookimpl
def register_solvers(register: Any) -> None:
    register(KindlessSolver)
