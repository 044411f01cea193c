"""The certificate's lower bound against brute force: supports enumerated with scipy, and cards."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork.plugins.fasterrisk.certify import SupportSearch, feature_signs
from glasswork.plugins.fasterrisk.engine import Constraints
from grids import sampled
from scipy.optimize import minimize


def _loss(beta: np.ndarray, X: np.ndarray, y: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray]:
    z = y * (X @ beta[1:] + beta[0])
    loss = float(s @ np.logaddexp(0.0, -z))
    r = -s * y / (1.0 + np.exp(z))
    return loss, np.concatenate([[r.sum()], X.T @ r])


def best_real_k_sparse(X: np.ndarray, y: np.ndarray, s: np.ndarray, cons: Constraints, k: int) -> float:
    """min over every allowed support of size <= k of the sign-constrained fit (L-BFGS-B)."""
    signs = feature_signs(cons)
    allowed = [j for j in range(X.shape[1]) if signs[j] != 2 and j not in cons.exclude]
    best = np.inf
    for size in range(k + 1):
        for support in itertools.combinations(allowed, size):
            if not set(cons.include) <= set(support):
                continue
            groups = [cons.group_of[j] for j in support if cons.group_of[j] >= 0]
            if len(groups) != len(set(groups)):
                continue
            Xs = X[:, list(support)]
            bounds = [(None, None)] + [
                (0, None) if signs[j] == 1 else (None, 0) if signs[j] == -1 else (None, None) for j in support
            ]
            fit = minimize(
                _loss,
                np.zeros(size + 1),
                args=(Xs, y, s),
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options={"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-10},
            )
            best = min(best, float(fit.fun))
    return best


def best_integer_card(
    X: np.ndarray, y: np.ndarray, s: np.ndarray, cons: Constraints, k: int, intercepts: range
) -> float:
    """min over integer points in the box (<= k non-zero) and integer intercepts (m = 1)."""
    p = X.shape[1]
    best = np.inf
    for size in range(k + 1):
        for support in itertools.combinations(range(p), size):
            ranges = [range(int(cons.lower[j]), int(cons.upper[j]) + 1) for j in support]
            for points in itertools.product(*ranges):
                score = X[:, list(support)] @ np.array(points, dtype=float) if size else np.zeros(len(y))
                for b in intercepts:
                    best = min(best, float(s @ np.logaddexp(0.0, -y * (score + b))))
    return best


def instance(seed: int, p: int, n: int = 60, binary: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)).astype(float) if binary else rng.integers(0, 4, size=(n, p)).astype(float)
    beta = rng.normal(0, 1.5, size=p) * (rng.random(p) < 0.5)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X @ beta - beta.sum() / 2))), 1.0, -1.0)
    s = rng.integers(1, 3, size=n).astype(float)
    return X, y, s


@pytest.mark.parametrize("seed", sampled(range(6), [2, 1]))  # binary; real with monotone features and a group
def test_bound_matches_enumerated_supports(seed: int) -> None:
    """Exhausted, the bound is the best k-sparse fit; it never exceeds it (p <= 8, k <= 3)."""
    rng = np.random.default_rng(100 + seed)
    p, k = int(rng.integers(4, 9)), int(rng.integers(1, 4))
    X, y, s = instance(seed, p, binary=seed % 2 == 0)
    cons = Constraints.box(p, -3, 3)
    if seed % 3 == 1:  # monotone features and a group
        cons.lower[0] = 0
        cons.upper[1] = 0
        cons.group_of[2] = cons.group_of[3] = 0
    truth = best_real_k_sparse(X, y, s, cons, k)
    report = SupportSearch(X, y, s, cons, k).run()
    assert report.complete
    assert report.lower_bound <= truth + 1e-7 * max(1, truth)
    assert report.lower_bound >= truth - 1e-5 * max(1, truth)  # tight: the bound is not vacuous
    assert report.upper_bound == pytest.approx(truth, rel=1e-6)


@pytest.mark.parametrize("seed", sampled(range(4), [3]))
def test_bound_stays_valid_when_stopped_early(seed: int) -> None:
    p, k = 8, 3
    X, y, s = instance(20 + seed, p)
    cons = Constraints.box(p, -3, 3)
    truth = best_real_k_sparse(X, y, s, cons, k)
    for limit in (1, 2, 3, 5, 8):
        report = SupportSearch(X, y, s, cons, k).run(node_limit=limit)
        assert report.lower_bound <= truth + 1e-7 * max(1, truth)
        assert report.stopped in (None, "nodes")
    cancelled = SupportSearch(X, y, s, cons, k).run(stop=lambda: "cancel")
    assert cancelled.stopped == "cancel" and cancelled.lower_bound <= truth


@pytest.mark.parametrize("seed", range(4))
def test_bound_never_exceeds_integer_optimum(seed: int) -> None:
    p, k = 5, 2
    X, y, s = instance(40 + seed, p, n=40)
    cons = Constraints.box(p, -3, 3)
    card = best_integer_card(X, y, s, cons, k, range(-8, 9))
    for limit in (1, 4, None):
        report = SupportSearch(X, y, s, cons, k).run(node_limit=limit)
        assert report.lower_bound <= card + 1e-9


def test_separable_data_gives_a_valid_bound() -> None:
    """Perfectly separable rows: the infimum 0 is approached at infinity; the bound stays >= 0."""
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=float)
    y = np.array([1, -1, -1, 1], dtype=float)
    report = SupportSearch(X, y, None, Constraints.box(2), 1).run(time_limit=5)
    card = 4 * np.log1p(np.exp(-4.0))  # intercept 4, feature 0 at -8
    assert 0.0 <= report.lower_bound <= min(report.upper_bound, card)


# -- the exact policy (§1.3: integer points and intercept, multiplier 1) -------------------------


@pytest.mark.parametrize("seed", range(5))
def test_exact_policy_matches_enumeration(seed: int) -> None:
    from glasswork.plugins.fasterrisk.exact import intercept_range, solve_exact

    rng = np.random.default_rng(200 + seed)
    p, k = int(rng.integers(3, 7)), int(rng.integers(1, 4))
    X, y, s = instance(60 + seed, p, n=40, binary=seed % 2 == 0)
    cons = Constraints.box(p, -3, 3)
    if seed == 3:
        cons.lower[0] = 0
    lo, hi = intercept_range(X, y, s, cons, k)
    truth = best_integer_card(X, y, s, cons, k, range(-30, 31))
    assert best_integer_card(X, y, s, cons, k, range(lo, hi + 1)) == truth  # the range holds it
    res = solve_exact(X, y, s, cons, k, time_limit=60)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(truth, rel=1e-6, abs=1e-9)
    assert res.lower_bound <= truth + 1e-9
    w = res.points
    assert np.count_nonzero(w) <= k and np.all(w >= cons.lower) and np.all(w <= cons.upper)
    assert float(s @ np.logaddexp(0.0, -y * (X @ w + res.intercept))) == pytest.approx(res.objective)


def test_exact_policy_stopped_early_keeps_a_valid_bound() -> None:
    from glasswork.plugins.fasterrisk.exact import solve_exact

    p, k = 6, 3
    X, y, s = instance(77, p, n=40)
    cons = Constraints.box(p, -3, 3)
    truth = best_integer_card(X, y, s, cons, k, range(-30, 31))
    for nodes in (1, 2, 4):
        res = solve_exact(X, y, s, cons, k, node_limit=nodes)
        assert res.lower_bound <= truth + 1e-9 <= res.objective + 2e-9
        assert res.status in ("nodes", "optimal")
    cancelled = solve_exact(X, y, s, cons, k, stop=lambda: "cancel")
    assert cancelled.lower_bound <= truth + 1e-9 and cancelled.status in ("cancel", "optimal")


@pytest.mark.parametrize("seed", range(3))
def test_exact_policy_with_monotone_forced_and_grouped_features(seed: int) -> None:
    from glasswork.plugins.fasterrisk.exact import solve_exact

    p, k = 5, 2
    X, y, s = instance(300 + seed, p, n=40)
    cons = Constraints.box(p, -2, 2)
    cons.lower[1] = 0
    cons.group_of[2] = cons.group_of[3] = 0
    cons.include = [4]
    best = np.inf
    for support in itertools.combinations(range(p), k):  # brute force with the side constraints
        if 4 not in support or {2, 3} <= set(support):
            continue
        ranges = [range(int(cons.lower[j]), int(cons.upper[j]) + 1) for j in support]
        for points in itertools.product(*ranges):
            if points[support.index(4)] == 0:
                continue
            score = X[:, list(support)] @ np.array(points, dtype=float)
            for b in range(-30, 31):
                best = min(best, float(s @ np.logaddexp(0.0, -y * (score + b))))
    res = solve_exact(X, y, s, cons, k)
    assert res.status == "optimal" and res.objective == pytest.approx(best, rel=1e-9)
    assert res.points[4] != 0 and res.points[1] >= 0 and not (res.points[2] and res.points[3])


def test_exact_policy_agrees_with_scip() -> None:
    """SCIP (pyscipopt), on the same MINLP written directly: the same optimal loss."""
    pyscipopt = pytest.importorskip("pyscipopt")
    from glasswork.plugins.fasterrisk.exact import intercept_range, solve_exact

    p, k = 4, 2
    X, y, s = instance(91, p, n=30)
    cons = Constraints.box(p, -3, 3)
    res = solve_exact(X, y, s, cons, k, time_limit=60)
    lo, hi = intercept_range(X, y, s, cons, k)
    model = pyscipopt.Model()
    model.hideOutput()
    w = [model.addVar(vtype="I", lb=-3, ub=3) for _ in range(p)]
    z = [model.addVar(vtype="B") for _ in range(p)]
    b = model.addVar(vtype="I", lb=lo, ub=hi)
    t = [model.addVar(lb=0) for _ in range(len(y))]
    for j in range(p):
        model.addCons(w[j] <= 3 * z[j])
        model.addCons(w[j] >= -3 * z[j])
    model.addCons(pyscipopt.quicksum(z) <= k)
    for i in range(len(y)):
        margin = float(y[i]) * (pyscipopt.quicksum(float(X[i, j]) * w[j] for j in range(p)) + b)
        model.addCons(t[i] >= pyscipopt.log(1 + pyscipopt.exp(-margin)))
    model.setObjective(pyscipopt.quicksum(float(s[i]) * t[i] for i in range(len(y))), "minimize")
    model.setParam("limits/gap", 1e-9)
    model.optimize()
    assert model.getStatus() == "optimal"
    assert res.status == "optimal"
    assert res.objective == pytest.approx(model.getObjVal(), rel=1e-5)


def _run(X: np.ndarray, y: np.ndarray, **search: object):
    from glasswork import Problem
    from glasswork.plugins.fasterrisk.spec import FasterRiskSpec
    from glasswork.running.launch import Launch

    problem = Problem(
        name="t",
        X=X,
        y=(y > 0).astype(np.int64),
        feature_names=[f"x{j}" for j in range(X.shape[1])],
        task="binary",
        classes=np.array([0, 1], dtype=object),
    )
    spec = FasterRiskSpec.model_validate(
        {
            "name": "t",
            "solver": "fasterrisk",
            "store": {"enabled": False},
            "data": {"source": "in-memory", "target": "y"},
            "constraints": {"sparsity": 2, "coefficient_bounds": [-3, 3]},
            "search": search,
        }
    )
    return Launch(spec, no_store=True, problem=problem).run().result


def test_runner_reports_the_bound_and_the_exact_optimum() -> None:
    X, y, _ = instance(5, 5, n=50)
    cons = Constraints.box(5, -3, 3)
    real = best_real_k_sparse(X, y, np.ones(len(y)), cons, 2)
    beam = _run(X, y)
    cert = beam.certificate
    assert cert.lower_bound is not None and cert.lower_bound <= real + 1e-7 * real
    assert cert.lower_bound >= real - 1e-5 * real  # the search closed on this small case
    assert cert.status.value in ("heuristic", "optimal") and cert.gap is not None
    assert beam.model.certified_gap == pytest.approx(cert.gap)
    assert (
        "certified: training logistic loss" in beam.model.to_text()
        and beam.to_dict()["lower_bound"] == cert.lower_bound
    )
    exact = _run(X, y, policy="exact")
    truth = best_integer_card(X, y, np.ones(len(y)), cons, 2, range(-30, 31))
    assert exact.certificate.status.value == "optimal"
    assert exact.certificate.objective == pytest.approx(truth, rel=1e-6)
    assert exact.model.multiplier == 1.0 and exact.stats["exact"]["status"] == "optimal"
    # the exact card's line names what it is proven against: integer cards, not logistic models
    assert "gap 0 % (lower bound " in exact.model.to_text()
    assert "to the best 2-feature card with integer points" in exact.model.to_text()
    assert "to the best 2-feature logistic model" in beam.model.to_text()


def test_progress_events_carry_the_rising_bound() -> None:
    """The monitor plots objective and lower bound from progress events: the certificate's are there."""
    from glasswork import Problem
    from glasswork.contract.events import CollectingSink
    from glasswork.plugins.fasterrisk.spec import FasterRiskSpec
    from glasswork.running.launch import Launch

    X, y, _ = instance(8, 8, n=200)
    problem = Problem(
        name="t",
        X=X,
        y=(y > 0).astype(np.int64),
        feature_names=[f"x{j}" for j in range(8)],
        task="binary",
        classes=np.array([0, 1], dtype=object),
    )
    spec = FasterRiskSpec.model_validate(
        {
            "name": "t",
            "solver": "fasterrisk",
            "store": {"enabled": False},
            "data": {"source": "in-memory", "target": "y"},
            "constraints": {"sparsity": 3},
        }
    )
    sink = CollectingSink()
    result = Launch(spec, no_store=True, problem=problem).run([sink]).result
    bounds = [e.lower_bound for e in sink.events if e.kind == "progress" and e.lower_bound is not None]
    assert bounds and bounds[-1] == pytest.approx(result.certificate.lower_bound)
    done = [e.counters for e in sink.events if e.kind == "progress" and e.counters.get("phase") == "certified"]
    assert done and done[-1]["bound_nodes"] == result.stats["certificate"]["nodes"]


def test_too_many_features_skip_the_bound_and_refuse_exact() -> None:
    """Beyond MAX_FEATURES the root fit would not be interruptible: no bound, and exact says why."""
    from glasswork import DataError
    from glasswork.plugins.fasterrisk.certify import MAX_FEATURES

    p = MAX_FEATURES + 1
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(120, p)).astype(float)
    y = np.where(X[:, 0] + rng.random(120) > 1.0, 1.0, -1.0)
    result = _run(X, y)
    assert result.certificate.lower_bound is None and "skipped" in result.stats["certificate"]
    assert result.model.certified_gap is None and "certified:" not in result.model.to_text()
    with pytest.raises(DataError, match="exact handles at most"):
        _run(X, y, policy="exact")


def test_the_certified_line_states_the_gap_the_one_way():
    """The card's line states the certificate's own gap, (loss - bound) / loss, through fmt_gap with
    the proven bound next to it, and says it is about the logistic loss (loss 110, bound 100: 9.09 %)."""
    from glasswork.plugins.fasterrisk.model import certified_words

    words = certified_words(110.0, (110 - 100) / 110, "best 5-feature logistic model")
    assert (
        words
        == "certified: training logistic loss 110, gap 9.09 % (lower bound 100) to the best 5-feature logistic model"
    )
    assert "gap 0 % (lower bound 0.5) to the best model" in certified_words(0.5, 0.0, None)
    assert "no useful bound yet" in certified_words(44.0, 1.0, "best model")
