"""Multiplicity figures of a Rashomon set: hand-computed small cases, a brute-force check of the
vectorised figures on random sets, and the figures a real run records."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from glasswork.contract.model import Model
from glasswork.data import Problem
from glasswork.rashomon import RashomonMember, RashomonSet, multiplicity
from hypothesis import given, settings
from hypothesis import strategies as st


class Rule(Model):
    """Predicts 1 where any of its columns is 1 (no columns: always ``constant``)."""

    kind = "rule"
    task = "binary"

    def __init__(self, columns: tuple[int, ...], constant: int = 0) -> None:
        self.columns = columns
        self.constant = constant

    def predict(self, X: np.ndarray) -> np.ndarray:
        if not self.columns:
            return np.full(X.shape[0], self.constant)
        return (X[:, list(self.columns)] == 1).any(axis=1).astype(np.int64)

    def to_text(self) -> str:
        return f"any of {self.columns}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "columns": list(self.columns)}


NAMES = ["a", "b", "c"]


def problem_of(X: np.ndarray, y: np.ndarray, X_test=None, y_test=None) -> Problem:
    return Problem(
        "t", X, y, list(NAMES[: X.shape[1]]), "binary", classes=np.array([0, 1]), X_test=X_test, y_test=y_test
    )


def set_of(models: list[Rule], count: int | None = None) -> RashomonSet:
    members = [
        RashomonMember(float(i), tuple(NAMES[j] for j in m.columns), f"fp{i}", model=m) for i, m in enumerate(models)
    ]
    return RashomonSet(threshold=10.0, optimum=0.0, count=count or len(members), complete=True, members=members)


def test_hand_computed_agreement_and_variable_use():
    # rows:           0  1  2  3
    X = np.array([[1, 0], [0, 1], [0, 0], [1, 1]])
    y = np.array([1, 1, 0, 1])
    optimal = Rule((0, 1))  # predicts 1 1 0 1: no error
    members = [optimal, Rule((0,)), Rule((1,)), Rule((), constant=0)]
    # Rule(a) predicts 1 0 0 1 (differs on row 1), Rule(b) 0 1 0 1 (row 0), constant 0 0 0 0 (rows 0, 1, 3)
    out = multiplicity.figures(set_of(members, count=7), optimal, problem_of(X, y))
    assert out["rows"] == "train" and out["n_rows"] == 4 and out["members"] == 4
    assert out["ambiguity"] == pytest.approx(3 / 4)  # rows 0, 1 and 3 have a dissenting member
    assert out["discrepancy"] == pytest.approx(3 / 4)  # the constant model differs on 3 of 4 rows
    assert out["split_rows"] == 3
    assert out["vote_shares"] == [[0.5, 0.5], [0.5, 0.5], [1.0, 0.0], [0.25, 0.75]]
    assert out["majority_share_min"] == pytest.approx(0.5)
    assert out["variable_use"] == {"a": 0.5, "b": 0.5}
    assert out["notes"] == ["over the 4 kept members of 7"]


class Linear(Model):
    """A regression model: ``X @ coef`` (the floats differ by rounding between equal models)."""

    kind = "linear"
    task = "regression"

    def __init__(self, coef: list[float]) -> None:
        self.coef = np.asarray(coef, dtype=np.float64)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return X @ self.coef

    def to_text(self) -> str:
        return f"{self.coef}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "coef": self.coef.tolist()}


def test_a_regression_set_reports_its_spread_not_a_false_ambiguity():
    from glasswork.display.console import multiplicity_text

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, 2.0, 3.0])
    optimal = Linear([1.0, 2.0])
    # the same model up to rounding, and one that differs by 0.5 on rows 0 and 2
    members = [optimal, Linear([1.0 + 1e-15, 2.0]), Linear([1.5, 2.0])]
    problem = Problem("r", X, y, ["a", "b"], "regression")
    rs = RashomonSet(
        threshold=10.0,
        optimum=0.0,
        count=3,
        complete=True,
        members=[RashomonMember(float(i), ("a", "b"), f"fp{i}", model=m) for i, m in enumerate(members)],
    )
    out = multiplicity.figures(rs, optimal, problem)
    assert out["ambiguity"] is None and out["discrepancy"] is None
    assert out["split_rows"] == 2 and out["split_share"] == pytest.approx(2 / 3)
    assert out["spread_mean"] == pytest.approx(1 / 3) and out["spread_max"] == pytest.approx(0.5)
    assert "prediction spread mean 0.3333, max 0.5, 2 rows where members differ" in multiplicity_text(out)


def test_hand_computed_reliance_is_the_permuted_loss_over_the_loss():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(40, 2))
    y = X[:, 0].copy()
    y[:4] = 1 - y[:4]  # Rule(a) errs on 4 of 40 rows
    members = [Rule((0,)), Rule((1,))]
    out = multiplicity.figures(set_of(members), members[0], problem_of(X, y))
    permutation = np.random.default_rng(multiplicity.SEED).permutation(40)
    permuted = X.copy()
    permuted[:, 0] = X[permutation, 0]
    by_hand_a = np.mean(Rule((0,)).predict(permuted) != y) / (4 / 40)
    permuted = X.copy()
    permuted[:, 1] = X[permutation, 1]
    by_hand_b = np.mean(Rule((1,)).predict(permuted) != y) / np.mean(Rule((1,)).predict(X) != y)
    # each feature is used by one member; the other relies on it exactly 1
    assert out["reliance"]["a"] == pytest.approx(sorted([1.0, by_hand_a]))
    assert out["reliance"]["b"] == pytest.approx(sorted([1.0, by_hand_b]))
    assert by_hand_a > 1.5  # a real signal: permuting the deciding column hurts
    assert out["reliance_rows"] == 40


def test_a_member_without_error_has_its_loss_floored_at_one_row():
    X = np.array([[0], [1], [0], [1]])
    y = np.array([0, 1, 0, 1])
    out = multiplicity.figures(set_of([Rule((0,))]), Rule((0,)), problem_of(X, y))
    low, high = out["reliance"]["a"]
    assert low == high and np.isfinite(high) and high >= 1.0


def test_the_test_rows_are_used_when_there_is_a_split():
    problem = problem_of(np.array([[1], [0]]), np.array([1, 0]), np.array([[1], [1], [0]]), np.array([1, 1, 0]))
    out = multiplicity.figures(set_of([Rule((0,))]), Rule((0,)), problem)
    assert out["rows"] == "test" and out["n_rows"] == 3


def test_summary_members_give_variable_use_only():
    members = [RashomonMember(0.1, ("a",), "x"), RashomonMember(0.2, ("a", "b"), "y")]
    rashomon = RashomonSet(threshold=1.0, optimum=0.1, count=2, complete=True, members=members)
    X = np.array([[1, 0], [0, 1]])
    out = multiplicity.figures(rashomon, Rule((0,)), problem_of(X, np.array([1, 0])))
    assert out["variable_use"] == {"a": 1.0, "b": 0.5} and "ambiguity" not in out and "reliance" not in out
    assert "only variable use" in out["notes"][0]


def test_reliance_rows_are_sampled_when_the_work_is_too_big(monkeypatch):
    monkeypatch.setattr(multiplicity, "MAX_RELIANCE_CELLS", 50)
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(100, 2))
    out = multiplicity.figures(set_of([Rule((0,)), Rule((1,))]), Rule((0,)), problem_of(X, X[:, 0]))
    assert out["reliance_rows"] == 25 and any("reliance on 25 of 100 rows" in n for n in out["notes"])


def test_weighted_rows_count_by_their_weight():
    # rows:           0  1  2  3
    X = np.array([[1, 0], [0, 1], [0, 0], [1, 1]])
    y = np.array([1, 1, 0, 0])
    w = np.array([3.0, 1.0, 0.0, 2.0])  # row 2 weighs nothing
    optimal = Rule((0,))  # predicts 1 0 0 1
    members = [optimal, Rule((1,)), Rule((), constant=0)]  # 0 1 0 1 and 0 0 0 0
    problem = problem_of(X, y)
    problem.sample_weight = w
    out = multiplicity.figures(set_of(members), optimal, problem)
    assert out["weighted"] is True
    # Rule(b) differs on rows 0, 1 (weight 4 of 6), the constant on rows 0, 3 (weight 5 of 6)
    assert out["ambiguity"] == pytest.approx(6 / 6) and out["discrepancy"] == pytest.approx(5 / 6)
    assert out["split_rows"] == 3 and out["split_share"] == pytest.approx(6 / 6)
    assert out["majority_share_min"] == pytest.approx(2 / 3)  # row 2 (unanimous, weight 0) does not count
    permutation = np.random.default_rng(multiplicity.SEED).permutation(4)
    permuted = X.copy()
    permuted[:, 0] = X[permutation, 0]

    def loss(pred):
        return max(float(np.sum(w * (pred != y)) / w.sum()), 1.0 / 6)  # floored at the lightest row's share

    by_hand = loss(optimal.predict(permuted)) / loss(optimal.predict(X))
    assert out["reliance"]["a"] == pytest.approx(sorted([1.0, by_hand]))
    unweighted = multiplicity.figures(set_of(members), optimal, problem_of(X, y))
    assert unweighted["weighted"] is False and unweighted["discrepancy"] == pytest.approx(2 / 4)


def test_test_rows_use_their_own_weights():
    X = np.array([[1], [0]])
    problem = problem_of(X, np.array([1, 0]), np.array([[1], [1], [0]]), np.array([1, 0, 0]))
    problem.test_sample_weight = np.array([1.0, 3.0, 1.0])
    members = [Rule((0,)), Rule((), constant=0)]  # on the test rows: 1 1 0 and 0 0 0
    out = multiplicity.figures(set_of(members), members[0], problem)
    assert out["rows"] == "test" and out["weighted"] and out["discrepancy"] == pytest.approx(4 / 5)


INPUTS = {
    "source": "t.csv",
    "features": [
        {"name": "a", "all": [{"column": "age", "op": "<=", "value": 30}]},
        {"name": "b", "all": [{"column": "age", "op": "<=", "value": 50}]},
        {
            "name": "c",
            "all": [{"column": "sex", "op": "==", "value": "M"}, {"column": "priors", "op": ">", "value": 3}],
        },
    ],
}


def test_reliance_per_raw_column_shuffles_every_feature_made_from_it_together():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(60, 3))
    y = (X[:, 0] | X[:, 1]).astype(np.int64)
    y[:6] = 1 - y[:6]
    members = [Rule((0, 1)), Rule((0,)), Rule((2,))]
    problem = problem_of(X, y)
    out = multiplicity.figures(set_of(members), members[0], problem, INPUTS)
    permutation = np.random.default_rng(multiplicity.SEED).permutation(60)
    shuffled = X.copy()
    shuffled[:, [0, 1]] = X[permutation][:, [0, 1]]  # one shuffle of 'age' moves both of its features

    def ratio(rule):
        return max(np.mean(rule.predict(shuffled) != y), 1 / 60) / max(np.mean(rule.predict(X) != y), 1 / 60)

    assert out["reliance_columns"]["age"] == pytest.approx(sorted([ratio(members[0]), ratio(members[1]), 1.0])[::2])
    # 'sex' and 'priors' feed one feature together: shuffling either alone is not a matrix operation
    assert set(out["reliance_columns"]) == {"age"}
    assert any("'priors', 'sex'" in n and "cannot be shuffled alone" in n for n in out["notes"])
    assert set(out["reliance"]) == {"a", "b", "c"}  # the matrix columns' figures stay beside them
    # a combination no member uses is no obstacle: no member's prediction reads it
    without = multiplicity.figures(set_of(members[:2]), members[0], problem, INPUTS)
    assert without["reliance_columns"]["age"] == pytest.approx(sorted([ratio(members[0]), ratio(members[1])]))
    assert not any("cannot be shuffled" in n for n in without["notes"])
    assert "reliance_columns" not in multiplicity.figures(set_of(members), members[0], problem)  # no inputs


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 6), st.integers(1, 12))
def test_agreement_matches_brute_force(seed, n_members, n_rows):
    rng = np.random.default_rng(seed)
    predictions = rng.integers(0, 2, size=(n_members, n_rows))
    reference = rng.integers(0, 2, size=n_rows)
    out = multiplicity.agreement(predictions, reference, 2)
    differ_rows = [i for i in range(n_rows) if any(predictions[m][i] != reference[i] for m in range(n_members))]
    assert out["ambiguity"] == pytest.approx(len(differ_rows) / n_rows)
    worst = max(sum(predictions[m][i] != reference[i] for i in range(n_rows)) for m in range(n_members))
    assert out["discrepancy"] == pytest.approx(worst / n_rows)
    assert out["split_rows"] == sum(len({predictions[m][i] for m in range(n_members)}) > 1 for i in range(n_rows))
    for i in range(n_rows):
        ones = sum(predictions[m][i] == 1 for m in range(n_members)) / n_members
        assert out["vote_shares"][i] == pytest.approx([1 - ones, ones], abs=1e-6)  # stored to 6 places


def test_a_run_with_a_set_records_its_figures(tmp_path, toy_registry):
    from glasswork.running.launch import Launch
    from glasswork.spec.load import validate_spec

    spec = validate_spec(
        {
            "name": "m",
            "solver": "toy",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            "rashomon": {"epsilon": 0.5, "max_models": 3},
        },
        toy_registry,
    )
    outcome = Launch(spec, registry=toy_registry, no_store=True).run()
    figures = outcome.to_dict()["rashomon"]["multiplicity"]
    assert figures["rows"] == "test" and figures["members"] == 3 and figures["count"] > 3
    assert 0 < figures["ambiguity"] <= 1 and set(figures["reliance"]) == set(figures["variable_use"])
    # per raw column too: the binarizer's thresholds on one column are shuffled together
    made_from = {f["name"]: f["all"][0]["column"] for f in outcome.info.inputs["features"]}
    assert set(figures["reliance_columns"]) == {made_from[name] for name in figures["variable_use"]}
    assert figures["notes"][0].startswith("over the 3 kept members of")


def test_the_printed_line_says_what_was_sampled(monkeypatch):
    from glasswork.display.console import multiplicity_text

    monkeypatch.setattr(multiplicity, "MAX_RELIANCE_CELLS", 50)
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(100, 2))
    out = multiplicity.figures(set_of([Rule((0,)), Rule((1,))], count=5), Rule((0,)), problem_of(X, X[:, 0]))
    line = multiplicity_text(out)
    assert line.startswith("on 100 train rows, over the 2 kept members of 5: ambiguity ")
    assert line.endswith("(reliance on 25 of 100 rows (sampled, seed 0) to bound its cost)")


def test_figures_that_fail_leave_the_run_and_its_set_recorded(tmp_path, toy_registry, monkeypatch):
    """A member's model that cannot predict (a plugin's fault) costs the figures, not the run."""
    from glasswork.display.console import multiplicity_text
    from glasswork.running.launch import Launch
    from glasswork.spec.load import validate_spec
    from glasswork.store import RunStore

    def broken(*args, **kwargs):
        raise ValueError("no prediction today")

    monkeypatch.setattr(multiplicity, "figures", broken)
    spec = validate_spec(
        {
            "name": "m",
            "solver": "toy",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            "rashomon": {"epsilon": 0.5},
        },
        toy_registry,
    )
    outcome = Launch(spec, registry=toy_registry, db=tmp_path / "g.duckdb").run()
    assert outcome.multiplicity == {"error": "ValueError: no prediction today"}
    assert "failed to predict" in multiplicity_text(outcome.multiplicity)
    store = RunStore(tmp_path / "g.duckdb")
    assert store.get_run(outcome.info.run_id).state == "finished"
    summary = store.rashomon_summary(outcome.info.run_id)
    assert summary is not None
    assert summary.count == outcome.result.rashomon.count and summary.multiplicity == outcome.multiplicity
