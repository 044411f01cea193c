"""Unit tests of the greedy decision list: the algorithm, the model, the spec and the solver."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from glasswork import DataError, Limits, Problem, SolveContext, Status, StopReason
from glasswork_greedy import DecisionList, GreedySolver, GreedySpec, Rule, greedy_decision_list
from glasswork_greedy.model import negated_name

CLASSES = np.array(["no", "yes"])
NAMES = ["a", "b", "c", "d"]


def hand_made() -> tuple[np.ndarray, np.ndarray]:
    """20 samples, 11 positive. Worked out by hand (errors counted in samples):

    - ``b`` holds on rows 0-7, all positive: "if b then yes" leaves rows 8-19 (3 yes, 9 no),
      so the default "no" errs 3 times: total 3, the best first rule.
    - ``not c`` (rows 11-15, all no) leaves 11 yes and 4 no: total 4.
    - ``a`` (rows 0-3 and 8-13: 7 yes, 3 no) errs 3 + 4 = 7.
    - ``d`` holds on rows 8-10 (the 3 positives b misses): total 8 first, but 0 after ``b``.
    """
    n = 20
    X = np.zeros((n, 4), dtype=np.uint8)
    y = np.zeros(n, dtype=np.int64)
    y[0:11] = 1
    X[0:4, 0] = X[8:14, 0] = 1  # a
    X[0:8, 1] = 1  # b
    X[:, 2] = 1
    X[11:16, 2] = 0  # c
    X[8:11, 3] = 1  # d
    return X, y


def random_data(seed: int, n: int = 120, p: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < rng.uniform(0.2, 0.8, p)).astype(np.uint8)
    logits = X @ rng.normal(0, 1.5, p) - 0.5 * X[:, 0] * X[:, 1] + rng.normal(0, 0.7, n)
    y = (logits > np.median(logits)).astype(np.int64)
    return X, y


def names(p: int) -> list[str]:
    return [f"f{j}" for j in range(p)]


def objective_of(model: DecisionList, X: np.ndarray, y: np.ndarray, lam: float) -> float:
    """Objective evaluated from predictions, independently of the search's bookkeeping."""
    return float(np.mean(model.predict(X) != y)) + lam * model.size


# -- the algorithm -------------------------------------------------------------------------------


def test_first_rule_is_the_known_best() -> None:
    X, y = hand_made()
    fit = greedy_decision_list(X, y, NAMES, CLASSES, regularization=0.0)
    first = fit.model.rules[0]
    assert (first.feature, first.value, first.label) == (1, 1, 1)
    assert fit.steps[1].error == pytest.approx(3 / 20)
    assert [(r.feature, r.value, r.label) for r in fit.model.rules] == [(1, 1, 1), (3, 1, 1)]
    assert fit.error == 0.0 and fit.stopped is None
    assert fit.model.to_text() == "if b then yes\nelse if d then yes\nelse no"


def test_min_support_can_make_the_negation_the_best_rule() -> None:
    # "d then yes" captures 3 of 20 samples, below a 25% support; "not d then no" captures 9.
    X, y = hand_made()
    fit = greedy_decision_list(X, y, NAMES, CLASSES, regularization=0.0, min_support=0.25)
    assert [(r.feature, r.value, r.label) for r in fit.model.rules] == [(1, 1, 1), (3, 0, 0)]
    assert fit.model.to_text() == "if b then yes\nelse if not d then no\nelse yes"
    assert all(sum(r.counts) >= 5 for r in fit.model.rules)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [0.0, 0.02])
def test_every_step_takes_the_best_one_rule_extension(seed: int, lam: float) -> None:
    """Brute force: append each feature or negation to the list so far and score by prediction."""
    X, y = random_data(seed)
    fit = greedy_decision_list(X, y, names(X.shape[1]), CLASSES, regularization=lam, max_rules=5)
    for k in range(fit.model.size + 1):
        prefix = fit.model.rules[:k]
        best = np.inf
        for j in range(X.shape[1]):
            for value in (1, 0):
                rules = prefix + [Rule(j, value, 0, (0.0, 0.0))]
                model = DecisionList(rules, 0, (0.0, 0.0), names(X.shape[1]), CLASSES)
                hit = model.decide(X) == k
                if not hit.any():
                    continue
                # the new rule and the default each predict the majority of what they capture
                label = int(y[hit].mean() > 0.5)
                rest = model.decide(X) == k + 1
                default = int(y[rest].mean() > 0.5) if rest.any() else 0
                rules[-1] = Rule(j, value, label, (0.0, 0.0))
                model = DecisionList(rules, default, (0.0, 0.0), names(X.shape[1]), CLASSES)
                best = min(best, objective_of(model, X, y, lam))
        current = fit.steps[k].objective
        if k < fit.model.size:
            assert fit.steps[k + 1].objective == pytest.approx(best, abs=1e-12)
            assert best < current
        else:  # it stopped: no extension lowers the objective (or max_rules was reached)
            assert k == 5 or best >= current - 1e-12


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 8])  # seeds whose lists grow 2 to 4 rules
def test_training_error_never_increases(seed: int) -> None:
    X, y = random_data(seed, n=300, p=12)
    fit = greedy_decision_list(X, y, names(12), CLASSES, regularization=0.0, max_rules=64)
    errors = [s.error for s in fit.steps]
    assert len(errors) >= 3
    assert all(later < earlier for earlier, later in zip(errors, errors[1:]))
    objectives = [s.objective for s in fit.steps]
    assert all(later < earlier for earlier, later in zip(objectives, objectives[1:]))
    assert fit.error == pytest.approx(np.mean(fit.model.predict(X) != y))


def test_reported_objective_matches_the_model() -> None:
    X, y = random_data(7, n=200, p=10)
    fit = greedy_decision_list(X, y, names(10), CLASSES, regularization=0.015)
    assert fit.objective == pytest.approx(objective_of(fit.model, X, y, 0.015))


def test_regularization_and_max_rules_limit_the_list() -> None:
    X, y = random_data(2, n=300, p=12)  # grows 4 rules unconstrained
    assert greedy_decision_list(X, y, names(12), CLASSES, regularization=1.0).model.size == 0
    capped = greedy_decision_list(X, y, names(12), CLASSES, regularization=0.0, max_rules=2)
    assert capped.model.size == 2 and capped.reason == "reached max_rules=2"
    longer = greedy_decision_list(X, y, names(12), CLASSES, regularization=0.0, max_rules=64)
    assert longer.model.size > 2
    assert longer.model.rules[:2] == capped.model.rules


def test_empty_list_predicts_the_majority_label() -> None:
    X, y = hand_made()  # 11 yes, 9 no
    fit = greedy_decision_list(X, y, NAMES, CLASSES, max_rules=0)
    model = fit.model
    assert model.size == 0 and model.rules == []
    assert np.all(model.predict(X) == 1)
    assert np.allclose(model.predict_proba(X), [9 / 20, 11 / 20])
    assert model.to_text() == "always yes"
    assert fit.error == pytest.approx(9 / 20)


def test_sample_weights_move_the_majority() -> None:
    X, y = hand_made()
    weights = np.where(y == 0, 3.0, 1.0)  # 27 weighted no against 11 yes
    fit = greedy_decision_list(X, y, NAMES, CLASSES, max_rules=0, sample_weight=weights)
    assert fit.model.default_label == 0
    assert fit.error == pytest.approx(11 / 38)


# -- the model -----------------------------------------------------------------------------------


def test_predict_proba_rows_sum_to_one_and_agree_with_predict() -> None:
    X, y = random_data(11, n=250, p=9)
    model = greedy_decision_list(X, y, names(9), CLASSES, regularization=0.0).model
    X_new, _ = random_data(12, n=100, p=9)
    proba = model.predict_proba(X_new)
    assert proba.shape == (100, 2)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba >= 0) & (proba <= 1))
    clear = np.abs(proba[:, 1] - 0.5) > 1e-12
    assert np.array_equal(model.predict(X_new)[clear], (proba[clear, 1] > 0.5).astype(int))


def test_proba_is_the_training_mix_of_the_deciding_rule() -> None:
    X, y = hand_made()
    model = greedy_decision_list(X, y, NAMES, CLASSES, regularization=0.0, min_support=0.25).model
    # rules: b -> yes (8 yes), not d -> no (9 no); the default holds rows 8-10 (3 yes)
    assert [r.counts for r in model.rules] == [(0.0, 8.0), (9.0, 0.0)]
    assert model.default_counts == (0.0, 3.0)
    proba = model.predict_proba(X)
    assert np.allclose(proba[0], [0, 1]) and np.allclose(proba[15], [1, 0])


def test_a_default_that_captured_nothing_falls_back_on_the_prior() -> None:
    model = DecisionList([Rule(0, 1, 1, (1.0, 3.0)), Rule(0, 0, 0, (4.0, 0.0))], 0, (0.0, 0.0), ["x"], CLASSES)
    assert np.allclose(model.predict_proba(np.array([[1], [0]])), [[0.25, 0.75], [1.0, 0.0]])
    lone = DecisionList([], 0, (0.0, 0.0), ["x"], CLASSES)
    assert np.allclose(lone.predict_proba(np.array([[1]])), [[0.5, 0.5]])


def test_to_dict_is_json_and_round_trips() -> None:
    X, y = hand_made()
    model = greedy_decision_list(X, y, NAMES, CLASSES, regularization=0.0, min_support=0.25).model
    doc = json.loads(json.dumps(model.to_dict()))
    assert doc["kind"] == "decision_list" and doc["size"] == 2
    assert doc["rules"][1]["condition"] == "not d" and doc["default"]["prediction"] == "yes"
    again = DecisionList.from_dict(doc)
    assert again.to_text() == model.to_text()
    assert np.array_equal(again.predict_proba(X), model.predict_proba(X))


def test_predict_checks_the_number_of_columns() -> None:
    model = DecisionList([], 1, (1.0, 2.0), NAMES, CLASSES)
    with pytest.raises(ValueError, match="4 columns"):
        model.predict(np.zeros((3, 2)))


@pytest.mark.parametrize(
    ("name", "negated"),
    [("mean_radius<=13.1", "mean_radius>13.1"), ("age>40", "age<=40"), ("smoker", "not smoker")],
)
def test_negated_names_read_naturally(name: str, negated: str) -> None:
    assert negated_name(name) == negated


# -- the spec and the solver ---------------------------------------------------------------------


def spec(**sections: object) -> GreedySpec:
    return GreedySpec.model_validate(
        {"name": "t", "solver": "greedy", "data": {"source": "sklearn:breast_cancer"}, **sections}
    )


def problem() -> Problem:
    X, y = random_data(5, n=200, p=8)
    return Problem(name="random", X=X, y=y, feature_names=names(8), task="binary", classes=CLASSES)


def test_spec_defaults_and_ranges() -> None:
    s = spec()
    assert (s.objective.regularization, s.constraints.max_rules, s.constraints.min_support) == (0.01, 8, 0.0)
    for bad in (
        {"objective": {"regularization": -0.1}},
        {"constraints": {"max_rules": 65}},
        {"constraints": {"max_rules": -1}},
        {"constraints": {"min_support": 0.5}},
        {"search": {"depth": 3}},
        {"objective": {"lambda": 0.1}},
    ):
        with pytest.raises(ValidationError):
            spec(**bad)


def test_solve_emits_progress_and_incumbents() -> None:
    events = []
    result = GreedySolver(spec(objective={"regularization": 0.0})).solve(
        problem(), SolveContext(Limits(), events.append)
    )
    size = result.model.size
    assert size >= 2
    progress = [e for e in events if e.kind == "progress"]
    incumbents = [e for e in events if e.kind == "incumbent"]
    assert len(progress) == len(incumbents) == size + 1  # the empty list, then one per rule
    assert [e.counters["rules"] for e in progress] == list(range(size + 1))
    objectives = [e.objective for e in incumbents]
    assert all(b < a for a, b in zip(objectives, objectives[1:]))
    assert incumbents[-1].model is not None and incumbents[-1].model.size == size
    cert = result.certificate
    assert cert.status is Status.HEURISTIC and cert.lower_bound is None and cert.gap is None
    assert cert.objective == pytest.approx(objectives[-1])
    assert result.metrics["train_error"] == pytest.approx(progress[-1].counters["train_error"])
    assert result.stats["rules"] == size
    # nodes count candidates: 2 per feature per round, including the last round that found none
    assert result.stats["nodes"] == progress[-1].nodes + 2 * 8 == (size + 1) * 2 * 8


def test_node_limit_stops_with_stopped_nodes_and_no_bound() -> None:
    ctx = SolveContext(Limits(nodes=1))
    result = GreedySolver(spec(objective={"regularization": 0.0})).solve(problem(), ctx)
    assert result.certificate.status is Status.STOPPED_NODES
    assert result.certificate.lower_bound is None
    assert result.model.size == 1  # one step's candidates exceed a limit of one node
    assert result.stats["stop_reason"] == "stopped: stopped_nodes"


@pytest.mark.parametrize(
    ("reason", "status"), [(StopReason.CANCEL, Status.CANCELLED), (StopReason.TIME, Status.STOPPED_TIME)]
)
def test_a_raised_stop_flag_returns_the_best_list_so_far(reason: StopReason, status: Status) -> None:
    ctx = SolveContext()
    ctx.request_stop(reason)
    p = problem()
    result = GreedySolver(spec()).solve(p, ctx)
    assert result.certificate.status is status
    assert result.model.size == 0
    assert result.certificate.objective == pytest.approx(np.mean(result.model.predict(p.X) != p.y))


def test_non_binary_features_are_a_data_error() -> None:
    p = problem()
    p.X = p.X.astype(np.float64) * 1.5
    with pytest.raises(DataError, match="0/1 features"):
        GreedySolver(spec()).solve(p, SolveContext())
