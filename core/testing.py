"""The contract every solver plugin must keep, as a reusable pytest suite.

A plugin author subclasses ``SolverContract`` in their own test suite and fills in two things::

    from glasswork.testing import SolverContract
    from my_plugin import MySolver

    class TestMySolver(SolverContract):
        solver_class = MySolver

        def spec_document(self) -> dict:
            return {
                "name": "contract",
                "solver": "my-solver",
                "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            }

pytest then runs every ``test_*`` method below against the plugin: the class and its spec model
are well formed, the spec rejects unknown keys and yields a JSON Schema, a solve returns a
``Result`` whose model predicts and renders, the certificate is honest, and the solver honours
the stop flag for cancellation and time limits. Override ``problem`` to supply a ``Problem``
directly, and set ``deterministic = False`` if two solves may differ.
"""

from __future__ import annotations

import copy
import json
import time
import typing
from typing import Any, ClassVar

import numpy as np

from glasswork.data import Problem, load_problem
from glasswork.events import Event
from glasswork.registry import Registry
from glasswork.result import Classifier, Model, Result, Status
from glasswork.runner import Runner
from glasswork.solver import Limits, SolveContext, Solver, StopReason
from glasswork.spec import SolverSpec, SpecError, json_schema, validate_spec

#: Seconds a solver may take to return after its stop flag is raised before the contract fails.
STOP_LATENCY = 5.0


class _RegistryOf(Registry):
    """A registry holding exactly one solver class, whatever else is installed."""

    def __init__(self, solver_class: type[Solver]) -> None:
        from glasswork import hookimpl

        class _Plugin:
            @staticmethod
            @hookimpl
            def register_solvers(register: Any) -> None:
                register(solver_class)

        super().__init__(builtins=False, entry_points=False, disabled=(), extra=[("contract", _Plugin)])


class SolverContract:
    """Subclass in a test module; see the module docstring."""

    solver_class: ClassVar[type[Solver]]
    deterministic: ClassVar[bool] = True

    # -- what the plugin author provides -----------------------------------------------------

    def spec_document(self) -> dict[str, Any]:
        """A small, valid spec document for this solver (as it would be read from YAML)."""
        raise AssertionError("SolverContract subclasses must define spec_document()")

    def problem(self, spec: SolverSpec) -> Problem:
        """The problem to solve; by default the spec's own ``data:`` section, loaded."""
        return load_problem(spec.data)

    # -- helpers ------------------------------------------------------------------------------

    def _registry(self) -> Registry:
        return _RegistryOf(self.solver_class)

    def _spec(self, document: dict[str, Any] | None = None) -> SolverSpec:
        return validate_spec(document or self.spec_document(), self._registry())

    def _solve(self, stop: StopReason | None = None) -> tuple[Result, list[Event], Problem]:
        """Solve the spec's problem directly; ``stop`` raises the stop flag before the solve."""
        spec = self._spec()
        problem = self.problem(spec)
        events: list[Event] = []
        ctx = SolveContext(Limits(), events.append)
        if stop is not None:
            ctx.request_stop(stop)
        result = self.solver_class(spec).solve(problem, ctx)
        return result, events, problem

    # -- the class and its spec ---------------------------------------------------------------

    def test_solver_class_is_well_formed(self) -> None:
        cls = self.solver_class
        assert issubclass(cls, Solver)
        assert isinstance(cls.name, str) and cls.name
        assert isinstance(cls.version, str) and cls.version
        assert cls.tasks and set(cls.tasks) <= {"binary", "multiclass", "regression"}
        assert issubclass(cls.spec_model, SolverSpec)
        assert typing.get_args(cls.spec_model.model_fields["solver"].annotation) == (cls.name,)

    def test_registers_through_the_hook(self) -> None:
        registry = self._registry()
        assert registry.solvers == {self.solver_class.name: self.solver_class}
        assert all(info.error is None for info in registry.plugins.values())

    def test_spec_document_validates_and_round_trips(self) -> None:
        spec = self._spec()
        assert spec.solver == self.solver_class.name
        again = self._spec(spec.resolved())
        assert again == spec
        assert again.spec_hash() == spec.spec_hash()

    def test_spec_rejects_unknown_keys(self) -> None:
        for section in ("objective", "constraints", "search"):
            document = copy.deepcopy(self.spec_document())
            body = document.get(section) or {}
            body["no_such_option_anywhere"] = 1
            document[section] = body
            try:
                self._spec(document)
            except SpecError as exc:
                assert any("no_such_option_anywhere" in i.path for i in exc.issues), exc.issues
            else:
                raise AssertionError(f"an unknown key in {section!r} was accepted")

    def test_json_schema_covers_the_solver(self) -> None:
        schema = json_schema(self._registry())
        text = json.dumps(schema)
        assert self.solver_class.name in text
        assert "objective" in text and "limits" in text

    # -- solving ------------------------------------------------------------------------------

    def test_solve_returns_a_predicting_model(self) -> None:
        result, _, problem = self._solve()
        assert isinstance(result, Result)
        model = result.model
        assert isinstance(model, Model)
        assert model.task == problem.task
        pred = np.asarray(model.predict(problem.X))
        assert pred.shape == (problem.n_samples,)
        if problem.task != "regression":
            assert isinstance(model, Classifier)
            assert set(np.unique(pred)) <= set(range(len(problem.classes if problem.classes is not None else [0, 1])))
            proba = np.asarray(model.predict_proba(problem.X))
            assert proba.shape[0] == problem.n_samples
            assert np.all(proba >= -1e-12) and np.allclose(proba.sum(axis=1), 1.0)

    def test_model_renders_as_text_and_json(self) -> None:
        result, _, _ = self._solve()
        text = result.model.to_text()
        assert isinstance(text, str) and text.strip()
        doc = result.model.to_dict()
        assert doc.get("kind") == result.model.kind
        json.dumps(doc, allow_nan=False)
        json.dumps(result.to_dict(), allow_nan=False)

    def test_certificate_is_honest(self) -> None:
        result, _, _ = self._solve()
        cert = result.certificate
        assert cert.objective is not None
        if cert.status is Status.OPTIMAL:
            assert cert.lower_bound is not None and cert.gap is not None
            assert cert.gap <= cert.tolerance + 1e-12
        if cert.lower_bound is not None:
            assert cert.lower_bound <= cert.objective + 1e-9 * max(1.0, abs(cert.objective))

    def test_events_are_events(self) -> None:
        _, events, _ = self._solve()
        for event in events:
            assert isinstance(event, Event)
            json.dumps(event.to_dict(), allow_nan=False)

    def test_deterministic(self) -> None:
        if not self.deterministic:
            return
        first, _, _ = self._solve()
        second, _, _ = self._solve()
        assert first.certificate.objective == second.certificate.objective
        assert first.model.to_dict() == second.model.to_dict()

    # -- stopping -----------------------------------------------------------------------------

    def _stopped(self, reason: StopReason) -> tuple[Result, float]:
        started = time.monotonic()
        result, _, _ = self._solve(stop=reason)
        return result, time.monotonic() - started

    def test_cancel_returns_promptly_with_status_cancelled(self) -> None:
        result, seconds = self._stopped(StopReason.CANCEL)
        assert seconds < STOP_LATENCY
        assert result.certificate.status in (Status.CANCELLED, Status.OPTIMAL), result.certificate

    def test_time_limit_reports_stopped_time(self) -> None:
        result, seconds = self._stopped(StopReason.TIME)
        assert seconds < STOP_LATENCY
        assert result.certificate.status in (Status.STOPPED_TIME, Status.OPTIMAL), result.certificate

    def test_runs_through_the_runner(self) -> None:
        spec = self._spec()
        outcome = Runner(registry=self._registry()).run(spec, problem=self.problem(spec))
        assert outcome.info.solver == self.solver_class.name
        assert outcome.result.metrics, "the runner attaches train metrics"
        json.dumps(outcome.to_dict(), allow_nan=False)
