"""A plugin that breaks the plugin contract is named as the culprit (issue 25, item 5): a model
without ``kind`` and ``task`` is a clear error about that plugin with exit 1, never "internal
error ... please report it"; and the contract suite skips, saying why, the hook tests a plugin
gives it nothing to check for, instead of passing them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kindless_plugin
import pytest
import toy_plugin
from glasswork import hookimpl
from glasswork.hooks.registry import Registry
from glasswork.running.launch import Launch
from glasswork.running.runner import SolverFailure
from glasswork.spec.load import validate_spec
from glasswork.testing import SolverContract

TESTS = Path(__file__).resolve().parent
SPEC = "name: k\nsolver: kindless\ndata:\n  source: sklearn:breast_cancer\n  binarize: {thresholds: 2}\n"
DOCUMENT = {
    "name": "k",
    "solver": "kindless",
    "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
}


def test_glasswork_run_names_the_plugin_whose_model_lacks_kind_and_task(tmp_path: Path):
    (tmp_path / "s.yaml").write_text(SPEC)
    env = {**os.environ, "GLASSWORK_PLUGIN_MODULES": "kindless_plugin", "PYTHONPATH": str(TESTS)}
    for store in (["--no-store"], ["--db", str(tmp_path / "runs.duckdb")]):
        proc = subprocess.run(
            [sys.executable, "-m", "glasswork", "run", "s.yaml", "-q", *store],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 1, proc.stderr
        assert "internal error" not in proc.stderr and "please report it" not in proc.stderr
        assert "plugin 'kindless_plugin'" in proc.stderr
        assert "Majority model without 'kind'" in proc.stderr and "'task'" in proc.stderr
        assert "docs/plugins.md" in proc.stderr


def test_the_run_path_raises_a_solver_failure_naming_the_plugin():
    registry = Registry(builtins=False, entry_points=False, extra=[("kindless", kindless_plugin)])
    with pytest.raises(
        SolverFailure, match=r"solver 'kindless' from plugin 'kindless' \(explicit\) returned a Majority"
    ):
        Launch(validate_spec(DOCUMENT, registry), registry=registry, no_store=True).run()


class _KindlessContract(SolverContract):
    solver_class = kindless_plugin.KindlessSolver

    def spec_document(self) -> dict[str, Any]:
        return DOCUMENT


def test_the_contract_catches_a_model_without_kind_and_task():
    with pytest.raises(AssertionError, match="Majority model without 'kind'"):
        _KindlessContract().test_solve_returns_a_predicting_model()


class _ToyContract(SolverContract):
    solver_class = toy_plugin.ToySolver

    def spec_document(self) -> dict[str, Any]:
        return {**DOCUMENT, "solver": "toy"}


class _ToyPluginContract(_ToyContract):
    plugin = toy_plugin  # registers the solver and nothing else


@pytest.mark.parametrize(
    "test, hook",
    [
        ("test_exports_reproduce_the_model", "export_model"),
        ("test_monitor_panels_are_fed_by_the_solvers_counters", "monitor_panels"),
        ("test_sweep_defaults_are_well_formed", "sweep_defaults"),
    ],
)
def test_the_contract_skips_what_a_plugin_gives_nothing_to_check_for(test: str, hook: str):
    with pytest.raises(pytest.skip.Exception, match=f"plugin gives no {hook} hook"):
        getattr(_ToyPluginContract(), test)()
    with pytest.raises(pytest.skip.Exception, match="set 'plugin' to the module"):
        getattr(_ToyContract(), test)()


class _MethodSize(kindless_plugin.Majority):
    """A model that gives ``size`` as a method (the ``Model`` contract has a property): its
    result would not serialize, so ``run --json`` said "internal error"."""

    kind, task = "majority", "binary"

    def size(self) -> int:  # type: ignore[override]
        return 1


class _MethodSizePlugin:
    class Solver(kindless_plugin.KindlessSolver):
        def solve(self, problem: Any, ctx: Any) -> Any:
            result = super().solve(problem, ctx)
            result.model = _MethodSize(result.model.label, result.model.classes)
            return result

    @hookimpl
    def register_solvers(self, register: Any) -> None:
        register(self.Solver)


def test_a_model_whose_size_is_not_a_number_is_the_plugins_fault():
    registry = Registry(builtins=False, entry_points=False, extra=[("sized", _MethodSizePlugin())])
    with pytest.raises(SolverFailure, match=r"plugin 'sized' \(explicit\) returned a _MethodSize model whose 'size'"):
        Launch(validate_spec(DOCUMENT, registry), registry=registry, no_store=True).run()
    with pytest.raises(AssertionError, match="_MethodSize model whose 'size'"):
        _SizeContract().test_solve_returns_a_predicting_model()


class _SizeContract(SolverContract):
    solver_class = _MethodSizePlugin.Solver

    def spec_document(self) -> dict[str, Any]:
        return DOCUMENT
