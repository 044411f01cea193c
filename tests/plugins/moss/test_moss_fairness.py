"""constraints.fairness in MOSS: the cutting plane's rule set (each frontier point) against an
exhaustive enumeration of the rule sets it ranges over, checked with ``glasswork.fairness.figures.within``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from glasswork.fairness import figures as fairness
from glasswork.plugins.moss.cutting_plane import CuttingPlane
from glasswork.plugins.moss.fairness import FairnessCheck
from glasswork.plugins.moss.loss import LogisticOracle, epsilon_grid
from glasswork.contract.result import Status
from grids import covering_grid

GAMMA = 0.5
K = 3
LIMITS = ("tie", "median", "zero", "loose")  # at a rule set's exact figure, the median figure, 0, 2


def instance(seed: int, weighted: bool, n: int = 48, m: int = 8):
    rng = np.random.default_rng(seed)
    M = np.where(rng.random((n, m)) < 0.4, 1.0, 0.0) * rng.choice([-1.0, 1.0], size=m)  # rule indicators
    protected = rng.random(n) < 0.4
    y01 = (M[:, 0] - M[:, 1] + 0.6 * protected + rng.normal(scale=0.8, size=n) > 0.2).astype(np.int64)
    y = np.where(y01 == 1, 1.0, -1.0)
    rate = y01.mean()
    oracle = LogisticOracle(M, y, GAMMA, float(np.log(rate / (1 - rate))))
    counts = rng.integers(1, 40, size=m).astype(np.float64)
    weights = rng.integers(1, 4, size=n).astype(np.float64) if weighted else None
    groups = [protected] if seed % 2 == 0 else [protected, rng.random(n) < 0.5]  # one group, or two

    def predict(support: tuple[int, ...]) -> np.ndarray:
        w = oracle(support).weights
        return (oracle.offset + M[:, list(support)] @ w > 0).astype(np.int64)

    return oracle, counts, y01, groups, weights, predict


def rule_sets(m: int, k: int):
    return [s for size in range(k + 1) for s in itertools.combinations(range(m), size)]


def meets(metric, at_most, y01, groups, weights, pred) -> bool:
    return all(fairness.within(metric, at_most, *fairness.group_rates(y01, pred, g, weights)) for g in groups)


def figure(metric, y01, groups, weights, pred) -> float | None:
    values = [fairness.prediction_metrics(*fairness.group_rates(y01, pred, g, weights))[metric] for g in groups]
    return None if any(v is None for v in values) else max(values)


def limit_for(kind: str, metric, y01, groups, weights, predict, sets, seed) -> float:
    figures = sorted(
        f for f in (figure(metric, y01, groups, weights, predict(s)) for s in sets) if f is not None and f > 0
    )
    if kind == "zero" or not figures:  # (no rule set with a positive figure: "tie" is "zero" too)
        return 0.0
    if kind == "loose":
        return 2.0
    if kind == "median":
        return figures[len(figures) // 2]
    return figures[np.random.default_rng(seed).integers(len(figures) // 4 + 1)]  # exactly some rule set's figure


def brute(oracle, counts, threshold, admissible, sets):
    best = math.inf
    for s in sets:
        if counts[list(s)].sum() >= threshold - 1e-9 and admissible(s):
            best = min(best, oracle.value(s))
    return best


def check_point(p, best, admissible):
    if math.isinf(best):
        assert not p.found and p.status is Status.OPTIMAL and p.support == ()
        return
    assert p.found and p.status is Status.OPTIMAL
    assert admissible(p.support)
    assert p.h2 == pytest.approx(best, rel=1e-6)
    assert p.lower_bound <= best * (1 + 1e-9)


@pytest.mark.parametrize(
    ("metric", "limit", "weighted", "seed"),
    covering_grid(
        [list(fairness.METRICS), list(LIMITS), [False, True], [0, 1, 2, 3]],
        ids=[str, str, lambda w: "weighted" if w else "unweighted", lambda s: f"seed{s}"],
        edges=[("statistical_parity", "tie", False, 0), ("predictive_parity", "tie", True, 1)],
    ),
)
def test_frontier_under_the_constraint_equals_brute_force(metric, limit, weighted, seed):
    oracle, counts, y01, groups, weights, predict = instance(seed, weighted)
    sets = rule_sets(counts.size, K)
    at_most = limit_for(limit, metric, y01, groups, weights, predict, sets, seed)
    check = FairnessCheck(metric, at_most, y01, groups, weights, predict)
    cp = CuttingPlane(oracle, counts, K, pi_scale=40.0, tol=1e-7, admissible=check)
    grid = epsilon_grid(counts, K, 6)
    points = cp.sweep(grid)
    assert len(points) == grid.size
    for thr, p in zip(sorted(grid, reverse=True), points, strict=True):
        best = brute(oracle, counts, thr, lambda s: meets(metric, at_most, y01, groups, weights, predict(s)), sets)
        check_point(p, best, check)
    if limit == "tie" and at_most > 0:  # the limit is one rule set's exact figure: that rule set meets it
        assert any(figure(metric, y01, groups, weights, predict(s)) == at_most and check(s) for s in sets)


@pytest.mark.parametrize("metric", list(fairness.METRICS))
def test_one_threshold_from_scratch_equals_brute_force(metric):
    oracle, counts, y01, groups, weights, predict = instance(7, False)
    sets = rule_sets(counts.size, K)
    at_most = limit_for("median", metric, y01, groups, weights, predict, sets, 7)
    check = FairnessCheck(metric, at_most, y01, groups, weights, predict)
    thr = float(epsilon_grid(counts, K)[2])
    p = CuttingPlane(oracle, counts, K, pi_scale=40.0, tol=1e-7, admissible=check).solve(thr)
    best = brute(oracle, counts, thr, lambda s: meets(metric, at_most, y01, groups, weights, predict(s)), sets)
    check_point(p, best, check)
    assert p.excluded == sum(not admitted for admitted in check._memo.values())  # one no-good each


def test_an_undefined_figure_fails_the_constraint():
    """A rule set that predicts no positive in the protected group has no precision there: it
    never meets a predictive parity limit, however loose."""
    oracle, counts, y01, groups, weights, predict = instance(0, False)
    check = FairnessCheck("predictive_parity", 2.0, y01, groups, weights, lambda s: np.zeros(y01.size, np.int64))
    assert not check((0,))
    p = CuttingPlane(oracle, counts, K, pi_scale=40.0, admissible=check).solve(float(epsilon_grid(counts, K)[0]))
    assert not p.found and p.status is Status.OPTIMAL


def test_without_a_constraint_the_search_is_unchanged():
    oracle, counts, *_ = instance(3, False)
    grid = epsilon_grid(counts, K, 5)
    plain = CuttingPlane(oracle, counts, K, pi_scale=40.0).sweep(grid)
    again = CuttingPlane(LogisticOracle(oracle.M, oracle.y, GAMMA, oracle.offset), counts, K, pi_scale=40.0)
    admitted = again.sweep(grid)  # no admissible: the same path
    assert [(p.support, p.h2, p.iterations) for p in plain] == [(p.support, p.h2, p.iterations) for p in admitted]


def test_a_stopped_search_reports_no_model_or_its_best_admissible_one():
    oracle, counts, y01, groups, weights, predict = instance(2, False)
    sets = rule_sets(counts.size, K)
    at_most = limit_for("median", "statistical_parity", y01, groups, weights, predict, sets, 2)
    check = FairnessCheck("statistical_parity", at_most, y01, groups, weights, predict)
    cp = CuttingPlane(oracle, counts, K, pi_scale=40.0, admissible=check, max_iterations=1)
    thr = float(epsilon_grid(counts, K)[0])
    p = cp.solve(thr)
    best = brute(oracle, counts, thr, check, sets)
    if p.found:
        assert check(p.support) and p.lower_bound <= best * (1 + 1e-9) and p.h2 >= best * (1 - 1e-9)
    else:
        assert p.h2 == math.inf and p.support == ()
        assert p.status is not Status.OPTIMAL or math.isinf(best)


# -- the solver, end to end -------------------------------------------------------------------

GROUP = "<b>[red]x[/]'; DROP TABLE runs;--"  # a hostile group value: data, never markup or SQL


def _data(folder, rows: int = 240, seed: int = 0):
    """0/1 features and a label that depends on the group through x1, so the unconstrained rule set
    treats the protected group differently."""
    rng = np.random.default_rng(seed)
    group = np.where(rng.random(rows) < 0.45, GROUP, "other")
    protected = group == GROUP
    x1 = (rng.random(rows) < np.where(protected, 0.75, 0.3)).astype(int)
    x2 = rng.integers(0, 2, rows)
    x3 = rng.integers(0, 2, rows)
    label = ((x1 + 0.6 * x2 + rng.normal(scale=0.5, size=rows)) > 0.9).astype(int)
    text = "x1,x2,x3,grp,label\n" + "\n".join(
        f'{a},{b},{c},"{g.replace(chr(34), chr(34) * 2)}",{y}' for a, b, c, g, y in zip(x1, x2, x3, group, label)
    )
    (folder / "d.csv").write_text(text + "\n", encoding="utf-8")


def _spec(folder, constraints: str, metric: str = "statistical_parity", target: str = "label") -> object:
    _data(folder)
    text = (
        "name: fair-moss\n"
        f"data: {{source: '{folder / 'd.csv'}', target: {target}, positive: 1, audit_only: [grp]}}\n"
        "solver: moss\n"
        "objective: {gamma: 0.1, candidates: {trees: 40, depth: 2, seed: 0, max_candidates: 30}}\n"
        f"constraints: {{max_rules: 2{constraints}}}\n"
        f'fairness: {{protected: {{column: grp, value: "{GROUP}"}}, metrics: [{metric}]}}\n'
    )
    path = folder / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _run(path):
    from glasswork.running.launch import Launch
    from glasswork.hooks.registry import Registry

    return Launch.from_file(path, registry=Registry(entry_points=False, disabled=()), no_store=True).run()


def test_the_run_returns_the_best_rule_set_that_meets_the_limit(tmp_path):
    free = _run(_spec(tmp_path, ", stability_rank: 3"))
    unfair = free.to_dict()["fairness"]["train"]["statistical_parity"]
    limit = round(unfair / 2, 4)
    fair = _run(_spec(tmp_path, f", stability_rank: 3, fairness: {{metric: statistical_parity, at_most: {limit}}}"))
    doc = fair.to_dict()
    assert fair.result.certificate.status is Status.OPTIMAL
    assert doc["fairness"]["train"]["statistical_parity"] <= limit + 1e-12
    stats = fair.result.stats["fairness"]
    assert stats["figure"] == pytest.approx(doc["fairness"]["train"]["statistical_parity"], abs=1e-12)
    assert fair.result.certificate.objective >= free.result.certificate.objective * (1 - 1e-9)


def test_every_frontier_point_meets_the_limit(tmp_path):
    limit = 0.1
    outcome = _run(
        _spec(tmp_path, f", frontier: {{points: 4}}, fairness: {{metric: statistical_parity, at_most: {limit}}}")
    )
    rows = outcome.result.stats["frontier"]
    assert rows and all(r["status"] in ("optimal", "infeasible") for r in rows)
    assert outcome.to_dict()["fairness"]["train"]["statistical_parity"] <= limit + 1e-12
    for r in rows:
        assert (r["h2"] is None) == (r["status"] == "infeasible") == (r["rules"] == [])


def test_a_limit_no_rule_set_meets_is_said_as_such(tmp_path):
    outcome = _run(_spec(tmp_path, ", stability_rank: 1, fairness: {metric: statistical_parity, at_most: 0}"))
    assert outcome.status is Status.INFEASIBLE and outcome.result.model is None
    assert "proven infeasible" in outcome.no_model
    assert "no rule set meets statistical_parity at most 0" in outcome.result.stats["no_model"]
    assert outcome.to_dict()["model"] is None


def test_a_frontier_with_no_admissible_point_ends_infeasible_with_its_rows(tmp_path):
    outcome = _run(
        _spec(
            tmp_path, ", frontier: {points: 2}, fairness: {metric: predictive_parity, at_most: 0}", "predictive_parity"
        )
    )
    assert outcome.status is Status.INFEASIBLE and outcome.result.model is None
    rows = outcome.result.stats["frontier"]
    assert [r["status"] for r in rows] == ["infeasible", "infeasible"] and not any(r["chosen"] for r in rows)


def test_a_search_stopped_before_any_admissible_rule_set_has_no_model_and_a_bound(tmp_path):
    from glasswork.data import load_problem
    from glasswork.plugins.moss import MossSolver
    from glasswork.hooks.registry import Registry
    from glasswork.contract.solver import Limits, SolveContext
    from glasswork.spec.load import load_spec

    loaded = load_spec(
        _spec(tmp_path, ", stability_rank: 3, fairness: {metric: statistical_parity, at_most: 0.0001}"),
        Registry(entry_points=False, disabled=()),
    )
    problem = load_problem(loaded.spec.data)
    solver = MossSolver(loaded.spec)
    solver.check(problem)
    result = solver.solve(problem, SolveContext(limits=Limits(nodes=1)))  # the cut count: stops at once
    status = result.certificate.status
    if result.model is None:
        assert status is Status.STOPPED_NODES and result.certificate.objective is None
        assert result.certificate.lower_bound is not None
    else:
        assert result.stats["fairness"]["figure"] <= 0.0001 + 1e-12


def test_a_regression_target_refuses_the_constraint(tmp_path):
    from glasswork.data import DataError
    from glasswork.plugins.moss import MossSolver
    from glasswork.hooks.registry import get_registry
    from glasswork.spec.load import validate_spec

    doc = {
        "name": "r",
        "solver": "moss",
        "data": {"source": "sklearn:diabetes", "audit_only": ["sex"]},
        "constraints": {"fairness": {"metric": "statistical_parity", "at_most": 0.1}},
        "fairness": {"protected": {"column": "sex", "value": 1}},
    }
    spec = validate_spec(doc, get_registry())
    problem = type("P", (), {"task": "regression"})()
    with pytest.raises(DataError, match="binary prediction") as caught:
        MossSolver(spec).check(problem)
    assert caught.value.field == "constraints.fairness"


@pytest.mark.parametrize("metric", list(fairness.METRICS))
def test_a_rule_set_exactly_at_the_limit_is_the_optimum(metric):
    """The limit is the figure of the best rule set whose figure is below the unconstrained
    optimum's: that rule set, exactly at the limit, is the answer (a strict test would miss it)."""
    tried = 0
    for seed in range(40):
        oracle, counts, y01, groups, weights, predict = instance(seed, seed % 2 == 1)
        thr = float(epsilon_grid(counts, K)[-1])
        ranked = sorted((oracle.value(s), s) for s in rule_sets(counts.size, K) if counts[list(s)].sum() >= thr)
        figures = [figure(metric, y01, groups, weights, predict(s)) for _, s in ranked]
        if figures[0] is None:
            continue
        at = next((i for i, f in enumerate(figures) if f is not None and f < figures[0]), None)
        if at is None or ranked[at][0] == ranked[at - 1][0]:
            continue
        check = FairnessCheck(metric, figures[at], y01, groups, weights, predict)
        p = CuttingPlane(oracle, counts, K, pi_scale=40.0, tol=1e-9, admissible=check).solve(thr)
        assert p.status is Status.OPTIMAL and p.support == ranked[at][1]
        assert figure(metric, y01, groups, weights, predict(p.support)) == figures[at]
        tried += 1
        if tried == 3:
            return
    pytest.fail(f"no instance with a tie for {metric}")


def test_a_frontier_stopped_before_its_last_point_never_claims_infeasible(tmp_path):
    from glasswork.data import load_problem
    from glasswork.plugins.moss import MossSolver
    from glasswork.hooks.registry import Registry
    from glasswork.contract.solver import Limits, SolveContext
    from glasswork.spec.load import load_spec

    loaded = load_spec(
        _spec(tmp_path, ", frontier: {points: 4}, fairness: {metric: statistical_parity, at_most: 0}"),
        Registry(entry_points=False, disabled=()),
    )
    problem = load_problem(loaded.spec.data)
    full = MossSolver(loaded.spec).solve(problem, SolveContext())
    stopped = MossSolver(loaded.spec).solve(problem, SolveContext(limits=Limits(nodes=1)))
    rows = stopped.stats["frontier"]
    assert len(rows) < len(full.stats["frontier"])  # the limit cut the sweep short
    if stopped.model is None:
        assert stopped.certificate.status is Status.STOPPED_NODES
    assert full.certificate.status in (Status.INFEASIBLE, Status.OPTIMAL)
    assert (full.model is None) == (full.certificate.status is Status.INFEASIBLE)


def test_a_chosen_point_without_a_rule_set_gives_way_to_the_next_one_with(tmp_path):
    outcome = _run(
        _spec(tmp_path, ", frontier: {points: 4, choose: 1}, fairness: {metric: statistical_parity, at_most: 0}")
    )
    rows = outcome.result.stats["frontier"]
    first = next(i for i, r in enumerate(rows) if r["status"] == "optimal")
    assert first > 0 and rows[0]["status"] == "infeasible"  # this data: the most stable points have none
    assert outcome.result.stats["chosen_point"] == first + 1 and rows[first]["chosen"]
    assert outcome.to_dict()["fairness"]["train"]["statistical_parity"] <= 1e-12


def test_the_frontier_from_scratch_equals_the_shared_sweep_under_the_limit(tmp_path):
    limit = ", frontier: {points: 4}, fairness: {metric: statistical_parity, at_most: 0.02}"
    shared = _run(_spec(tmp_path, limit)).result.stats["frontier"]
    fresh_spec = _spec(tmp_path, limit)
    fresh_spec.write_text(fresh_spec.read_text() + "search: {epm: false}\n", encoding="utf-8")
    fresh = _run(fresh_spec).result.stats["frontier"]
    assert [(r["status"], r["rules"]) for r in shared] == [(r["status"], r["rules"]) for r in fresh]
    for a, b in zip(shared, fresh, strict=True):
        assert (a["h2"] is None and b["h2"] is None) or a["h2"] == pytest.approx(b["h2"], rel=1e-6)
