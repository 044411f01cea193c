"""The greedy decision-list solver: its spec model, the algorithm, and the glasswork ``Solver``.

The objective is the one CORELS minimises: (weighted) training error as a fraction of the
training weight, plus ``regularization`` per rule. Greedy growth gives no bound on how far that
is from the best list, so a finished run's certificate is ``heuristic``; a run stopped by a limit
or Ctrl-C reports that status instead. Neither comes with a lower bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import Field

from glasswork import (
    Certificate,
    DataError,
    Problem,
    Result,
    SolveContext,
    Solver,
    SolverSpec,
    Status,
    StrictModel,
)
from glasswork_greedy import __version__
from glasswork_greedy.model import DecisionList, Rule

# An improvement smaller than this (in objective units) is rounding, not progress.
_TOLERANCE = 1e-12


# -- the spec ------------------------------------------------------------------------------------


class GreedyObjective(StrictModel):
    """What the greedy search minimises: training error + regularization x rules."""

    regularization: float = Field(
        0.01, ge=0.0, description="Penalty per rule, in units of training error (fraction of samples)."
    )


class GreedyConstraints(StrictModel):
    """Limits on the list's shape."""

    max_rules: int = Field(8, ge=0, le=64, description="Most rules in the list (the default not counted).")
    min_support: float = Field(
        0.0,
        ge=0.0,
        lt=0.5,
        description="Smallest fraction of the training samples (by weight) a rule must capture.",
    )


class GreedySearch(StrictModel):
    """The greedy search has no options; the section exists so every spec has the same shape."""


class GreedySpec(SolverSpec):
    """A problem spec for the ``greedy`` solver."""

    solver: Literal["greedy"] = Field(description="Greedy decision list (glasswork-greedy).")
    objective: GreedyObjective = Field(default_factory=GreedyObjective)
    constraints: GreedyConstraints = Field(default_factory=GreedyConstraints)
    search: GreedySearch = Field(default_factory=GreedySearch)


# -- the algorithm -------------------------------------------------------------------------------


@dataclass
class Step:
    """The list after one more rule: its size, objective, training error and candidates so far."""

    rules: int
    objective: float
    error: float
    nodes: int


@dataclass
class GreedyFit:
    """The outcome of ``greedy_decision_list``; ``stopped`` is the status if a check stopped it."""

    model: DecisionList
    objective: float
    error: float
    nodes: int
    steps: list[Step] = field(default_factory=list)
    stopped: Status | None = None
    reason: str = ""


def _majority(n: float, p: float) -> tuple[int, float]:
    """Majority label of ``n`` samples of which ``p`` are positive, and its error; ties go to 0."""
    return (1, n - p) if p > n - p else (0, p)


def greedy_decision_list(
    X: np.ndarray,
    y: np.ndarray,
    feature_names: list[str],
    classes: np.ndarray,
    *,
    regularization: float = 0.01,
    max_rules: int = 8,
    min_support: float = 0.0,
    sample_weight: np.ndarray | None = None,
    check: Callable[[int], Status | None] | None = None,
    on_step: Callable[[GreedyFit], None] | None = None,
) -> GreedyFit:
    """Grow a decision list one rule at a time, always taking the rule that lowers the objective most.

    A candidate is a feature or its negation; its rule captures the samples it covers that no
    earlier rule captured and predicts their majority label, and the default then predicts the
    majority of what is left. Candidates are tried feature by feature, the feature before its
    negation; the first of equally good ones wins. Growth stops when no candidate lowers the
    objective, at ``max_rules``, or when ``check(candidates evaluated so far)`` returns a status.
    """
    Xb = np.asarray(X) != 0
    y = np.asarray(y).astype(np.int64)
    n, p = Xb.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    total = float(w.sum())
    if total <= 0:
        raise ValueError("the training weight is zero")
    wy = w * y

    open_ = np.ones(n, dtype=bool)
    captured_err = 0.0
    rules: list[Rule] = []
    n_open, p_open = total, float(wy.sum())
    default_label, default_err = _majority(n_open, p_open)

    def snapshot(nodes: int) -> GreedyFit:
        err = (captured_err + default_err) / total
        model = DecisionList(list(rules), default_label, (n_open - p_open, p_open), feature_names, classes)
        return GreedyFit(model, err + regularization * len(rules), err, nodes)

    fit = snapshot(0)
    steps = [Step(0, fit.objective, fit.error, 0)]
    fit.steps = list(steps)
    if on_step is not None:
        on_step(fit)
    nodes = 0
    reason = "no rule lowers the objective"
    while True:
        if len(rules) >= max_rules:
            reason = f"reached max_rules={max_rules}"
            break
        status = check(nodes) if check is not None else None
        if status is not None:
            fit.stopped, reason = status, f"stopped: {status}"
            break
        rows = np.flatnonzero(open_)
        covered = Xb[rows].T.astype(np.float64)  # (p, open samples)
        n1, p1 = covered @ w[rows], covered @ wy[rows]
        # candidate (j, value) at flat index 2j + (1 - value): the feature, then its negation
        cover_n = np.column_stack([n1, n_open - n1]).ravel()
        cover_p = np.column_stack([p1, p_open - p1]).ravel()
        nodes += 2 * p
        rule_err = np.where(cover_p > cover_n - cover_p, cover_n - cover_p, cover_p)
        rest_n, rest_p = n_open - cover_n, p_open - cover_p
        rest_err = np.where(rest_p > rest_n - rest_p, rest_n - rest_p, rest_p)
        gain = (default_err - rule_err - rest_err) / total - regularization
        gain[cover_n < min_support * total] = -np.inf
        gain[cover_n <= 0] = -np.inf
        if gain.size == 0:
            break
        best = int(np.argmax(gain))
        if not gain[best] > _TOLERANCE:
            break
        j, value = best // 2, 1 - best % 2
        label, err = _majority(float(cover_n[best]), float(cover_p[best]))
        hit = open_ & (Xb[:, j] == bool(value))
        rules.append(Rule(j, value, label, (float(cover_n[best] - cover_p[best]), float(cover_p[best]))))
        captured_err += err
        open_ &= ~hit
        n_open, p_open = float(rest_n[best]), float(rest_p[best])
        default_label, default_err = _majority(n_open, p_open)
        fit = snapshot(nodes)
        steps.append(Step(len(rules), fit.objective, fit.error, nodes))
        fit.steps = list(steps)
        if on_step is not None:
            on_step(fit)
    fit.nodes = nodes
    fit.reason = reason
    return fit


# -- the solver ----------------------------------------------------------------------------------


class GreedySolver(Solver):
    """glasswork's face of ``greedy_decision_list``: reads the spec, reports through ``ctx``."""

    name = "greedy"
    version = __version__
    description = "Greedy decision list over 0/1 features (a fast baseline; no optimality bound)."
    tasks = frozenset({"binary"})
    spec_model = GreedySpec

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        spec: GreedySpec = self.spec  # type: ignore[assignment]
        if problem.task != "binary":
            raise DataError(f"the greedy solver handles binary targets; this one is {problem.task}")
        if not problem.is_binary_matrix:
            raise DataError(
                "the greedy solver needs 0/1 features",
                hint="add 'binarize: {thresholds: 4}' under 'data'",
            )
        classes = problem.classes if problem.classes is not None else np.array([0, 1])

        def report(fit: GreedyFit) -> None:
            ctx.progress(objective=fit.objective, nodes=fit.nodes, rules=fit.model.size, train_error=fit.error)
            ctx.incumbent(fit.objective, fit.model, nodes=fit.nodes)

        fit = greedy_decision_list(
            problem.X,
            problem.y,
            problem.feature_names,
            classes,
            regularization=spec.objective.regularization,
            max_rules=spec.constraints.max_rules,
            min_support=spec.constraints.min_support,
            sample_weight=problem.sample_weight,
            check=ctx.check,
            on_step=report,
        )
        ctx.log(f"greedy: {fit.model.size} rules; {fit.reason}")
        status = fit.stopped or Status.HEURISTIC
        return Result(
            model=fit.model,
            certificate=Certificate(status=status, objective=fit.objective, lower_bound=None),
            metrics={"train_error": fit.error},  # the runner adds accuracy, AUC, log loss
            stats={
                "nodes": fit.nodes,
                "rules": fit.model.size,
                "stop_reason": fit.reason,
                "objective_by_rules": [s.objective for s in fit.steps],
            },
        )
