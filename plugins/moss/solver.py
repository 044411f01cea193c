"""The ``moss`` solver: candidate rules, then one epsilon or the frontier by the chosen policy."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from glasswork.contract.model import prediction_fingerprint
from glasswork.contract.result import Certificate, Result, Status
from glasswork.contract.solver import SolveContext, Solver
from glasswork.data import DataError
from glasswork.rashomon import RashomonMember, RashomonSet

from .loss import H2Oracle, LogisticOracle, Oracle, epsilon_grid
from .model import Frontier, FrontierRow, RuleSet, RuleSetClassifier, knee
from .rules import RulePool, build_pool
from .spec import MossSpec

if TYPE_CHECKING:  # the searches import the compiled kernels, which load scipy: only when MOSS runs
    from .branch_and_bound import BranchAndBound
    from .cutting_plane import CuttingPlane, Point
    from .fairness import FairnessCheck
    from .mio import MioResult
    from .rashomon import Enumeration

RASHOMON_POLICIES = ("branch_and_bound", "cutting_plane")
RASHOMON_EVENT_SECONDS = 0.5  # how often the enumeration reports the members it kept
MEMBERS_PER_EVENT = 256  # a frontier's chosen set is streamed in batches of this many members

_STATUS_ORDER = [
    Status.OPTIMAL,
    Status.HEURISTIC,
    Status.STOPPED_NODES,
    Status.STOPPED_TIME,
    Status.STOPPED_MEMORY,
    Status.CANCELLED,
]


def _past(until: tuple[float | None, int | None] | None, elapsed: float, nodes: int) -> Status | None:
    """The status that ends an enumeration at ``until`` (an elapsed time, a node count), or ``None``."""
    if until is None:
        return None
    if until[0] is not None and elapsed >= until[0]:
        return Status.STOPPED_TIME
    if until[1] is not None and nodes >= until[1]:
        return Status.STOPPED_NODES
    return None


def worst_status(statuses: list[Status]) -> Status:
    return max(statuses, key=_STATUS_ORDER.index) if statuses else Status.OPTIMAL


class MossSolver(Solver):
    name = "moss"
    version = "0.1.0"
    description = "MOSS: stable rule sets on the accuracy / stability Pareto frontier (Liu & Mazumder, KDD 2025)."
    tasks = frozenset({"regression", "binary"})
    spec_model = MossSpec
    # the exact policies enumerate the Rashomon set of a stability point (of every frontier point)
    supports_rashomon = True

    spec: MossSpec

    @classmethod
    def rashomon_refusal(cls, spec: Any) -> str | None:
        """The set is enumerated after a certified optimum: refused for the policies without one."""
        policy = spec.search.policy
        if policy in RASHOMON_POLICIES:
            return None
        return (
            f"moss enumerates Rashomon sets with search.policy branch_and_bound or cutting_plane, "
            f"not {policy}; change the policy or remove the 'rashomon' section"
        )

    def check(self, problem: Any) -> None:
        """The policy against the target's task; what needs the forest's rules is ``size_report``'s."""
        self._policy_for(problem)
        if self.spec.constraints.fairness is not None and problem.task != "binary":
            raise DataError(
                f"constraints.fairness limits the rates of a binary prediction, but this target is {problem.task}: "
                "moss's regression rule sets predict numbers",
                hint="set data.positive to the label to predict (moss then learns a classifier), "
                "or remove constraints.fairness",
                field="constraints.fairness",
            )
        if self.spec.rashomon is not None and problem.task == "binary":
            raise DataError(
                "moss enumerates Rashomon sets for the squared loss (a numeric target) only; "
                "this target is binary (the logistic loss)",
                hint="remove the 'rashomon' section, or use solver corels or fasterrisk for a binary target",
            )

    def _policy_for(self, problem: Any) -> str:
        """The search policy that runs on ``problem``; raises ``DataError`` if none fits its target."""
        search = self.spec.search
        policy: str = search.policy
        if problem.task == "binary":
            if policy == "branch_and_bound" and "policy" not in search.model_fields_set:
                policy = "cutting_plane"  # the default policy; the logistic loss has no Gram form
            if policy != "cutting_plane":
                raise DataError(
                    f"search.policy {policy!r} does not handle a binary target: the "
                    "classification variant runs with the cutting plane only",
                    hint="set search.policy: cutting_plane (or leave it out)",
                )
        return policy

    def size_report(self, problem: Any, time_limit: float | None) -> tuple[str, str | None]:
        """The candidate rules, grown as ``solve`` grows them, and the stability threshold on them:
        what needs the forest's rules (no usable rule, a rank or a ``min_stability`` this data
        cannot reach) fails here as it fails the run, before any search."""
        pool = self._pool(problem, self._target(problem)[0])
        k = min(self.spec.constraints.max_rules, pool.m)
        summary = f"moss size: {pool.m} candidate rules from {pool.n_trees} trees, at most {k} in a rule set"
        if self.spec.constraints.frontier is not None:
            return summary + ", the stability frontier", None
        threshold, _ = self._threshold(pool, k)
        return summary + f", stability at least {threshold / pool.n_trees:.4g}", None

    def _target(self, problem: Any) -> tuple[np.ndarray, float]:
        """The target the forest and the loss see (labels -1 / +1, or scaled values) and its scale."""
        if problem.task == "binary":
            return np.where(np.asarray(problem.y) == 1, 1.0, -1.0), 1.0
        y_scale = float(np.std(problem.y)) if self.spec.objective.standardize else 1.0
        y_scale = y_scale if y_scale > 0 else 1.0
        return problem.y / y_scale, y_scale

    def _pool(self, problem: Any, target: np.ndarray) -> RulePool:
        """The candidate rules of the spec's forest; raises ``DataError`` when none is usable."""
        cand = self.spec.objective.candidates
        pool = build_pool(
            problem.X,
            target,
            list(problem.feature_names),
            trees=cand.trees,
            depth=cand.depth,
            max_features=cand.max_features,
            quantiles=cand.quantiles,
            seed=cand.seed,
            rules_from=cand.rules_from,
            max_rules_pool=cand.max_candidates,
            encoding=self.spec.objective.encoding,
            grid_X=problem.extras.get("moss_grid_X"),
        )
        if pool.m == 0:
            raise DataError(
                "the forest produced no usable rule (every rule is empty or covers all rows)",
                hint="give more rows, or raise objective.candidates.trees or .depth",
            )
        return pool

    def _threshold(self, pool: RulePool, k: int) -> tuple[float, int | None]:
        """The stability threshold in trees (from ``min_stability`` or the grid's rank, with the
        rank used); raises ``DataError`` when this data's rules cannot reach it."""
        constraints = self.spec.constraints
        counts = pool.counts.astype(np.float64)
        B = float(pool.n_trees)
        eps_max = float(np.sort(counts)[::-1][:k].sum()) / B
        rank = None
        if constraints.min_stability is not None:
            threshold = float(math.ceil(constraints.min_stability * B - 1e-9))
        else:
            grid = epsilon_grid(counts, k)
            # the default third-largest grid value; a grid this short (tiny data) takes its last
            rank = constraints.stability_rank or min(3, grid.size)
            if rank > grid.size:
                raise DataError(
                    f"constraints.stability_rank {rank} exceeds the {grid.size} values of the "
                    "epsilon grid of this data's rules",
                    hint=f"choose a rank from 1 to {grid.size}, or set constraints.min_stability",
                )
            threshold = float(grid[rank - 1])
        if threshold > eps_max * B + 1e-9:
            raise DataError(
                f"constraints.min_stability {threshold / B:.6g} is above eps_max = {eps_max:.6g} (the {k} "
                "most frequent rules of this data); no rule set reaches it",
                hint=f"lower constraints.min_stability to at most {eps_max:.6g}",
            )
        return threshold, rank

    def solve(self, problem: Any, ctx: SolveContext) -> Result:
        spec = self.spec
        cand = spec.objective.candidates
        t0 = time.perf_counter()
        self._binary = problem.task == "binary"
        self._classes = problem.classes
        self._policy = self._policy_for(problem)
        target, y_scale = self._target(problem)
        self._y_scale = y_scale
        pool = self._pool(problem, target)
        pool_seconds = time.perf_counter() - t0
        ctx.log(f"{pool.m} candidate rules from {cand.trees} trees in {pool_seconds:.2f} s (encoding {pool.encoding})")
        if self._binary:
            rate = float(np.clip(np.mean(target > 0), 1e-6, 1 - 1e-6))
            yc = target
            oracle: Any = LogisticOracle(pool.M, target, spec.objective.gamma, offset=float(np.log(rate / (1 - rate))))
        else:
            yc = target - pool.y_mean
            oracle = H2Oracle(pool.M, yc, spec.objective.gamma)
        if spec.rashomon is not None:
            self.check(problem)
            if getattr(oracle, "gram", None) is None:
                raise DataError(
                    f"moss enumerates Rashomon sets over at most {H2Oracle.GRAM_MAX} candidate rules; "
                    f"this data gives {pool.m}",
                    hint="lower objective.candidates.max_candidates, or remove the 'rashomon' section",
                )
        self._problem = problem
        self._fair = self._fairness_check(problem, pool, oracle)
        k = min(spec.constraints.max_rules, pool.m)
        counts = pool.counts.astype(np.float64)
        B = float(pool.n_trees)
        eps_max = float(np.sort(counts)[::-1][:k].sum()) / B
        stats: dict[str, Any] = {
            "candidates": pool.m,
            "trees": pool.n_trees,
            "encoding": pool.encoding,
            "pool_seconds": round(pool_seconds, 4),
            "eps_max": eps_max,
            "k": k,
            "gamma": spec.objective.gamma,
            "policy": self._policy,
            "h2_zero": oracle.h0,
            "y_scale": y_scale,
            "refit": spec.objective.refit,
        }
        if self._fair is not None:
            stats["fairness"] = {"metric": self._fair.metric, "at_most": self._fair.at_most}
        if spec.constraints.frontier is not None:
            return self._frontier(pool, oracle, counts, k, ctx, stats)
        threshold, rank = self._threshold(pool, k)
        if rank is not None:
            stats["stability_rank"] = rank
        stats["epsilon"] = threshold / B
        policy = self._policy
        if policy in ("cutting_plane", "branch_and_bound"):
            exact = self._exact(oracle, counts, k, B, ctx)
            stats["policy"] = self._policy  # after a fallback, the policy that ran
            p = exact.solve(threshold)
            stats.update(self._search_stats(exact, p), h2_evaluations=oracle.evaluations)
            self._fairness_stats(stats, p)
            if not p.found:
                return self._no_model(p, stats, tolerance=spec.search.tolerance)
            result = self._result(pool, oracle, p, stats, tolerance=spec.search.tolerance)
            if spec.rashomon is not None:
                from .rashomon import enumeration_stats

                found, result.rashomon = self._rashomon(pool, oracle, counts, k, p, ctx, exact.total_iterations, True)
                assert result.rashomon is not None
                stats["rashomon"] = enumeration_stats(found)
            return result
        if policy == "mio":
            return self._mio(pool, oracle, yc, threshold / B, k, ctx, stats)
        return self._heuristic(pool, oracle, yc, threshold, k, ctx, stats)

    # -- policies ---------------------------------------------------------------------------

    def _exact(
        self, oracle: Oracle, counts: np.ndarray, k: int, B: float, ctx: SolveContext
    ) -> CuttingPlane | BranchAndBound:
        """The exact search the policy names, wired to the run's limits, stop flag and progress."""
        from .branch_and_bound import BranchAndBound
        from .cutting_plane import CuttingPlane

        search = self.spec.search
        if self._policy == "branch_and_bound" and getattr(oracle, "gram", None) is None:
            # the perspective relaxation lives in Gram space, kept for at most GRAM_MAX candidates
            if "policy" in search.model_fields_set:
                raise DataError(
                    f"search.policy branch_and_bound needs at most {H2Oracle.GRAM_MAX} candidate rules; "
                    f"this data gives {oracle.M.shape[1]}",
                    hint="set search.policy: cutting_plane, or lower objective.candidates.max_candidates",
                )
            self._policy = "cutting_plane"
            ctx.log(f"more than {H2Oracle.GRAM_MAX} candidates: the cutting plane runs instead of branch and bound")
        last = [0.0]
        work = "cuts" if self._policy == "cutting_plane" else "iterations"

        def progress(info: dict[str, Any]) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.05:
                last[0] = now
                extra = {"cuts": info["cuts"]} if "cuts" in info else {"open_nodes": info["open"]}
                ctx.progress(
                    objective=info["upper"],
                    lower_bound=info["lower"],
                    nodes=info[work],
                    epsilon=info["epsilon"],
                    iterations=info["iterations"],
                    **extra,
                )

        if self._policy == "branch_and_bound":
            return BranchAndBound(
                oracle,
                counts,
                k,
                pi_scale=B,
                tol=search.tolerance,
                stop=lambda nodes: ctx.check(nodes),
                deadline=ctx.deadline,
                progress=progress,
            )
        return CuttingPlane(
            oracle,
            counts,
            k,
            pi_scale=B,
            tol=search.tolerance,
            mip_rel_gap=min(1e-7, search.tolerance / 10),
            stop=lambda cuts: ctx.check(cuts),
            deadline=ctx.deadline,
            stop_flag=ctx.stop_flag,
            progress=progress,
            threads=search.threads,
            admissible=self._fair,
        )

    @staticmethod
    def _search_stats(exact: CuttingPlane | BranchAndBound, p: Point | None = None) -> dict[str, Any]:
        from .branch_and_bound import BranchAndBound

        if isinstance(exact, BranchAndBound):
            return {"nodes": exact.total_iterations}
        out: dict[str, Any] = {"iterations": exact.total_iterations, "cuts": exact.master.cuts}
        if exact.admissible is not None:
            out["excluded"] = exact.master.no_goods
        if p is not None:
            out["master_seconds"] = round(p.master_seconds, 4)
        return out

    def _mio_solves(self, pool: RulePool, y: np.ndarray, k: int, ctx: SolveContext) -> Callable[[float], MioResult]:
        """The spec's MIO backend, chosen once (its fallback logged), as a solve at a stability
        floor ``eps`` with the spec's formulation and gap, in the time the run has left."""
        from .mio import choose_backend, solve_mio

        search = self.spec.search
        solver, warning = choose_backend(search.backend, search.formulation, search.fallback)
        if warning:
            ctx.log(warning, level="warning")

        def solve_at(eps: float) -> MioResult:
            remaining = None if ctx.deadline is None else max(1.0, ctx.deadline - time.monotonic())
            return solve_mio(
                pool.M,
                y,
                pool.pi,
                k,
                self.spec.objective.gamma,
                eps,
                formulation=search.formulation,
                solver=solver,
                time_limit=remaining,
                mip_gap=search.mip_gap,
            )

        return solve_at

    def _mio(
        self,
        pool: RulePool,
        oracle: Oracle,
        yc: np.ndarray,
        eps: float,
        k: int,
        ctx: SolveContext,
        stats: dict[str, Any],
    ) -> Result:
        from .cutting_plane import Point

        r = self._mio_solves(pool, yc, k, ctx)(eps)
        stats.update(
            backend=r.solver,
            formulation=r.formulation,
            mio_seconds=round(r.seconds, 4),
            backend_status=r.backend_status,
        )  # the backend's own word: optimal, timelimit, ...
        status = r.status
        if status is Status.STOPPED_TIME and ctx.stop_reason.value:
            status = ctx.stop_reason.status
        ev = oracle(r.support)
        p = Point(
            eps,
            r.support,
            float(pool.pi[list(r.support)].sum()),
            ev.value,
            r.lower_bound if r.lower_bound is not None else 0.0,
            status,
            seconds=r.seconds,
            weights=ev.weights,
        )
        return self._result(
            pool, oracle, p, stats, tolerance=self.spec.search.mip_gap, lower_known=r.lower_bound is not None
        )

    def _heuristic(
        self,
        pool: RulePool,
        oracle: Oracle,
        yc: np.ndarray,
        threshold: float,
        k: int,
        ctx: SolveContext,
        stats: dict[str, Any],
    ) -> Result:
        from .cutting_plane import Point
        from .heuristic import moss_l

        counts = pool.counts.astype(np.float64)
        weight = self.spec.search.stability_weight
        support: tuple[int, ...] | None = None
        tried = 0
        for factor in (1.0, 2.0, 4.0, 8.0, 16.0, 64.0):  # raise the stability reward until eps is met
            s, solves = moss_l(
                pool.M,
                yc,
                pool.pi,
                k,
                self.spec.objective.gamma,
                weight * factor,
                should_stop=lambda: ctx.check() is not None,
            )
            tried += solves
            if counts[list(s)].sum() >= threshold - 1e-9 and s:
                support = s
                break
            if ctx.check() is not None:
                break
        if support is None:  # the k most stable rules always meet any feasible epsilon
            support = tuple(int(i) for i in np.sort(np.argsort(-counts, kind="stable")[:k]))
            ctx.log("coordinate descent did not reach min_stability; returning the k most stable rules")
        ev = oracle(support)
        stats.update(cd_solves=tried)
        p = Point(
            threshold / pool.n_trees,
            support,
            float(counts[list(support)].sum()) / pool.n_trees,
            ev.value,
            0.0,
            Status.HEURISTIC,
            weights=ev.weights,
        )
        return self._result(pool, oracle, p, stats, tolerance=self.spec.search.tolerance, lower_known=False)

    # -- frontier ---------------------------------------------------------------------------

    def _frontier(
        self, pool: RulePool, oracle: Oracle, counts: np.ndarray, k: int, ctx: SolveContext, stats: dict[str, Any]
    ) -> Result:
        from .cutting_plane import Point

        fspec = self.spec.constraints.frontier
        assert fspec is not None
        search = self.spec.search
        B = float(pool.n_trees)
        grid = epsilon_grid(counts, k, fspec.points)
        stats["grid"] = (grid / B).tolist()
        points: list[Point] = []
        sets: dict[int, Enumeration] = {}  # a frontier point's Rashomon set, by the point's index
        set_nodes = [0]  # the nodes the sets' enumerations spent so far
        t0 = time.perf_counter()

        def on_point(p: Point) -> None:
            points.append(p)
            if not p.found:
                ctx.log(
                    f"frontier point {len(points)}/{grid.size}: eps={p.epsilon:.4g} "
                    + self._none_found(p)
                    + f" ({p.iterations} master solves, {p.excluded} rule sets excluded)"
                )
                ctx.progress(nodes=len(points), frontier_points=len(points), epsilon=p.epsilon)
                return
            ctx.log(
                f"frontier point {len(points)}/{grid.size}: eps={p.epsilon:.4g} H1={p.h1:.4g} "
                f"H2={p.h2:.6g} LB={p.lower_bound:.6g} {p.status} ({p.iterations} master solves)"
            )
            ctx.progress(
                objective=p.h2,
                lower_bound=p.lower_bound,
                nodes=len(points),
                frontier_points=len(points),
                epsilon=p.epsilon,
                h1=p.h1,
                cuts=p.cuts_added,
            )
            ctx.incumbent(p.h2, self._rule_set(pool, oracle, p), lower_bound=p.lower_bound, nodes=len(points))
            if self.spec.rashomon is not None and not ctx.stop_reason.value:
                # the point's set now, not after the frontier: a run stopped or killed later keeps it;
                # under a limit within a share of what is left, so the sets do not starve the frontier
                spent = sum(q.iterations + q.cuts_added for q in points) + set_nodes[0]
                share = 2 * (grid.size - len(points) + 1)
                found = self._point_set(pool, oracle, counts, k, len(points) - 1, p, ctx, spent, share)
                sets[len(points) - 1] = found
                set_nodes[0] += found.nodes

        if search.policy == "mio":
            solve_at = self._mio_solves(pool, oracle.y, k, ctx)
            for thr in grid:
                if ctx.check(len(points)) is not None:
                    break
                r = solve_at(thr / B)
                ev = oracle(r.support)
                on_point(
                    Point(
                        thr / B,
                        r.support,
                        float(counts[list(r.support)].sum()) / B,
                        ev.value,
                        r.lower_bound if r.lower_bound is not None else 0.0,
                        r.status,
                        seconds=r.seconds,
                        weights=ev.weights,
                    )
                )
                if r.status is not Status.OPTIMAL:
                    break
            tolerance = search.mip_gap
        elif search.epm:
            exact = self._exact(oracle, counts, k, B, ctx)
            exact.sweep(grid, on_point)
            stats.update(self._search_stats(exact), h2_evaluations=oracle.evaluations)
            tolerance = search.tolerance
        else:
            for thr in grid:
                fresh = (
                    LogisticOracle(oracle.M, oracle.y, oracle.gamma, oracle.offset)
                    if isinstance(oracle, LogisticOracle)
                    else H2Oracle(oracle.M, oracle.y, oracle.gamma)
                )
                cp = self._exact(fresh, counts, k, B, ctx)
                p = cp.solve(float(thr))
                on_point(p)
                if p.status is not Status.OPTIMAL and cp.stopped is not None:
                    break
            tolerance = search.tolerance
        stats["frontier_seconds"] = round(time.perf_counter() - t0, 4)
        if not points:
            raise RuntimeError("the search stopped before the first frontier point")
        with_model = [i for i, p in enumerate(points) if p.found]

        def rows() -> list[FrontierRow]:  # after the chosen point's Rashomon set: it may update ``sets``
            return [
                FrontierRow(
                    p.epsilon,
                    p.h1 if p.found else None,
                    p.h2 if p.found else None,
                    p.lower_bound if math.isfinite(p.lower_bound) else None,
                    p.gap if p.found else None,
                    str(p.status) if p.found else self._no_model_status(p),
                    [pool.rules[i].text for i in p.support],
                    [float(w) for w in self._rule_set(pool, oracle, p).weights] if p.found else [],
                    p.iterations,
                    p.cuts_added,
                    round(p.seconds, 4),
                    rashomon_count=sets[i].count if i in sets else None,
                    rashomon_complete=sets[i].complete if i in sets else None,
                    rashomon_seconds=round(sets[i].seconds, 4) if i in sets else None,
                )
                for i, p in enumerate(points)
            ]

        if not with_model:  # under a fairness limit no point has a rule set that meets it
            last = points[-1]
            if len(points) < grid.size and last.status is Status.OPTIMAL:  # stopped between two points
                last.status = ctx.stop_reason.status if ctx.stop_reason.value else Status.STOPPED_NODES
            self._fairness_stats(stats, last)
            stats["frontier"] = Frontier(rows=rows(), chosen=-1, requested=int(grid.size)).to_dict()
            return self._no_model(last, stats, tolerance=tolerance, frontier=len(points))
        h1 = np.asarray([points[i].h1 for i in with_model])
        h2 = np.asarray([points[i].h2 for i in with_model])
        if fspec.choose == "knee":
            chosen = with_model[knee(h1, h2)]
        else:  # the asked point, or the next one (less stable) when none of its rule sets meets the limit
            asked = min(int(fspec.choose), len(points)) - 1
            chosen = next((i for i in with_model if i >= asked), with_model[-1])
        rashomon = self._chosen_set(pool, oracle, counts, k, points, chosen, sets, ctx, set_nodes)
        frontier = Frontier(rows=rows(), chosen=chosen, requested=int(grid.size))
        stats["frontier"] = frontier.to_dict()
        stats["chosen_point"] = chosen + 1
        self._fairness_stats(stats, points[chosen])
        status = worst_status([p.status for p in points])
        if len(points) < grid.size and status is Status.OPTIMAL:
            status = ctx.stop_reason.status if ctx.stop_reason.value else Status.STOPPED_NODES
        if status is Status.OPTIMAL:
            cert_point = points[chosen]
        else:  # the certificate reports the point with the widest gap (of those with a rule set)
            cert_point = max((points[i] for i in with_model), key=lambda p: p.gap)
            stats["certificate_point"] = points.index(cert_point) + 1
        model = self._rule_set(pool, oracle, points[chosen])
        cert = Certificate(
            status=status, objective=cert_point.h2, lower_bound=cert_point.lower_bound, tolerance=tolerance
        )
        if sets:
            from .rashomon import enumeration_stats

            stats["rashomon"] = enumeration_stats(sets[chosen]) | {"points": len(sets)}
        metrics = {"h1": points[chosen].h1, "h2": points[chosen].h2}
        return Result(model, cert, metrics=metrics, stats=stats, rashomon=rashomon)

    # -- Rashomon sets -----------------------------------------------------------------------

    def _point_set(
        self,
        pool: RulePool,
        oracle: Oracle,
        counts: np.ndarray,
        k: int,
        index: int,
        p: Point,
        ctx: SolveContext,
        spent: int,
        share: int | None = None,
    ) -> Enumeration:
        """Frontier point ``index``'s Rashomon set, enumerated as soon as the point is certified
        (its kept members held as rule indices), and sent as a ``rashomon`` event tagged with the
        point: count, threshold, completeness, bound, and its kept members built (the store keeps
        them per point: ``glasswork rashomon RUN --point K``). With
        ``share``, a time or node limit gives it only that fraction of what is left of either
        (``stopped`` then says so while the run's own stop flag stays down)."""
        until: tuple[float | None, int | None] | None = None
        if share is not None:
            left = None if ctx.deadline is None else max(0.0, ctx.deadline - ctx.started - ctx.elapsed())
            nodes_left = None if ctx.limits.nodes is None else max(0, ctx.limits.nodes - spent)
            until = (
                None if left is None else ctx.elapsed() + left / share,
                None if nodes_left is None else spent + nodes_left // share,
            )
        found, _ = self._rashomon(pool, oracle, counts, k, p, ctx, spent, False, until)
        member = self._member_builder(pool, oracle, counts, p)
        ctx.rashomon(
            found.count,
            [member(value, support) for value, support in found.members],  # kept per point (max_models)
            threshold=found.threshold,
            lower_bound=found.unenumerated_bound,
            nodes=spent + found.nodes,
            point=index + 1,
            complete=found.complete,
        )
        return found

    def _chosen_set(
        self,
        pool: RulePool,
        oracle: Oracle,
        counts: np.ndarray,
        k: int,
        points: list[Point],
        chosen: int,
        sets: dict[int, Enumeration],
        ctx: SolveContext,
        set_nodes: list[int],
    ) -> RashomonSet | None:
        """``Result.rashomon`` of a frontier: the chosen point's set (known only now the frontier
        is solved), its kept members built and streamed as the run's set. When its share of a
        limit cut it short, or a stop left the point without a set, it is enumerated again with
        all that is left (a stop then leaves it incomplete: its bound, no count; a point not
        certified gets its incumbent alone). Then the other points cut short by their share are
        taken up again in sweep order, each sent again as it ends."""
        request = self.spec.rashomon
        if request is None:
            return None
        search_work = sum(q.iterations + q.cuts_added for q in points)

        def again(i: int) -> None:
            sets[i] = self._point_set(pool, oracle, counts, k, i, points[i], ctx, search_work + set_nodes[0])
            set_nodes[0] += sets[i].nodes

        def cut_short(i: int) -> bool:
            return i not in sets or (sets[i].stopped is not None and points[i].status is Status.OPTIMAL)

        p = points[chosen]
        if cut_short(chosen) and (not ctx.stop_reason.value or chosen not in sets):
            again(chosen)
        found = sets[chosen]
        spent = search_work + set_nodes[0]
        member = self._member_builder(pool, oracle, counts, p)
        ctx.rashomon_basis(p.h2, proven=p.status is Status.OPTIMAL, epsilon=request.epsilon)
        if p.status is not Status.OPTIMAL:
            rset = RashomonSet.unproven(
                member(p.h2, tuple(p.support)), found.threshold, p.lower_bound, epsilon=request.epsilon
            )
        else:
            from .rashomon import rashomon_set

            rset = rashomon_set(found, request, p.h2, True, member)
        for start in range(0, max(len(rset.members), 1), MEMBERS_PER_EVENT):
            ctx.rashomon(
                rset.count,
                rset.members[start : start + MEMBERS_PER_EVENT],
                threshold=rset.threshold,
                lower_bound=rset.unenumerated_bound,
                nodes=spent,
            )
        for i in range(len(points)):
            if i != chosen and i in sets and cut_short(i) and not ctx.stop_reason.value:
                again(i)
        return rset

    def _member_builder(
        self, pool: RulePool, oracle: Oracle, counts: np.ndarray, p: Point
    ) -> Callable[[float, tuple[int, ...]], RashomonMember]:
        """A member of point ``p``'s set from its H2 and rule indices, as the run's model is built."""
        from .cutting_plane import Point

        request = self.spec.rashomon
        assert request is not None
        keep_model = request.keep == "model"
        problem = self._problem
        B = float(pool.n_trees)

        def member(value: float, support: tuple[int, ...]) -> RashomonMember:
            h1 = float(counts[list(support)].sum()) / B
            model = self._rule_set(pool, oracle, Point(p.epsilon, support, h1, value, value, Status.OPTIMAL))
            names = problem.feature_names
            return RashomonMember(
                objective=value,
                features=tuple(str(names[j]) for j in model.features_used),
                fingerprint=prediction_fingerprint(model.predict(problem.X)),
                model=model if keep_model else None,
            )

        return member

    def _rashomon(
        self,
        pool: RulePool,
        oracle: Oracle,
        counts: np.ndarray,
        k: int,
        p: Point,
        ctx: SolveContext,
        spent: int,
        events: bool,
        until: tuple[float | None, int | None] | None = None,
    ) -> tuple[Enumeration, RashomonSet | None]:
        """The Rashomon set of one certified stability point, best first; ``spent`` is the work the
        run's node limit already counts. With ``events`` (a run of one point) the kept members are
        built and streamed to the monitor as found, and the set returned; without (a frontier
        point), only the enumeration is, its kept members as rule indices (``_chosen_set``).
        ``until`` (an elapsed time, a node count) stops the enumeration before the run's limits."""
        from .rashomon import Enumeration, enumerate_rule_sets, rashomon_set, rashomon_threshold

        request = self.spec.rashomon
        assert request is not None and isinstance(oracle, H2Oracle)
        B = float(pool.n_trees)
        threshold = rashomon_threshold(request, p.h2)
        member = self._member_builder(pool, oracle, counts, p)
        if events:  # the run's set (a frontier point's events carry only its own figures)
            ctx.rashomon_basis(p.h2, proven=p.status is Status.OPTIMAL, epsilon=request.epsilon)

        last = [ctx.elapsed()]

        def report(found: Enumeration) -> None:
            if ctx.elapsed() - last[0] < RASHOMON_EVENT_SECONDS:
                return
            last[0] = ctx.elapsed()
            fresh = found.members[len(found.members) - found.fresh :] if found.fresh else []
            found.fresh = 0
            ctx.rashomon(
                found.count,
                [member(v, s) for v, s in fresh],
                threshold=threshold,
                lower_bound=found.unenumerated_bound,
                nodes=spent + found.nodes,
            )

        if p.status is not Status.OPTIMAL:  # core's rule for a search stopped before its proof
            inside = [(p.h2, tuple(p.support))] if p.h2 <= threshold else []
            found = Enumeration(threshold, inside, len(inside), False, min(p.lower_bound, p.h2), stopped=p.status)
            if not events:
                return found, None
            incumbent = member(p.h2, tuple(p.support))
            result = RashomonSet.unproven(incumbent, threshold, p.lower_bound, epsilon=request.epsilon)
            ctx.rashomon(result.count, result.members, threshold=threshold, lower_bound=p.lower_bound, nodes=spent)
            return found, result
        found = enumerate_rule_sets(
            oracle,
            counts,
            k,
            p.epsilon * B,
            threshold,
            lower_bound=p.lower_bound,
            max_models=request.max_models,
            # within a share (``until``), the run's node limit is the share's: the search's own
            # checks count only the search, so the sets' nodes never stop the frontier
            stop=lambda nodes: (
                ctx.check(None if until else spent + nodes) or _past(until, ctx.elapsed(), spent + nodes)
            ),
            report=report if events else None,
        )
        if not events:
            return found, None
        result = rashomon_set(found, request, p.h2, p.status is Status.OPTIMAL, member)
        fresh = result.members[len(result.members) - found.fresh :] if found.fresh else []
        ctx.rashomon(
            found.count, fresh, threshold=threshold, lower_bound=found.unenumerated_bound, nodes=spent + found.nodes
        )
        return found, result

    # -- the fairness constraint -------------------------------------------------------------

    def _fairness_check(self, problem: Any, pool: RulePool, oracle: Oracle) -> FairnessCheck | None:
        """``constraints.fairness`` as a test of a rule set: the predictions of the very model the
        run would return (``_rule_set``), on the training rows, weighted as the audit weighs them."""
        limit = self.spec.constraints.fairness
        if limit is None:
            return None
        from glasswork.fairness import audit

        from .cutting_plane import Point
        from .fairness import FairnessCheck

        if self.spec.fairness is None:  # the spec check refuses this first; a hand-built spec may skip it
            raise DataError(
                "constraints.fairness needs a fairness: section naming the protected group",
                field="constraints.fairness",
            )
        groups = audit.groups(self.spec.fairness, problem.audit)

        def predict(support: tuple[int, ...]) -> np.ndarray:
            point = Point(0.0, support, 0.0, 0.0, 0.0, Status.HEURISTIC)
            return np.asarray(self._rule_set(pool, oracle, point).predict(problem.X))

        return FairnessCheck(
            limit.metric, limit.at_most, problem.y, [g.mask for g in groups], problem.sample_weight, predict
        )

    def _fairness_stats(self, stats: dict[str, Any], p: Point) -> None:
        """The constraint, how much of the search it cost, and the returned rule set's figure."""
        if self._fair is None:
            return
        stats["fairness"] = {
            "metric": self._fair.metric,
            "at_most": self._fair.at_most,
            "rule_sets_checked": self._fair.checked,
            "figure": self._fair.figure(p.support) if p.found else None,
        }

    def _no_model_status(self, p: Point) -> str:
        return str(Status.INFEASIBLE if p.status is Status.OPTIMAL else p.status)

    def _none_found(self, p: Point) -> str:
        limit = self.spec.constraints.fairness
        assert limit is not None
        what = f"{limit.metric} at most {limit.at_most:g}"
        if p.status is Status.OPTIMAL:
            return f"no rule set meets {what} on the training rows (proven: every one was excluded)"
        return f"the search stopped ({p.status}) before finding a rule set that meets {what}"

    def _no_model(self, p: Point, stats: dict[str, Any], *, tolerance: float, frontier: int = 0) -> Result:
        """No rule set meets the fairness limit: proven (``infeasible``: the master ran out of rule
        sets) or not found before a stop (the stop's status, the master's bound so far)."""
        where = f"at any of the {frontier} frontier points" if frontier else f"at stability {p.epsilon:.6g}"
        stats["no_model"] = f"{self._none_found(p)} {where}, with at most {self.spec.constraints.max_rules} rules"
        if p.status is Status.OPTIMAL:
            cert = Certificate(status=Status.INFEASIBLE, objective=None, tolerance=tolerance)
        else:
            bound = p.lower_bound if math.isfinite(p.lower_bound) else None
            cert = Certificate(status=p.status, objective=None, lower_bound=bound, tolerance=tolerance)
        stats.setdefault("seconds", round(p.seconds, 4))
        return Result(None, cert, stats=stats)

    # -- results ----------------------------------------------------------------------------

    def _rule_set(self, pool: RulePool, oracle: Oracle, p: Point) -> RuleSet:
        """The chosen rules with refitted weights, back in the units of y."""
        idx = list(p.support)
        if isinstance(oracle, LogisticOracle):  # the binary task's loss
            w = oracle(p.support).weights
            return RuleSetClassifier(
                [pool.rules[i] for i in idx],
                w,
                pool.inside[idx],
                pool.outside[idx],
                pool.pi[idx],
                oracle.offset,
                encoding=pool.encoding,
                h1=p.h1,
                h2=p.h2,
                epsilon=p.epsilon,
                classes=self._classes,
            )
        if self.spec.objective.refit == "ridge" or not idx:
            w = oracle(p.support).weights
        else:
            w = np.linalg.lstsq(pool.M[:, idx], oracle.y, rcond=None)[0]
        s = getattr(self, "_y_scale", 1.0)
        return RuleSet(
            [pool.rules[i] for i in idx],
            w,
            pool.inside[idx] * s,
            pool.outside[idx] * s,
            pool.pi[idx],
            pool.y_mean * s,
            encoding=pool.encoding,
            h1=p.h1,
            h2=p.h2,
            epsilon=p.epsilon,
        )

    def _result(
        self,
        pool: RulePool,
        oracle: Oracle,
        p: Point,
        stats: dict[str, Any],
        *,
        tolerance: float,
        lower_known: bool = True,
    ) -> Result:
        model = self._rule_set(pool, oracle, p)
        cert = Certificate(
            status=p.status, objective=p.h2, lower_bound=p.lower_bound if lower_known else None, tolerance=tolerance
        )
        stats.setdefault("seconds", round(p.seconds, 4))
        return Result(model, cert, metrics={"h1": p.h1, "h2": p.h2}, stats=stats)
