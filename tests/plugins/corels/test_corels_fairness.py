"""The CORELS search under a fairness constraint (corels_fairness.pxd) against brute force: the
certified optimum among the lists that meet it, decided by ``glasswork.fairness.figures.within``, for
every metric, policy, symmetry map and thread count, with class weights, integer sample weights,
several protected groups and limits exactly at a list's figure."""

from __future__ import annotations

import numpy as np
import pytest
from corels_reference import fair_brute_force, meets, random_instance, rule_lists
from grids import covering_grid

from glasswork.fairness import figures as fairness
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels.search import engine

METRICS = fairness.METRICS
LAMBDAS = (0.0, 0.01, 0.03, 0.08)


def _instance(i: int, max_m: int = 5, seed: int = 7000) -> dict:
    """Instance ``i``: random data, one or two protected groups, sometimes class weights or
    integer sample weights, and a limit that half the time is exactly some list's figure."""
    rng = np.random.default_rng(seed + i)
    X, y = random_instance(rng, max_m=max_m)
    n = len(y)
    G = 1 if i % 3 else 2
    groups = rng.random((G, n)) < rng.uniform(0.25, 0.6, size=(G, 1))
    groups[:, 0] = True  # no group is empty
    groups[:, 1] = False  # nor all rows
    w = rng.uniform(0.5, 2.5, size=2) if i % 4 == 1 else None
    mult = rng.integers(0, 4, size=n) if i % 4 == 2 else None
    lam = float(LAMBDAS[i % len(LAMBDAS)])
    metric = METRICS[i % len(METRICS)]
    lists = rule_lists(X, y, lam, weights=w, mult=mult)
    if i % 2 == 0:  # a tie at the limit: some list's figure exactly
        pred = lists[int(rng.integers(len(lists)))][2]
        figures = [fairness.prediction_metrics(*fairness.group_rates(y, pred, g, mult))[metric] for g in groups]
        defined = [f for f in figures if f is not None]
        at_most = max(defined) if defined else 0.1
    else:
        at_most = float(rng.choice([0.0, 0.02, 0.05, 0.1, 0.2]))
    ref = fair_brute_force(lists, y, metric, at_most, groups, mult)
    return dict(X=X, y=y, groups=groups, w=w, mult=mult, lam=lam, metric=metric, at_most=at_most, lists=lists, ref=ref)


POOL = [_instance(i) for i in range(48)]
# up to 7 antecedents: orderings of one set that predict differently yet fix the same cells, so
# the maps (keyed on the set, or the uncaptured rows, and the cells) prune and replace entries
MAP_POOL = [_instance(i, max_m=7, seed=9100) for i in range(18)]


def _search(case: dict, policy: str = "lower_bound", smap: str = "prefix", threads: int = 1, compress: bool = True):
    units = engine.make_units(
        bitset.pack_columns(case["X"]),
        case["y"],
        2,
        class_weights=case["w"],
        multiplicity=case["mult"],
        compress=compress,
        groups=case["groups"],
    )
    return engine.make_search(
        units,
        case["lam"],
        policy=policy,
        symmetry_map=smap,
        threads=threads,
        fairness=(case["metric"], case["at_most"]),
    )


def _check(case: dict, search, code: int) -> None:
    assert code == ccorels.DONE
    if case["ref"] is None:
        assert not search.feasible and search.objective == float("inf")
        assert search.lower_bound() == float("inf")
        return
    assert search.feasible
    assert search.objective == pytest.approx(case["ref"], abs=1e-9)
    by_prefix = {tuple(p): (obj, pred) for obj, p, pred in case["lists"]}
    obj, pred = by_prefix[tuple(search.best_prefix)]
    assert obj == pytest.approx(case["ref"], abs=1e-9)
    assert meets(case["metric"], case["at_most"], case["y"], pred, case["groups"], case["mult"])


def test_the_pool_has_infeasible_tied_and_constrained_cases() -> None:
    """The instances exercise the constraint: some infeasible, some whose constrained optimum is
    worse than the unconstrained one, every metric."""
    assert any(c["ref"] is None for c in POOL)
    assert sum(c["ref"] is not None and c["ref"] > min(o for o, _, _ in c["lists"]) + 1e-9 for c in POOL) >= 8
    assert {c["metric"] for c in POOL} == set(METRICS)


@pytest.mark.parametrize(
    "policy, smap, threads",
    covering_grid(
        [engine.POLICIES, engine.SYMMETRY_MAPS, (1, 2, 4)],
        ids=[str, str, lambda t: f"threads{t}"],
        edges=[("lower_bound", "prefix", 1), ("bfs", "none", 4)],
    ),
)
def test_constrained_optimum_equals_enumeration(policy: str, smap: str, threads: int) -> None:
    for i, case in enumerate(POOL):
        search = _search(case, policy, smap, threads, compress=i % 2 == 0)
        _check(case, search, engine.run_to_end(search))


def test_kernel_test_is_fairness_within_on_every_list() -> None:
    """``meets_constraint`` equals ``within`` on every list of every instance, the limits set to
    a list's figure exactly (a tie) and just below it."""
    checked = ties = 0
    for case in POOL[:24]:
        search = _search(case)
        y, groups, mult, metric = case["y"], case["groups"], case["mult"], case["metric"]
        for _, prefix, pred in case["lists"][:120]:
            figs = [fairness.prediction_metrics(*fairness.group_rates(y, pred, g, mult))[metric] for g in groups]
            assert search.meets_constraint(prefix) == meets(metric, case["at_most"], y, pred, groups, mult)
            checked += 1
            if all(f is not None for f in figs):
                tied = {**case, "at_most": max(figs)}
                assert _search(tied).meets_constraint(prefix)
                ties += 1
                below = max(figs) - 1e-9
                if below >= 0:
                    low = {**case, "at_most": below}
                    assert not _search(low).meets_constraint(prefix)
    assert checked > 800 and ties > 150, (checked, ties)


def test_stopped_search_keeps_only_feasible_incumbents() -> None:
    """Stopped after a few evaluations: the incumbent (when there is one) meets the constraint and
    the bound is below the optimum."""
    for case in POOL:
        search = _search(case, policy="bfs", smap="none")
        code = search.run(10.0, np.zeros(1, np.uint8), 3)
        if code == ccorels.DONE:
            continue
        assert code == ccorels.NODE_LIMIT
        if search.feasible:
            assert search.meets_constraint(search.best_prefix)
        if case["ref"] is not None:
            assert search.lower_bound() <= case["ref"] + 1e-9


def test_no_constraint_keeps_every_bound_and_counter() -> None:
    """Without a constraint the search is the unconstrained one (the same counters, no new one)."""
    case = POOL[0]
    units = engine.make_units(bitset.pack_columns(case["X"]), case["y"], 2)
    plain = engine.make_search(units, case["lam"])
    engine.run_to_end(plain)
    assert "pruned_fairness" not in plain.counters() and not plain.constrained and plain.feasible
    constrained = _search(case)
    assert constrained.constrained and "pruned_fairness" in constrained.counters()


def test_constraint_refuses_bad_input() -> None:
    case = POOL[0]
    units = engine.make_units(bitset.pack_columns(case["X"]), case["y"], 2, groups=case["groups"])
    with pytest.raises(ValueError, match="unknown fairness metric"):
        engine.make_search(units, 0.01, fairness=("calibration", 0.1))
    plain = engine.make_units(bitset.pack_columns(case["X"]), case["y"], 2)
    with pytest.raises(ValueError, match="protected groups"):
        engine.make_search(plain, 0.01, fairness=("statistical_parity", 0.1))


def test_the_maps_would_lose_the_constrained_optimum() -> None:
    """docs/maintainers/corels-fairness.md's instance: (B, A) has the smaller loss of the two
    orderings of {A, B}, so a map keyed on the set alone keeps it, but only (A, B) meets the
    limit; the search finds (A, B) whatever map the spec names (the two orderings fix different
    cells, so the maps, keyed on the cells too, keep both)."""
    # rows: o (A, B; protected, y=1), b (B; protected, y=1), two protected y=0 outside both,
    # a1, a2 (A; reference, y=0), two reference y=0 outside both
    X = np.array([[1, 1], [0, 1], [0, 0], [0, 0], [1, 0], [1, 0], [0, 0], [0, 0]], dtype=np.uint8)
    y = np.array([1, 1, 0, 0, 0, 0, 0, 0])
    groups = np.array([[1, 1, 1, 1, 0, 0, 0, 0]], dtype=bool)
    case = dict(X=X, y=y, groups=groups, w=None, mult=None, lam=0.01, metric="statistical_parity", at_most=0.3)
    lists = {tuple(p): (obj, pred) for obj, p, pred in rule_lists(X, y, 0.01)}
    assert lists[(1, 0)][0] < lists[(0, 1)][0]  # (B, A) scores better ...
    assert not meets("statistical_parity", 0.3, y, lists[(1, 0)][1], groups, None)  # ... but breaks the limit
    for smap in engine.SYMMETRY_MAPS:
        search = _search(case, smap=smap)
        assert engine.run_to_end(search) == ccorels.DONE
        assert search.best_prefix == [0, 1]
        assert search.objective == pytest.approx(lists[(0, 1)][0])
        assert (search.counters()["map"] > 0) == (smap != "none")  # the map is on under the constraint


@pytest.mark.parametrize("policy", ["lower_bound", "bfs"])
@pytest.mark.parametrize("smap", ["prefix", "captured"])
def test_maps_keyed_on_the_cells_keep_the_constrained_optimum(smap: str, policy: str) -> None:
    """The prefix and captured maps under a constraint (a class: the antecedent set, or the
    uncaptured rows, plus the cells fixed in every group) against brute force on instances
    where they prune and replace entries, every metric; two threads on half of them. A replaced
    entry's node leaves the live bounds with the bound it was queued with (the constraint's raise
    included): at the end no live bound is left below the optimum."""
    pruned = replaced = met = 0
    for i, case in enumerate(MAP_POOL):
        search = _search(case, policy, smap, threads=1 + i % 2, compress=i % 2 == 0)
        _check(case, search, engine.run_to_end(search))
        if case["ref"] is not None:
            assert search.lower_bound() == pytest.approx(search.objective, abs=1e-12)
        counters = search.counters()
        pruned += counters["pruned_map"]
        replaced += counters["map_replaced"]
        met += counters["pruned_map"] + counters["map_replaced"] + counters["map_bypassed"]
    assert met > 0  # the map meets members of its classes (the captured map queues ties unchecked)
    if smap == "prefix":
        assert pruned > 0 and (replaced > 0 or policy != "lower_bound")


@pytest.mark.parametrize("metric", METRICS)
def test_constraint_bound_is_below_every_feasible_list_through_the_prefix(metric: str) -> None:
    """For every prefix, the kernel's bound (the relaxation, then the loss the constraint costs)
    is at most the objective of every list through it that meets the limit (brute force), ``inf``
    only when none does, for each metric at several limits; and it is not the plain prefix bound."""
    pruned = raised = 0
    for i in range(0, 48, 2):
        case = POOL[i]
        for at_most in (0.0, 0.03, 0.1, 0.25):
            c = {**case, "metric": metric, "at_most": at_most}
            search = _search(c)
            lists = [
                (obj, p, meets(metric, at_most, c["y"], pred, c["groups"], c["mult"])) for obj, p, pred in c["lists"]
            ]
            for _, prefix, _ in lists:
                bound = search.constraint_bound(prefix)
                k = len(prefix)
                through = [obj for obj, p, ok in lists if ok and p[:k] == prefix]
                if bound == float("inf"):
                    pruned += 1
                    assert not through, (i, at_most, prefix)
                elif through:
                    assert bound <= min(through) + 1e-9, (i, at_most, prefix, bound, min(through))
                    plain = search.evaluate(prefix)
                    raised += bound > plain["b"] + plain["b0"] + 1e-9
    assert pruned > 50
    if metric not in ("predictive_parity", "conditional_use_accuracy_equality"):
        assert raised > 20


def _class_lp(case: dict, metric: str, at_most: float) -> float:
    """The root's relaxation by linear programming (scipy): each signature class (rows with equal
    antecedents, which every list predicts alike, whatever their groups) predicts 1 for a share
    ``x`` in [0, 1]; the least loss whose rate difference is within the limit, per group, the
    largest over the groups (``inf`` when some group cannot meet it)."""
    from scipy.optimize import linprog

    X, y, groups = case["X"], case["y"], case["groups"]
    m = np.ones(len(y)) if case["mult"] is None else np.asarray(case["mult"], float)
    w = np.ones(2) if case["w"] is None else np.asarray(case["w"], float)
    _, cls = np.unique(X, axis=0, return_inverse=True)
    cls = cls.reshape(-1)
    C = int(cls.max()) + 1
    n = np.zeros((C, 2))
    np.add.at(n, (cls, y), m)
    cost = w[0] * n[:, 0] - w[1] * n[:, 1]  # loss = sum(w1 n1) + sum(x * (w0 n0 - w1 n1))
    constant = float((w[1] * n[:, 1]).sum())
    counted = {"statistical_parity": (0, 1), "predictive_equality": (0,), "equal_opportunity": (1,)}[metric]
    best = 0.0
    for g in groups:
        rows = []
        for side in (g, ~g):
            keep = side & np.isin(y, counted)
            den = m[keep].sum()
            if den <= 0:
                return float("inf")
            rows.append(np.bincount(cls[keep], weights=m[keep], minlength=C) / den)
        diff = rows[0] - rows[1]
        res = linprog(cost, A_ub=np.vstack([diff, -diff]), b_ub=[at_most, at_most], bounds=(0, 1), method="highs")
        if res.status == 2:
            return float("inf")
        assert res.status == 0
        best = max(best, constant + float(res.fun))
    return best / float((w[y] * m).sum())


@pytest.mark.parametrize("metric", ["statistical_parity", "predictive_equality", "equal_opportunity"])
def test_constraint_bound_at_the_root_is_the_relaxation_over_signature_classes(metric: str) -> None:
    """At the root the kernel's bound is the linear relaxation over signature classes (scipy's
    optimum): rows with the same antecedents but different groups move together, so the bound
    is above the one over group-pure units, which may relabel a group's rows alone."""
    above_units = 0
    for case in POOL:
        for at_most in (0.0, 0.03, 0.1):
            c = {**case, "metric": metric, "at_most": at_most}
            bound = _search(c, compress=False).constraint_bound([])
            lp = _class_lp(c, metric, at_most)
            if lp == float("inf"):
                assert bound == float("inf")
                continue
            assert bound == pytest.approx(lp, abs=1e-7), (case["X"].shape, at_most)
            plain = _search(c).evaluate([])
            above_units += bound > plain["b0"] + 1e-9
    assert above_units > 10
