"""The ``corels`` solver: antecedents in, a certified rule list (or a stopped one with its gap) out.

The compiled search runs in slices of a few milliseconds with the GIL released; between slices
this module reports progress, announces new incumbents and lets the runner's stop flag (cancel,
time, memory) or the node limit end the search. ``nodes`` counts prefixes evaluated (lower-bound
evaluations, as the paper's tables do).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as _corels
from glasswork.data import DataError, Problem
from glasswork.plugins.corels import engine
from glasswork.plugins.corels.model import Rule, RuleList
from glasswork.plugins.corels.spec import (
    CorelsConstraints,
    CorelsObjective,
    CorelsSearch,
    CorelsSpec,
)
from glasswork.result import Certificate, Result, Status
from glasswork.solver import SolveContext, Solver

SLICE_SECONDS = 0.005


class CorelsSolver(Solver):
    """Certifiably optimal rule lists (Angelino et al., JMLR 2018), every bound of the paper."""

    name = "corels"
    version = "1.0.0"
    description = "CORELS: certifiably optimal rule lists by branch-and-bound over antecedents."
    tasks = frozenset({"binary", "multiclass"})
    spec_model = CorelsSpec

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        spec: CorelsSpec = self.spec  # type: ignore[assignment]
        return run_corels(problem, spec.objective, spec.constraints, spec.search, ctx)


def run_corels(problem: Problem, objective: CorelsObjective, constraints: CorelsConstraints,
               search_opts: CorelsSearch, ctx: SolveContext) -> Result:
    """Mine (unless pre-mined), search in slices, and package the rule list and certificate."""
    lam = objective.regularization
    t0 = time.perf_counter()
    names, bits, items = antecedents_for(problem, constraints, lam)
    n_classes = len(problem.classes) if problem.classes is not None else int(problem.y.max()) + 1
    weights = class_weight_vector(objective.class_weights, problem.classes, n_classes)
    multiplicity = integer_multiplicity(problem.sample_weight)
    units = engine.prepare(bits, problem.y, n_classes, class_weights=weights,
                           multiplicity=multiplicity, compress=search_opts.compress)
    max_len = 255 if constraints.max_prefix_length is None else constraints.max_prefix_length
    search = engine.make_search(
        units, lam, policy=search_opts.policy, symmetry_map=search_opts.symmetry_map,
        max_prefix_length=max_len,
        ablation={b: False for b in search_opts.ablation} | {b: True for b in search_opts.bounds},
    )
    prep_seconds = time.perf_counter() - t0
    ctx.log(f"corels: {len(names)} antecedents, {problem.n_samples} samples in "
            f"{units.n_units} units, lambda={lam}")

    def build(prefix: list[int]) -> RuleList:
        return build_rule_list(prefix, names, bits, items, problem, weights, multiplicity)

    M = len(names)
    node_limit = -1 if ctx.limits.nodes is None else int(ctx.limits.nodes)
    best_seen = search.objective
    ctx.incumbent(best_seen, build(search.best_prefix), nodes=0)
    last_progress = -1.0
    code = _corels.SLICE
    while True:
        code = search.run(SLICE_SECONDS, ctx.stop_flag, node_limit)
        if search.objective < best_seen:
            best_seen = search.objective
            ctx.incumbent(best_seen, build(search.best_prefix), nodes=search.n_evaluated)
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
    cert = Certificate(status=status, objective=search.objective, lower_bound=lower,
                       tolerance=1e-9)
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
    }
    metrics = {"regularized_objective": search.objective, "train_loss": loss,
               "rules": float(len(search.best_prefix))}
    return Result(model=model, certificate=cert, metrics=metrics, stats=stats)


def _progress(ctx: SolveContext, search: Any, M: int) -> None:
    lengths, pairs = search.queue_summary()
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
    )


# -- inputs ------------------------------------------------------------------------------------


def antecedents_for(problem: Problem, c: CorelsConstraints, lam: float
                    ) -> tuple[list[str], np.ndarray, list[list[tuple[int, int]]]]:
    """Names, packed bits and feature items of the antecedents to search.

    Pre-mined data (a ``.out`` source) are used as they are, each antecedent a column of X; other
    data are mined from 0/1 features with the constraints' mining options.
    """
    from glasswork.data.rules import Antecedents, mine_antecedents, negate_name, split_items

    if problem.extras.get("premined"):
        ants = problem.extras.get("antecedents")
        if not isinstance(ants, Antecedents):
            ants = Antecedents.from_matrix(problem.X, problem.feature_names)
        return list(ants.names), ants.bits, [[(m, 1)] for m in range(len(ants.names))]
    if not problem.is_binary_matrix:
        raise DataError("CORELS mines antecedents from 0/1 features, but the features are not 0/1",
                        file=problem.source, hint="add 'binarize:' to the data section")
    min_support = lam if c.min_support is None else c.min_support
    min_support = min(min_support, 0.5)
    ants = mine_antecedents(problem.X, problem.feature_names, max_card=c.max_card,
                            min_support=min_support, negations=c.negations)
    lookup: dict[str, tuple[int, int]] = {}
    for j, nm in enumerate(problem.feature_names):
        lookup.setdefault(str(nm), (j, 1))
        if c.negations:
            lookup.setdefault(negate_name(str(nm)), (j, 0))
    items: list[list[tuple[int, int]]] = []
    for name in ants.names:
        parts = split_items(name)
        if not all(p in lookup for p in parts):
            raise DataError(f"cannot map antecedent {name!r} back to feature columns",
                            file=problem.source, hint="feature names must not contain ','")
        items.append([lookup[p] for p in parts])
    return list(ants.names), ants.bits, items


def class_weight_vector(spec_weights: Any, classes: np.ndarray | None, n_classes: int) -> np.ndarray | None:
    if spec_weights is None:
        return None
    if isinstance(spec_weights, list):
        if len(spec_weights) != n_classes:
            raise DataError(f"class_weights lists {len(spec_weights)} weights for {n_classes} classes",
                            hint="give one weight per class, in class order")
        return np.asarray(spec_weights, dtype=np.float64)
    names = [str(c) for c in (classes if classes is not None else range(n_classes))]
    unknown = [k for k in spec_weights if k not in names]
    if unknown:
        raise DataError(f"class_weights names unknown class(es) {', '.join(map(repr, unknown))}",
                        hint=f"classes are: {', '.join(names)}")
    return np.asarray([float(spec_weights.get(n, 1.0)) for n in names], dtype=np.float64)


def integer_multiplicity(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """Integer sample weights act as multiplicities; the bit-parallel bounds need integer counts."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if np.any(w < 0) or np.any(w != np.round(w)):
        raise DataError("CORELS takes only non-negative integer sample weights (counts)",
                        hint="use objective.class_weights for weighted classes, or round the weights")
    return w.astype(np.int64)


def build_rule_list(prefix: list[int], names: list[str], bits: np.ndarray,
                    items: list[list[tuple[int, int]]], problem: Problem,
                    weights: np.ndarray | None, multiplicity: np.ndarray | None) -> RuleList:
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
    return RuleList(rules, _majority(counts, w), counts.tolist(), classes, task=problem.task,
                    target=problem.extras.get("target"), label_names=label_names)


def _majority(counts: np.ndarray, w: np.ndarray) -> int:
    """Weighted majority, ties to the higher class (as the search decides them)."""
    weighted = counts * w
    return int(len(weighted) - 1 - np.argmax(weighted[::-1]))
