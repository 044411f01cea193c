"""The accuracy-fairness frontier of one run (``constraints.fairness.frontier``): certified points
of best objective against unfairness, walked by the epsilon-constraint method through the
solver's own constrained solve.

Point 1 is the best model whose figure (the constrained metric on the training rows, the worst
over the protected groups) is at most ``at_most``; each next point is the best model whose figure
is strictly below the last point's (by ``min_step`` at least). With every solve optimal, the
points are exactly the Pareto front of objective against unfairness within ``at_most``, and the
walk ends with a proof that nothing fairer exists (an ``infeasible`` solve, or a figure of 0);
the cap on points, a limit or a cancel ends it sooner, and says so. A point whose next point has
the same objective is marked ``dominated`` (the solver returned an equally good model that was
not the fairest of them); the front is the other points.

The core never names a solver: one that sets ``supports_fairness_frontier`` is walked here, its
spec copied per point with the point's limit. The document (``Frontier.to_dict``) is kept in the
run's ``stats`` under ``fairness_frontier``, so ``run --json``, the store, ``runs show`` and the
card read it from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.contract.result import Certificate, Result, Status, relative_gap

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.contract.solver import SolveContext, Solver
    from glasswork.spec.models import FairnessConstraint, SolverSpec

STATS_KEY = "fairness_frontier"
"""Where a run's frontier document is kept: ``Result.stats[STATS_KEY]``."""

OBJECTIVE_TIE = 1e-9
"""Two points' objectives within this relative difference are the same objective."""


class FrontierFault(RuntimeError):
    """A solver's point breaks the frontier's contract (a plugin fault, reported as the runner's
    ``SolverFailure`` is)."""


@dataclass
class FrontierPoint:
    """One solve of the walk: the limit it was held to, its certificate, and its model's figure."""

    point: int
    limit: float
    status: str
    objective: float | None
    lower_bound: float | None
    unfairness: float | None = None
    model: dict[str, Any] | None = None
    model_text: str | None = None
    dominated: bool = False

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.lower_bound)

    def to_dict(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "gap": self.gap}


@dataclass
class Frontier:
    """The walk's points in order (unfairness decreasing) and why it ended."""

    metric: str
    at_most: float
    cap: int
    min_step: float
    points: list[FrontierPoint] = field(default_factory=list)
    end: str = "cap"  # "fairest" (proven: nothing fairer), "cap", or the stop status

    @property
    def complete(self) -> bool:
        """Whether the points are the whole exact front: every solve optimal (or the last one
        infeasible) and the walk ended by proving that no fairer model exists."""
        return self.end == "fairest" and all(p.status in ("optimal", "infeasible") for p in self.points)

    def to_dict(self) -> dict[str, Any]:
        head = {name: getattr(self, name) for name in ("metric", "at_most", "min_step", "end", "complete")}
        return {**head, "points_cap": self.cap, "points": [p.to_dict() for p in self.points]}


def next_limit(unfairness: float, min_step: float) -> float:
    """The limit of the point after one whose figure is ``unfairness``: strictly below it (by
    ``min_step``, or by more than ``fairness.within``'s float slack), so that point is excluded."""
    return unfairness - max(min_step, 2e-12 * max(1.0, unfairness))


def mark_dominated(points: list[FrontierPoint]) -> None:
    """A point whose next fairer point has the same objective is dominated (not on the front)."""
    for point, fairer in zip(points, points[1:]):
        if point.objective is None or fairer.objective is None:
            continue
        if fairer.objective <= point.objective + OBJECTIVE_TIE * max(1.0, abs(point.objective)):
            point.dominated = True


def _point_spec(spec: SolverSpec, limit: FairnessConstraint, at_most: float, first: bool) -> SolverSpec:
    """The spec of one point: the constraint at ``at_most`` without ``frontier`` (the solver
    solves one constrained problem); only point 1 keeps a ``rashomon:`` section (its set is the
    run's, as its model is)."""
    point_limit = limit.model_copy(update={"at_most": at_most, "frontier": None})
    constraints = spec.constraints.model_copy(update={"fairness": point_limit})
    update: dict[str, Any] = {"constraints": constraints}
    if not first:
        update["rashomon"] = None
    return spec.model_copy(update=update)


def walk(solver_cls: type[Solver], spec: SolverSpec, problem: Problem, ctx: SolveContext) -> Result:
    """Walk the frontier (module docstring) and return point 1's result with the frontier in its
    ``stats``; the run's status is point 1's, or the stop status when a limit or a cancel cut
    the walk short. Raises ``FrontierFault`` for a point whose model breaks its limit."""
    from glasswork.fairness import audit

    limit = getattr(spec.constraints, "fairness", None)
    assert limit is not None and limit.frontier is not None
    options = limit.frontier
    frontier = Frontier(limit.metric, limit.at_most, options.points, options.min_step)
    first: Result | None = None
    at_most = limit.at_most
    while len(frontier.points) < options.points:
        number = len(frontier.points) + 1
        ctx.log(f"fairness frontier point {number}: {limit.metric} <= {at_most:.6g}")
        result = solver_cls(_point_spec(spec, limit, at_most, first is None)).solve(problem, ctx)
        if not isinstance(result, Result):
            raise FrontierFault(f"returned {type(result).__name__} for frontier point {number}, not a glasswork.Result")
        first = first or result
        cert = result.certificate
        point = FrontierPoint(number, at_most, cert.status.value, cert.objective, cert.lower_bound)
        frontier.points.append(point)
        if result.model is not None:
            pred = np.asarray(result.model.predict(problem.X))
            point.unfairness = audit.unfairness(spec, problem, pred)
            if point.unfairness is None or point.unfairness > at_most + 1e-12 * max(1.0, at_most):
                shown = "undefined" if point.unfairness is None else f"{point.unfairness:.6g}"
                raise FrontierFault(
                    f"returned a model whose {limit.metric} is {shown} on the training rows for frontier point "
                    f"{number}, held to at most {at_most:.6g}"
                )
            point.model, point.model_text = result.model.to_dict(), result.model.to_text()
        figures = {} if point.unfairness is None else {"unfairness": point.unfairness}
        ctx.progress(
            objective=cert.objective, lower_bound=cert.lower_bound, nodes=number, frontier_points=number, **figures
        )
        if result.model is None or cert.status.stopped:
            frontier.end = "fairest" if cert.status is Status.INFEASIBLE else cert.status.value
            break
        assert point.unfairness is not None
        at_most = next_limit(point.unfairness, options.min_step)
        if at_most < 0:  # a figure of 0 (or within min_step of it): nothing is fairer
            frontier.end = "fairest"
            break
        stopped = ctx.check()
        if stopped is not None:
            frontier.end = stopped.value
            break
    mark_dominated(frontier.points)
    assert first is not None
    stats = {**first.stats, STATS_KEY: frontier.to_dict()}
    status = first.certificate.status
    if frontier.end not in ("fairest", "cap") and not status.stopped and status is not Status.INFEASIBLE:
        status = Status(frontier.end)  # the walk was cut short: the run says so, with point 1's figures
    certificate = first.certificate
    if status is not certificate.status:
        certificate = Certificate(
            status=status,
            objective=certificate.objective,
            lower_bound=certificate.lower_bound,
            tolerance=certificate.tolerance,
        )
    return Result(first.model, certificate, first.metrics, stats, first.rashomon)


def frontier_of(stats: Any) -> dict[str, Any] | None:
    """The frontier document of a run's stats (as stored, possibly anything), or ``None``."""
    document = stats.get(STATS_KEY) if isinstance(stats, dict) else None
    if not isinstance(document, dict) or not isinstance(document.get("points"), list):
        return None
    return document


def limit_words(document: dict[str, Any]) -> list[str]:
    """What each point was held to, as people read it: ``<= 0.25`` for point 1, then ``< 0.0818``
    (strictly below the last point's figure) or ``<= LIMIT`` with a ``min_step``."""
    out = []
    previous: Any = None
    for point in document.get("points") or []:
        limit = point.get("limit") if isinstance(point, dict) else None
        figure = previous.get("unfairness") if isinstance(previous, dict) else None
        if isinstance(figure, (int, float)) and not document.get("min_step"):
            out.append(f"< {figure:.4g}")
        else:
            out.append(f"<= {limit:.4g}" if isinstance(limit, (int, float)) else "-")
        previous = point
    return out


def end_words(document: dict[str, Any]) -> str:
    """How the walk ended, in words (the table's caption, the card's note)."""
    end = document.get("end")
    count = len(document.get("points") or [])
    if end == "fairest":
        proof = "proven" if document.get("complete") else "not proven (a point was not certified)"
        step = document.get("min_step")
        if isinstance(step, (int, float)) and step > 0:
            return f"{count} point(s); no model is {step:g} fairer than the last one ({proof})"
        return f"{count} point(s); the walk reached the fairest model: no fairer one exists ({proof})"
    if end == "cap":
        return f"{count} point(s); stopped at the cap of {document.get('points_cap')} points (fairer models may exist)"
    return f"{count} point(s); the walk was cut short ({end}): fairer models may exist"
