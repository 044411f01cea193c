"""The exact policy's Rashomon set against brute force over every integer card in the box.

A card is (integer intercept, integer points) with multiplier 1, at most k non-zero points, the
box, groups, forced and banned features; a card with a zero point is the card of the smaller
support. Brute force lists every such card once; ``enumerate_cards`` must count exactly the ones
within the threshold, keep the best, and, stopped early, bound what it did not enumerate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from glasswork.plugins.fasterrisk.engine import Constraints
from glasswork.plugins.fasterrisk.exact import enumerate_cards, intercept_range_within, solve_exact
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

INTERCEPTS = np.arange(-25, 26, dtype=float)  # brute force's intercepts; checked to hold the set


@dataclass
class Instance:
    X: np.ndarray
    y: np.ndarray  # +1 / -1
    s: np.ndarray
    cons: Constraints
    k: int


def every_card(inst: Instance) -> list[tuple[float, tuple[int, ...]]]:
    """(loss, (intercept, points...)) of every card, each once (exact support, non-zero points)."""
    X, y, s, cons, k = inst.X, inst.y, inst.s, inst.cons, inst.k
    p = X.shape[1]
    allowed = [j for j in range(p) if j not in cons.exclude]
    cards = []
    for size in range(k + 1):
        for support in itertools.combinations(allowed, size):
            if not set(cons.include) <= set(support):
                continue
            groups = [cons.group_of[j] for j in support if cons.group_of[j] >= 0]
            if len(groups) != len(set(groups)):
                continue
            ranges = [[v for v in range(int(cons.lower[j]), int(cons.upper[j]) + 1) if v != 0] for j in support]
            for points in itertools.product(*ranges):
                score = X[:, list(support)] @ np.array(points, dtype=float) if size else np.zeros(len(y))
                margins = y[None, :] * (score[None, :] + INTERCEPTS[:, None])
                losses = np.logaddexp(0.0, -margins) @ s
                w = np.zeros(p, dtype=int)
                w[list(support)] = points
                for b, loss in zip(INTERCEPTS, losses):
                    cards.append((float(loss), (int(b), *map(int, w))))
                # the intercepts brute force tries hold every card within any threshold used here
                assert losses[0] > 2 * losses.min() and losses[-1] > 2 * losses.min()
    cards.sort()
    return cards


def make_instance(seed: int, p: int, k: int, kind: str, weighted: bool) -> Instance:
    rng = np.random.default_rng(seed)
    n = 24
    X = rng.integers(0, 2 if kind == "binary" else 3, size=(n, p)).astype(float)
    beta = rng.normal(0, 1.2, size=p)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X @ beta - beta.sum() / 2))), 1.0, -1.0)
    y[:2] = [1.0, -1.0]  # both classes
    s = rng.integers(1, 3, size=n).astype(float) if weighted else np.ones(n)
    cons = Constraints.box(p, -2, 2)
    if kind == "side":  # a monotone feature, a group, a forced and a banned feature
        cons.lower[0] = 0
        if p >= 3:
            cons.group_of[1] = cons.group_of[2] = 0
        if p >= 4:
            cons.include = [p - 1]
        if p >= 5:
            cons.exclude = [p - 2]
    return Instance(X, y, s, cons, k)


def threshold_between(cards: list[tuple[float, tuple[int, ...]]], target: float) -> float:
    """A threshold near ``target`` that no card's loss is within 1e-7 of (no floating-point ties)."""
    losses = np.array([c[0] for c in cards])
    above = losses[losses > target]
    below = losses[losses <= target]
    nxt = above.min() if above.size else target + 1.0
    prev = below.max() if below.size else losses.min()
    return (prev + nxt) / 2 if nxt - prev > 1e-6 else prev + 1e-9


def as_set(found) -> set[tuple[int, ...]]:
    return {tuple(int(v) for v in np.rint(c)) for c in found.coefficients}


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    p=st.integers(2, 5),
    k=st.integers(1, 3),
    kind=st.sampled_from(["binary", "small_int", "side"]),
    weighted=st.booleans(),
    epsilon=st.sampled_from([0.0, 0.005, 0.02, 0.1, 0.5]),
    keep=st.sampled_from([0, 2, 10**6]),
)
def test_enumeration_equals_brute_force(
    seed: int, p: int, k: int, kind: str, weighted: bool, epsilon: float, keep: int
) -> None:
    inst = make_instance(seed, p, min(k, p), kind, weighted)
    cards = every_card(inst)
    theta = threshold_between(cards, (1 + epsilon) * cards[0][0])
    inside = [c for c in cards if c[0] <= theta]
    found = enumerate_cards(inst.X, inst.y, inst.s, inst.cons, inst.k, theta, max_models=keep)
    assert found.complete and found.unenumerated_bound is None and found.stopped is None
    assert found.count == len(inside) >= 1  # counted exactly, also once no more cards are kept
    assert len(found.losses) == min(keep, len(inside))
    np.testing.assert_allclose(found.losses, [c[0] for c in inside[:keep]], rtol=1e-9)
    assert np.all(np.diff(found.losses) >= 0)
    if keep >= len(inside):  # the same cards, each once
        assert as_set(found) == {c[1] for c in inside}


@pytest.mark.parametrize("seed", range(3))
def test_the_optimum_is_in_the_set_at_epsilon_zero(seed: int) -> None:
    """``threshold = R*`` as the exact policy computes it: the optimal card is counted."""
    inst = make_instance(500 + seed, 4, 2, "side", True)
    best = solve_exact(inst.X, inst.y, inst.s, inst.cons, inst.k)
    assert best.status == "optimal"
    found = enumerate_cards(inst.X, inst.y, inst.s, inst.cons, inst.k, best.objective, max_models=5)
    assert found.complete and found.count >= 1
    assert found.losses[0] == pytest.approx(best.objective, rel=1e-12)
    assert np.array_equal(np.rint(found.coefficients[0][1:]), best.points)


@pytest.mark.parametrize("seed", range(4))
def test_max_models_keeps_the_best_and_counts_all(seed: int) -> None:
    inst = make_instance(700 + seed, 4, 2, "small_int", seed % 2 == 0)
    cards = every_card(inst)
    theta = threshold_between(cards, cards[11][0])  # a dozen members
    inside = [c for c in cards if c[0] <= theta]
    assert len(inside) > 6
    found = enumerate_cards(inst.X, inst.y, inst.s, inst.cons, inst.k, theta, max_models=5)
    assert found.count == len(inside) and len(found.losses) == 5
    np.testing.assert_allclose(found.losses, [c[0] for c in inside[:5]], rtol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_a_stopped_enumeration_bounds_what_it_did_not_enumerate(seed: int) -> None:
    inst = make_instance(900 + seed, 5, 3, "binary" if seed % 2 else "side", True)
    cards = every_card(inst)
    theta = threshold_between(cards, max(1.1 * cards[0][0], cards[30][0]))
    inside = {c[1]: c[0] for c in cards if c[0] <= theta}
    whole = enumerate_cards(inst.X, inst.y, inst.s, inst.cons, inst.k, theta, max_models=10**6)
    nodes = whole.support_nodes + whole.lattice_nodes
    assert whole.complete and whole.count == len(inside)
    stopped_once = False
    for limit in sorted({1, 2, 5, nodes // 8, nodes // 3, nodes // 2, nodes - 1}):
        found = enumerate_cards(
            inst.X, inst.y, inst.s, inst.cons, inst.k, theta, max_models=10**6, node_limit=max(limit, 1)
        )
        got = as_set(found)
        assert got <= set(inside) and found.count == len(got)  # members only, each once
        assert np.all(np.diff(found.losses) >= 0)
        if found.complete:
            assert found.count == len(inside)
            continue
        stopped_once = True
        assert found.stopped == "nodes" and found.unenumerated_bound is not None
        missing = [loss for card, loss in inside.items() if card not in got]
        assert missing, "an incomplete run misses a member"
        slack = 1e-9 * max(1.0, theta)
        assert min(missing) >= found.unenumerated_bound - slack
        # cards leave in objective order: what was enumerated is the top of the set
        if found.count:
            assert found.unenumerated_bound >= found.losses[-1] - slack
            assert min(missing) >= found.losses[-1] - slack
        few = enumerate_cards(inst.X, inst.y, inst.s, inst.cons, inst.k, theta, max_models=3, node_limit=max(limit, 1))
        if few.count >= 3:  # the three kept are the three best of the whole set
            np.testing.assert_allclose(few.losses, sorted(inside.values())[:3], rtol=1e-9)
    assert stopped_once
    cancelled = enumerate_cards(inst.X, inst.y, inst.s, inst.cons, inst.k, theta, stop=lambda: "cancel")
    assert not cancelled.complete and cancelled.stopped == "cancel"
    assert cancelled.unenumerated_bound is not None and cancelled.unenumerated_bound <= min(inside.values()) + 1e-9


def test_the_intercept_range_holds_every_card_within_the_threshold() -> None:
    inst = make_instance(11, 3, 2, "small_int", True)
    cards = every_card(inst)
    theta = 1.3 * cards[0][0]
    lo, hi = intercept_range_within(inst.X, inst.y, inst.s, inst.cons, inst.k, theta)
    intercepts = {c[1][0] for c in cards if c[0] <= theta}
    assert intercepts and lo <= min(intercepts) and max(intercepts) <= hi


# -- the solver: spec section, Result.rashomon, events ----------------------------------------------


def _run(X: np.ndarray, y: np.ndarray, rashomon: dict, limits: dict | None = None, **search: object):
    from glasswork import Problem
    from glasswork.contract.events import CollectingSink
    from glasswork.plugins.fasterrisk.spec import FasterRiskSpec
    from glasswork.running.launch import Launch

    problem = Problem(
        name="t",
        X=X,
        y=(y > 0).astype(np.int64),
        feature_names=[f"x<{j}>'\"" for j in range(X.shape[1])],
        task="binary",
        classes=np.array([0, 1], dtype=object),
    )
    spec = FasterRiskSpec.model_validate(
        {
            "name": "t",
            "solver": "fasterrisk",
            "store": {"enabled": False},
            "data": {"source": "in-memory", "target": "y"},
            "constraints": {"sparsity": 2, "coefficient_bounds": [-2, 2]},
            "search": search,
            "rashomon": rashomon,
            "limits": limits or {},
        }
    )
    sink = CollectingSink()
    result = Launch(spec, no_store=True, problem=problem).run([sink]).result
    return result, sink.events


def test_the_exact_policy_fills_result_rashomon() -> None:
    inst = make_instance(42, 4, 2, "binary", False)
    cards = every_card(inst)
    epsilon = 0.03
    result, events = _run(inst.X, inst.y, {"epsilon": epsilon, "max_models": 4}, policy="exact")
    theta = (1 + epsilon) * result.certificate.objective
    inside = [c for c in cards if c[0] <= theta]
    assert result.certificate.objective == pytest.approx(cards[0][0], rel=1e-9)
    rs = result.rashomon
    assert rs is not None and rs.exhaustive and rs.complete and rs.optimum_proven
    assert rs.count == len(inside) and rs.kept == min(4, len(inside))
    assert rs.threshold == pytest.approx(theta) and rs.epsilon == epsilon
    assert [m.objective for m in rs.members] == pytest.approx([c[0] for c in inside[:4]], rel=1e-9)
    for member in rs.members:
        card = member.model
        assert card is not None and card.multiplier == 1.0 and tuple(card.features) == member.features
        assert card.logistic_loss(inst.X, (inst.y > 0).astype(int)) == pytest.approx(member.objective, rel=1e-9)
    sent = [e for e in events if e.kind == "rashomon"]
    assert sent and sent[-1].rashomon.count == rs.count
    # the events carry each kept member once, best first (a card sent is never displaced)
    assert [m.objective for e in sent for m in e.members] == [m.objective for m in rs.members]
    assert result.to_dict()["rashomon"]["count"] == rs.count
    assert result.stats["exact"]["rashomon"]["complete"] is True


def test_a_search_stopped_before_its_proof_gives_its_incumbent_alone_as_corels_does() -> None:
    inst = make_instance(42, 5, 3, "small_int", False)
    result, events = _run(inst.X, inst.y, {"epsilon": 0.05}, limits={"nodes": 1}, policy="exact")
    cert, rs = result.certificate, result.rashomon
    assert cert.status.value == "stopped_nodes" and rs is not None
    assert rs.count == 1 and [m.model for m in rs.members] == [result.model]
    assert rs.optimum == cert.objective and rs.threshold == pytest.approx(1.05 * cert.objective)
    assert not rs.optimum_proven and not rs.complete and rs.exhaustive
    assert rs.unenumerated_bound == cert.lower_bound
    assert any(e.kind == "log" and "not certified" in (e.message or "") for e in events)


def test_summary_keeps_no_model_and_an_absolute_threshold_is_used_as_given() -> None:
    inst = make_instance(43, 3, 2, "binary", False)
    cards = every_card(inst)
    theta = threshold_between(cards, 1.05 * cards[0][0])
    result, _ = _run(inst.X, inst.y, {"threshold": theta, "keep": "summary"}, policy="exact")
    rs = result.rashomon
    assert rs is not None and rs.threshold == theta and rs.epsilon is None
    assert rs.count == sum(c[0] <= theta for c in cards)
    assert all(m.model is None and len(m.fingerprint) == 16 for m in rs.members)


def test_the_beam_policy_hands_over_its_pool_as_a_sample() -> None:
    inst = make_instance(44, 4, 2, "binary", False)
    result, events = _run(inst.X, inst.y, {"epsilon": 0.5})
    rs = result.rashomon
    assert rs is not None and not rs.exhaustive and not rs.complete
    assert rs.optimum == pytest.approx(result.model.loss)
    pool = [row["loss"] for row in result.stats["pool"]]
    assert rs.count == sum(loss <= rs.threshold for loss in pool) >= 1
    assert any(e.kind == "log" and "sample" in (e.message or "") for e in events)


@pytest.mark.parametrize("policy", ["exact", "beam"])
def test_a_fasterrisk_spec_with_a_rashomon_section_validates(tmp_path, policy: str) -> None:
    from glasswork.spec.load import load_spec

    path = tmp_path / "s.yaml"
    path.write_text(
        "name: t\ndata: {source: data.csv, target: y}\nsolver: fasterrisk\n"
        f"search: {{policy: {policy}}}\nrashomon: {{epsilon: 0.01, max_models: 10}}\n"
    )
    spec = load_spec(path).spec
    assert spec.rashomon is not None and spec.rashomon.epsilon == 0.01
