"""Independent audit of the CORELS Rashomon set, through the solver (a spec with ``rashomon:``).

The reference here shares no code with the enumerator or with test_rashomon.py: it walks
``itertools.permutations`` of the mined antecedents, drops lists in which a rule captures nothing
new, and scores each list in plain numpy from its rules' captures. Counts, sorted objective
multisets, each kept member's objective, features and prediction fingerprint (recomputed from the
member's own rules) must agree, for every policy, 1 and 2 threads, both threshold forms, length
caps, class and sample weights, degenerate data, ``max_models`` and stopped runs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork import Limits, Problem, SolveContext, Status
from glasswork.contract.model import prediction_fingerprint
from glasswork.plugins.corels import CorelsSolver, CorelsSpec, RuleList
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

POLICIES = ("lower_bound", "objective", "bfs", "dfs", "curiosity")
TOL = 1e-9


def mined_columns(X: np.ndarray) -> list[int]:
    """The columns mining keeps with max_card 1, no negations, min_support 0: identical bit
    vectors are dropped, the first kept (core/data/rules.py)."""
    seen: set[bytes] = set()
    keep = []
    for j in range(X.shape[1]):
        key = X[:, j].astype(np.uint8).tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(j)
    return keep


def score_list(
    order: tuple[int, ...], X: np.ndarray, row_weight: np.ndarray, y: np.ndarray, C: int, lam: float
) -> tuple[float, list[int], int] | None:
    """Objective, rule labels and default label of the list ``order``; None when a rule captures
    no row that an earlier one left (not a distinct model)."""
    left = np.ones(len(y), dtype=bool)
    err = 0.0
    labels = []
    for j in order:
        cap = left & (X[:, j] == 1)
        if not cap.any():
            return None
        per_class = np.bincount(y[cap], weights=row_weight[cap], minlength=C)
        labels.append(int(np.argmax(per_class)))
        err += per_class.sum() - per_class.max()
        left &= ~cap
    rest = np.bincount(y[left], weights=row_weight[left], minlength=C)
    err += rest.sum() - rest.max()
    return err / row_weight.sum() + lam * len(order), labels, int(np.argmax(rest))


def brute_force(X, y, C, row_weight, lam, max_len) -> list[tuple[float, tuple[int, ...]]]:
    cols = mined_columns(X)
    cap = len(cols) if max_len is None else min(max_len, len(cols))
    out = []
    for k in range(cap + 1):
        for order in itertools.permutations(cols, k):
            scored = score_list(order, X, row_weight, y, C, lam)
            if scored is not None:
                out.append((scored[0], order))
    return sorted(out)


def spec_for(lam, max_len, policy, threads, rashomon, class_weights=None) -> CorelsSpec:
    objective: dict = {"regularization": lam}
    if class_weights is not None:
        objective["class_weight"] = list(class_weights)
    constraints: dict = {"min_support": 0.0, "negations": False, "max_card": 1}
    if max_len is not None:
        constraints["max_prefix_length"] = max_len
    doc = {
        "name": "audit",
        "data": {"source": "sklearn:breast_cancer"},
        "solver": "corels",
        "store": {"enabled": False},
        "objective": objective,
        "constraints": constraints,
        "search": {"policy": policy, "threads": threads},
        "rashomon": rashomon,
    }
    return CorelsSpec.model_validate(doc)


def problem_for(X, y, C, sample_weight=None) -> Problem:
    return Problem(
        name="audit",
        X=np.asarray(X, np.uint8),
        y=np.asarray(y, np.int64),
        feature_names=[f"a{j}" for j in range(X.shape[1])],
        task="binary" if C == 2 else "multiclass",
        classes=np.array([f"c{k}" for k in range(C)]),
        sample_weight=sample_weight,
    )


def check_members(rset, X, y, C, row_weight, lam, expected) -> None:
    """Every kept member is a real list within the threshold: its objective, features and
    fingerprint recomputed from its own rules; kept members are the best, best first."""
    objectives = [m.objective for m in rset.members]
    assert objectives == sorted(objectives)
    np.testing.assert_allclose(objectives, [o for o, _ in expected[: len(objectives)]], rtol=0, atol=TOL)
    for m in rset.members:
        if m.model is None:
            continue
        rl: RuleList = m.model
        order = tuple(j for r in rl.rules for j, v in r.items)
        assert all(len(r.items) == 1 and r.items[0][1] == 1 for r in rl.rules)
        scored = score_list(order, X, row_weight, y, C, lam)
        assert scored is not None, order
        assert scored[0] == pytest.approx(m.objective, abs=TOL)
        assert m.features == tuple(f"a{j}" for j in sorted(set(order)))
        # predictions from the rules' own structure (first matching rule, else the default)
        pred = np.full(len(y), rl.default)
        left = np.ones(len(y), dtype=bool)
        for r in rl.rules:
            hit = left & (X[:, r.items[0][0]] == 1)
            pred[hit] = r.prediction
            left &= ~hit
        # each rule's label is a weighted majority of what it captures (ties may go either way)
        left = np.ones(len(y), dtype=bool)
        for r in rl.rules:
            hit = left & (X[:, r.items[0][0]] == 1)
            per_class = np.bincount(y[hit], weights=row_weight[hit], minlength=C)
            assert per_class[r.prediction] == pytest.approx(per_class.max())
            left &= ~hit
        rest = np.bincount(y[left], weights=row_weight[left], minlength=C)
        assert rest[rl.default] == pytest.approx(rest.max())
        assert m.fingerprint == prediction_fingerprint(pred)
        assert np.array_equal(np.asarray(rl.predict(X)), pred)


@st.composite
def instances(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n = draw(st.integers(1, 14))
    M = draw(st.integers(1, 4))
    C = draw(st.sampled_from([2, 2, 2, 3]))
    X = (rng.random((n, M)) < rng.uniform(0.1, 0.8, size=M)).astype(np.uint8)
    kind = draw(st.sampled_from(["plain", "plain", "dup", "empty", "full", "one_class"]))
    if kind == "dup" and M >= 2:
        X[:, 1] = X[:, 0]
    elif kind == "empty":
        X[:, 0] = 0
    elif kind == "full":
        X[:, 0] = 1
    y = rng.integers(0, C, n)
    if kind == "one_class":
        y[:] = 0
    if C == 3 and len(set(y.tolist())) < 3:  # the problem's classes must all occur
        y[: min(3, n)] = np.arange(min(3, n))
        if n < 3:
            C = 2
            y = y % 2
    if C == 2 and len(set(y.tolist())) < 2 and kind != "one_class":
        y[0] = 1 - y[0]
    class_weights = draw(st.sampled_from([None, None, (1.0, 2.0, 3.0)]))
    if class_weights is not None:
        class_weights = class_weights[:C]
    sample_weight = None if draw(st.booleans()) else rng.integers(1, 4, n).astype(float)
    lam = draw(st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.25]))
    max_len = draw(st.sampled_from([None, None, 1, 2]))
    form = draw(st.sampled_from(["eps0", "eps", "eps", "theta"]))
    return X, y, C, class_weights, sample_weight, lam, max_len, form


def row_weights(y, C, class_weights, sample_weight) -> np.ndarray:
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    if class_weights is not None:
        w = w * np.asarray(class_weights, float)[y]
    return w


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_solver_sets_equal_an_independent_brute_force(case) -> None:
    X, y, C, class_weights, sample_weight, lam, max_len, form = case
    rw = row_weights(y, C, class_weights, sample_weight)
    every = brute_force(X, y, C, rw, lam, max_len)
    optimum = every[0][0]
    if form == "eps0":
        rashomon = {"epsilon": 0.0}
        theta = optimum
    elif form == "eps":
        rashomon = {"epsilon": 0.5}
        theta = 1.5 * optimum
    else:
        theta = optimum + 0.15
        rashomon = {"threshold": theta}
    expected = [m for m in every if m[0] <= theta + TOL * max(1.0, theta)]
    problem = problem_for(X, y, C, sample_weight)
    for policy in POLICIES:
        for threads in (1, 2):
            spec = spec_for(lam, max_len, policy, threads, {**rashomon, "max_models": 1000}, class_weights)
            result = CorelsSolver(spec).solve(problem, SolveContext(Limits()))
            rset = result.rashomon
            label = (policy, threads, [round(o, 6) for o, _ in expected])
            assert rset is not None and rset.complete, label
            assert result.certificate.objective == pytest.approx(optimum, abs=TOL), label
            assert rset.count == len(expected), label
            np.testing.assert_allclose(
                [m.objective for m in rset.members], [o for o, _ in expected], rtol=0, atol=TOL, err_msg=str(label)
            )
            check_members(rset, X, y, C, rw, lam, expected)
            orders = sorted(tuple(j for r in m.model.rules for j, _ in r.items) for m in rset.members)
            assert orders == sorted(p for _, p in expected), label


def _instance(seed: int, n: int = 30, M: int = 5):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, M)) < 0.45).astype(np.uint8)
    y = ((X @ rng.normal(size=M) + rng.normal(scale=0.8, size=n)) > 0).astype(np.int64)
    if len(set(y.tolist())) < 2:
        y[0] = 1 - y[0]
    return X, y


@pytest.mark.parametrize("policy", POLICIES)
def test_max_models_keeps_the_best_in_order_and_counts_all(policy: str) -> None:
    X, y = _instance(1)
    lam = 0.02
    rw = np.ones(len(y))
    every = brute_force(X, y, 2, rw, lam, None)
    theta = every[0][0] * 1.4
    expected = [m for m in every if m[0] <= theta + TOL]
    assert len(expected) > 8
    for keep in ("model", "summary"):
        spec = spec_for(lam, None, policy, 2, {"threshold": theta, "max_models": 5, "keep": keep})
        rset = CorelsSolver(spec).solve(problem_for(X, y, 2), SolveContext(Limits())).rashomon
        assert rset is not None and rset.complete and rset.count == len(expected)
        assert len(rset.members) == 5
        check_members(rset, X, y, 2, rw, lam, expected)
        assert all((m.model is None) == (keep == "summary") for m in rset.members)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("threads", [1, 2])
def test_node_limited_runs_are_incomplete_with_a_sound_bound(policy: str, threads: int) -> None:
    X, y = _instance(2, n=40, M=5)
    lam = 0.01
    rw = np.ones(len(y))
    every = brute_force(X, y, 2, rw, lam, None)
    theta = every[0][0] * 1.5
    expected = [m for m in every if m[0] <= theta + TOL]
    full = CorelsSolver(spec_for(lam, None, policy, threads, {"threshold": theta, "max_models": 10**5})).solve(
        problem_for(X, y, 2), SolveContext(Limits())
    )
    assert full.rashomon.count == len(expected)
    search_nodes = int(full.stats["evaluated"])
    stopped = 0
    for extra in (3, 15, 60, 200):
        spec = spec_for(lam, None, policy, threads, {"threshold": theta, "max_models": 10**5})
        result = CorelsSolver(spec).solve(problem_for(X, y, 2), SolveContext(Limits(nodes=search_nodes + extra)))
        rset = result.rashomon
        assert rset is not None
        if rset.complete:
            assert rset.count == len(expected)
            continue
        stopped += 1
        got = {tuple(j for r in m.model.rules for j, _ in r.items) for m in rset.members}
        assert rset.count == len(rset.members) == len(got) < len(expected)
        check_members(rset, X, y, 2, rw, lam, [m for m in expected if m[1] in got])
        missing = [o for o, p in expected if p not in got]
        assert rset.unenumerated_bound is not None
        assert rset.unenumerated_bound <= min(missing) + TOL
        certified = result.certificate.status is Status.OPTIMAL
        if not certified:  # two threads may score more nodes in the search: the limit stops it first
            assert threads == 2 and rset.members[0].objective == pytest.approx(result.certificate.objective)
            assert rset.unenumerated_bound == pytest.approx(result.certificate.lower_bound)
        elif policy in ("lower_bound", "objective"):  # best first: what it holds is the top of the set
            assert all(m.objective <= min(missing) + TOL for m in rset.members)
    assert stopped > 0


@pytest.mark.parametrize("policy", POLICIES)
def test_premined_duplicate_antecedents_are_distinct_models(policy: str) -> None:
    """rashomon.md: two antecedents with equal bit vectors but different names are two
    antecedents. Mining drops duplicates (documented), but a pre-mined antecedent set keeps them,
    and then every ordering using either copy is a member."""
    from glasswork.data.rules import Antecedents

    rng = np.random.default_rng(4)
    X = (rng.random((16, 4)) < 0.5).astype(np.uint8)
    X[:, 2] = X[:, 0]
    y = ((X[:, 0] + X[:, 1] + rng.integers(0, 2, 16)) >= 2).astype(np.int64)
    lam = 0.02
    rw = np.ones(len(y))
    every = []
    for k in range(X.shape[1] + 1):
        for order in itertools.permutations(range(X.shape[1]), k):
            scored = score_list(order, X, rw, y, 2, lam)
            if scored is not None:
                every.append((scored[0], order))
    every.sort()
    theta = every[0][0] * 1.5
    expected = [m for m in every if m[0] <= theta + TOL]
    assert any(2 in p for _, p in expected) and any(0 in p for _, p in expected)
    problem = problem_for(X, y, 2)
    problem.extras["premined"] = True
    problem.extras["antecedents"] = Antecedents.from_matrix(problem.X, problem.feature_names)
    for threads in (1, 2):
        spec = spec_for(lam, None, policy, threads, {"threshold": theta, "max_models": 10**5})
        rset = CorelsSolver(spec).solve(problem, SolveContext(Limits())).rashomon
        assert rset is not None and rset.complete and rset.count == len(expected)
        orders = sorted(tuple(j for r in m.model.rules for j, _ in r.items) for m in rset.members)
        assert orders == sorted(p for _, p in expected)


@pytest.mark.parametrize("nodes", [1, 5, 10])
def test_a_search_stopped_before_certifying_gives_an_honest_partial_set(nodes: int) -> None:
    """Documented choice (docs/corels.md, "Rashomon sets"): the set then holds the incumbent alone, within its own
    threshold ``(1 + epsilon) * incumbent``, so at epsilon 0.5 it may hold a list that is not
    within 1.5 R*; what must hold is that it says so (not complete, optimum not proven), that its
    bound is at most R*, and that the list it holds is real, with its true objective."""
    X, y = _instance(2, n=40, M=5)
    lam = 0.01
    rw = np.ones(len(y))
    every = brute_force(X, y, 2, rw, lam, None)
    spec = spec_for(lam, None, "lower_bound", 1, {"epsilon": 0.5})
    result = CorelsSolver(spec).solve(problem_for(X, y, 2), SolveContext(Limits(nodes=nodes)))
    rset = result.rashomon
    assert rset is not None and result.certificate.status.value != "optimal"
    assert not rset.complete and not rset.optimum_proven
    assert rset.unenumerated_bound is not None and rset.unenumerated_bound <= every[0][0] + TOL
    check_members(rset, X, y, 2, rw, lam, sorted((m.objective, ()) for m in rset.members))
    assert all(m.objective <= rset.threshold + TOL for m in rset.members)
