"""The ``corels`` solver: antecedents in, a certified rule list (or a stopped one with its gap) out.

``run_corels`` is one run: the antecedents and their weights (``inputs.py``), the size of the
search (``search/size.py``), the search in this process (``search/one_process.py``) or on a Dask
cluster (``cluster/search.py``), the rule list and its certificate, then the Rashomon set when the
spec asks for it (``rashomon/after_search.py``).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import numpy as np
from glasswork.contract.result import Certificate, Result, Status
from glasswork.contract.solver import SolveContext, Solver
from glasswork.data import DataError, Problem
from glasswork.plugins.corels.inputs import (
    antecedents_for,
    build_rule_list,
    class_weight_vector,
    integer_multiplicity,
    require_binary_features,
)
from glasswork.plugins.corels.model import RuleList
from glasswork.plugins.corels.search import engine
from glasswork.plugins.corels.search.one_process import search_here
from glasswork.plugins.corels.search.size import estimate_search
from glasswork.plugins.corels.spec import (
    CorelsConstraints,
    CorelsObjective,
    CorelsSearch,
    CorelsSpec,
)
from glasswork.spec.models import RashomonSpec


class CorelsSolver(Solver):
    """Certifiably optimal rule lists (Angelino et al., JMLR 2018), every bound of the paper."""

    name = "corels"
    version = "1.0.0"
    description = "CORELS: certifiably optimal rule lists by branch-and-bound over antecedents."
    tasks = frozenset({"binary", "multiclass"})
    spec_model = CorelsSpec
    distributed = True  # run --executor dask:...: plugins/corels/cluster/search.py
    supports_rashomon = True
    supports_fairness_frontier = True  # each point of the core's walk is a certified constrained search

    @classmethod
    def rashomon_refusal(cls, spec: Any) -> str | None:
        """The enumerator does not hold a fairness constraint yet: a constrained set is refused,
        never counted over lists that break the limit."""
        if spec.constraints.fairness is not None:
            return (
                "corels does not enumerate the Rashomon set under constraints.fairness yet; remove the "
                "'rashomon' section or the constraint"
            )
        return None

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        spec: CorelsSpec = self.spec  # type: ignore[assignment]
        return run_corels(
            problem, spec.objective, spec.constraints, spec.search, ctx, rashomon=spec.rashomon,
            groups=protected_groups(spec, problem),
        )  # fmt: skip

    def check(self, problem: Problem) -> None:
        """0/1 features to mine, class weights naming the classes, sample weights that are counts."""
        spec: CorelsSpec = self.spec  # type: ignore[assignment]
        require_binary_features(problem)
        class_weight_vector(problem, spec.objective)
        integer_multiplicity(problem.sample_weight)

    def size_report(self, problem: Problem, time_limit: float | None) -> tuple[str, str | None]:
        """The estimate of ``estimate_search``: its summary, and its warning for ``time_limit``."""
        spec: CorelsSpec = self.spec  # type: ignore[assignment]
        estimate = estimate_search(problem, spec.objective, spec.constraints, spec.search)
        return estimate.summary(), estimate.warning(time_limit)


def protected_groups(spec: CorelsSpec, problem: Problem) -> np.ndarray | None:
    """The (G, n) rows of each protected group a fairness constraint holds, None without one."""
    if spec.constraints.fairness is None or spec.fairness is None:
        return None
    from glasswork.fairness import audit

    if problem.task != "binary":
        raise DataError(
            f"a fairness constraint compares the rates of a binary prediction, but the target is {problem.task}",
            hint="set data.positive to the label to predict, or remove constraints.fairness",
            field="constraints.fairness",
        )
    return np.vstack([g.mask for g in audit.groups(spec.fairness, problem.audit)])


def no_feasible_list(status: Status, lower: float, stats: dict[str, Any]) -> Result:
    """The result of a search that ended with no list meeting ``constraints.fairness``: proven
    infeasible when it ran to its end (``status`` optimal: the queue emptied with no incumbent),
    else stopped before finding one, with the bound proven so far."""
    if status == Status.OPTIMAL:
        return Result(model=None, certificate=Certificate(status=Status.INFEASIBLE, objective=None), stats=stats)
    bound = lower if np.isfinite(lower) else None
    return Result(model=None, certificate=Certificate(status=status, objective=None, lower_bound=bound), stats=stats)


def run_corels(
    problem: Problem,
    objective: CorelsObjective,
    constraints: CorelsConstraints,
    search_opts: CorelsSearch,
    ctx: SolveContext,
    rashomon: RashomonSpec | None = None,
    groups: np.ndarray | None = None,
) -> Result:
    """Mine (unless pre-mined), search (in this process: search/one_process.py; on the cluster:
    cluster/search.py), and package the rule list and certificate; with ``rashomon``, then the set
    of every list within its threshold (rashomon/after_search.py). ``groups``: the protected
    groups' rows when ``constraints.fairness`` holds (``protected_groups``)."""
    lam = objective.regularization
    t0 = time.perf_counter()
    names, bits, items = antecedents_for(problem, constraints, lam)
    estimate = estimate_search(problem, objective, constraints, search_opts, mined=(names, bits, items))
    ctx.log(estimate.summary())
    hopeless = estimate.warning(ctx.limits.time)
    if hopeless is not None:
        ctx.log(hopeless, level="warning")
    n_classes = len(problem.classes) if problem.classes is not None else int(problem.y.max()) + 1
    weights = class_weight_vector(problem, objective)
    multiplicity = integer_multiplicity(problem.sample_weight)
    limit = constraints.fairness if groups is not None else None
    units = engine.make_units(
        bits, problem.y, n_classes, class_weights=weights, multiplicity=multiplicity, compress=search_opts.compress,
        groups=None if limit is None else groups,
    )  # fmt: skip
    max_len = 255 if constraints.max_prefix_length is None else constraints.max_prefix_length
    options: dict[str, Any] = {
        "policy": search_opts.policy,
        "symmetry_map": search_opts.symmetry_map,
        "max_prefix_length": max_len,
        "ablation": {b: False for b in search_opts.ablation},
        "threads": engine.default_threads() if search_opts.threads is None else search_opts.threads,
    }
    if limit is not None and groups is not None:
        options["fairness"] = (limit.metric, limit.at_most)
        ctx.log(
            f"corels: {limit.metric} at most {limit.at_most} for {len(groups)} protected group(s); the support "
            "bounds and Theorem 18 are off under it, the symmetry map keys its classes on the cells each prefix "
            "fixes (docs/maintainers/corels-fairness.md)"
        )
    if ctx.executor is not None:
        return _run_on_cluster(
            problem, units, lam, options, (names, bits, items), weights, multiplicity, ctx, t0, rashomon, search_opts,
            constraints,
        )  # fmt: skip
    search = engine.make_search(units, lam, **options)
    prep_seconds = time.perf_counter() - t0
    ctx.log(
        f"corels: {len(names)} antecedents, {problem.n_samples} samples in "
        f"{units.n_units} units, lambda={lam}, {search.threads} thread(s)"
    )

    def build(prefix: list[int]) -> RuleList:
        return build_rule_list(prefix, names, bits, items, problem, weights, multiplicity)

    M = len(names)
    status, lower = search_here(search, search_opts, ctx, build, M)
    counters = search.counters()
    loss = search.objective - lam * len(search.best_prefix)
    stats: dict[str, Any] = {
        **counters,
        "nodes": counters["evaluated"],
        "antecedents": M,
        "units": units.n_units,
        "time_to_optimum": search.time_to_best,
        "evaluations_to_optimum": search.evaluations_to_best,
        "prepare_seconds": prep_seconds,
        "search_bytes": search.memory_bytes(),
        "threads": search.threads,
        "estimated_second_level": estimate.second_level,
        "estimated_seconds": estimate.rough_seconds,
    }
    if not search.feasible:
        return no_feasible_list(status, lower, stats)
    model = build(search.best_prefix)
    cert = Certificate(status=status, objective=search.objective, lower_bound=lower, tolerance=1e-9)
    metrics = {"regularized_objective": search.objective, "train_loss": loss, "rules": float(len(search.best_prefix))}
    rset = None
    if rashomon is not None:
        found = (search.objective, search.best_prefix, search.n_evaluated, search.threads)
        from glasswork.plugins.corels.rashomon import after_search

        rset = after_search.rashomon_set(
            rashomon, units, problem, lam, search_opts, constraints, max_len, found, status, lower, build, items, ctx,
            stats,
        )  # fmt: skip
    return Result(model=model, certificate=cert, metrics=metrics, stats=stats, rashomon=rset)


def _run_on_cluster(
    problem: Problem,
    units: engine.Units,
    lam: float,
    options: dict[str, Any],
    mined: tuple[list[str], np.ndarray, list[list[tuple[int, int]]]],
    weights: np.ndarray | None,
    multiplicity: np.ndarray | None,
    ctx: SolveContext,
    t0: float,
    rashomon: RashomonSpec | None,
    search_opts: CorelsSearch,
    constraints: CorelsConstraints,
) -> Result:
    """One search spread over ``ctx.executor``'s cluster (plugins/corels/cluster/search.py); the
    driver's incumbents and progress are this run's events, as in one process. With
    ``rashomon``, the set is then enumerated on the same cluster (plugins/corels/cluster/enumeration.py)."""
    from glasswork.plugins.corels.cluster.driver import one_connection
    from glasswork.plugins.corels.cluster.search import run_distributed, search_while_the_cluster_starts

    names, bits, items = mined
    assert ctx.executor is not None
    ctx.log(
        f"corels: {len(names)} antecedents, {problem.n_samples} samples in {units.n_units} units, "
        f"lambda={lam}, on {ctx.executor.name}"
    )

    def build(prefix: list[int]) -> RuleList:
        return build_rule_list(prefix, names, bits, items, problem, weights, multiplicity)

    def on_incumbent(objective: float, prefix: list[int], evaluations: int) -> None:
        ctx.incumbent(objective, build(prefix), nodes=evaluations)

    def on_progress(objective: float, lower: float, evaluations: int, tasks: int) -> None:
        ctx.progress(objective=objective, lower_bound=lower, nodes=evaluations, tasks=tasks)

    prep_seconds = time.perf_counter() - t0
    head_start = search_while_the_cluster_starts(units, lam, options, ctx, on_incumbent)
    if head_start is not None and head_start.ended is not None:
        after = "the Rashomon set is enumerated on the cluster" if rashomon is not None else "the cluster is not used"
        ctx.log(
            f"corels: the search ended in this process while the cluster started "
            f"({head_start.evaluations:,} evaluations); {after}"
        )
    with one_connection(ctx) if rashomon is not None else contextlib.nullcontext():
        spill = search_opts.spill
        out = run_distributed(units, lam, options, ctx, on_incumbent, on_progress, spill=spill, head_start=head_start)
        stats: dict[str, Any] = {
            **out.stats,
            "nodes": out.stats["evaluated"],
            "antecedents": len(names),
            "units": units.n_units,
            "prepare_seconds": prep_seconds,
            "executor": ctx.executor.name,
        }
        rset = None
        if rashomon is not None:
            found = (out.objective, out.prefix, out.stats["evaluated"], search_opts.threads or 1)  # per task
            from glasswork.plugins.corels.rashomon.after_search import rashomon_set

            rset = rashomon_set(
                rashomon, units, problem, lam, search_opts, constraints, options["max_prefix_length"], found,
                out.status, out.lower_bound, build, items, ctx, stats,
            )  # fmt: skip
    if out.objective == float("inf"):
        return no_feasible_list(out.status, out.lower_bound, stats)
    cert = Certificate(status=out.status, objective=out.objective, lower_bound=out.lower_bound, tolerance=1e-9)
    metrics = {
        "regularized_objective": out.objective,
        "train_loss": out.objective - lam * len(out.prefix),
        "rules": float(len(out.prefix)),
    }
    return Result(model=build(out.prefix), certificate=cert, metrics=metrics, stats=stats, rashomon=rset)
