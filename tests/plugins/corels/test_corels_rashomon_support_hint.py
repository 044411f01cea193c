"""CORELS's warning that a Rashomon set counted over antecedents mined at the default support
(lambda) may miss lists using rarer ones: it names the support to mine down to, and when the
threshold is so wide that any support may do (down to 0), it says so, and what that costs."""

from __future__ import annotations

from typing import Any

import numpy as np
from glasswork import Problem
from glasswork.contract.solver import Limits, SolveContext
from live_runs import corels_rashomon_spec

NAMES = ["a,b", 'x"y', "<b>", "Ünïcødé", "[bold]m[/bold]"]


def warnings_of(rashomon: dict[str, Any]) -> tuple[list[str], Any]:
    from glasswork.plugins.corels.solver import CorelsSolver

    rng = np.random.default_rng(3)
    X = (rng.random((300, len(NAMES))) < 0.4).astype(np.uint8)
    y = ((X[:, 0] | X[:, 2]) ^ (rng.random(300) < 0.1)).astype(np.int64)
    spec = corels_rashomon_spec(
        objective={"regularization": 0.02}, constraints={"max_card": 1}, rashomon=rashomon
    )  # mined at the default support
    problem = Problem(name="t", X=X, y=y, feature_names=NAMES, task="binary", classes=np.array([0, 1], dtype=object))
    logged: list[str] = []

    def on_event(event: Any) -> None:
        if event.kind == "log" and event.level == "warning" and "min_support" in (event.message or ""):
            logged.append(event.message)

    result = CorelsSolver(spec).solve(problem, SolveContext(Limits(time=60), on_event))
    assert result.certificate.status.value == "optimal"
    return logged, result


def test_a_narrow_threshold_names_the_support_to_mine_down_to() -> None:
    logged, result = warnings_of({"epsilon": 0.05})
    gap = result.rashomon.threshold - result.certificate.objective
    floor = 0.02 - gap
    assert 0 < floor < 0.02
    (message,) = logged
    assert f"support down to {floor:.4g}" in message
    assert f"set constraints.min_support to {floor:.4g} to count them too" in message
    assert "slower" in message and "to that" not in message


def test_a_threshold_lambda_above_the_optimum_says_any_support_and_0() -> None:
    logged, result = warnings_of({"threshold": 0.4})  # the optimum is about 0.15: 0.25 above, lambda 0.02
    assert result.rashomon.threshold - result.certificate.objective >= 0.02
    (message,) = logged
    assert "support down to 0 " not in message and "to that" not in message
    assert "any support" in message and "set constraints.min_support to 0 to mine every antecedent" in message
    assert "more antecedents: a slower search" in message
    assert "\n" not in message


def test_a_support_below_one_row_is_not_suggested() -> None:
    """Issue 36: the hint suggested a min_support of 2.4e-05 on a table where one row is 1/2,000."""
    _, result = warnings_of({"epsilon": 0.05})
    threshold = result.certificate.objective + 0.02 - 0.5 / 300  # mining down to half a row's share
    logged, result = warnings_of({"threshold": threshold})
    (message,) = logged
    assert "less than one of the 300 rows" in message
    assert "set constraints.min_support to 0 to mine every antecedent" in message
