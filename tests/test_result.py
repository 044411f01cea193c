"""The certificate refuses to contradict itself."""

import math

import pytest

import numpy as np

from glasswork.rashomon import RashomonError, RashomonMember, RashomonSet
from glasswork.result import (
    Certificate,
    CertificateError,
    Status,
    prediction_fingerprint,
)


def test_gap_is_relative_and_absolute():
    cert = Certificate(status=Status.STOPPED_TIME, objective=0.5, lower_bound=0.4)
    assert cert.abs_gap == pytest.approx(0.1)
    assert cert.gap == pytest.approx(0.2)


def test_gap_unknown_without_bound():
    cert = Certificate(status=Status.HEURISTIC, objective=0.5)
    assert cert.gap is None and cert.abs_gap is None


def test_optimal_needs_a_matching_lower_bound():
    with pytest.raises(CertificateError):
        Certificate(status=Status.OPTIMAL, objective=0.5)
    with pytest.raises(CertificateError):
        Certificate(status=Status.OPTIMAL, objective=0.5, lower_bound=0.4)
    ok = Certificate(status=Status.OPTIMAL, objective=0.5, lower_bound=0.5)
    assert ok.proven and ok.gap == 0.0


def test_optimal_within_declared_tolerance():
    cert = Certificate(status=Status.OPTIMAL, objective=1.0, lower_bound=0.99995, tolerance=1e-4)
    assert cert.gap == pytest.approx(5e-5)


def test_lower_bound_above_objective_is_rejected():
    with pytest.raises(CertificateError):
        Certificate(status=Status.STOPPED_NODES, objective=0.3, lower_bound=0.31)


def test_nan_is_rejected():
    with pytest.raises(CertificateError):
        Certificate(status=Status.HEURISTIC, objective=math.nan)


def test_status_prints_as_its_value():
    assert f"{Status.STOPPED_TIME}" == "stopped_time"


def test_relative_gap_is_the_one_formula():
    from glasswork import relative_gap

    assert relative_gap(0.25, 0.2) == pytest.approx(0.2)
    assert relative_gap(-2.0, -3.0) == pytest.approx(0.5)  # relative to |objective|
    assert relative_gap(0.0, -1e-12) == pytest.approx(0.01)  # the 1e-10 floor keeps it finite
    assert relative_gap(1.0, 1.0 + 1e-15) == 0.0  # a bound a hair above the objective is no gap
    assert relative_gap(None, 0.1) is None and relative_gap(0.1, None) is None
    assert relative_gap(math.inf, 0.1) is None and relative_gap(0.3, -math.inf) is None
    cert = Certificate(status=Status.STOPPED_TIME, objective=0.25, lower_bound=0.2)
    assert cert.gap == relative_gap(0.25, 0.2)


def _member(objective: float, fingerprint: str = "f") -> RashomonMember:
    return RashomonMember(objective=objective, features=("age<=25",), fingerprint=fingerprint)


def test_a_rashomon_set_keeps_its_promises():
    members = [_member(0.30), _member(0.31)]
    ok = RashomonSet(threshold=0.315, optimum=0.30, epsilon=0.05, count=7, complete=True, members=members)
    doc = ok.to_dict(max_models=1)
    assert (doc["count"], doc["kept"], len(doc["models"]), doc["complete"]) == (7, 2, 1, True)
    bad = [
        dict(count=1, complete=True, members=members),  # count below what is kept
        dict(count=2, complete=True, members=members[::-1]),  # not best first
        dict(count=2, complete=True, members=[_member(0.30), _member(0.40)]),  # above the threshold
        dict(count=2, complete=False, members=members),  # incomplete without a bound
        dict(count=2, complete=True, members=members, unenumerated_bound=0.312),  # complete with one
        dict(count=2, complete=True, members=members, exhaustive=False),  # a complete sample
    ]
    for case in bad:
        with pytest.raises(RashomonError):
            RashomonSet(threshold=0.315, optimum=0.30, **case)
    stopped = RashomonSet(
        threshold=0.315, optimum=0.3, count=2, complete=False, members=members, unenumerated_bound=0.31
    )
    assert stopped.to_dict()["unenumerated_bound"] == 0.31


def test_a_rashomon_set_cannot_contradict_its_optimum():
    members = [_member(0.30), _member(0.31)]
    bad = [
        dict(count=2, complete=True, members=[_member(0.29), _member(0.31)]),  # a member beats the optimum
        dict(count=0, complete=False, members=[], unenumerated_bound=0.305),  # the bound says the optimum was seen
        dict(count=0, complete=True, members=[]),  # a complete set without the optimum's model
        dict(count=2, complete=True, members=members, optimum_proven=False),  # complete, yet the optimum unproven
    ]
    for case in bad:
        with pytest.raises(RashomonError):
            RashomonSet(threshold=0.315, optimum=0.30, **case)
    # an absolute threshold below the optimum: nothing counts, and that is no contradiction; nor
    # is an enumeration stopped before its first model, whose bound stays below the optimum
    assert RashomonSet(threshold=0.2, optimum=0.30, count=0, complete=True).count == 0
    assert RashomonSet(threshold=0.315, optimum=0.30, count=0, complete=False, unenumerated_bound=0.3).count == 0


def test_a_stopped_search_gives_its_incumbent_alone():
    rs = RashomonSet.unproven(_member(0.30), threshold=0.315, lower_bound=0.25, epsilon=0.05)
    assert (rs.count, rs.kept, rs.complete, rs.optimum_proven) == (1, 1, False, False)
    assert (rs.optimum, rs.threshold, rs.epsilon, rs.unenumerated_bound) == (0.30, 0.315, 0.05, 0.25)
    above = RashomonSet.unproven(_member(0.30), threshold=0.2, lower_bound=0.25)  # an absolute threshold
    assert (above.count, above.members, above.unenumerated_bound) == (0, [], 0.25)


def test_prediction_fingerprints_compare_predictions_not_their_dtype():
    a = prediction_fingerprint(np.array([0, 1, 1, 0], dtype=np.int8))
    assert a == prediction_fingerprint(np.array([0, 1, 1, 0], dtype=np.int64))
    assert a != prediction_fingerprint(np.array([0, 1, 0, 0]))
    assert prediction_fingerprint(np.array(["yes", "no"])) != prediction_fingerprint(np.array(["no", "yes"]))


def _model():
    from toy_plugin import Stump

    return Stump(None, "", 0, 0, np.array([0, 1]), np.array([0.5, 0.5]), np.array([0.5, 0.5]))


def test_infeasible_is_a_proof_with_no_model_and_no_objective():
    from glasswork.result import Result, no_model_reason

    cert = Certificate(status=Status.INFEASIBLE, objective=None)
    assert cert.proven and cert.gap is None
    result = Result(None, cert)
    doc = result.to_dict()
    assert doc["status"] == "infeasible" and doc["model"] is None and doc["model_text"] is None
    with pytest.raises(CertificateError, match="objective"):
        Certificate(status=Status.INFEASIBLE, objective=0.3)
    with pytest.raises(CertificateError, match="returned a model"):
        Result(_model(), cert)
    reason = no_model_reason("infeasible", {"fairness": {"metric": "statistical_parity", "at_most": 0.05}})
    assert reason.startswith("no model meets constraints.fairness (statistical_parity <= 0.05): proven infeasible")


@pytest.mark.parametrize("status", [Status.STOPPED_TIME, Status.STOPPED_NODES, Status.STOPPED_MEMORY, Status.CANCELLED])
def test_a_stopped_search_may_have_no_model_yet(status):
    from glasswork.result import Result, no_model_reason

    result = Result(None, Certificate(status=status, objective=None, lower_bound=0.2))
    assert result.to_dict()["lower_bound"] == 0.2 and result.to_dict()["model"] is None
    with pytest.raises(CertificateError, match="objective 0.3 of none"):
        Result(None, Certificate(status=status, objective=0.3, lower_bound=0.2))
    assert "before finding a model that meets the spec's constraints" in no_model_reason(status, None)


@pytest.mark.parametrize("status", [Status.OPTIMAL, Status.HEURISTIC])
def test_a_finished_search_always_has_a_model(status):
    from glasswork.result import Result

    with pytest.raises(CertificateError, match="has no model"):
        Result(None, Certificate(status=status, objective=0.5, lower_bound=0.5))
