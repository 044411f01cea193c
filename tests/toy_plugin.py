"""A tiny but real solver used by the core tests: the exactly best one-rule list.

``if x_j == v then a else b`` is enumerated over every feature j, value v and labels a, b, so its
certificate is a true proof. ``search.behaviour`` makes it misbehave on purpose, to test the
runner: ``endless`` keeps searching until stopped, ``raise`` fails, ``bad_result`` returns
something that is not a Result, ``ignore_stop`` never looks at the stop flag for a while, ``die``
kills its own process (a worker lost mid-task).

It enumerates its Rashomon set exactly too (``rashomon:`` in the spec): every stump and the
constant model within the threshold, best first, so the core's handling of sets (store, JSON,
the ``rashomon`` command, multiplicity figures, the TUI) is tested without a compiled search.
``search.rashomon_stop_after`` stops that enumeration after so many members, as a limit would;
``search.rashomon_batch`` reports it that many members at a time, ``step_seconds`` apart, so a
monitor sees the set grow.

``constraints.fairness`` restricts it to the models that meet the limit on the training rows,
found by brute force over the same class: the best of them with a proof, or ``infeasible`` with
no model when none does; ``endless`` under a constraint finds none before it is stopped (a
stopped run with no model). ``behaviour: unfair`` ignores the constraint and still claims a
proof, a plugin fault the run path must refuse.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Literal

import numpy as np
from pydantic import Field

from glasswork.spec_models import FairnessConstraint
from glasswork import (
    Certificate,
    RashomonMember,
    RashomonSet,
    Classifier,
    Problem,
    Result,
    SolveContext,
    Solver,
    SolverSpec,
    Status,
    StrictModel,
    hookimpl,
    prediction_fingerprint,
)


class ToyObjective(StrictModel):
    regularization: float = Field(0.0, ge=0.0, le=1.0, description="Cost of the rule.")


# Set when an ``ignore_stop`` search wakes up and looks at the stop flag again.
IGNORING_STOP = threading.Event()


class ToyConstraints(StrictModel):
    fairness: FairnessConstraint | None = None


class ToySearch(StrictModel):
    behaviour: Literal["exact", "endless", "raise", "bad_result", "ignore_stop", "die", "unfair"] = "exact"
    step_seconds: float = Field(0.005, gt=0, le=5, description="Sleep per step when endless.")
    rashomon_stop_after: int | None = Field(None, ge=0, description="Stop the set's enumeration after so many.")
    rashomon_batch: int | None = Field(None, ge=1, description="Report the set so many members at a time.")


class ToySpec(SolverSpec):
    solver: Literal["toy"]
    objective: ToyObjective = Field(default_factory=ToyObjective)
    constraints: ToyConstraints = Field(default_factory=ToyConstraints)
    search: ToySearch = Field(default_factory=ToySearch)


class Stump(Classifier):
    kind = "stump"

    def __init__(
        self,
        feature: int | None,
        name: str,
        then: int,
        other: int,
        classes: np.ndarray,
        proba_then: np.ndarray,
        proba_other: np.ndarray,
    ) -> None:
        self.feature, self.name, self.then, self.other = feature, name, then, other
        self.classes, self.task = classes, "binary"
        self.proba_then, self.proba_other = proba_then, proba_other

    def _fires(self, X: np.ndarray) -> np.ndarray:
        if self.feature is None:
            return np.zeros(X.shape[0], dtype=bool)
        return X[:, self.feature] == 1

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.where(self._fires(X), self.then, self.other)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return np.where(self._fires(X)[:, None], self.proba_then, self.proba_other)

    def to_text(self) -> str:
        if self.feature is None:
            return f"predict {self.classes[self.other]}"
        return f"if {self.name} then {self.classes[self.then]}\nelse {self.classes[self.other]}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "feature": self.feature, "name": self.name, "then": self.then, "else": self.other}

    @property
    def size(self) -> int:
        return 0 if self.feature is None else 1


def _mix(y: np.ndarray) -> np.ndarray:
    counts = np.bincount(y, minlength=2).astype(float)
    return counts / counts.sum() if counts.sum() else np.full(2, 0.5)


def best_stump(problem: Problem, regularization: float) -> tuple[Stump, float]:
    X, y = problem.X, problem.y
    majority = int(np.bincount(y, minlength=2).argmax())
    best = Stump(None, "", majority, majority, problem.classes, _mix(y), _mix(y))
    best_obj = float(np.mean(y != majority))
    for j in range(problem.n_features):
        fires = X[:, j] == 1
        for then in (0, 1):
            for other in (0, 1):
                pred = np.where(fires, then, other)
                obj = float(np.mean(pred != y)) + regularization
                if obj < best_obj - 1e-12:
                    best_obj = obj
                    best = Stump(
                        j, problem.feature_names[j], then, other, problem.classes, _mix(y[fires]), _mix(y[~fires])
                    )
    return best, best_obj


def every_stump(problem: Problem, regularization: float) -> list[tuple[float, Stump]]:
    """Every model of the toy's class with its objective, best first: the constant model of each
    label and each stump whose two branches predict different labels (one with equal branches
    predicts as a constant model and costs more: not a separate model)."""
    X, y = problem.X, problem.y
    models = [
        (float(np.mean(y != label)), Stump(None, "", label, label, problem.classes, _mix(y), _mix(y)))
        for label in (0, 1)
    ]
    for j in range(problem.n_features):
        fires = X[:, j] == 1
        for then in (0, 1):
            pred = np.where(fires, then, 1 - then)
            stump = Stump(j, problem.feature_names[j], then, 1 - then, problem.classes, _mix(y[fires]), _mix(y[~fires]))
            models.append((float(np.mean(pred != y)) + regularization, stump))
    models.sort(key=lambda pair: pair[0])
    return models


def toy_rashomon_set(problem: Problem, spec: ToySpec, optimum: float, ctx: SolveContext) -> RashomonSet:
    """The toy's Rashomon set, enumerated exactly (or stopped after ``rashomon_stop_after``)."""
    request = spec.rashomon
    assert request is not None
    threshold = request.threshold if request.threshold is not None else (1 + request.epsilon) * optimum
    inside = [(obj, model) for obj, model in every_stump(problem, spec.objective.regularization) if obj <= threshold]
    stop = spec.search.rashomon_stop_after
    enumerated = inside if stop is None else inside[:stop]
    members = [
        RashomonMember(
            objective=obj,
            features=() if model.feature is None else (model.name,),
            fingerprint=prediction_fingerprint(model.predict(problem.X)),
            model=model if request.keep == "model" else None,
        )
        for obj, model in enumerated[: request.max_models]
    ]
    batch = spec.search.rashomon_batch or max(1, len(enumerated))
    for start in range(0, max(1, len(enumerated)), batch):
        if start or spec.search.rashomon_batch:  # batched: a monitor sees the run before its set
            time.sleep(spec.search.step_seconds)
        done = min(start + batch, len(enumerated))
        left = inside[done][0] if done < len(inside) else None  # the best objective not enumerated yet
        ctx.rashomon(done, members[start:done], threshold=threshold, lower_bound=left)
    complete = len(enumerated) == len(inside)
    return RashomonSet(
        threshold=threshold,
        optimum=optimum,
        epsilon=request.epsilon,
        count=len(enumerated),
        complete=complete,
        members=members,
        unenumerated_bound=None if complete else inside[len(enumerated)][0],
    )


def meets(problem: Problem, spec: ToySpec, model: Stump) -> bool:
    """Whether ``model`` meets ``constraints.fairness`` on the training rows, every group."""
    from glasswork import audit, fairness

    limit = spec.constraints.fairness
    if limit is None or spec.fairness is None:
        return True
    pred = model.predict(problem.X)
    for group in audit.groups(spec.fairness, problem.audit):
        protected, reference = fairness.group_rates(problem.y, pred, group.mask, problem.sample_weight)
        if not fairness.within(limit.metric, limit.at_most, protected, reference):
            return False
    return True


def best_fair_stump(problem: Problem, spec: ToySpec) -> tuple[Stump, float] | None:
    """The best model of the toy's class that meets the constraint, by brute force; ``None``
    when none does."""
    for objective, model in every_stump(problem, spec.objective.regularization):
        if meets(problem, spec, model):
            return model, objective
    return None


class ToySolver(Solver):
    name = "toy"
    version = "1.0"
    spec_model = ToySpec
    description = "Exactly best one-rule list (test fixture)."
    supports_rashomon = True

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        spec: ToySpec = self.spec  # type: ignore[assignment]
        behaviour = spec.search.behaviour
        if behaviour == "raise":
            raise RuntimeError("toy solver asked to fail")
        if behaviour == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if behaviour == "bad_result":
            return "not a result"  # type: ignore[return-value]
        constrained = spec.constraints.fairness is not None
        if constrained and behaviour == "exact":
            return self._constrained(problem, spec, ctx)
        model, objective = best_stump(problem, spec.objective.regularization)
        if behaviour == "unfair":  # the unconstrained best, claimed optimal under the constraint
            return Result(model, Certificate(status=Status.OPTIMAL, objective=objective, lower_bound=objective))
        ctx.incumbent(objective, model, nodes=problem.n_features)
        if behaviour == "exact":
            status = ctx.check(problem.n_features) or Status.OPTIMAL
            lower = objective if status is Status.OPTIMAL else 0.0
            ctx.progress(objective=objective, lower_bound=lower, nodes=problem.n_features)
            rashomon = None
            if spec.rashomon is not None and status is Status.OPTIMAL:
                rashomon = toy_rashomon_set(problem, spec, objective, ctx)
            elif spec.rashomon is not None:  # stopped before the proof: the incumbent alone
                incumbent = RashomonMember(
                    objective=objective,
                    features=() if model.feature is None else (model.name,),
                    fingerprint=prediction_fingerprint(model.predict(problem.X)),
                    model=model if spec.rashomon.keep == "model" else None,
                )
                threshold = spec.rashomon.threshold or (1 + (spec.rashomon.epsilon or 0.0)) * objective
                rashomon = RashomonSet.unproven(incumbent, threshold, lower, epsilon=spec.rashomon.epsilon)
                ctx.rashomon(rashomon.count, rashomon.members, threshold=threshold, lower_bound=lower)
            return Result(
                model,
                Certificate(status=status, objective=objective, lower_bound=lower),
                stats={"nodes": problem.n_features},
                rashomon=rashomon,
            )
        nodes = 0
        if behaviour == "ignore_stop":
            IGNORING_STOP.clear()
            time.sleep(spec.search.step_seconds)
            IGNORING_STOP.set()  # a test asks whether the run was abandoned before this
        while True:
            nodes += 1
            status = ctx.check(nodes)
            if status is not None:
                break
            ctx.progress(objective=None if constrained else objective, lower_bound=0.0, nodes=nodes, queue=nodes % 7)
            time.sleep(spec.search.step_seconds)
        if constrained:  # stopped before any model met the constraint: no model, the bound so far
            return Result(None, Certificate(status=status, objective=None, lower_bound=0.0), stats={"nodes": nodes})
        return Result(model, Certificate(status=status, objective=objective, lower_bound=0.0), stats={"nodes": nodes})

    def _constrained(self, problem: Problem, spec: ToySpec, ctx: SolveContext) -> Result:
        nodes = 2 * problem.n_features + 2
        found = best_fair_stump(problem, spec)
        if found is None:
            ctx.progress(nodes=nodes)
            return Result(None, Certificate(status=Status.INFEASIBLE, objective=None), stats={"nodes": nodes})
        model, objective = found
        ctx.incumbent(objective, model, nodes=nodes)
        status = ctx.check(nodes) or Status.OPTIMAL
        lower = objective if status is Status.OPTIMAL else 0.0
        return Result(model, Certificate(status=status, objective=objective, lower_bound=lower), stats={"nodes": nodes})


@hookimpl
def register_solvers(register: Any) -> None:
    register(ToySolver)
