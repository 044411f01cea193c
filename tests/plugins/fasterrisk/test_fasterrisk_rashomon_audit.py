"""Independent audit of the exact FasterRisk Rashomon set, through Launch (a spec with ``rashomon:``).

The reference shares no code with riskcert or test_rashomon.py: it builds the grid of every
integer point vector in the box with numpy, keeps those with at most k non-zero points that
respect include, exclude and groups, and scores every (intercept, points) pair on a wide
intercept range (checked to hold the set) in one matrix product. Counts, sorted loss multisets,
each kept member's loss, features and fingerprint (recomputed from its card) must agree.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork import Problem
from glasswork.contract.events import CollectingSink
from glasswork.contract.model import prediction_fingerprint
from glasswork.plugins.fasterrisk.spec import FasterRiskSpec
from glasswork.running.launch import Launch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TOL = 1e-9
B = np.arange(-30, 31, dtype=float)


def every_card(X, y01, weight, bounds, k, include=(), exclude=(), groups=()) -> list[tuple[float, tuple[int, ...]]]:
    """(loss, (intercept, points...)) for every distinct card: integer intercept, integer points."""
    p = X.shape[1]
    axes = [range(int(lo), int(hi) + 1) if j not in exclude else [0] for j, (lo, hi) in enumerate(bounds)]
    grid = np.array(list(itertools.product(*axes)), dtype=float).reshape(-1, p)
    nz = grid != 0
    ok = nz.sum(axis=1) <= k
    for j in include:
        ok &= nz[:, j]
    for g in groups:
        ok &= nz[:, list(g)].sum(axis=1) <= 1
    grid = grid[ok]
    sign = np.where(y01 > 0, 1.0, -1.0)
    scores = grid @ X.T.astype(float)  # cards x rows
    out = []
    for b in B:
        losses = np.logaddexp(0.0, -sign * (scores + b)) @ weight
        out += [(float(loss), (int(b), *map(int, w))) for loss, w in zip(losses, grid)]
    return sorted(out)


def run(X, y01, weight, spec_extra: dict, rashomon: dict, limits: dict | None = None):
    problem = Problem(
        name="audit",
        X=np.asarray(X, float),
        y=np.asarray(y01, np.int64),
        feature_names=[f"x{j}" for j in range(X.shape[1])],
        task="binary",
        classes=np.array([0, 1], dtype=object),
        sample_weight=None if weight is None else np.asarray(weight, float),
    )
    doc = {
        "name": "audit",
        "solver": "fasterrisk",
        "store": {"enabled": False},
        "data": {"source": "in-memory", "target": "y"},
        "search": {"policy": "exact"},
        "rashomon": rashomon,
        **spec_extra,
    }
    if limits:
        doc["limits"] = limits
    spec = FasterRiskSpec.model_validate(doc)
    sink = CollectingSink()
    return Launch(spec, no_store=True, problem=problem).run([sink]).result


def card_of(member, p: int) -> tuple[int, ...]:
    card = member.model
    w = [0] * p
    for c, pt in zip(card.columns, card.points):
        w[c] = pt
    return (int(round(card.intercept)), *w)


def check_member(member, X, y01, weight, p) -> None:
    card = member.model
    assert card.multiplier == 1.0 and float(card.intercept).is_integer()
    key = card_of(member, p)
    score = X @ np.array(key[1:], float) + key[0]
    sign = np.where(y01 > 0, 1.0, -1.0)
    assert float(np.logaddexp(0.0, -sign * score) @ weight) == pytest.approx(member.objective, rel=1e-9, abs=1e-9)
    assert member.features == tuple(f"x{j}" for j in range(p) if key[1 + j] != 0)
    assert member.fingerprint == prediction_fingerprint((score > 0).astype(np.int64))


@st.composite
def instances(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n = draw(st.integers(4, 30))
    p = draw(st.integers(1, 3))
    X = (rng.random((n, p)) < rng.uniform(0.2, 0.8, p)).astype(float)
    if p >= 2 and draw(st.booleans()):
        X[:, 1] = 1 - X[:, 0]  # complementary dummies: equal-loss, equal-prediction cards
    y = (rng.random(n) < 0.5).astype(np.int64)
    y[0], y[-1] = 0, 1
    if draw(st.booleans()):
        y[:] = np.where(X[:, 0] > 0, 1, 0)  # separable on x0: the loss falls along the box edge
        y[0], y[-1] = 0, 1
    weighted = draw(st.booleans())
    weight = rng.integers(1, 4, n).astype(float) if weighted else None
    bounds_kind = draw(st.sampled_from(["sym", "mono", "mixed"]))
    bounds = {"sym": [(-2, 2)] * p, "mono": [(0, 2)] * p, "mixed": [(-1, 2), (-2, 0), (0, 1)][:p]}[bounds_kind]
    k = draw(st.integers(1, p))
    include = [0] if (draw(st.booleans()) and bounds[0][0] <= 0 <= bounds[0][1]) else []
    exclude = [p - 1] if (p >= 2 and not include and draw(st.booleans())) else []
    groups = [(0, 1)] if (p >= 3 and draw(st.booleans())) else []
    form = draw(st.sampled_from(["eps0", "eps", "theta"]))
    max_models = draw(st.sampled_from([1, 3, 10_000]))
    return X, y, weight, bounds, k, include, exclude, groups, form, max_models


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_exact_sets_equal_an_independent_brute_force(case) -> None:
    X, y, weight, bounds, k, include, exclude, groups, form, max_models = case
    p = X.shape[1]
    w = np.ones(len(y)) if weight is None else weight
    cards = every_card(X, y, w, bounds, k, include, exclude, groups)
    best = cards[0][0]
    theta = {"eps0": best, "eps": 1.2 * best, "theta": best + 0.7}[form]
    rashomon: dict = {"epsilon": 0.0} if form == "eps0" else {"epsilon": 0.2} if form == "eps" else {"threshold": theta}
    rashomon["max_models"] = max_models
    names = [f"x{j}" for j in range(p)]
    constraints = {
        "sparsity": k,
        "coefficient_bounds": [list(b) for b in bounds],
        "include": [names[j] for j in include],
        "exclude": [names[j] for j in exclude],
        "groups": [[names[j] for j in g] for g in groups],
    }
    result = run(X, y, weight, {"constraints": constraints}, rashomon)
    rs = result.rashomon
    assert result.certificate.objective == pytest.approx(best, rel=1e-9, abs=1e-9)
    theta = rs.threshold
    inside = [c for c in cards if c[0] <= theta + 1e-9 * max(1.0, theta)]
    # the brute force's intercept range holds the set
    assert all(abs(c[1][0]) < B[-1] for c in inside)
    assert rs is not None and rs.exhaustive and rs.complete and rs.optimum_proven
    label = (len(inside), [round(c[0], 6) for c in inside[:6]])
    assert rs.count == len(inside), label
    assert len(rs.members) == min(max_models, len(inside))
    np.testing.assert_allclose(
        [m.objective for m in rs.members], [c[0] for c in inside[: len(rs.members)]], rtol=1e-9, atol=1e-9
    )
    for m in rs.members:
        check_member(m, X, y, w, p)
    if max_models >= len(inside):
        assert sorted(card_of(m, p) for m in rs.members) == sorted(c[1] for c in inside)


def _hard_instance():
    rng = np.random.default_rng(5)
    X = (rng.random((60, 4)) < 0.5).astype(float)
    y = ((X @ np.array([1.0, -1.0, 0.5, 0.8]) + rng.normal(scale=0.8, size=60)) > 0.3).astype(np.int64)
    return X, y


@pytest.mark.parametrize("nodes", [2, 10, 40, 150])
def test_node_limited_runs_are_incomplete_with_a_sound_bound(nodes: int) -> None:
    X, y = _hard_instance()
    p = X.shape[1]
    w = np.ones(len(y))
    bounds = [(-2, 2)] * p
    cards = every_card(X, y, w, bounds, 3)
    theta = cards[0][0] + 3.0
    inside = [c for c in cards if c[0] <= theta + 1e-9 * theta]
    constraints = {"sparsity": 3, "coefficient_bounds": [-2, 2]}
    result = run(X, y, None, {"constraints": constraints}, {"threshold": theta, "max_models": 10**5}, {"nodes": nodes})
    rs = result.rashomon
    assert rs is not None
    if rs.complete:
        assert rs.count == len(inside)
        return
    got = {card_of(m, p) for m in rs.members}
    assert rs.count == len(rs.members) == len(got) <= len(inside)
    for m in rs.members:
        check_member(m, X, y, w, p)
    assert got <= {c[1] for c in inside}
    missing = [c[0] for c in inside if c[1] not in got]
    assert rs.unenumerated_bound is not None
    if missing:
        assert rs.unenumerated_bound <= min(missing) + 1e-9
    if rs.optimum_proven:  # best first: what it holds is the top of the set
        assert all(m.objective <= min(missing, default=np.inf) + 1e-9 for m in rs.members)


def test_limits_nodes_stops_the_enumeration_too() -> None:
    """``limits.nodes`` bounds the run's nodes (docs/spec: "Search nodes, as the solver counts
    them"; CORELS counts the search's and the enumeration's together). An enumeration that
    spends more nodes than the limit allows must stop, ``complete: false`` with its bound; it must
    not run on to a complete set."""
    X, y = _hard_instance()
    cards = every_card(X, y, np.ones(len(y)), [(-2, 2)] * 4, 3)
    theta = cards[0][0] + 10.0
    limit = 20
    constraints = {"sparsity": 3, "coefficient_bounds": [-2, 2]}
    result = run(X, y, None, {"constraints": constraints}, {"threshold": theta, "max_models": 10**5}, {"nodes": limit})
    rs = result.rashomon
    assert rs is not None
    spent = result.stats["exact"]["rashomon"]["support_nodes"] + result.stats["exact"]["rashomon"]["lattice_nodes"]
    assert not rs.complete or spent <= limit, f"complete after {spent} enumeration nodes under limits.nodes={limit}"


@pytest.mark.parametrize("nodes", [1, 5, 12])
def test_a_search_stopped_before_certifying_gives_an_honest_partial_set(nodes: int) -> None:
    X, y = _hard_instance()
    cards = every_card(X, y, np.ones(len(y)), [(-2, 2)] * 4, 3)
    constraints = {"sparsity": 3, "coefficient_bounds": [-2, 2]}
    result = run(X, y, None, {"constraints": constraints}, {"epsilon": 0.2, "max_models": 100}, {"nodes": nodes})
    rs = result.rashomon
    assert rs is not None and result.certificate.status.value != "optimal"
    assert not rs.complete and not rs.optimum_proven
    assert rs.unenumerated_bound is not None and rs.unenumerated_bound <= cards[0][0] + 1e-9
    for m in rs.members:
        check_member(m, X, y, np.ones(len(y)), 4)
