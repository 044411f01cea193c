"""The ``fasterrisk`` solver: spec -> engine -> a pool of score cards, best first."""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from glasswork.fairness import audit
from glasswork.class_weights import class_weight_factors
from glasswork.contract.model import prediction_fingerprint
from glasswork.contract.result import Certificate, Result, Status, relative_gap
from glasswork.contract.solver import SolveContext, Solver, StopReason
from glasswork.data import DataError, Problem
from glasswork.plugins.fasterrisk.certify import MAX_FEATURES, MAX_LOGIT, SupportSearch
from glasswork.plugins.fasterrisk.engine import Constraints, Engine, Settings
from glasswork.plugins.fasterrisk.fairness import MAX_GROUPS, FairnessTarget, keep_fair
from glasswork.plugins.fasterrisk.model import ScoreCard, expected_calibration_error, reliability
from glasswork.plugins.fasterrisk.spec import FasterRiskConstraints, FasterRiskObjective, FasterRiskSpec
from glasswork.rashomon import RashomonMember, RashomonSet

RASHOMON_EVENT_SECONDS = 0.5  # how often the exact enumeration reports the members it kept


def rashomon_threshold(spec: FasterRiskSpec, optimum: float) -> float:
    """The spec's threshold: absolute, or ``(1 + epsilon) * optimum`` (TreeFARMS' convention)."""
    request = spec.rashomon
    assert request is not None
    if request.threshold is not None:
        return float(request.threshold)
    return (1.0 + float(request.epsilon or 0.0)) * optimum


def rashomon_member(card: ScoreCard, problem: Problem, keep_model: bool) -> RashomonMember:
    """A card as a member of the set: its loss, the features it uses and its predictions' digest."""
    return RashomonMember(
        objective=float(card.loss or 0.0),
        features=tuple(card.features),
        fingerprint=prediction_fingerprint(card.predict(problem.X)),
        model=card if keep_model else None,
    )


def settings_from_spec(spec: FasterRiskSpec) -> Settings:
    """The engine's settings: the search section's knobs go by the same names (unset ones, ``None``,
    take the ``defaults`` preset's)."""
    s = spec.search
    knobs = s.model_dump(exclude={"policy", "certify", "certify_time", "defaults"})
    return Settings.preset(s.defaults, k=spec.constraints.sparsity, **knobs)


def _match(patterns: list[str], names: list[str], what: str) -> list[int]:
    found: list[int] = []
    for pattern in patterns:
        hits = [j for j, n in enumerate(names) if n == pattern or fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            raise DataError(
                f"constraints.{what}: no feature matches {pattern!r}",
                hint=f"features are: {', '.join(names[:30])}{' ...' if len(names) > 30 else ''}",
            )
        found.extend(h for h in hits if h not in found)
    return found


def constraints_from_spec(spec: FasterRiskConstraints, names: list[str]) -> Constraints:
    """Resolve feature names and patterns against the problem's columns."""
    p = len(names)
    bounds = spec.coefficient_bounds
    cons = Constraints.box(p)
    if isinstance(bounds, tuple):
        cons.lower[:], cons.upper[:] = bounds
    elif isinstance(bounds, list):
        if len(bounds) != p:
            raise DataError(
                f"constraints.coefficient_bounds lists {len(bounds)} pairs for {p} features",
                hint="give one pair per feature, one pair for all, or a map by name",
            )
        for j, (lo, hi) in enumerate(bounds):
            cons.lower[j], cons.upper[j] = lo, hi
    else:
        for pattern, (lo, hi) in bounds.items():
            for j in _match([pattern], names, "coefficient_bounds"):
                cons.lower[j], cons.upper[j] = lo, hi
    for g, group in enumerate(spec.groups):
        members = _match([group] if isinstance(group, str) else list(group), names, "groups")
        for j in members:
            if cons.group_of[j] >= 0:
                raise DataError(
                    f"feature {names[j]!r} is in two groups", hint="each feature may belong to one group at most"
                )
            cons.group_of[j] = g
    cons.include = _match(spec.include, names, "include")
    cons.exclude = _match(spec.exclude, names, "exclude")
    clash = set(cons.include) & set(cons.exclude)
    if clash:
        raise DataError(f"features both included and excluded: {', '.join(names[j] for j in sorted(clash))}")
    groups_used = [cons.group_of[j] for j in cons.include if cons.group_of[j] >= 0]
    if len(groups_used) != len(set(groups_used)):
        raise DataError("constraints.include forces two features of the same group")
    pinned = [names[j] for j in cons.include if cons.lower[j] == 0 and cons.upper[j] == 0]
    if pinned:  # a forced feature must have non-zero points, which its box forbids
        raise DataError(
            f"constraints.include forces {', '.join(repr(n) for n in pinned)}, whose "
            "coefficient_bounds are [0, 0]: no card can use it",
            hint="widen its bounds or drop it from constraints.include",
        )
    if len(cons.include) > spec.sparsity:
        raise DataError(f"{len(cons.include)} included features exceed sparsity {spec.sparsity}")
    return cons


def row_weights(problem: Problem, objective: FasterRiskObjective) -> np.ndarray | None:
    """Sample weights times class weights (None when all are one)."""
    weights = None if problem.sample_weight is None else np.asarray(problem.sample_weight, float).copy()
    factors = class_weight_factors(objective.class_weight, problem.classes, problem.y)
    if factors is None:
        return weights
    y = np.asarray(problem.y, dtype=np.int64)
    return (np.ones(y.size) if weights is None else weights) * factors[y]


def certify_cards(
    problem: Problem,
    weights: np.ndarray | None,
    cons: Constraints,
    k: int,
    cards: list[ScoreCard],
    upper: float,
    budget: float,
    ctx: SolveContext,
) -> tuple[float | None, dict[str, Any]]:
    """The lower bound of ``certify.SupportSearch`` for these cards, and what the search did.

    Every card is a k-feature logistic model ``(points / m, intercept / m)``; the bound covers
    models whose coefficients stay below ``MAX_LOGIT``, so a card beyond that (none that
    FasterRisk makes) gets no bound rather than a wrong one. Each card learns its gap.
    """

    def too_large(card: ScoreCard) -> bool:
        size = max([abs(card.intercept), *(abs(p) for p in card.points)]) / card.multiplier
        return size > MAX_LOGIT

    if any(too_large(c) for c in cards):
        return None, {"skipped": f"a card's coefficients exceed {MAX_LOGIT:g} on the logit scale"}
    if ctx.stop_reason is not StopReason.NONE:
        return None, {"skipped": f"the run was stopped ({ctx.stop_reason.name.lower()})"}
    allowed = problem.n_features - len(cons.exclude)
    if allowed > MAX_FEATURES:
        ctx.log(f"fasterrisk: no lower bound: {allowed} features, the bound handles {MAX_FEATURES}")
        return None, {"skipped": f"{allowed} features: the bound's search handles at most {MAX_FEATURES}"}
    budget = budget if ctx.deadline is None else max(0.0, min(budget, ctx.deadline - ctx.started - ctx.elapsed()))
    best = cards[0].loss

    def stop() -> str | None:
        return None if ctx.check() is None else ctx.stop_reason.name.lower()

    def report(state: Any) -> None:
        ctx.progress(
            objective=best,
            lower_bound=min(state.lower_bound, best or math.inf),
            nodes=state.nodes,
            phase="certify",
            bound_nodes=state.nodes,
            open_nodes=state.open_nodes,
        )

    search = SupportSearch(problem.X, problem.y, weights, cons, k)
    found = search.run(upper_bound=upper, time_limit=budget, stop=stop, report=report)
    lower = found.lower_bound
    for card in cards:
        if card.loss is not None:
            card.certified_gap = relative_gap(card.loss, lower)
            card.certified_against = f"best {k}-feature logistic model"
    names = list(problem.feature_names)
    ctx.progress(
        objective=best,
        lower_bound=min(lower, best or math.inf),
        nodes=found.nodes,
        phase="certified",
        bound_nodes=found.nodes,
        open_nodes=found.open_nodes,
    )
    return lower, {
        "lower_bound": lower,
        "best_real_loss": found.upper_bound,
        "best_real_support": [names[j] for j in found.best_support],
        "complete": found.complete,
        "stopped": found.stopped,
        "seconds": found.seconds,
        "nodes": found.nodes,
        "open_nodes": found.open_nodes,
        "max_logit": MAX_LOGIT,
    }


@dataclass(frozen=True)
class ExactTask:
    """What the exact policy's search and its Rashomon set work on: the data, the run's context,
    the card's constraints, the rows' weights and the number of features."""

    problem: Problem
    ctx: SolveContext
    cons: Constraints
    weights: np.ndarray | None
    k: int


class FasterRiskSolver(Solver):
    """Sparse integer risk scores by beam search, a diverse pool and star-ray rounding."""

    name = "fasterrisk"
    version = "0.1.0"
    description = "FasterRisk (NeurIPS 2022): sparse integer risk score cards with multipliers."
    spec_model = FasterRiskSpec
    tasks = frozenset({"binary"})
    # policy exact enumerates the set of integer cards (m = 1); policy beam hands over its diverse
    # pool as a sample of the set of multiplier cards (exhaustive: false), never as the set
    supports_rashomon = True
    # constraints.fairness: policy exact certifies each point of the core's frontier walk (the beam's
    # points are heuristic, and say so)
    supports_fairness_frontier = True

    def check(self, problem: Problem) -> None:
        """The constraints, class weights and policy against the data, as ``solve`` starts."""
        self._inputs(problem)

    def _fairness(self, problem: Problem) -> FairnessTarget | None:
        """``constraints.fairness`` on this problem's training rows (None without it)."""
        spec: FasterRiskSpec = self.spec  # type: ignore[assignment]
        constraint = spec.constraints.fairness
        if constraint is None:
            return None
        if spec.fairness is None:  # the spec's own check says so first; a spec built in code may not
            raise DataError(
                "constraints.fairness needs a fairness: section naming the protected groups",
                field="constraints.fairness",
            )
        if spec.rashomon is not None:
            raise DataError(
                "fasterrisk does not enumerate a Rashomon set under constraints.fairness",
                hint="remove rashomon: (or constraints.fairness); a set's fairness ranges are in glasswork rashomon",
                field="constraints.fairness",
            )
        groups = audit.groups(spec.fairness, problem.audit)
        if len(groups) > MAX_GROUPS:
            raise DataError(
                f"constraints.fairness takes at most {MAX_GROUPS} protected groups, the spec has {len(groups)}",
                field="fairness.protected",
            )
        return FairnessTarget(
            constraint.metric, constraint.at_most, tuple(g.mask for g in groups), problem.sample_weight
        )

    def _inputs(self, problem: Problem) -> tuple[Constraints, np.ndarray | None]:
        """The constraints and row weights of this spec on ``problem``; raises ``DataError``."""
        spec: FasterRiskSpec = self.spec  # type: ignore[assignment]
        cons = constraints_from_spec(spec.constraints, list(problem.feature_names))
        weights = row_weights(problem, spec.objective)
        y = np.asarray(problem.y)
        mass = np.bincount(y, weights=weights, minlength=2) if y.size else np.zeros(2)
        if mass.size < 2 or (mass[:2] <= 0).any():  # the logistic loss has no finite minimiser
            names = [str(c) for c in (problem.classes if problem.classes is not None else (0, 1))][:2]
            missing = [name for name, m in zip(names, mass[:2]) if m <= 0]
            raise DataError(
                f"a score card needs training rows of both classes with positive weight; "
                f"class {' and '.join(repr(m) for m in missing)} has none",
                hint="check data.target, data.positive, data.where and objective.class_weight",
            )
        allowed = problem.n_features - len(cons.exclude)
        if spec.search.policy == "exact" and allowed > MAX_FEATURES:
            raise DataError(
                f"search.policy: exact handles at most {MAX_FEATURES} features, this problem allows {allowed}",
                hint="exclude features (constraints.exclude), bin more coarsely, or use policy: beam",
            )
        self._fairness(problem)
        return cons, weights

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        spec: FasterRiskSpec = self.spec  # type: ignore[assignment]
        settings = settings_from_spec(spec)
        cons, weights = self._inputs(problem)

        def progress(**kw: Any) -> None:
            ctx.progress(objective=kw.pop("objective", None), nodes=kw.pop("nodes", None), **kw)

        engine = Engine(
            problem.X,
            problem.y,
            weights,
            settings,
            cons,
            stop_flag=ctx.stop_flag,
            check=lambda nodes: ctx.check(nodes) is not None,
            progress=progress,
        )
        ctx.log(
            f"fasterrisk: {engine.n} distinct rows of {problem.n_samples}, "
            f"{problem.n_features} features, k={settings.k}"
        )
        integer, stats = engine.run()
        seeds = ScoreCard.from_pool(
            problem.X, problem.feature_names, integer, classes=problem.classes, reduce_points=settings.reduce_points
        )
        target = self._fairness(problem)
        cards = seeds
        if target is not None:  # every card returned or shown meets the constraint
            fair, moved = keep_fair(integer, problem.X, problem.y, weights, target)
            cards = ScoreCard.from_pool(
                problem.X, problem.feature_names, fair, classes=problem.classes, reduce_points=settings.reduce_points
            )
            stats["fairness"] = {
                "metric": target.metric,
                "at_most": target.at_most,
                "pool": len(integer),
                "pool_meeting": len(fair),
                "intercepts_moved": moved,
            }
            ctx.log(
                f"fasterrisk: {len(fair)} of the beam's {len(integer)} cards meet {target.metric} <= "
                f"{target.at_most:g} ({moved} with their intercept moved)"
            )
        best = cards[0] if cards else None
        if best is not None:
            ctx.incumbent(best.loss or 0.0, best, nodes=engine.nodes)
        lower = None
        if spec.search.certify and cards:
            upper = min([float(stats["best_continuous_loss"]), *(c.loss for c in cards if c.loss is not None)])
            lower, stats["certificate"] = certify_cards(
                problem, weights, cons, settings.k, cards, upper, spec.search.certify_time, ctx
            )
            found = stats["certificate"]
            stats.update(
                {
                    "bound_seconds": found.get("seconds"),
                    "bound_nodes": found.get("nodes"),
                    "bound_closed": found.get("complete"),
                }
            )
        if spec.search.policy == "exact":
            task = ExactTask(problem, ctx, cons, weights, settings.k)
            return self._exact(task, cards, stats, seeds, target)
        if best is None:
            return self._no_fair_card(ctx, stats, lower)
        stopped = ctx.stop_reason
        status = Status.HEURISTIC if stopped is StopReason.NONE else stopped.status
        tolerance = 1e-6
        gap = relative_gap(best.loss, lower)
        if stopped is StopReason.NONE and gap is not None and gap <= tolerance and target is None:
            status = Status.OPTIMAL  # no k-feature model, integer or not, does better
        if target is not None:
            stats["fairness"]["figure"] = target.figure(problem.y, best.predict(problem.X))

        stats["pool"] = [self._record(rank, card, problem) for rank, card in enumerate(cards, 1)]
        stats["defaults"] = spec.search.defaults
        metrics: dict[str, float] = {"train_logistic_loss_sum": float(best.loss or 0.0)}
        calibration: dict[str, Any] = {}
        for part, X, y, w in (
            ("train", problem.X, problem.y, problem.sample_weight),
            ("test", problem.X_test, problem.y_test, problem.test_sample_weight),
        ):
            if X is None or y is None or len(y) == 0:
                continue
            table = reliability(y, best.predict_proba(X)[:, 1], sample_weight=w)
            calibration[part] = table
            metrics[f"{part}_ece"] = expected_calibration_error(table)
        stats["reliability"] = calibration
        ctx.progress(objective=best.loss, nodes=engine.nodes, phase="done", pool_size=len(cards))
        cert = Certificate(
            status=status,
            objective=best.loss,
            lower_bound=None if lower is None else min(lower, best.loss or 0.0),
            tolerance=tolerance,
        )
        rashomon = None
        if spec.rashomon is not None:
            rashomon = self._pool_sample(problem, ctx, cards, status is Status.OPTIMAL)
        return Result(best, cert, metrics=metrics, stats=stats, rashomon=rashomon)

    def _no_fair_card(
        self, ctx: SolveContext, stats: dict[str, Any], lower_bound: float | None, *, proven: bool = False
    ) -> Result:
        """No card meets ``constraints.fairness``: proven (policy exact, both trees closed), or none
        found (a stop; or the beam, whose pool is all it looks at)."""
        spec: FasterRiskSpec = self.spec  # type: ignore[assignment]
        constraint = spec.constraints.fairness
        assert constraint is not None
        limit = f"{constraint.metric} <= {constraint.at_most:g}"
        if proven:
            ctx.log(f"fasterrisk: no card meets constraints.fairness ({limit}): proven infeasible")
            return Result(None, Certificate(status=Status.INFEASIBLE, objective=None), stats=stats)
        stopped = ctx.stop_reason
        beam_ended = spec.search.policy == "beam" and stopped is StopReason.NONE
        status = (
            stopped.status
            if stopped is not StopReason.NONE
            else Status.HEURISTIC
            if beam_ended
            else Status.STOPPED_NODES
        )
        if beam_ended:
            ctx.log(
                f"fasterrisk: no card of the beam's pool meets constraints.fairness ({limit}), even with "
                "its intercept moved; the beam is heuristic, so one may exist: search.policy: exact finds "
                "the best one or proves that none does",
                level="warning",
            )
        bound = lower_bound if lower_bound is not None and math.isfinite(lower_bound) else None
        return Result(None, Certificate(status=status, objective=None, lower_bound=bound), stats=stats)

    def _pool_sample(self, problem: Problem, ctx: SolveContext, cards: list[ScoreCard], proven: bool) -> RashomonSet:
        """The beam policy's diverse pool within the threshold: a sample of the set, labelled so.

        The pool holds the cards the beam search happened to round (each support once, its best
        multiplier), so it is neither every card within the threshold nor a count of them.
        """
        spec: FasterRiskSpec = self.spec  # type: ignore[assignment]
        request = spec.rashomon
        assert request is not None
        optimum = float(cards[0].loss or 0.0)
        threshold = rashomon_threshold(spec, optimum)
        slack = 1e-12 * max(1.0, abs(threshold))
        inside = [c for c in cards if c.loss is not None and c.loss <= threshold + slack]
        members = [rashomon_member(c, problem, request.keep == "model") for c in inside[: request.max_models]]
        ctx.log(
            "fasterrisk: policy beam gives the diverse pool as a sample of the Rashomon set "
            "(exhaustive: false); policy exact enumerates every integer card within the threshold"
        )
        ctx.rashomon_basis(optimum, proven=proven, epsilon=request.epsilon)
        ctx.rashomon(len(inside), members, threshold=threshold)
        return RashomonSet(
            threshold=threshold,
            optimum=optimum,
            count=len(inside),
            complete=False,
            members=members,
            epsilon=request.epsilon,
            exhaustive=False,
            optimum_proven=proven,
        )

    def _exact(
        self,
        task: ExactTask,
        cards: list[ScoreCard],
        stats: dict[str, Any],
        seeds: list[ScoreCard],
        target: FairnessTarget | None,
    ) -> Result:
        """§1.3 proven (``exact.solve_exact``), starting from the beam's cards (``seeds``; ``cards``
        are those of them that meet ``constraints.fairness``, shown in the pool)."""
        problem, ctx, cons, weights, k = task.problem, task.ctx, task.cons, task.weights, task.k
        from glasswork.plugins.fasterrisk.exact import solve_exact

        def report(state: Any) -> None:
            ctx.progress(
                objective=state.upper_bound,
                lower_bound=state.lower_bound,
                nodes=state.nodes,
                phase="exact",
                open_nodes=state.open_nodes,
            )

        def stop() -> str | None:
            return None if ctx.check() is None else ctx.stop_reason.name.lower()

        starts = []
        for c in seeds:  # each card's points before the gcd reduction (they are in the box)
            w = np.zeros(problem.n_features)
            w[c.columns] = np.asarray(c.points) * c.reduced_by
            starts.append(w)
        res = solve_exact(
            problem.X,
            problem.y,
            weights,
            cons,
            k,
            starts=starts,
            node_limit=ctx.limits.nodes,
            stop=stop,
            report=report,
            fairness=target,
        )
        stats["exact"] = {
            "status": res.status,
            "support_nodes": res.support_nodes,
            "lattice_nodes": res.lattice_nodes,
            "seconds": res.seconds,
            "lower_bound": res.lower_bound,
        }
        if target is not None:
            stats["exact"]["fairness_pruned_boxes"] = res.fairness_pruned
        if res.points is None or res.intercept is None:  # no card meets constraints.fairness
            return self._no_fair_card(ctx, stats, res.lower_bound, proven=res.status == "infeasible")
        cols = np.flatnonzero(res.points)
        card = ScoreCard.from_solution(
            problem.X,
            problem.feature_names,
            cols,
            res.points[cols],
            float(res.intercept),
            1.0,
            classes=problem.classes,
            loss=res.objective,
            reduce_points=False,
        )
        card.certified_gap = res.gap
        card.certified_against = f"best {k}-feature card with integer points and intercept" + (
            "" if target is None else f" that meets constraints.fairness ({target.metric} <= {target.at_most:g})"
        )
        ctx.incumbent(res.objective, card, lower_bound=res.lower_bound)
        if res.status == "optimal":
            status = Status.OPTIMAL
        elif ctx.stop_reason is not StopReason.NONE:
            status = ctx.stop_reason.status
        else:
            status = Status.STOPPED_NODES
        if target is not None:
            stats["fairness"]["figure"] = target.figure(problem.y, card.predict(problem.X))
        stats["pool"] = [self._record(rank, c, problem) for rank, c in enumerate([card, *cards], 1)]
        cert = Certificate(status=status, objective=res.objective, lower_bound=res.lower_bound, tolerance=1e-6)
        rashomon = None
        if self.spec.rashomon is not None and status is not Status.OPTIMAL:
            ctx.log("fasterrisk: the optimum is not certified, so the Rashomon set is not enumerated", level="warning")
            incumbent = rashomon_member(card, problem, self.spec.rashomon.keep == "model")
            threshold = rashomon_threshold(self.spec, res.objective)  # type: ignore[arg-type]
            rashomon = RashomonSet.unproven(incumbent, threshold, res.lower_bound, epsilon=self.spec.rashomon.epsilon)
            # live, as the enumeration's members are: the store and the monitor show it before the finish record
            ctx.rashomon_basis(res.objective, proven=False, epsilon=self.spec.rashomon.epsilon)
            ctx.rashomon(rashomon.count, rashomon.members, threshold=threshold, lower_bound=res.lower_bound)
        elif self.spec.rashomon is not None:
            rashomon = self._exact_set(task, res.objective, stats)
        return Result(card, cert, metrics={"train_logistic_loss_sum": res.objective}, stats=stats, rashomon=rashomon)

    def _exact_set(self, task: ExactTask, optimum: float, stats: dict[str, Any]) -> RashomonSet:
        """Every integer card (m = 1) within the threshold of the certified ``optimum``, by
        ``exact.enumerate_cards``, best first; the best ``max_models`` kept, streamed to the
        monitor as they are found."""
        problem, ctx, cons, weights, k = task.problem, task.ctx, task.cons, task.weights, task.k
        from glasswork.plugins.fasterrisk.exact import enumerate_cards

        spec: FasterRiskSpec = self.spec  # type: ignore[assignment]
        request = spec.rashomon
        assert request is not None
        threshold = rashomon_threshold(spec, optimum)
        ctx.rashomon_basis(optimum, proven=True, epsilon=request.epsilon)
        keep_model = request.keep == "model"

        def member(loss: float, coefficients: np.ndarray) -> RashomonMember:
            points = np.rint(coefficients[1:]).astype(np.int64)
            cols = np.flatnonzero(points)
            card = ScoreCard.from_solution(
                problem.X,
                problem.feature_names,
                cols,
                points[cols],
                float(np.rint(coefficients[0])),
                1.0,
                classes=problem.classes,
                loss=float(loss),
                reduce_points=False,
            )
            return rashomon_member(card, problem, keep_model)

        last = [ctx.elapsed()]

        def report(tree: Any) -> None:
            if ctx.elapsed() - last[0] < RASHOMON_EVENT_SECONDS:
                return
            last[0] = ctx.elapsed()
            losses, coefficients = tree.rashomon_fresh()
            ctx.rashomon(
                int(tree.rashomon_count),
                [member(lo, co) for lo, co in zip(losses, coefficients)],
                threshold=threshold,
                lower_bound=float(tree.unenumerated_bound),
                nodes=int(tree.nodes + tree.lattice_nodes),
            )

        def stop() -> str | None:
            return None if ctx.check() is None else ctx.stop_reason.name.lower()

        # limits.nodes counts the certifying search's nodes and the enumeration's together, as CORELS does
        spent = int(stats["exact"]["support_nodes"]) + int(stats["exact"]["lattice_nodes"])
        node_limit = None if ctx.limits.nodes is None else max(ctx.limits.nodes - spent, 0)
        found = enumerate_cards(
            problem.X,
            problem.y,
            weights,
            cons,
            k,
            threshold,
            max_models=request.max_models,
            node_limit=node_limit,
            stop=stop,
            report=report,
        )
        members = [member(lo, co) for lo, co in zip(found.losses, found.coefficients)]
        ctx.rashomon(
            found.count,
            [member(lo, co) for lo, co in zip(*found.unreported)],
            threshold=threshold,
            lower_bound=found.unenumerated_bound,
            nodes=found.support_nodes + found.lattice_nodes,
        )
        stats["exact"]["rashomon"] = {
            "count": found.count,
            "complete": found.complete,
            "seconds": found.seconds,
            "support_nodes": found.support_nodes,
            "lattice_nodes": found.lattice_nodes,
            "stopped": found.stopped,
            "peak_open_boxes": found.peak_open,
        }
        return RashomonSet(
            threshold=threshold,
            optimum=optimum,
            count=found.count,
            complete=found.complete,
            members=members,
            epsilon=request.epsilon,
            unenumerated_bound=found.unenumerated_bound,
            optimum_proven=True,
        )

    @staticmethod
    def _record(rank: int, card: ScoreCard, problem: Problem) -> dict[str, Any]:
        """A row for the pool table: scalars (shown by ``glasswork run``) and, nested, the card's
        train/test accuracy, AUC, log loss, Brier score, reliability tables and the card itself."""
        from glasswork.running import metrics as m

        row: dict[str, Any] = {
            "rank": rank,
            "loss": card.loss,
            "size": card.size,
            "multiplier": card.multiplier,
            "gap": card.certified_gap,
        }
        figures: dict[str, float] = {}
        tables: dict[str, Any] = {}
        parts = (
            ("train", problem.X, problem.y, problem.sample_weight),
            ("test", problem.X_test, problem.y_test, problem.test_sample_weight),
        )
        for part, X, y, w in parts:
            if X is None or y is None or len(y) == 0:
                continue
            proba = card.predict_proba(X)
            row[f"{part}_auc"] = m.roc_auc(y, proba[:, 1], w)
            figures[f"{part}_accuracy"] = m.accuracy(y, card.predict(X), w)
            figures[f"{part}_auc"] = row[f"{part}_auc"]
            figures[f"{part}_log_loss"] = m.log_loss(y, proba, w)
            figures[f"{part}_brier"] = m.brier(y, proba[:, 1], w)
            tables[part] = reliability(y, proba[:, 1], sample_weight=w)
        row["points"] = card.summary()
        row["metrics"] = figures
        row["card"] = card.to_dict()
        row["reliability"] = tables
        return row
