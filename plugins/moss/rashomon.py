"""The Rashomon set of one stability point: every rule set within a threshold of its optimum.

At a stability threshold ``eps`` (in trees), the set is every selection ``S`` of candidate rules
with ``|S| <= k``, ``stab(S) >= eps`` and ``H2(S) <= threshold``. It is enumerated exactly by a
best-first branch and bound over rule-in / rule-out fixings, bounded by the perspective
relaxation (``relaxation.py``) exactly as the optimum's search is, but pruned against the
threshold instead of the incumbent: a subtree whose bound exceeds the threshold holds no member,
and a rule whose own bound (forced in, or forced out) exceeds it is fixed. A subtree whose rules
are all decided (or already k in) is one rule set; it goes back into the same priority queue
keyed by its exact H2, so it leaves the queue only when no open subtree can hold a better one:
members come out best first, and a search stopped at a limit knows the smallest key left in the
queue as a lower bound on every member it did not enumerate.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from glasswork.contract.result import Status
from glasswork.rashomon import RashomonMember, RashomonSet

from .loss import Gram, H2Oracle
from .relaxation import FREE, IN, OUT, Bound, PerspectiveRelaxation

if TYPE_CHECKING:
    from glasswork.spec.models import RashomonSpec

ROOT_EFFORT = 18  # golden-section steps on mu at the root
NODE_EFFORT = 5  # at a node, warm-started from its parent
NODE_RESOLVE = 0  # rounds of bounding again after a node's fixings (the fixings themselves always apply)
DIRECT_COMPLETIONS = 256  # a node with at most this many rule sets left evaluates them instead of branching
CHECK_EVERY = 16  # queue entries between the run's stop checks ...
POLL_SECONDS = 0.1  # ... or this long: a bound on a large pool can take a tenth of a second
_NODE, _LEAF = 0, 1
_NO_Z = np.zeros(0)  # an open node keeps its parent's multipliers and weights, not its z


@dataclass
class Enumeration:
    """What one enumeration found: members best first (at most ``max_models``), the exact count."""

    threshold: float
    members: list[tuple[float, tuple[int, ...]]] = field(default_factory=list)
    count: int = 0
    complete: bool = False
    unenumerated_bound: float | None = None
    nodes: int = 0
    seconds: float = 0.0
    stopped: Status | None = None
    fresh: int = 0  # members kept since the last report (``Report`` reads them)


Report = Callable[[Enumeration], None]


def _slack(value: float) -> float:
    """Rounding room in comparisons against the threshold (bounds and H2 come from different sums)."""
    return 1e-10 * max(1.0, abs(value))


def enumerate_rule_sets(
    oracle: H2Oracle,
    stab: np.ndarray,
    k: int,
    stability: float,
    threshold: float,
    *,
    lower_bound: float,
    max_models: int,
    stop: Callable[[int], Status | None] | None = None,
    report: Report | None = None,
) -> Enumeration:
    """Every rule set with ``stab'z >= stability``, ``sum z <= k`` and H2 <= ``threshold``, best first.

    ``lower_bound`` is a proven bound on every rule set's H2 at this stability (the optimum's
    certificate): what a search stopped before its root reports. ``stop(nodes)`` is polled every
    few nodes; when it returns a status, the enumeration stops incomplete. ``report`` is called
    every few nodes with the state so far (its ``fresh`` newest members are the ones not reported).
    """
    gram = oracle.gram
    if gram is None:
        raise ValueError("the Rashomon enumeration needs the squared loss in Gram space")
    t0 = time.perf_counter()
    stab = np.asarray(stab, dtype=np.float64)
    out = Enumeration(threshold=float(threshold))
    cutoff = threshold + _slack(threshold)
    full = PerspectiveRelaxation(gram, oracle.gamma, stab, k)
    state = np.zeros(stab.size, dtype=np.int8)
    if stop is not None and (reason := stop(0)) is not None:
        return _stopped(out, reason, lower_bound, t0)
    # the root on every candidate: fix what the threshold rules out, then search on the rest
    bound = full.solve(stability, state, None, target=math.inf, effort=ROOT_EFFORT)
    out.nodes = 1
    for _ in range(4):
        if bound.value > cutoff:
            break
        drop, force = full.fixings(bound, state, cutoff)
        if not drop.size and not force.size:
            break
        state[drop], state[force] = OUT, IN
        bound = full.solve(stability, state, bound, target=math.inf, effort=ROOT_EFFORT)
        out.nodes += 1
    if bound.value > cutoff:  # nothing within the threshold
        out.complete = True
        out.seconds = time.perf_counter() - t0
        return out
    keep = np.flatnonzero(state != OUT)  # the sub-problem's rule i is candidate keep[i]
    sub_gram = Gram(np.ascontiguousarray(gram.G[np.ix_(keep, keep)]), np.ascontiguousarray(gram.b[keep]), gram.yy)
    relax = PerspectiveRelaxation(sub_gram, oracle.gamma, stab[keep], k)
    warm = relax.solve(stability, state[keep], None, target=cutoff, effort=ROOT_EFFORT)
    root_key = max(float(lower_bound), bound.value)
    heap: list[tuple[float, int, int, np.ndarray, object]] = [(root_key, 0, _NODE, state[keep].copy(), warm)]
    seq = steps = 1
    polled = time.monotonic()
    while heap:
        steps += 1
        if steps % CHECK_EVERY == 0 or time.monotonic() - polled >= POLL_SECONDS:
            polled = time.monotonic()
            if stop is not None and (reason := stop(out.nodes)) is not None:
                out.unenumerated_bound = heap[0][0]
                out.stopped = reason
                break
            if report is not None:
                out.unenumerated_bound = heap[0][0]  # what the report's lower bound says so far
                report(out)
        key, _, kind, node, parent = heapq.heappop(heap)
        if kind == _LEAF:  # no open subtree can hold a better rule set: the next member
            out.count += 1
            if len(out.members) < max_models:
                out.members.append((key, tuple(int(i) for i in node)))
                out.fresh += 1
            continue
        out.nodes += 1
        b = relax.solve(stability, node, parent, target=cutoff, effort=NODE_EFFORT)  # type: ignore[arg-type]
        for again in range(NODE_RESOLVE + 1):  # fix what this node's bound rules out, then bound again
            if b.value > cutoff:
                break
            drop, force = relax.fixings(b, node, cutoff)
            if not drop.size and not force.size:
                break
            node = node.copy()
            node[drop], node[force] = OUT, IN  # the bound stays valid under more fixings
            if again < NODE_RESOLVE:
                b = relax.solve(stability, node, b, target=cutoff, effort=NODE_EFFORT)
        if b.value > cutoff or not relax.feasible(stability, node):
            continue
        key = max(key, b.value)
        chosen = np.flatnonzero(node == IN)
        free = np.flatnonzero(node == FREE)
        slots = k - chosen.size
        if sum(math.comb(free.size, j) for j in range(min(slots, free.size) + 1)) <= DIRECT_COMPLETIONS:
            # few rule sets left: their exact H2 costs less than bounding the subtrees
            for j in range(min(slots, free.size) + 1):
                extra = np.asarray(list(itertools.combinations(free, j)), dtype=np.intp).reshape(
                    math.comb(free.size, j), j
                )
                supports = np.sort(keep[np.hstack([np.broadcast_to(chosen, (extra.shape[0], chosen.size)), extra])])
                supports = supports[stab[supports].sum(axis=1) >= stability - 1e-9 * max(1.0, abs(stability))]
                for value, support in zip(_h2_batch(oracle, gram, supports), supports):
                    if value <= cutoff:
                        heapq.heappush(heap, (float(value), seq, _LEAF, support, None))
                        seq += 1
            continue
        # branch on the free rule the relaxation leaves most fractional (ties: the larger z)
        z = b.z[free]
        j = int(free[np.argmax(np.minimum(z, 1.0 - z) + 1e-3 * z)])
        warm_start = Bound(b.value, b.w, b.g, b.tau, b.mu, _NO_Z)  # what a child's search starts from
        for side in (IN, OUT):
            child = node.copy()
            child[j] = side
            heapq.heappush(heap, (key, seq, _NODE, child, warm_start))
            seq += 1
    else:
        out.complete = True
        out.unenumerated_bound = None
    out.seconds = time.perf_counter() - t0
    return out


def _stopped(out: Enumeration, reason: Status, lower_bound: float, t0: float) -> Enumeration:
    out.stopped = reason
    out.unenumerated_bound = float(lower_bound)
    out.seconds = time.perf_counter() - t0
    return out


def _h2_batch(oracle: H2Oracle, gram: Gram, supports: np.ndarray) -> np.ndarray:
    """H2 of rule sets of one size (rows of ``supports``) by one batched solve, in Gram space as
    the oracle computes it: ``1/2 (y'y - b_S' w)``, ``w = (I/gamma + G_SS)^-1 b_S``. Not
    memoised: a Rashomon set can be large."""
    if not supports.size:
        return np.full(supports.shape[0], 0.5 * gram.yy)
    A = gram.G[supports[:, :, None], supports[:, None, :]]
    A += np.eye(supports.shape[1]) / oracle.gamma
    rhs = gram.b[supports]
    w = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
    return 0.5 * (gram.yy - np.einsum("ij,ij->i", rhs, w))


def rashomon_threshold(request: RashomonSpec, optimum: float) -> float:
    """The spec's threshold on H2: absolute, or ``(1 + epsilon) * optimum`` (TreeFARMS' convention)."""
    if request.threshold is not None:
        return float(request.threshold)
    return (1.0 + float(request.epsilon or 0.0)) * optimum


def rashomon_set(
    found: Enumeration,
    request: RashomonSpec,
    optimum: float,
    proven: bool,
    member: Callable[[float, tuple[int, ...]], RashomonMember],
) -> RashomonSet:
    """The workbench's ``RashomonSet`` of one enumeration, its kept members built by ``member``."""
    return RashomonSet(
        threshold=found.threshold,
        optimum=optimum,
        count=found.count,
        complete=found.complete,
        members=[member(value, support) for value, support in found.members],
        epsilon=request.epsilon,
        unenumerated_bound=None if found.complete else found.unenumerated_bound,
        optimum_proven=proven,
    )


def enumeration_stats(found: Enumeration) -> dict[str, Any]:
    """How one enumeration went, for ``Result.stats`` and the frontier rows."""
    return {
        "count": found.count,
        "complete": found.complete,
        "threshold": found.threshold,
        "nodes": found.nodes,
        "seconds": round(found.seconds, 4),
        "stopped": None if found.stopped is None else str(found.stopped),
    }
