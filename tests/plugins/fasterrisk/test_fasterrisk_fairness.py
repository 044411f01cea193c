"""The exact policy under ``constraints.fairness`` against brute force: every card (integer points
in the box, at most k non-zero, an integer intercept) enumerated, its predictions (points total plus
intercept > 0) checked with ``glasswork.fairness.figures.within`` itself, the best that meets it compared
with the kernel's. Limits are put exactly at a card's figure (ties at the limit), below every card's
figure (a proven infeasible constraint; or 0 where a card reaches it), and between."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from grids import covering_grid

from glasswork import Status
from glasswork.fairness.figures import METRICS, group_rates, prediction_metrics, within
from glasswork.plugins.fasterrisk.engine import Constraints
from glasswork.plugins.fasterrisk.exact import intercept_range, solve_exact
from glasswork.plugins.fasterrisk.fairness import FairnessTarget, card_predictions
from fasterrisk_data import fair_data, fair_spec


@dataclass
class Cards:
    """Every card of a small instance: its loss and each group's figure of every metric."""

    loss: np.ndarray  # (cards,)
    figures: dict[str, list[list[float | None]]]  # metric -> per card, per group
    coefficients: list[tuple[int, tuple[int, ...], tuple[int, ...]]]  # (intercept, support, points)


def enumerate_cards(
    X: np.ndarray, y: np.ndarray, s: np.ndarray, audit_w: np.ndarray, masks: list[np.ndarray], cons: Constraints, k: int
) -> Cards:
    p = X.shape[1]
    lo, hi = intercept_range(X, y, s, cons, k)
    intercepts = range(lo - 3, hi + 4)  # wider than the proven range: it must not matter
    losses: list[float] = []
    coefficients = []
    figures: dict[str, list[list[float | None]]] = {m: [] for m in METRICS}
    for size in range(k + 1):
        for support in itertools.combinations(range(p), size):
            ranges = [[v for v in range(int(cons.lower[j]), int(cons.upper[j]) + 1) if v != 0] for j in support]
            for points in itertools.product(*ranges):
                score = X[:, list(support)] @ np.array(points, dtype=float) if size else np.zeros(len(y))
                for b in intercepts:
                    losses.append(float(s @ np.logaddexp(0.0, -y * (score + b))))
                    coefficients.append((b, support, points))
                    pred = score + b > 0
                    per_group = [prediction_metrics(*group_rates(y > 0, pred, m, audit_w)) for m in masks]
                    for metric in METRICS:
                        figures[metric].append([g[metric] for g in per_group])
    return Cards(np.array(losses), figures, coefficients)


def meets(figures: list[float | None], at_most: float) -> bool:
    """``within`` for every group, from the figures (the rates' own test, re-read)."""
    return all(f is not None and f <= at_most + 1e-12 * max(1.0, at_most) for f in figures)


def instance(seed: int, p: int, n: int, groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)).astype(float)
    masks = [rng.random(n) < 0.35 + 0.3 * X[:, g % p] * 0.5 for g in range(groups)]
    beta = rng.normal(0, 1.5, size=p)
    logit = X @ beta - beta.sum() / 2 + 0.8 * masks[0]
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), 1.0, -1.0)
    s = rng.integers(1, 3, size=n).astype(float)
    return X, y, s, masks


LIMITS = ("tie", "between", "least")


@pytest.mark.parametrize(
    ("metric", "limit", "seed", "weighting"),
    covering_grid(
        [METRICS, LIMITS, range(4), ("weights", "class-weights", "two-groups")],
        edges=[("statistical_parity", "tie", 0, "weights"), ("predictive_parity", "least", 1, "weights")],
    ),
)
def test_exact_policy_is_the_best_card_that_meets_the_constraint(
    metric: str, limit: str, seed: int, weighting: str
) -> None:
    p, k, n = 4, 2, 36
    X, y, audit_w, masks = instance(1000 + seed, p, n, 2 if weighting == "two-groups" else 1)
    s = audit_w.copy()
    if weighting == "class-weights":  # the loss weighs the classes; the rates keep the audit's weights
        s = audit_w * np.where(y > 0, 2.5, 1.0)
    cons = Constraints.box(p, -2, 2)
    cards = enumerate_cards(X, y, s, audit_w, masks, cons, k)
    worst = [
        max(f) if all(v is not None for v in f) else None
        for f in cards.figures[metric]  # type: ignore[type-var]
    ]
    defined = np.array([math.inf if w is None else w for w in worst])
    order = np.argsort(cards.loss, kind="stable")
    best_figure = defined[order[0]]
    if limit == "tie":  # the limit is a card's own figure: the best card below the optimum's figure
        below = [i for i in order if defined[i] < best_figure]
        at_most = float(defined[below[0]]) if below else float(best_figure)
    elif limit == "between":
        finite = np.unique(defined[np.isfinite(defined)])
        at_most = float(finite[len(finite) // 3]) + 1e-3
    else:  # below every card's figure (infeasible), or 0 when a card reaches parity (a tie at 0)
        least = float(defined.min())
        at_most = least / 2 if least > 0.0 else 0.0
    ok = np.array([meets(f, at_most) for f in cards.figures[metric]])
    target = FairnessTarget(metric, at_most, tuple(masks), audit_w)
    res = solve_exact(X, y, s, cons, k, time_limit=120, fairness=target)
    if not ok.any():
        assert res.status == "infeasible"
        assert res.points is None and math.isinf(res.objective) and math.isinf(res.lower_bound)
        return
    truth = float(cards.loss[ok].min())
    assert res.status == "optimal"
    assert res.objective == pytest.approx(truth, rel=1e-6, abs=1e-9)
    assert res.lower_bound <= truth + 1e-9
    assert res.points is not None and res.intercept is not None
    w = res.points
    assert np.count_nonzero(w) <= k and np.all(w >= cons.lower) and np.all(w <= cons.upper)
    pred = card_predictions(X, np.flatnonzero(w), w[w != 0], res.intercept)
    for mask in masks:  # the returned card meets the constraint, by the one definition
        assert within(metric, at_most, *group_rates(y > 0, pred, mask, audit_w))
    assert float(s @ np.logaddexp(0.0, -y * (X @ w + res.intercept))) == pytest.approx(res.objective)


def test_a_tie_at_the_limit_is_kept_and_a_hair_below_it_is_not() -> None:
    """A card whose figure equals the limit meets it; the same limit less 1e-9 excludes it."""
    X, y, w, masks = instance(7, 3, 30, 1)
    cons = Constraints.box(3, -1, 1)
    cards = enumerate_cards(X, y, w, w, masks, cons, 2)
    figures = np.array([math.inf if f[0] is None else f[0] for f in cards.figures["statistical_parity"]])
    best = int(np.argmin(cards.loss))
    below = [i for i in np.argsort(cards.loss, kind="stable") if 0 < figures[i] < figures[best]]
    assert below, "the instance has a card fairer than the optimum"
    at = float(figures[below[0]])
    on = solve_exact(X, y, w, cons, 2, fairness=FairnessTarget("statistical_parity", at, tuple(masks), w))
    assert on.objective == pytest.approx(float(cards.loss[below[0]]), rel=1e-9)
    under = solve_exact(X, y, w, cons, 2, fairness=FairnessTarget("statistical_parity", at - 1e-9, tuple(masks), w))
    ok = figures <= at - 1e-9
    assert under.objective == pytest.approx(float(cards.loss[ok].min()), rel=1e-9)
    assert under.objective > on.objective


def test_without_the_constraint_the_search_is_unchanged() -> None:
    X, y, w, masks = instance(11, 4, 40, 1)
    cons = Constraints.box(4, -2, 2)
    plain = solve_exact(X, y, w, cons, 2)
    loose = solve_exact(X, y, w, cons, 2, fairness=FairnessTarget("equalized_odds", 2.0, tuple(masks), w))
    assert loose.status == plain.status == "optimal"
    assert loose.objective == pytest.approx(plain.objective, rel=1e-12)


def test_stopped_without_a_feasible_card_reports_no_model_and_a_bound() -> None:
    X, y, w, masks = instance(5, 4, 40, 1)
    cons = Constraints.box(4, -2, 2)
    target = FairnessTarget("predictive_parity", 0.0, tuple(masks), w)
    res = solve_exact(X, y, w, cons, 2, stop=lambda: "cancel", fairness=target)
    assert res.status in ("cancel", "infeasible")
    if res.status == "cancel":
        assert res.points is None and math.isinf(res.objective) and res.lower_bound >= 0.0


# -- through the solver and the run path ----------------------------------------------------------


def outcome_problem(document: dict[str, Any]) -> Any:
    from glasswork.data import load_problem
    from glasswork.hooks.registry import get_registry
    from glasswork.spec.load import validate_spec

    return load_problem(validate_spec(document, get_registry()).data)


def launch(document: dict[str, Any]) -> Any:
    from glasswork.data import load_problem
    from glasswork.running.launch import Launch
    from glasswork.hooks.registry import get_registry
    from glasswork.spec.load import validate_spec

    spec = validate_spec(document, get_registry())
    return Launch(spec, no_store=True, problem=load_problem(spec.data)).run()


def test_exact_run_meets_the_constraint_and_says_so(tmp_path: Path) -> None:
    outcome = launch(fair_spec(fair_data(tmp_path), "statistical_parity", 0.05))
    result = outcome.result
    assert result.certificate.status is Status.OPTIMAL and result.model is not None
    assert result.stats["fairness"]["figure"] <= 0.05
    assert outcome.fairness["train"]["statistical_parity"] <= 0.05 + 1e-12
    assert "meets constraints.fairness (statistical_parity <= 0.05)" in result.model.certified_against
    document = fair_spec(fair_data(tmp_path), "statistical_parity", 0.05)
    del document["constraints"]["fairness"]
    plain = launch(document)
    assert plain.result.certificate.objective < result.certificate.objective - 1e-6  # the constraint binds
    assert plain.fairness["train"]["statistical_parity"] > 0.05


def test_exact_run_proves_an_infeasible_constraint(tmp_path: Path) -> None:
    outcome = launch(fair_spec(fair_data(tmp_path), "predictive_parity", 0.0))
    assert outcome.result.certificate.status is Status.INFEASIBLE
    assert outcome.result.model is None and outcome.result.certificate.objective is None
    assert "proven infeasible" in outcome.no_model


@pytest.mark.parametrize("metric", ["statistical_parity", "equal_opportunity"])
def test_beam_keeps_the_constraint_on_every_card_it_shows(tmp_path: Path, metric: str) -> None:
    from glasswork.plugins.fasterrisk.model import ScoreCard

    source = fair_data(tmp_path)
    outcome = launch(fair_spec(source, metric, 0.02, policy="beam"))
    result = outcome.result
    assert result.certificate.status is Status.HEURISTIC  # never optimal under the constraint
    problem = outcome_problem(fair_spec(source, metric, 0.02, policy="beam"))
    X, y, mask = problem.X, problem.y, np.asarray(problem.audit["grp"]) == "p"
    assert result.stats["fairness"]["pool_meeting"] == len(result.stats["pool"]) >= 1
    for row in result.stats["pool"]:
        card = ScoreCard.from_dict(row["card"])
        assert within(metric, 0.02, *group_rates(y, card.predict(X), mask))


def test_beam_without_a_card_that_meets_it_ends_with_no_model(tmp_path: Path) -> None:
    outcome = launch(fair_spec(fair_data(tmp_path), "predictive_parity", 0.0, policy="beam"))
    assert outcome.result.model is None and outcome.result.certificate.status is Status.HEURISTIC
    assert outcome.result.stats["fairness"]["pool_meeting"] == 0
    assert "heuristic search found no model that meets constraints.fairness" in outcome.no_model


def test_a_rashomon_set_under_the_constraint_is_refused(tmp_path: Path) -> None:
    from glasswork.data import DataError

    with pytest.raises(DataError, match="Rashomon set under constraints.fairness"):
        launch(fair_spec(fair_data(tmp_path), "statistical_parity", 0.05, rashomon={"epsilon": 0.05}))


@pytest.mark.parametrize("seed", range(6))
def test_the_beams_intercept_move_is_the_best_integer_intercept_that_meets_it(seed: int) -> None:
    """``fairest_intercept`` against every integer intercept in a range wider than the scores."""
    from glasswork.plugins.fasterrisk.fairness import fairest_intercept

    rng = np.random.default_rng(40 + seed)
    n = 80
    X, y, w, masks = instance(60 + seed, 3, n, 1)
    points = 3.0 * rng.integers(-4, 5, size=3)  # totals 3 apart: runs of several intercepts
    score = X @ points
    multiplier = float(rng.uniform(0.5, 3.0))
    metric = METRICS[seed % len(METRICS)]
    target = FairnessTarget(metric, (0.08, 0.3)[seed % 2], tuple(masks), w)
    signs = np.where(y > 0, 1.0, -1.0)
    best = None
    for b in range(-40, 41):
        if target.meets(y, (score + b > 0).astype(np.int64)):
            loss = float(w @ np.logaddexp(0.0, -signs * (score + b) / multiplier))
            best = (float(b), loss) if best is None or loss < best[1] else best
    found = fairest_intercept(score, float(rng.integers(-3, 4)), multiplier, y, w, target)
    if best is None:
        assert found is None
    else:
        assert found is not None and found[1] == pytest.approx(best[1], rel=1e-12)
        assert target.meets(y, (score + found[0] > 0).astype(np.int64))


def test_the_fairness_frontier_of_the_exact_policy_matches_brute_force(tmp_path: Path) -> None:
    """constraints.fairness.frontier through the exact policy: each point is the best card whose
    figure is within its limit, every card enumerated; the walk ends proving nothing is fairer."""
    source = fair_data(tmp_path)
    document = fair_spec(source, "statistical_parity", 0.3)
    document["constraints"]["fairness"]["frontier"] = {"points": 40}
    outcome = launch(document)
    frontier = outcome.result.stats["fairness_frontier"]
    assert frontier["complete"] and frontier["end"] == "fairest"
    problem = outcome_problem(document)
    mask = np.asarray(problem.audit["grp"]) == "p"
    y = np.where(problem.y > 0, 1.0, -1.0)
    cons = Constraints.box(problem.X.shape[1], -3, 3)
    cards = enumerate_cards(problem.X, y, np.ones(y.size), np.ones(y.size), [mask], cons, 2)
    figures = np.array([math.inf if f[0] is None else f[0] for f in cards.figures["statistical_parity"]])
    solved = [p for p in frontier["points"] if p["status"] == "optimal"]
    assert len(solved) >= 2
    for point in solved:
        ok = figures <= point["limit"] + 1e-12 * max(1.0, point["limit"])
        assert point["objective"] == pytest.approx(float(cards.loss[ok].min()), rel=1e-6)
        assert point["unfairness"] <= point["limit"] + 1e-12


@pytest.mark.parametrize("nodes", [1, 2, 4, 8])
def test_stopped_under_the_constraint_keeps_a_feasible_card_and_a_valid_bound(nodes: int) -> None:
    """A node limit: the card (if any) meets the constraint, and bound <= the true optimum <= card."""
    X, y, w, masks = instance(23, 5, 40, 1)
    cons = Constraints.box(5, -2, 2)
    cards = enumerate_cards(X, y, w, w, masks, cons, 2)
    figures = np.array([math.inf if f[0] is None else f[0] for f in cards.figures["equal_opportunity"]])
    ok = figures <= 0.02 + 1e-12
    truth = float(cards.loss[ok].min())
    target = FairnessTarget("equal_opportunity", 0.02, tuple(masks), w)
    res = solve_exact(X, y, w, cons, 2, node_limit=nodes, fairness=target)
    assert res.status in ("nodes", "optimal")
    assert res.lower_bound <= truth + 1e-9
    if res.points is None:
        assert math.isinf(res.objective) and res.status == "nodes"
    else:
        assert truth <= res.objective + 1e-9
        pred = card_predictions(X, np.flatnonzero(res.points), res.points[res.points != 0], res.intercept)
        assert within("equal_opportunity", 0.02, *group_rates(y > 0, pred, masks[0], w))
