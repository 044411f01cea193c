"""The ``corels`` solver: antecedents in, a certified rule list (or a stopped one with its gap) out.

The compiled search runs in slices of a few milliseconds with the GIL released; between slices
this module reports progress, announces new incumbents and lets the runner's stop flag (cancel,
time, memory) or the node limit end the search. ``nodes`` counts prefixes evaluated (lower-bound
evaluations, as the paper's tables do).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from glasswork.class_weights import class_weight_factors
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as _corels
from glasswork.data import DataError, Problem
from glasswork.plugins.corels import engine
from glasswork.plugins.corels.engine import SpillError, spill_budget
from glasswork.plugins.corels.model import Rule, RuleList
from glasswork.plugins.corels.spec import (
    CorelsConstraints,
    CorelsObjective,
    CorelsSearch,
    CorelsSpec,
)
from glasswork.result import Certificate, RashomonSet, Result, Status
from glasswork.solver import SolveContext, Solver, resident_memory
from glasswork.spec import RashomonSpec

SLICE_SECONDS = 0.005


class CorelsSolver(Solver):
    """Certifiably optimal rule lists (Angelino et al., JMLR 2018), every bound of the paper."""

    name = "corels"
    version = "1.0.0"
    description = "CORELS: certifiably optimal rule lists by branch-and-bound over antecedents."
    tasks = frozenset({"binary", "multiclass"})
    spec_model = CorelsSpec
    distributed = True  # run --executor dask:...: plugins/corels/distributed.py
    supports_rashomon = True

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        spec: CorelsSpec = self.spec  # type: ignore[assignment]
        return run_corels(problem, spec.objective, spec.constraints, spec.search, ctx, rashomon=spec.rashomon)

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


def run_corels(
    problem: Problem,
    objective: CorelsObjective,
    constraints: CorelsConstraints,
    search_opts: CorelsSearch,
    ctx: SolveContext,
    rashomon: RashomonSpec | None = None,
) -> Result:
    """Mine (unless pre-mined), search in slices, and package the rule list and certificate;
    with ``rashomon``, then enumerate every list within its threshold (plugins/corels/rashomon.py)."""
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
    units = engine.make_units(
        bits, problem.y, n_classes, class_weights=weights, multiplicity=multiplicity, compress=search_opts.compress
    )
    max_len = 255 if constraints.max_prefix_length is None else constraints.max_prefix_length
    options: dict[str, Any] = {
        "policy": search_opts.policy,
        "symmetry_map": search_opts.symmetry_map,
        "max_prefix_length": max_len,
        "ablation": {b: False for b in search_opts.ablation},
        "threads": engine.default_threads() if search_opts.threads is None else search_opts.threads,
    }
    if ctx.executor is not None:
        return _run_on_cluster(
            problem, units, lam, options, (names, bits, items), weights, multiplicity, ctx, t0, rashomon, search_opts
        )
    search = engine.make_search(units, lam, **options)
    prep_seconds = time.perf_counter() - t0
    ctx.log(
        f"corels: {len(names)} antecedents, {problem.n_samples} samples in "
        f"{units.n_units} units, lambda={lam}, {search.threads} thread(s)"
    )

    def build(prefix: list[int]) -> RuleList:
        return build_rule_list(prefix, names, bits, items, problem, weights, multiplicity)

    M = len(names)
    node_limit = -1 if ctx.limits.nodes is None else int(ctx.limits.nodes)
    best_seen = search.objective
    ctx.incumbent(best_seen, build(search.best_prefix), nodes=0)
    last_progress = -1.0
    code = _corels.SLICE
    with spill_space(search, search_opts.spill, ctx):
        while True:
            code = search.run(SLICE_SECONDS, ctx.stop_flag, node_limit)
            if search.objective < best_seen:
                best_seen = search.objective
                ctx.incumbent(best_seen, build(search.best_prefix), nodes=search.n_evaluated)
            if code == _corels.SPILL_ERROR:
                raise SpillError(
                    f"corels: the queue's spill files failed: {search.spill_error}; free space there, point "
                    "TMPDIR at a disk with room, or set search.spill: off (the run has no certificate)"
                )
            if code != _corels.SLICE:
                break
            if ctx.check(search.n_evaluated) is not None:
                code = _corels.STOPPED
                break
            now = ctx.elapsed()
            if now - last_progress >= search_opts.progress_interval:
                last_progress = now
                _progress(ctx, search, M)
        _progress(ctx, search, M)

    if code == _corels.DONE:
        status = Status.OPTIMAL
        lower = search.objective
    else:
        if code == _corels.NODE_LIMIT:
            status = Status.STOPPED_NODES
        elif code == _corels.OUT_OF_MEMORY:
            status = Status.STOPPED_MEMORY
        else:
            reason = ctx.stop_reason
            status = reason.status if reason.value != 0 else Status.STOPPED_TIME
        lower = min(search.lower_bound(), search.objective)
    model = build(search.best_prefix)
    cert = Certificate(status=status, objective=search.objective, lower_bound=lower, tolerance=1e-9)
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
    metrics = {"regularized_objective": search.objective, "train_loss": loss, "rules": float(len(search.best_prefix))}
    rset = None
    if rashomon is not None:
        found = (search.objective, search.best_prefix, search.n_evaluated, search.threads)
        rset = _rashomon_set(
            rashomon, units, problem, lam, search_opts, max_len, found, status, lower, build, items, ctx, stats
        )
        over = "the antecedents of the premined table"
        if not problem.extras.get("premined"):  # the class the count is exact over, in words
            s = min(lam if constraints.min_support is None else constraints.min_support, 0.5)
            over = (
                f"the {units.caps.shape[0]} antecedents mined (max_card {constraints.max_card}, "
                f"support in [{s:g}, {1 - s:g}])"
            )
        stats["rashomon_complete_over"] = over
        default_support = not problem.extras.get("premined") and constraints.min_support is None
        if default_support and rset.threshold > search.objective and lam > 0:
            floor = lam - (rset.threshold - search.objective)  # the least support a list within it may use
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
    return Result(model=model, certificate=cert, metrics=metrics, stats=stats, rashomon=rset)


def _rashomon_set(
    request: RashomonSpec,
    units: engine.Units,
    problem: Problem,
    lam: float,
    search_opts: CorelsSearch,
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
    otherwise the incumbent alone, never complete, bounded by the search's lower bound."""
    from glasswork.plugins.corels import rashomon as rs

    optimum, best_prefix, evaluations, threads = found
    names = problem.feature_names

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
        return unproven
    threshold = rs.threshold_for(request, optimum)
    ctx.rashomon_basis(optimum, proven=True, epsilon=request.epsilon)  # the enumerator's events carry it
    options: dict[str, Any] = {
        "policy": search_opts.policy,
        "max_prefix_length": max_len,
        "max_models": request.max_models,
        "ablation": tuple(search_opts.ablation),
    }
    if ctx.executor is not None:  # subtrees on the cluster: plugins/corels/rashomon_cluster.py
        from glasswork.plugins.corels.rashomon_cluster import enumerate_on_cluster

        rset, cluster_stats = enumerate_on_cluster(
            units,
            lam,
            request=request,
            threshold=threshold,
            optimum=optimum,
            options=options,
            ctx=ctx,
            build=build,
            problem=problem,
            feature_names=features,
            nodes_before=evaluations,
            progress_interval=search_opts.progress_interval,
            threads=threads,
        )
        stats.update(cluster_stats)
        rset = _with_the_optimum(rset, request, optimum, best_prefix, features, build, problem, ctx)
        return _rashomon_logged(rset, stats, ctx)
    t0 = time.perf_counter()
    enumerator_queue = rs.queue_budget_for(ctx.limits.memory)
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
        request=request,
        threshold=threshold,
        optimum=optimum,
        ctx=ctx,
        build=build,
        problem=problem,
        feature_names=features,
        nodes_before=evaluations,
        progress_interval=search_opts.progress_interval,
        count_memory=rs.count_memory_for(ctx.limits.memory),
        relist=lambda upto: rs.make_enumerator(
            units, lam, upto, floor=optimum, threads=threads, queue_budget=enumerator_queue, **options
        ),
        stats=stats,
    )
    stats["rashomon_seconds"] = time.perf_counter() - t0
    stats["rashomon_bytes"] = max(enumerator.memory_bytes(), stats.get("rashomon_listing_bytes", 0))
    stats.update({f"rashomon_{k}": v for k, v in enumerator.counters().items()})
    rset = _with_the_optimum(rset, request, optimum, best_prefix, features, build, problem, ctx)
    return _rashomon_logged(rset, stats, ctx)


def _with_the_optimum(
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
    (the search found it): the set then has it, counted once, and bounds the rest by the optimum
    (in objective order the listing emits nothing until every prefix bounded below a list's
    objective is expanded: tens of seconds on COMPAS at epsilon 0.03)."""
    from glasswork.plugins.corels import rashomon as rs

    if rset.complete or rset.count > 0 or optimum > rset.threshold:
        return rset
    incumbent = rs.member_builder(request, build, problem, features, {})(optimum, tuple(best_prefix))
    bound = optimum if rset.unenumerated_bound is None else max(rset.unenumerated_bound, optimum)
    ctx.rashomon(1, [incumbent], threshold=rset.threshold, lower_bound=bound)
    return dataclasses.replace(rset, count=1, members=[incumbent], unenumerated_bound=bound)


def _rashomon_logged(rset: RashomonSet, stats: dict[str, Any], ctx: SolveContext) -> RashomonSet:
    stats["rashomon_count"] = rset.count
    stats["rashomon_complete"] = rset.complete
    ctx.log(
        f"corels: Rashomon set at threshold {rset.threshold:.6g}: {rset.count:,} lists"
        f"{'' if rset.complete else ' so far (stopped by a limit)'} in {stats['rashomon_seconds']:.2f} s"
    )
    return rset


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
    rashomon: RashomonSpec | None = None,
    search_opts: CorelsSearch | None = None,
) -> Result:
    """One search spread over ``ctx.executor``'s cluster (plugins/corels/distributed.py); the
    driver's incumbents and progress are this run's events, as in one process. With
    ``rashomon``, the set is then enumerated on the same cluster (plugins/corels/rashomon_cluster.py)."""
    from glasswork.plugins.corels.distributed import run_distributed
    from glasswork.plugins.corels.rashomon_cluster import one_connection

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
    with one_connection(ctx) if rashomon is not None else contextlib.nullcontext():
        spill = "off" if search_opts is None else search_opts.spill
        out = run_distributed(units, lam, options, ctx, on_incumbent, on_progress, spill=spill)
        stats: dict[str, Any] = {
            **out.stats,
            "nodes": out.stats["evaluated"],
            "antecedents": len(names),
            "units": units.n_units,
            "prepare_seconds": prep_seconds,
            "executor": ctx.executor.name,
        }
        rset = None
        if rashomon is not None and search_opts is not None:
            found = (out.objective, out.prefix, out.stats["evaluated"], search_opts.threads or 1)  # per task
            rset = _rashomon_set(
                rashomon, units, problem, lam, search_opts, options["max_prefix_length"], found,
                out.status, out.lower_bound, build, items, ctx, stats,
            )  # fmt: skip
    cert = Certificate(status=out.status, objective=out.objective, lower_bound=out.lower_bound, tolerance=1e-9)
    metrics = {
        "regularized_objective": out.objective,
        "train_loss": out.objective - lam * len(out.prefix),
        "rules": float(len(out.prefix)),
    }
    return Result(model=build(out.prefix), certificate=cert, metrics=metrics, stats=stats, rashomon=rset)


def spill_space(search: Any, setting: str | int, ctx: SolveContext) -> Any:
    """The block in which ``search`` spills its queue per ``search.spill`` (engine.spill_directory)."""
    budget = spill_budget(setting, ctx.limits.memory, resident_memory())
    return engine.spill_directory(
        search, budget, auto=setting == "auto", warn=lambda message: ctx.log(message, level="warning")
    )


def _progress(ctx: SolveContext, search: Any, M: int) -> None:
    lengths, pairs = search.queue_summary()
    spilled = {"spilled": search.spilled_size, "spill_bytes": search.spill_bytes} if search.spilled_size else {}
    ctx.progress(
        objective=search.objective,
        lower_bound=min(search.lower_bound(), search.objective),
        nodes=search.n_evaluated,
        queue=search.queue_size,
        trie=search.trie_size,
        map=search.map_size,
        log10_remaining=engine.log10_remaining(pairs, M),
        queue_lengths={str(k): v for k, v in sorted(lengths.items())},
        search_bytes=search.memory_bytes(),
        **spilled,
    )


# -- inputs ------------------------------------------------------------------------------------


def antecedents_for(
    problem: Problem, c: CorelsConstraints, lam: float
) -> tuple[list[str], np.ndarray, list[list[tuple[int, int]]]]:
    """Names, packed bits and feature items of the antecedents to search.

    Pre-mined data (a ``.out`` source) are used as they are, each antecedent a column of X; other
    data are mined from 0/1 features with the constraints' mining options.
    """
    from glasswork.data.rules import Antecedents, mine_antecedents

    if problem.extras.get("premined"):
        ants = problem.extras.get("antecedents")
        if not isinstance(ants, Antecedents):
            ants = Antecedents.from_matrix(problem.X, problem.feature_names)
        return list(ants.names), ants.bits, [[(m, 1)] for m in range(len(ants.names))]
    require_binary_features(problem)
    min_support = lam if c.min_support is None else c.min_support
    min_support = min(min_support, 0.5)
    ants = mine_antecedents(
        problem.X, problem.feature_names, max_card=c.max_card, min_support=min_support, negations=c.negations
    )
    assert ants.items is not None  # mined antecedents carry their (column, value) items
    items = [list(row) for row in ants.items]
    return list(ants.names), ants.bits, items


def require_binary_features(problem: Problem) -> None:
    """CORELS mines its antecedents from 0/1 features (a pre-mined ``.out`` source has them)."""
    if not problem.extras.get("premined") and not problem.is_binary_matrix:
        raise DataError(
            "CORELS mines antecedents from 0/1 features, but the features are not 0/1",
            file=problem.source,
            hint="add 'binarize:' to the data section",
        )


def class_weight_vector(problem: Problem, objective: CorelsObjective) -> np.ndarray | None:
    """The weight of each class in the loss (``glasswork.class_weights``), ``balanced`` counted
    over the rows each sample stands for."""
    return class_weight_factors(
        objective.class_weight, problem.classes, problem.y, integer_multiplicity(problem.sample_weight)
    )


def integer_multiplicity(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """Integer sample weights act as multiplicities; the bit-parallel bounds need integer counts."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if np.any(w < 0) or np.any(w != np.round(w)):
        raise DataError(
            "CORELS takes only non-negative integer sample weights (counts)",
            hint="use objective.class_weight for weighted classes, or round the weights",
        )
    return w.astype(np.int64)


def build_rule_list(
    prefix: list[int],
    names: list[str],
    bits: np.ndarray,
    items: list[list[tuple[int, int]]],
    problem: Problem,
    weights: np.ndarray | None,
    multiplicity: np.ndarray | None,
) -> RuleList:
    """The rule list of a prefix, labels by (weighted) majority as in the search."""
    n = problem.n_samples
    C = len(problem.classes) if problem.classes is not None else int(problem.y.max()) + 1
    w = np.ones(C) if weights is None else weights
    mult = np.ones(n, dtype=np.int64) if multiplicity is None else multiplicity
    y = np.asarray(problem.y, dtype=np.int64)
    open_ = np.ones(n, dtype=bool)
    rules = []
    caps = bitset.unpack_rows(np.ascontiguousarray(bits[prefix]), n).astype(bool) if prefix else []
    for pos, m in enumerate(prefix):
        hit = open_ & caps[pos]
        counts = np.bincount(y[hit], weights=mult[hit], minlength=C).astype(np.int64)
        rules.append(Rule(names[m], list(items[m]), _majority(counts, w), counts.tolist()))
        open_ &= ~hit
    counts = np.bincount(y[open_], weights=mult[open_], minlength=C).astype(np.int64)
    classes = problem.classes if problem.classes is not None else np.arange(C)
    label_names = problem.extras.get("label_names")
    if label_names is not None and len(label_names) != C:
        label_names = None
    return RuleList(
        rules,
        _majority(counts, w),
        counts.tolist(),
        classes,
        task=problem.task,
        target=problem.extras.get("target"),
        label_names=label_names,
        class_weights=None if weights is None else list(weights),
    )


def _majority(counts: np.ndarray, w: np.ndarray) -> int:
    """Weighted majority, ties to the higher class (as the search decides them)."""
    weighted = counts * w
    return int(len(weighted) - 1 - np.argmax(weighted[::-1]))


# -- the size of a search, before it runs ------------------------------------------------------

# Rules of thumb fitted on measured searches (bench/corels_defaults.py, bench/corels_compas.py;
# docs/corels.md, "Keeping a search small"). They size a warning, never a refusal.
EVALUATIONS_PER_SECOND = 10e6  # per thread, the compiled search while its queue grows (10-20 M/s)
WHOLE_OVER_SECOND_LEVEL = 1000  # a whole search's evaluations over its second level's (700 on COMPAS at 0.01)
LOG10_SETS_PER_SECOND = 22.0  # log10 C(M, depth) of a search taking about one second per thread
UNBOUNDED_LOG10_SETS = 9.0  # an unlimited depth over more sets than this: warned as unlikely to certify
REGULARIZATIONS_TO_SUGGEST = (0.015, 0.02, 0.025, 0.03, 0.04, 0.05)


@dataclass(frozen=True)
class SearchEstimate:
    """What a CORELS search will face, from the mined antecedents and one pass over them.

    ``max_length`` is Theorem 6's bound with the incumbent the search holds after its first
    level (the best list of at most one rule, objective ``one_rule``): an optimal list has
    ``K * lambda <= R* <= one_rule``. ``depth`` adds Theorem 20's equivalent points (``minority``,
    the share no list can get right): no prefix longer than it is ever evaluated.
    ``first_level`` counts the one-rule prefixes that pass Theorems 10 and 11 and the lookahead
    against that incumbent: at most these are expanded, and each expansion scores ``M - 1``
    children, so ``second_level = first_level * (M - 1)`` bounds the evaluations at depth 2.
    ``log10_space`` is ``log10 sum_{k <= depth} C(M, k)``, the antecedent sets of at most ``depth``
    rules (the symmetry map keeps one ordering of each): it grows with the depth, also past ``M / 2``
    where ``C(M, depth)`` alone falls back to 1. ``unbounded`` says the bounds leave the depth as
    deep as the antecedents go, on a space too large to go through. These are proven; ``rough_seconds`` is not: a rule
    of thumb fitted on measured searches (the constants above).
    """

    antecedents: int
    samples: int
    regularization: float
    max_card: int | None
    empty_list: float
    one_rule: float
    minority: float
    max_length: int
    depth: int
    first_level: int
    second_level: int
    log10_space: float
    threads: int
    larger_regularizations: tuple[tuple[float, float], ...] = ()  # (lambda, rough seconds)

    @property
    def unbounded(self) -> bool:
        """The depth the bounds allow reaches the number of antecedents (no ``max_prefix_length``
        below it) over more than ``UNBOUNDED_LOG10_SETS`` sets: the lower bounds cut little, and the
        search rarely certifies in any time the rough figure gives (issue 36: 56 antecedents, depth
        56, stopped at 60 s with a 2.45 % gap where the figure said 0.15 s)."""
        return self.antecedents > 0 and self.depth >= self.antecedents and self.log10_space >= UNBOUNDED_LOG10_SETS

    @property
    def rough_seconds(self) -> float:
        """The larger of two rough times: the second level's evaluations times a measured factor,
        and 10^(log10_space - LOG10_SETS_PER_SECOND) (deep searches over many antecedents)."""
        threads = max(self.threads, 1)
        wide = WHOLE_OVER_SECOND_LEVEL * self.second_level / (EVALUATIONS_PER_SECOND * threads)
        deep = 10.0 ** min(self.log10_space - LOG10_SETS_PER_SECOND, 300.0) / threads
        return max(wide, deep)

    def summary(self) -> str:
        """One line for the run's log and ``glasswork validate``."""
        return (
            f"corels size: {self.antecedents:,} antecedents, prefixes of at most {self.depth} rules "
            f"(Theorem 20 with the lookahead), {self.first_level:,} one-rule prefixes to expand, "
            f"{self.second_level:,} two-rule prefixes to score, 10^{self.log10_space:.0f} antecedent sets "
            f"of at most {self.depth} rules; "
            + (
                "no time given: the bounds do not limit the depth"
                if self.unbounded
                else f"roughly {_duration(self.rough_seconds)} on {self.threads} thread(s)"
            )
        )

    def warning(self, time_limit: float | None) -> str | None:
        """One line saying what to change, when the rough time is beyond the time limit (an hour
        without one); ``None`` otherwise. Never a refusal: the run goes on."""
        budget = 3600.0 if time_limit is None else time_limit
        if self.unbounded:
            return (
                f"corels: unlikely to certify within {_duration(budget)}: the bounds allow lists as long as "
                f"the {self.antecedents:,} antecedents at lambda {self.regularization:g}, over "
                f"10^{self.log10_space:.0f} antecedent sets; try constraints.max_prefix_length (the optimum "
                f"is then over shorter lists) or a larger objective.regularization"
            )
        if self.rough_seconds <= budget:
            return None
        fixes = ["constraints.max_card: 1"] if self.max_card is not None and self.max_card > 1 else []
        fits = [x for x, seconds in self.larger_regularizations if seconds <= budget]
        fixes.append(
            f"objective.regularization: {fits[0]:g}"
            if fits
            else f"a larger objective.regularization than {self.regularization:g}"
        )
        if self.max_card is not None:
            fixes.append("fewer binarize.thresholds")
        return (
            f"corels: unlikely to certify within {_duration(budget)} ({self.antecedents:,} antecedents, "
            f"{self.second_level:,} two-rule prefixes, up to {self.depth} rules deep: roughly "
            f"{_duration(self.rough_seconds)}); "
            f"try {', '.join(fixes[:-1]) + ' or ' if len(fixes) > 1 else ''}{fixes[-1]}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "rough_seconds": self.rough_seconds}


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 3600 * 2:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days" if seconds < 86400 * 365 else "more than a year"


def estimate_search(
    problem: Problem,
    objective: CorelsObjective,
    constraints: CorelsConstraints,
    search_opts: CorelsSearch | None = None,
    mined: tuple[list[str], np.ndarray, Any] | None = None,
) -> SearchEstimate:
    """Mine (or take ``mined``) and size the search: one popcount pass over the antecedents and one
    grouping of the rows by antecedent vector, as the search's own preparation does. The run logs
    it at its start; ``glasswork validate`` can show it (``CorelsSolver.size_report``)."""
    lam = objective.regularization
    names, bits, _ = antecedents_for(problem, constraints, lam) if mined is None else mined
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    M, n = len(names), problem.n_samples
    C = len(problem.classes) if problem.classes is not None else int(problem.y.max()) + 1
    weights = class_weight_vector(problem, objective)
    w = np.ones(C) if weights is None else weights
    mult = integer_multiplicity(problem.sample_weight)
    y = np.asarray(problem.y, dtype=np.int64)
    captured = np.zeros((M, C))  # weighted count of each class each antecedent captures
    total = np.zeros(C)
    for c in range(C):
        in_class = y == c
        if mult is None:
            mask = bitset.pack_rows(np.ascontiguousarray(in_class[None, :].astype(np.uint8)))[0]
            captured[:, c] = bitset.and_popcount_rows(bits, np.ascontiguousarray(mask)) if M else 0
            total[c] = in_class.sum()
        else:  # multiplicities: per-class sums over the unpacked rows, in chunks
            m_c = np.where(in_class, mult, 0).astype(np.float64)
            for start in range(0, M, 256):
                block = bitset.unpack_rows(np.ascontiguousarray(bits[start : start + 256]), n)
                captured[start : start + 256, c] = block @ m_c
            total[c] = m_c.sum()
    captured *= w
    total *= w
    W = float(total.sum())
    # Theorem 20: rows with identical antecedent vectors get one prediction, so every list errs on
    # the minority of each such group: b + b0 >= k * lambda + minority. With the lookahead
    # (b + b0 + lambda >= R^c, R^c <= one_rule) no prefix of length k >= x - 1 is expanded,
    # x = (one_rule - minority) / lambda, so none longer than ceil(x) - 1 is evaluated.
    group = engine.sample_signatures(bits, n)
    per_group = np.zeros((int(group.max()) + 1 if n else 0, C))
    np.add.at(per_group, (group, y), 1.0 if mult is None else mult.astype(np.float64))
    per_group *= w
    minority = float((per_group.sum(axis=1) - per_group.max(axis=1)).sum()) / W if n else 0.0
    cap = M if constraints.max_prefix_length is None else min(M, constraints.max_prefix_length)
    threads = engine.default_threads() if search_opts is None or search_opts.threads is None else search_opts.threads

    def size(lam: float) -> SearchEstimate:
        empty = (W - float(total.max())) / W
        one_rule, first = empty, 0
        if M:
            cap_weight = captured.sum(axis=1)
            cap_right = captured.max(axis=1)
            rest_right = (total[None, :] - captured).max(axis=1)
            one_rule = min(empty, float(np.min(lam + (W - cap_right - rest_right) / W)))
            viable = (
                (cap_weight >= lam * W) & (cap_right >= lam * W) & (2 * lam + (cap_weight - cap_right) / W < one_rule)
            )
            first = int(viable.sum())
        max_length = min(cap, int(math.floor(one_rule / lam + 1e-12))) if lam > 0 else cap
        depth = min(max_length, max(int(math.ceil((one_rule - minority) / lam - 1e-12)) - 1, 0)) if lam > 0 else cap
        return SearchEstimate(
            antecedents=M,
            samples=n,
            regularization=lam,
            max_card=None if problem.extras.get("premined") else constraints.max_card,
            empty_list=empty,
            one_rule=one_rule,
            minority=minority,
            max_length=max_length,
            depth=depth,
            first_level=first,
            second_level=first * max(M - 1, 0),
            log10_space=_log10_sets_up_to(M, depth),
            threads=threads,
        )

    estimate = size(lam)
    # larger penalties on the same antecedents (mining at a larger min_support only removes some)
    larger = tuple((x, size(x).rough_seconds) for x in REGULARIZATIONS_TO_SUGGEST if x > lam)
    return dataclasses.replace(estimate, larger_regularizations=larger)


def _log10_binomial(m: int, k: int) -> float:
    """log10 C(m, k): the antecedent sets of size k, what the symmetry map leaves of the orderings."""
    k = max(0, min(k, m))
    return (math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1)) / math.log(10)


def _log10_sets_up_to(m: int, depth: int) -> float:
    """log10 of sum_{k <= depth} C(m, k): the antecedent sets of at most ``depth`` rules."""
    logs = [_log10_binomial(m, k) for k in range(max(0, min(depth, m)) + 1)]
    top = max(logs)
    return top + math.log10(sum(10.0 ** (x - top) for x in logs))
