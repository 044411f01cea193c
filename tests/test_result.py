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
