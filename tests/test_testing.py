"""The contract suite itself: the toy solver passes it, and a dishonest solver fails it."""

from __future__ import annotations

from typing import Any

import pytest

import toy_plugin
from glasswork import Result, Status
from glasswork.result import Certificate
from glasswork.testing import SolverContract


class TestToySolverKeepsTheContract(SolverContract):
    solver_class = toy_plugin.ToySolver

    def spec_document(self) -> dict[str, Any]:
        return {"name": "contract", "solver": "toy",
                "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}}}


class _IgnoresCancel(toy_plugin.ToySolver):
    """Claims a heuristic result even when it was told to stop: the contract must catch it."""

    def solve(self, problem, ctx):
        model, objective = toy_plugin.best_stump(problem, 0.0)
        return Result(model, Certificate(status=Status.HEURISTIC, objective=objective))


class _Contract(SolverContract):
    solver_class = _IgnoresCancel

    def spec_document(self) -> dict[str, Any]:
        return TestToySolverKeepsTheContract().spec_document()


def test_the_contract_catches_a_solver_that_ignores_cancel():
    with pytest.raises(AssertionError):
        _Contract().test_cancel_returns_promptly_with_status_cancelled()
    with pytest.raises(AssertionError):
        _Contract().test_time_limit_reports_stopped_time()
