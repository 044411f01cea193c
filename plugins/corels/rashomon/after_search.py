"""The CORELS Rashomon set after the search: enumerated once the optimum is certified (here, or on
the cluster), the incumbent alone when it is not, and what the count is exact over."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from glasswork.contract.result import Status
from glasswork.contract.solver import SolveContext
from glasswork.data import Problem
from glasswork.plugins.corels.model import RuleList
from glasswork.plugins.corels.rashomon import enumeration as rs
from glasswork.plugins.corels.search import engine
from glasswork.plugins.corels.spec import CorelsConstraints, CorelsSearch
from glasswork.rashomon import RashomonSet
from glasswork.spec.models import RashomonSpec


def rashomon_set(
    request: RashomonSpec,
    units: engine.Units,
    problem: Problem,
    lam: float,
    search_opts: CorelsSearch,
    constraints: CorelsConstraints,
    max_len: int,
    found: tuple[float, list[int], int, int],
    status: Status,
    lower: float,
    build: Callable[[list[int]], RuleList],
    items: list[list[tuple[int, int]]],
    ctx: SolveContext,
    stats: dict[str, Any],
) -> RashomonSet:
    """The Rashomon set after the search (``found``: its objective, list, evaluations and
    threads): enumerated when the optimum is certified, here or on ``ctx.executor``'s cluster;
    otherwise the incumbent alone, never complete, bounded by the search's lower bound. Either
    way the run says what antecedents the count is exact over (``say_what_it_counts_over``)."""
    optimum, best_prefix, evaluations, threads = found
    names = problem.feature_names

    def said(rset: RashomonSet) -> RashomonSet:
        say_what_it_counts_over(rset, problem, constraints, lam, units, optimum, ctx, stats)
        return rset

    def features(prefix: list[int]) -> tuple[str, ...]:
        used = sorted({j for m in prefix for j, _ in items[m]})
        return tuple(str(names[j]) for j in used)

    if status is not Status.OPTIMAL:
        ctx.log("corels: the optimum is not certified, so the Rashomon set is not enumerated", level="warning")
        incumbent = rs.member_builder(request, build, problem, features, {})(optimum, tuple(best_prefix))
        unproven = rs.unproven_set(request, optimum, lower, incumbent)
        ctx.rashomon_basis(optimum, proven=False, epsilon=request.epsilon)
        # live, as an enumeration's members are: the store and the monitor show it before the finish record
        ctx.rashomon(
            unproven.count,
            unproven.members,
            threshold=unproven.threshold,
            lower_bound=unproven.unenumerated_bound,
            nodes=evaluations,
        )
        return said(unproven)
    threshold = rs.threshold_for(request, optimum)
    ctx.rashomon_basis(optimum, proven=True, epsilon=request.epsilon)  # the enumerator's events carry it
    options: dict[str, Any] = {
        "policy": search_opts.policy,
        "max_prefix_length": max_len,
        "max_models": request.max_models,
        "ablation": tuple(search_opts.ablation),
    }
    listing = rs.Listing(  # what the enumeration needs to stream its members, here or on the cluster
        request, threshold, optimum, ctx, build, problem, features, evaluations, search_opts.progress_interval
    )
    if ctx.executor is not None:  # subtrees on the cluster: plugins/corels/cluster/enumeration.py
        from glasswork.plugins.corels.cluster.enumeration import enumerate_on_cluster

        rset, cluster_stats = enumerate_on_cluster(units, lam, listing, options=options, threads=threads)
        stats.update(cluster_stats)
        rset = with_the_optimum(rset, request, optimum, best_prefix, features, build, problem, ctx)
        return said(logged(rset, stats, ctx))
    t0 = time.perf_counter()
    enumerator_queue = rs.queue_budget_for(ctx.limits.memory, request.max_models)
    enumerator = rs.make_enumerator(
        units,
        lam,
        threshold,
        floor=optimum,
        threads=threads,
        queue_budget=enumerator_queue,
        **options,
    )
    rset, _ = rs.enumerate_rashomon(
        enumerator,
        listing,
        count_memory=rs.count_memory_for(ctx.limits.memory),
        relist=lambda upto, roots, empty: rs.make_enumerator(
            units,
            lam,
            upto,
            floor=optimum,
            threads=threads,
            queue_budget=enumerator_queue,
            roots=roots,
            include_empty=empty,
            **options,
        ),  # fmt: skip
        stats=stats,
    )
    stats["rashomon_seconds"] = time.perf_counter() - t0
    stats["rashomon_bytes"] = max(enumerator.memory_bytes(), stats.get("rashomon_listing_bytes", 0))
    stats.update({f"rashomon_{k}": v for k, v in enumerator.counters().items()})
    rset = with_the_optimum(rset, request, optimum, best_prefix, features, build, problem, ctx)
    return said(logged(rset, stats, ctx))


def with_the_optimum(
    rset: RashomonSet,
    request: RashomonSpec,
    optimum: float,
    best_prefix: list[int],
    features: Callable[[list[int]], tuple[str, ...]],
    build: Callable[[list[int]], RuleList],
    problem: Problem,
    ctx: SolveContext,
) -> RashomonSet:
    """An enumeration stopped before it listed anything still holds the certified optimum's list
    (the search found it): the set then has it, and bounds the rest by the optimum (in objective
    order the listing emits nothing until every prefix bounded below a list's objective is
    expanded: tens of seconds on COMPAS at epsilon 0.03). A count stopped part way (members under
    the first rules it finished, none listed) keeps its count, a lower bound as before."""
    if rset.complete or rset.members or optimum > rset.threshold:
        return rset
    incumbent = rs.member_builder(request, build, problem, features, {})(optimum, tuple(best_prefix))
    bound = optimum if rset.unenumerated_bound is None else max(rset.unenumerated_bound, optimum)
    count = max(rset.count, 1)
    ctx.rashomon(count, [incumbent], threshold=rset.threshold, lower_bound=bound)
    return dataclasses.replace(rset, count=count, members=[incumbent], unenumerated_bound=bound)


def logged(rset: RashomonSet, stats: dict[str, Any], ctx: SolveContext) -> RashomonSet:
    stats["rashomon_count"] = rset.count
    stats["rashomon_complete"] = rset.complete
    ctx.log(
        f"corels: Rashomon set at threshold {rset.threshold:.6g}: {rset.count:,} lists"
        f"{'' if rset.complete else ' so far (stopped by a limit)'} in {stats['rashomon_seconds']:.2f} s"
    )
    return rset


def say_what_it_counts_over(
    rset: RashomonSet,
    problem: Problem,
    constraints: CorelsConstraints,
    lam: float,
    units: engine.Units,
    objective: float,
    ctx: SolveContext,
    stats: dict[str, Any],
) -> None:
    """The antecedents the count is exact over, in words (``rashomon_complete_over``), and a
    warning when antecedents mined at the default support may leave lists within the threshold out."""
    over = "the antecedents of the premined table"
    if not problem.extras.get("premined"):  # the class the count is exact over, in words
        s = min(lam if constraints.min_support is None else constraints.min_support, 0.5)
        over = (
            f"the {units.caps.shape[0]} antecedents mined (max_card {constraints.max_card}, "
            f"support in [{s:g}, {1 - s:g}])"
        )
    stats["rashomon_complete_over"] = over
    default_support = not problem.extras.get("premined") and constraints.min_support is None
    if default_support and rset.threshold > objective and lam > 0:
        floor = lam - (rset.threshold - objective)  # the least support a list within it may use
        n_rows = problem.n_samples
        missed = (
            f"lists using one of support down to {floor:.4g} may also be within the threshold: set "
            f"constraints.min_support to {floor:.4g} to count them too"
            if floor * n_rows >= 1
            else f"lists using one of support down to {max(floor, 0):.4g}, less than one of the {n_rows:,} "
            "rows, may also be within the threshold: set constraints.min_support to 0 to mine every "
            "antecedent and count them too"
            if floor > 0
            else "the threshold is at least lambda above the optimum, so lists using an antecedent of any "
            "support may also be within it: set constraints.min_support to 0 to mine every antecedent "
            "and count them too"
        )
        ctx.log(
            f"corels: the Rashomon set counts the lists over {over}; antecedents were mined at support "
            f">= lambda ({lam:g}), and {missed} (more antecedents: a slower search and enumeration)",
            level="warning",
        )
