"""The certificate refuses to contradict itself."""

import math

import pytest

from glasswork.result import Certificate, CertificateError, Status


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
