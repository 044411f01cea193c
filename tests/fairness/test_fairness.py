"""The group fairness figures, against fairlearn's on random instances (weights, empty cells,
constant predictions), and against a per-row loop for calibration."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.fairness import figures as fairness
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlearn_reference import fairlearn_reference as _reference

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")


def _check(y, pred, protected, w) -> None:
    ours = fairness.disparities(y, pred, protected, w)
    expected = _reference(y, pred, protected, w)
    for name in fairness.METRICS:
        if expected[name] is None:
            assert ours[name] is None, name
        else:
            assert ours[name] == pytest.approx(expected[name], abs=1e-12), name


@pytest.mark.parametrize("seed", range(40))
def test_the_six_metrics_match_fairlearn_on_random_instances(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 300))
    y = rng.integers(0, 2, n)
    pred = rng.integers(0, 2, n) if seed % 5 else np.ones(n, dtype=int)  # some constant predictions
    protected = rng.random(n) < rng.uniform(0.1, 0.9)
    protected[0], protected[1] = True, False
    w = rng.integers(0, 4, n).astype(float) if seed % 2 else np.ones(n)
    _check(y, pred, protected, w)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1), st.booleans(), st.sampled_from([0.0, 0.5, 1.0, 3.0])),
        min_size=2,
        max_size=40,
    )
)
def test_the_six_metrics_match_fairlearn_on_small_instances(rows) -> None:
    y, pred, protected, w = (np.asarray(c) for c in zip(*rows))
    protected = protected.astype(bool)
    if not (protected.any() and (~protected).any()):
        return  # fairlearn needs two groups to compare
    _check(y, pred, protected, w.astype(float))


def test_equalized_odds_bounds_fairlearns_worst_case() -> None:
    """FairCORELS' equalized odds is the sum of the two gaps; fairlearn's is the larger of them."""
    rng = np.random.default_rng(7)
    y, pred, sensitive = rng.integers(0, 2, 500), rng.integers(0, 2, 500), rng.random(500) < 0.3
    ours = fairness.disparities(y, pred, sensitive)
    theirs = fairlearn_metrics.equalized_odds_difference(y, pred, sensitive_features=sensitive)
    assert max(ours["predictive_equality"], ours["equal_opportunity"]) == pytest.approx(theirs)
    assert ours["equalized_odds"] == pytest.approx(ours["predictive_equality"] + ours["equal_opportunity"])
    sp = fairlearn_metrics.demographic_parity_difference(y, pred, sensitive_features=sensitive)
    assert ours["statistical_parity"] == pytest.approx(sp)


def test_a_weight_of_two_counts_as_two_rows() -> None:
    rng = np.random.default_rng(3)
    y, pred, g = rng.integers(0, 2, 80), rng.integers(0, 2, 80), rng.random(80) < 0.4
    score = rng.random(80)
    w = rng.integers(0, 4, 80)
    repeated = np.repeat(np.arange(80), w)
    weighted = fairness.disparities(y, pred, g, w.astype(float), score)
    copied = fairness.disparities(y[repeated], pred[repeated], g[repeated], None, score[repeated])
    assert weighted == pytest.approx(copied)


def test_an_empty_cell_is_undefined_not_zero() -> None:
    y = np.array([1, 0, 1, 0])
    pred = np.array([0, 0, 1, 1])
    protected = np.array([True, True, False, False])  # the protected group has no predicted positive
    out = fairness.disparities(y, pred, protected)
    assert out["predictive_parity"] is None
    assert out["conditional_use_accuracy_equality"] is None
    assert out["statistical_parity"] == 1.0
    nobody = fairness.disparities(y, pred, np.zeros(4, dtype=bool))
    assert all(v is None for v in nobody.values())
    weightless = fairness.disparities(y, pred, protected, np.array([0.0, 0.0, 1.0, 1.0]))
    assert weightless["statistical_parity"] is None


def _calibration_by_loop(y, score, protected, w) -> float | None:
    total = 0.0
    weight = 0.0
    for b in range(fairness.CALIBRATION_BINS):
        lo, hi = b / 10, (b + 1) / 10
        in_bin = [i for i in range(y.size) if (lo <= score[i] < hi) or (b == 9 and score[i] >= 1.0)]
        sides = []
        for side in (True, False):
            rows = [i for i in in_bin if protected[i] == side]
            wsum = sum(w[i] for i in rows)
            if wsum <= 0:
                break
            sides.append(sum(w[i] * y[i] for i in rows) / wsum)
        else:
            bin_weight = sum(w[i] for i in in_bin)
            total += bin_weight * abs(sides[0] - sides[1])
            weight += bin_weight
    return None if weight == 0 else total / weight


@pytest.mark.parametrize("seed", range(20))
def test_calibration_matches_a_loop_over_rows(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 120))
    y = rng.integers(0, 2, n)
    score = rng.choice([0.0, 0.05, 0.33, 0.5, 0.71, 0.99, 1.0], n) if seed % 2 else rng.random(n)
    protected = rng.random(n) < 0.4
    w = rng.integers(0, 3, n).astype(float)
    got = fairness.calibration_gap(y, score, protected, w)
    expected = _calibration_by_loop(y, score, protected, w)
    assert (got is None) == (expected is None)
    if expected is not None:
        assert got == pytest.approx(expected)


def test_audit_reports_the_worst_group_and_each_groups_sizes() -> None:
    rng = np.random.default_rng(5)
    y, pred = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    race = rng.choice(["a", "b", "c"], 300)
    groups = [fairness.Group(f"race = {v}", "race", (v,), race == v) for v in ("a", "b")]
    out = fairness.audit(y, pred, groups, ["statistical_parity", "calibration"])
    assert set(out) == {"statistical_parity", "protected_rows", "reference_rows", "groups"}  # no score: no calibration
    each = [fairness.disparities(y, pred, g.mask)["statistical_parity"] for g in groups]
    assert out["statistical_parity"] == pytest.approx(max(each))
    assert [g["protected"]["rows"] for g in out["groups"]] == [int(np.sum(race == "a")), int(np.sum(race == "b"))]
    assert out["protected_rows"] is None
    one = fairness.audit(y, pred, groups[:1], score=rng.random(300))
    assert set(fairness.ALL_METRICS) <= set(one)
    assert one["protected_rows"] + one["reference_rows"] == 300


def _rates(cells_protected: list[float], cells_reference: list[float]) -> tuple[fairness.GroupRates, ...]:
    return (
        fairness.GroupRates.of_cells(4, np.array(cells_protected, dtype=float)),
        fairness.GroupRates.of_cells(4, np.array(cells_reference, dtype=float)),
    )


def test_a_constraint_holds_at_its_limit_and_fails_past_it_or_when_undefined() -> None:
    # cells [tn, fp, fn, tp]: selection rates 2/4 and 1/4, a statistical parity of 0.25
    p, r = _rates([1, 1, 1, 1], [2, 1, 1, 0])
    assert fairness.within("statistical_parity", 0.25, p, r)
    assert not fairness.within("statistical_parity", 0.2499, p, r)
    # the sum 0.1 + 0.2 is 0.30000000000000004: a limit of 0.3 still admits it
    p, r = _rates([9, 1, 0, 0], [8, 2, 0, 0])
    assert fairness.prediction_metrics(p, r)["predictive_equality"] == pytest.approx(0.1)
    assert fairness.within("predictive_equality", 0.1, p, r)
    # no predicted positive in either group: predictive parity is undefined, so it never holds
    p, r = _rates([2, 0, 2, 0], [3, 0, 1, 0])
    assert fairness.prediction_metrics(p, r)["predictive_parity"] is None
    assert not fairness.within("predictive_parity", 2.0, p, r)


def test_a_fairness_constraint_needs_its_group_and_its_metric_audited() -> None:
    from typing import Literal

    from glasswork.spec.models import FairnessConstraint, SolverSpec, StrictModel, fairness_issues
    from pydantic import Field

    class Constraints(StrictModel):
        fairness: FairnessConstraint | None = None

    class Spec(SolverSpec):
        solver: Literal["constrained"]
        constraints: Constraints = Field(default_factory=Constraints)

    base = {"name": "c", "solver": "constrained", "data": {"source": "d.csv", "target": "y", "audit_only": ["g"]}}
    limit = {"fairness": {"metric": "equal_opportunity", "at_most": 0.05}}
    alone = Spec.model_validate({**base, "constraints": limit})
    assert [loc for loc, _ in fairness_issues(alone)] == [["constraints", "fairness"]]
    group = {"column": "g", "value": 1}
    unaudited = Spec.model_validate(
        {**base, "constraints": limit, "fairness": {"protected": group, "metrics": ["statistical_parity"]}}
    )
    assert [loc for loc, _ in fairness_issues(unaudited)] == [["constraints", "fairness", "metric"]]
    audited = Spec.model_validate({**base, "constraints": limit, "fairness": {"protected": group}})
    assert fairness_issues(audited) == []
    with pytest.raises(ValueError, match="calibration|literal"):
        Spec.model_validate({**base, "constraints": {"fairness": {"metric": "calibration", "at_most": 0.1}}})
