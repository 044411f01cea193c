"""The contract suite itself: the toy solver passes it, and a dishonest solver fails it."""

from __future__ import annotations

import os
from pathlib import Path

from typing import Any

import pytest

import toy_plugin
from glasswork import Result, Status
from glasswork.result import Certificate
from glasswork.testing import SolverContract


def _fair_data() -> str:
    """A small table with an audit-only group column, written once per test process."""
    import tempfile

    import numpy as np

    path = Path(tempfile.gettempdir()) / f"glasswork-contract-fair-{os.getpid()}.csv"
    if not path.exists():
        rng = np.random.default_rng(4)
        a, b = rng.integers(0, 2, 120), rng.integers(0, 2, 120)
        group = np.where(rng.random(120) < 0.4, "p", "r")
        y = a ^ (rng.random(120) < 0.2)
        lines = ["a,b,grp,label"] + [f"{i},{j},{g},{k}" for i, j, g, k in zip(a, b, group, y)]
        path.write_text("\n".join(lines) + "\n")
    return str(path)


def _constrained(metric: str, at_most: float) -> dict[str, Any]:
    return {
        "name": "contract",
        "solver": "toy",
        "data": {"source": _fair_data(), "target": "label", "audit_only": ["grp"]},
        "fairness": {"protected": {"column": "grp", "value": "p"}, "metrics": [metric]},
        "constraints": {"fairness": {"metric": metric, "at_most": at_most}},
    }


class TestToySolverKeepsTheContract(SolverContract):
    solver_class = toy_plugin.ToySolver

    def spec_document(self) -> dict[str, Any]:
        return {
            "name": "contract",
            "solver": "toy",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
        }

    def constrained_spec_document(self) -> dict[str, Any]:
        return _constrained("statistical_parity", 0.05)

    def infeasible_spec_document(self) -> dict[str, Any]:
        return _constrained("predictive_parity", 0.0)


class _ClaimsAnUnfairModel(toy_plugin.ToySolver):
    """Ignores its fairness constraint and claims the unconstrained best is optimal under it."""

    def solve(self, problem, ctx):
        model, objective = toy_plugin.best_stump(problem, 0.0)
        return Result(model, Certificate(status=Status.OPTIMAL, objective=objective, lower_bound=objective))


class _UnfairContract(TestToySolverKeepsTheContract):
    solver_class = _ClaimsAnUnfairModel

    def constrained_spec_document(self) -> dict[str, Any]:
        return _constrained("statistical_parity", 0.0)


def test_the_contract_catches_a_model_that_breaks_its_constraint():
    from glasswork.runner import SolverFailure

    with pytest.raises(SolverFailure, match="breaks constraints.fairness"):
        _UnfairContract().test_constrained_run_meets_its_constraint()
    with pytest.raises(AssertionError, match="infeasible"):
        _UnfairContract().test_infeasible_constraints_end_infeasible()


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


class _BadRashomon(toy_plugin.ToySolver):
    """The toy with one fault in its Rashomon set (``fault``), which the contract must name."""

    fault = ""

    def solve(self, problem, ctx):
        result = super().solve(problem, ctx)
        rs = result.rashomon
        assert rs is not None
        if self.fault == "fingerprint":
            rs.members[0].fingerprint = "0" * 16
        elif self.fault == "max_models":
            extra = toy_plugin.RashomonMember(rs.members[-1].objective, (), "f", rs.members[-1].model)
            rs.members.append(extra)
            rs.count = max(rs.count, len(rs.members))
        elif self.fault == "summary_model":  # the best member is the optimal model itself
            rs.members[0].model = result.model
        elif self.fault == "stopped_empty":  # FasterRisk's exact policy once: count 0 when stopped
            rs.members, rs.count = [], 0
        elif self.fault == "stopped_complete":
            rs.optimum_proven, rs.complete, rs.unenumerated_bound = True, True, None
        return result


@pytest.mark.parametrize(
    ("fault", "test", "message"),
    [
        ("fingerprint", "test_rashomon_set_keeps_its_promises", "fingerprint is not that of its predictions"),
        ("max_models", "test_rashomon_set_keeps_its_promises", "max_models is 3"),
        ("summary_model", "test_rashomon_summary_keeps_no_model", "keep: summary kept"),
        ("stopped_empty", "test_rashomon_set_of_a_stopped_run_is_not_complete", "counts nothing"),
        ("stopped_complete", "test_rashomon_set_of_a_stopped_run_is_not_complete", "says its set is complete"),
    ],
)
def test_the_contract_catches_a_rashomon_set_that_breaks_its_promises(fault: str, test: str, message: str):
    class _Faulty(_BadRashomon):
        pass

    _Faulty.fault = fault

    class _Check(SolverContract):
        solver_class = _Faulty

        def spec_document(self) -> dict[str, Any]:
            return TestToySolverKeepsTheContract().spec_document()

        def rashomon_spec_document(self) -> dict[str, Any]:
            return {**self.spec_document(), "rashomon": {"epsilon": 0.5, "max_models": 3}}

    with pytest.raises(AssertionError, match=message):
        getattr(_Check(), test)()


# -- the hooks ---------------------------------------------------------------------------------------


class _ToyViews:
    """The toy plugin with display hooks, well or badly behaved as the test asks."""

    register_solvers = staticmethod(toy_plugin.register_solvers)

    def __init__(self, counter: str = "queue", render_fails: bool = False, names_as_markup: bool = False) -> None:
        from glasswork import hookimpl
        from glasswork.console import plain_text
        from glasswork.display import SeriesPanel, model_table

        def render_model(model: dict[str, Any]) -> Any:
            if render_fails:
                raise KeyError("rules")
            if model.get("kind") != "stump":
                return None
            table = model_table()
            table.add_column("if")
            # the feature's name is data: as rich markup, '[red]' in it styles and '[/]' raises
            table.add_row(model["name"] if names_as_markup else plain_text(model["name"]))
            return table

        def monitor_panels(solver: str) -> Any:
            return [SeriesPanel("steps", counter=counter)] if solver == "toy" else None

        self.render_model = hookimpl(render_model)
        self.monitor_panels = hookimpl(monitor_panels)


def _contract_with(plugin_object: object) -> SolverContract:
    class _WithHooks(TestToySolverKeepsTheContract):
        plugin = plugin_object

    return _WithHooks()


def test_the_contract_passes_a_plugin_with_well_behaved_hooks():
    contract = _contract_with(_ToyViews(counter="nodes"))
    contract.test_registers_through_the_hook()
    contract.test_model_renders_through_the_hooks()
    contract.test_monitor_panels_are_fed_by_the_solvers_counters()


def test_the_contract_catches_a_model_view_that_reads_names_as_markup():
    """Feature names are data: a ``render_model`` that hands them to rich as markup (the way
    docs/plugins.md's example did) styles '[red]' in a name and fails on '[/]'."""
    _contract_with(_ToyViews()).test_model_renders_hostile_names_as_text()
    with pytest.raises(AssertionError, match="hostile feature names"):
        _contract_with(_ToyViews(names_as_markup=True)).test_model_renders_hostile_names_as_text()


def test_the_contract_catches_a_panel_on_a_counter_never_reported():
    with pytest.raises(AssertionError, match="names queue_sizee"):
        _contract_with(_ToyViews(counter="queue_sizee")).test_monitor_panels_are_fed_by_the_solvers_counters()


def test_the_contract_catches_a_failing_model_view():
    with pytest.raises(AssertionError, match="models failed"):
        _contract_with(_ToyViews(render_fails=True)).test_model_renders_through_the_hooks()


def test_the_contract_catches_a_misspelled_hook():
    from glasswork import hookimpl

    class _Typo:
        register_solvers = staticmethod(toy_plugin.register_solvers)

        @staticmethod
        @hookimpl
        def monitor_panel(solver: str) -> None:
            return None

    with pytest.raises(AssertionError, match="matches no glasswork hook"):
        _contract_with(_Typo).test_registers_through_the_hook()


# -- the pytest plugin -------------------------------------------------------------------------------


def test_a_plugin_authors_suite_gets_the_fixtures_with_no_import(pytester, monkeypatch):
    """The pytest11 entry point: a fresh test file uses glasswork's fixtures as they are."""
    from pathlib import Path

    monkeypatch.setenv("PYTHONPATH", str(Path(toy_plugin.__file__).parent))
    pytester.makepyfile(
        test_author="""
        import toy_plugin

        def test_run_and_store(glasswork_registry, glasswork_run, glasswork_store, tmp_path):
            registry = glasswork_registry(toy=toy_plugin)
            assert registry.plugins["toy"].ok
            (tmp_path / "d.csv").write_text("a,label\\n" + "".join(f"{i % 2},{i % 2}\\n" for i in range(20)))
            outcome, records = glasswork_run(
                {"name": "t", "solver": "toy", "data": {"source": str(tmp_path / "d.csv"), "target": "label"}},
                registry=registry, db=glasswork_store.path)
            assert outcome.status == "optimal"
            assert [r["kind"] for r in records][0] == "start" and records[-1]["kind"] == "finish"
            assert glasswork_store.list_runs()[0].run_id == outcome.info.run_id
    """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_pytest_plugin_is_cheap_to_import():
    import subprocess
    import sys

    heavy = ("duckdb", "textual", "sklearn", "scipy", "glasswork.testing.contract", "glasswork.runner")
    code = f"import sys, glasswork.testing.plugin; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # what loading it adds to every pytest run: nothing heavy
