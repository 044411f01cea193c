"""The size of a CORELS search before it runs: what it will face, proven from the antecedents and
one pass over them, and a rough time from rules of thumb; the run logs it, and warns with what to
change when the time is beyond the limit."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as _corels
from glasswork.data import Problem
from glasswork.plugins.corels.inputs import antecedents_for, class_weight_vector, integer_multiplicity
from glasswork.plugins.corels.search import engine
from glasswork.plugins.corels.spec import CorelsConstraints, CorelsObjective, CorelsSearch

# Rules of thumb fitted on measured searches (bench/corels_defaults.py, bench/corels_compas.py;
# docs/corels.md, "Keeping a search small"). They size a warning, never a refusal.
EVALUATIONS_PER_SECOND = 10e6  # per thread, the compiled search while its queue grows (10-20 M/s)
WHOLE_OVER_SECOND_LEVEL = 1000  # a whole search's evaluations over its second level's (700 on COMPAS at 0.01)
LOG10_SETS_PER_SECOND = 22.0  # log10 C(M, depth) of a search taking about one second per thread
# with the tail table (corels_tailtable.pxd) a deep search's CPU seconds grow far slower with the
# space: 10^(0.113 log10 C - 1.44), least squares on COMPAS's .out at lambda 0.01, 0.005, 0.0025 and
# 0.001 (log10 C 8.9, 15.3, 24.9, 41.1; 0.37, 2.2, 17.7 and 1,772 CPU-s; the fit says 0.36, 1.9, 24
# and 1,581: docs/maintainers/corels-measurements.md, "The estimate with the tail table")
TAIL_TABLE_LOG10_SLOPE = 0.113
TAIL_TABLE_LOG10_OFFSET = 1.44
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
    of thumb fitted on measured searches (the constants above). ``tail_table``: the search will build
    its tail table, which cuts deep searches most (the rule of thumb for them changes with it).
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
    tail_table: bool = False  # the search will build its tail table (its units fit; not switched off)

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
        and, for deep searches over many antecedents, 10^(log10_space - LOG10_SETS_PER_SECOND), or
        10^(TAIL_TABLE_LOG10_SLOPE log10_space - TAIL_TABLE_LOG10_OFFSET) with the tail table."""
        threads = max(self.threads, 1)
        wide = WHOLE_OVER_SECOND_LEVEL * self.second_level / (EVALUATIONS_PER_SECOND * threads)
        exponent = (
            TAIL_TABLE_LOG10_SLOPE * self.log10_space - TAIL_TABLE_LOG10_OFFSET
            if self.tail_table
            else self.log10_space - LOG10_SETS_PER_SECOND
        )
        deep = 10.0 ** min(exponent, 300.0) / threads
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
    # as the search decides it: on, not under a fairness constraint, its units within the table's bytes
    # (the groups of identical antecedent vectors; every sample with search.compress off)
    ablated = search_opts is not None and "tail_table" in search_opts.ablation
    n_units = per_group.shape[0] if search_opts is None or search_opts.compress else n
    tail_table = not ablated and constraints.fairness is None and _corels.tail_table_rules_for(n_units, C) > 0
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
            tail_table=tail_table and lam > 0,
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
