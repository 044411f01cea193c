"""Constraints hold on every policy (issue 23, item 4): ``include``, ``exclude``, monotone boxes
and groups on every card of the beam's pool, on every continuous pool member and on the exact
policy's card, against brute force on small random instances.

``include`` means what the exact policy means by it: the feature is on the card, with non-zero
points (an integral fit with a forced feature at 0 is not a card, docs/fasterrisk.md).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork import DataError
from glasswork.plugins.fasterrisk.engine import Constraints, Engine, IntegerModel, Settings
from grids import sampled
from test_fasterrisk_certify import best_real_k_sparse, instance

INSTANCES = 44


def constrained_instance(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, Constraints, int]:
    """p in 4..7, k in 1..3, points in [-3, 3]; one or two forced features (often weak ones),
    one banned feature, sometimes a monotone feature and a group of two."""
    rng = np.random.default_rng(1000 + seed)
    p, k = int(rng.integers(4, 8)), int(rng.integers(1, 4))
    X, y, s = instance(500 + seed, p, n=60, binary=seed % 2 == 0)
    cons = Constraints.box(p, -3, 3)
    order = [int(j) for j in rng.permutation(p)]
    cons.include = order[: 1 + int(k >= 2 and rng.random() < 0.3)]
    rest = order[len(cons.include) :]
    if seed % 3:
        cons.exclude = [rest.pop()]
    if seed % 4 == 1:
        j = rest[0]
        cons.lower[j], cons.upper[j] = (0, 3) if seed % 8 == 1 else (-3, 0)
    if seed % 5 == 2 and len(rest) >= 3:
        cons.group_of[rest[1]] = cons.group_of[rest[2]] = 0
    if seed % 6 == 3:  # a monotone forced feature
        f = cons.include[0]
        cons.lower[f], cons.upper[f] = 0, 2
    return X, y, s, cons, k


def violations(features: list[int], points: list[float], cons: Constraints, k: int) -> list[str]:
    """What a card with these points breaks (features with 0 points are not on the card)."""
    on = {f: v for f, v in zip(features, points) if v != 0}
    out = [f"forced {f} missing" for f in cons.include if f not in on]
    out += [f"banned {f} used" for f in cons.exclude if f in on]
    out += [
        f"{f}={v} outside [{cons.lower[f]:g}, {cons.upper[f]:g}]"
        for f, v in on.items()
        if not cons.lower[f] <= v <= cons.upper[f]
    ]
    groups = [int(cons.group_of[f]) for f in on if cons.group_of[f] >= 0]
    if len(groups) != len(set(groups)):
        out.append("two features of one group")
    if len(on) > k:
        out.append(f"{len(on)} features > k={k}")
    return out


def card_loss(card: IntegerModel, X: np.ndarray, y: np.ndarray, s: np.ndarray) -> float:
    margin = y * (X[:, card.features] @ card.points + card.intercept) / card.multiplier
    return float(s @ np.logaddexp(0.0, -margin))


# every kind of constrained_instance: no exclusion (0), both monotone signs (1, 5), a group (2),
# a monotone forced feature (3), binary and real features
SAMPLE = [0, 1, 2, 3, 5]


@pytest.mark.parametrize("seed", sampled(range(INSTANCES), SAMPLE))
@pytest.mark.parametrize("preset", ["paper", "reference"])
def test_every_card_of_the_beam_honours_the_constraints(preset: str, seed: int) -> None:
    """On each of 44 random instances: no card of the integer pool breaks a constraint, and none beats
    the brute-force best k-sparse real-valued model under the same constraints (a card is one)."""
    broken: list[str] = []
    cards_seen = 0
    X, y, s, cons, k = constrained_instance(seed)
    cards, _ = Engine(X, y, s, Settings.preset(preset, k=k), cons).run()
    truth = best_real_k_sparse(X, y, s, cons, k)
    for rank, card in enumerate(cards):
        cards_seen += 1
        problems = violations(card.features.tolist(), card.points.tolist(), cons, k)
        if problems:
            broken.append(f"seed {seed} card {rank}: {', '.join(problems)}")
        assert card.loss == pytest.approx(card_loss(card, X, y, s), rel=1e-9)
        assert card.loss >= truth - 1e-6 * truth
    assert not broken, f"{len(broken)} of {cards_seen} cards break a constraint:\n" + "\n".join(broken)


def test_every_continuous_pool_member_keeps_forced_and_banned_features() -> None:
    for seed in range(INSTANCES):
        X, y, s, cons, k = constrained_instance(seed)
        eng = Engine(X, y, s, Settings.preset("paper", k=k), cons)
        best, _ = eng.beam_search()
        for member in eng.diverse_pool(best):
            feats = {j - 1 for j in member.support}
            assert set(cons.include) <= feats and not feats & set(cons.exclude)
            assert len(feats) <= k


def best_card_by_enumeration(X: np.ndarray, y: np.ndarray, s: np.ndarray, cons: Constraints, k: int) -> float:
    """§1.3 by brute force with every side constraint: integer points in the box, forced features
    non-zero, banned ones zero, one feature per group, integer intercept in [-30, 30]."""
    p = X.shape[1]
    best = np.inf
    for size in range(k + 1):
        for support in itertools.combinations(range(p), size):
            if not set(cons.include) <= set(support) or set(cons.exclude) & set(support):
                continue
            groups = [int(cons.group_of[j]) for j in support if cons.group_of[j] >= 0]
            if len(groups) != len(set(groups)):
                continue
            ranges = [[v for v in range(int(cons.lower[j]), int(cons.upper[j]) + 1) if v != 0] for j in support]
            for points in itertools.product(*ranges):
                score = X[:, list(support)] @ np.array(points, dtype=float) if size else np.zeros(len(y))
                for b in range(-30, 31):
                    best = min(best, float(s @ np.logaddexp(0.0, -y * (score + b))))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_exact_policy_honours_the_constraints_against_enumeration(seed: int) -> None:
    from glasswork.plugins.fasterrisk.exact import solve_exact

    X, y, s, cons, k = constrained_instance(seed)
    X, y, s = X[:30], y[:30], s[:30]
    cons.lower, cons.upper = np.maximum(cons.lower, -2), np.minimum(cons.upper, 2)
    k = min(k, 2)
    cons.include = cons.include[:k]
    truth = best_card_by_enumeration(X, y, s, cons, k)
    res = solve_exact(X, y, s, cons, k, time_limit=60)
    assert res.status == "optimal" and res.objective == pytest.approx(truth, rel=1e-9)
    cols = np.flatnonzero(res.points).tolist()
    assert not violations(cols, res.points[cols].tolist(), cons, k)


def _problem(X: np.ndarray, y: np.ndarray):
    from glasswork import Problem

    return Problem(
        name="t",
        X=X,
        y=(y > 0).astype(np.int64),
        feature_names=[f"x{j}" for j in range(X.shape[1])],
        task="binary",
        classes=np.array([0, 1], dtype=object),
    )


def _spec(constraints: dict, **search: object):
    from glasswork.plugins.fasterrisk.spec import FasterRiskSpec

    return FasterRiskSpec.model_validate(
        {
            "name": "t",
            "solver": "fasterrisk",
            "store": {"enabled": False},
            "data": {"source": "in-memory", "target": "y"},
            "constraints": constraints,
            "search": search,
        }
    )


@pytest.mark.parametrize("policy", ["beam", "exact"])
def test_the_solver_keeps_a_weak_forced_feature_on_every_pool_card(policy: str) -> None:
    """Through the runner: a feature with no signal, forced in, is on every card of stats["pool"]
    (before the fix the beam's cards dropped it when its points rounded to 0)."""
    from glasswork.running.launch import Launch

    rng = np.random.default_rng(9)
    X = rng.integers(0, 2, (300, 6)).astype(float)
    y = np.where(1.5 * X[:, 0] - 2.0 * X[:, 1] + rng.normal(0, 1, 300) > -0.2, 1.0, -1.0)
    spec = _spec(
        {"sparsity": 3, "coefficient_bounds": [-3, 3], "include": ["x5"], "exclude": ["x2"]},
        policy=policy,
        certify_time=2,
    )
    result = Launch(spec, no_store=True, problem=_problem(X, y)).run().result
    assert result.model.points[result.model.features.index("x5")] != 0
    for row in result.stats["pool"]:
        points = dict(zip(row["card"]["features"], row["card"]["points"]))
        assert points.get("x5", 0) != 0 and "x2" not in points


def test_a_forced_feature_whose_box_is_zero_is_refused() -> None:
    from glasswork.plugins.fasterrisk.solver import constraints_from_spec

    spec = _spec({"sparsity": 2, "coefficient_bounds": {"x1": [0, 0]}, "include": ["x1"]})
    with pytest.raises(DataError, match="x1"):
        constraints_from_spec(spec.constraints, ["x0", "x1", "x2"])
