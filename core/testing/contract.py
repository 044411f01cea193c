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

A solver with ``supports_rashomon`` has its ``RashomonSet`` checked too, on the spec of
``rashomon_spec_document`` (``spec_document`` with a small ``rashomon:`` section; override it to
choose the options that enumerate): members best first and within the threshold, none better
than the optimum, the count at least the members kept and the best ``max_models`` kept, a
complete set with nothing unenumerated to bound, ``keep: summary`` keeping no model, each
fingerprint that of its member's predictions, and a run stopped before its proof giving an
incomplete set with an unproven optimum that still counts its incumbent, sent as ``rashomon``
events too, so the store and the monitor hold it before the run ends (docs/plugins.md).

Set ``plugin`` to the module (or object) your entry point names, and the contract also checks
what the plugin shows through its hooks: it loads without error (a misspelled hook is one), its
``render_model`` draws the solver's models and leaves other kinds alone, its ``monitor_panels``
are fresh ``Panel`` instances fed by counters the solver really reports, and its
``sweep_defaults`` are well formed, and (with ``export_model``) its Python and SQL exports and its
json document read back predict exactly what its model predicts on the raw training rows.
"""

from __future__ import annotations

import copy
import io
import json
import time
import typing
from typing import Any, ClassVar

import numpy as np

from glasswork.data import Problem, load_problem
from glasswork.events import Event
from glasswork.launch import Launch
from glasswork.rashomon import RashomonSet
from glasswork.registry import Registry
from glasswork.result import (
    Classifier,
    Model,
    Result,
    Status,
    model_contract_fault,
    prediction_fingerprint,
)
from glasswork.solver import Limits, SolveContext, Solver, StopReason
from glasswork.spec import SolverSpec, SpecError, json_schema, validate_spec

#: Seconds a solver may take to return after its stop flag is raised before the contract fails.
STOP_LATENCY = 5.0


class _RegistryOf(Registry):
    """A registry holding exactly the plugin under test (or only its solver class), whatever
    else is installed."""

    def __init__(self, solver_class: type[Solver], plugin: object | None = None) -> None:
        from glasswork.hookspecs import hookimpl

        class _Plugin:
            @staticmethod
            @hookimpl
            def register_solvers(register: Any) -> None:
                register(solver_class)

        extra = [("contract", plugin if plugin is not None else _Plugin)]
        super().__init__(builtins=False, entry_points=False, disabled=(), extra=extra)


class SolverContract:
    """Subclass in a test module; see the module docstring."""

    solver_class: ClassVar[type[Solver]]
    #: the module or object the plugin's entry point names; set it to check the display hooks
    plugin: ClassVar[object | None] = None
    deterministic: ClassVar[bool] = True

    # -- what the plugin author provides -----------------------------------------------------

    def spec_document(self) -> dict[str, Any]:
        """A small, valid spec document for this solver (as it would be read from YAML)."""
        raise AssertionError("SolverContract subclasses must define spec_document()")

    def panels_spec_document(self) -> dict[str, Any]:
        """A spec whose solve reports what the monitor panels draw (by default ``spec_document``;
        a solver whose panels show, say, a frontier returns a spec that computes one)."""
        return self.spec_document()

    def problem(self, spec: SolverSpec) -> Problem:
        """The problem to solve; by default the spec's own ``data:`` section, loaded."""
        return load_problem(spec.data)

    def constrained_spec_document(self) -> dict[str, Any] | None:
        """A small spec with a constraint some models meet (``constraints.fairness`` for a solver
        that accepts it), or ``None`` (the default: the constraint tests are skipped). The contract
        runs it through the run path, which refuses a model that breaks its constraint."""
        return None

    def infeasible_spec_document(self) -> dict[str, Any] | None:
        """A small spec whose constraints no model meets, or ``None`` (skipped): its solve must end
        ``infeasible``, with no model and no objective (docs/plugins.md, 'No model')."""
        return None

    def rashomon_spec_document(self) -> dict[str, Any]:
        """A spec asking for a Rashomon set (solvers with ``supports_rashomon``): by default
        ``spec_document`` with ``rashomon: {epsilon: 0.05, max_models: 3}``. The contract solves it
        three times (whole, with ``keep: summary``, and stopped), so keep it quick."""
        return {**self.spec_document(), "rashomon": {"epsilon": 0.05, "max_models": 3}}

    # -- helpers ------------------------------------------------------------------------------

    def _registry(self) -> Registry:
        return _RegistryOf(self.solver_class, self.plugin)

    def _implements(self, registry: Registry, hook: str) -> bool:
        return self.plugin is not None and hook in registry.plugins["contract"].hooks

    def _needs_hook(self, registry: Registry, hook: str) -> None:
        """Skip a test of ``hook``, saying why, when the plugin does not provide it: a test that
        checked nothing must not pass."""
        if self._implements(registry, hook):
            return
        import pytest

        if self.plugin is None:
            pytest.skip(f"no plugin set, so no {hook} hook to check: set 'plugin' to the module your entry point names")
        pytest.skip(f"plugin gives no {hook} hook")

    def _spec(self, document: dict[str, Any] | None = None) -> SolverSpec:
        return validate_spec(document or self.spec_document(), self._registry())

    def _solve(
        self, stop: StopReason | None = None, document: dict[str, Any] | None = None
    ) -> tuple[Result, list[Event], Problem]:
        """Solve the spec's problem directly; ``stop`` raises the stop flag before the solve."""
        spec = self._spec(document)
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
        errors = {name: info.error for name, info in registry.plugins.items() if info.error}
        assert not errors, f"the plugin does not load cleanly: {errors}"
        assert registry.solvers == {self.solver_class.name: self.solver_class}

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
        assert model is not None, f"an unconstrained solve ended with no model (status {result.certificate.status})"
        fault = model_contract_fault(model)
        assert fault is None, f"the solver {fault} (see docs/plugins.md, 'Models')"
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
        assert result.model is not None, "an unconstrained solve ended with no model"
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
        assert first.model is not None and second.model is not None
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
        check_no_model(result)

    def test_time_limit_reports_stopped_time(self) -> None:
        result, seconds = self._stopped(StopReason.TIME)
        assert seconds < STOP_LATENCY
        assert result.certificate.status in (Status.STOPPED_TIME, Status.OPTIMAL), result.certificate
        check_no_model(result)

    def test_runs_through_the_run_path(self) -> None:
        spec = self._spec()
        outcome = Launch(spec, no_store=True, registry=self._registry(), problem=self.problem(spec)).run()
        assert outcome.info.solver == self.solver_class.name
        assert outcome.result.metrics, "the runner attaches train metrics"
        json.dumps(outcome.to_dict(), allow_nan=False)

    # -- constraints (solvers that take constraints.fairness, or any constraint a model may miss) --

    def _constrained(self, document: dict[str, Any] | None, what: str) -> dict[str, Any]:
        if document is None:
            import pytest

            pytest.skip(f"no {what}_spec_document: override it to check the solver's constraint")
        return document

    def test_constrained_run_meets_its_constraint(self) -> None:
        """Through the run path, which recomputes a constrained model's figure on the training
        rows and refuses one that breaks it: the run ends, with a model that meets the constraint
        or a status that says why there is none."""
        document = self._constrained(self.constrained_spec_document(), "constrained")
        spec = self._spec(document)
        outcome = Launch(spec, no_store=True, registry=self._registry(), problem=self.problem(spec)).run()
        check_no_model(outcome.result)
        if outcome.result.model is None:
            assert outcome.no_model, "a run without a model says why"
        json.dumps(outcome.to_dict(), allow_nan=False)

    def test_constrained_stop_may_end_without_a_model(self) -> None:
        """A constrained solve stopped at once returns promptly: its best model that meets the
        constraints, or none yet (status stopped_time, no objective, the bound so far)."""
        document = self._constrained(self.constrained_spec_document(), "constrained")
        started = time.monotonic()
        result, _, _ = self._solve(stop=StopReason.TIME, document=document)
        assert time.monotonic() - started < STOP_LATENCY
        status = result.certificate.status
        assert status in (Status.STOPPED_TIME, Status.OPTIMAL, Status.INFEASIBLE), result.certificate
        check_no_model(result)

    def test_infeasible_constraints_end_infeasible(self) -> None:
        document = self._constrained(self.infeasible_spec_document(), "infeasible")
        result, _, _ = self._solve(document=document)
        assert result.certificate.status is Status.INFEASIBLE, (
            f"a spec no model meets ended {result.certificate.status}, not infeasible ({result.certificate})"
        )
        assert result.model is None and result.certificate.objective is None
        spec = self._spec(document)
        outcome = Launch(spec, no_store=True, registry=self._registry(), problem=self.problem(spec)).run()
        assert outcome.status is Status.INFEASIBLE and outcome.no_model and "infeasible" in outcome.no_model
        document_out = outcome.to_dict()
        assert document_out["model"] is None and document_out["status"] == "infeasible"
        json.dumps(document_out, allow_nan=False)

    # -- the Rashomon set (solvers with supports_rashomon) -----------------------------------

    def _rashomon_solve(self, stop: StopReason | None = None, **options: Any) -> tuple[Result, Problem, list[Event]]:
        """Solve ``rashomon_spec_document`` with ``options`` merged into its section; the result,
        the problem and the events the solve sent."""
        if not self.solver_class.supports_rashomon:
            import pytest

            pytest.skip(f"{self.solver_class.name} does not support Rashomon sets")
        document = copy.deepcopy(self.rashomon_spec_document())
        section = {**(document.get("rashomon") or {}), **options}
        document["rashomon"] = section
        result, events, problem = self._solve(stop=stop, document=document)
        max_models = int(self._spec(document).rashomon.max_models)  # type: ignore[union-attr]
        assert result.rashomon is not None, "the spec asked for a Rashomon set and the result has none"
        assert isinstance(result.rashomon, RashomonSet), type(result.rashomon)
        check_rashomon_set(result, problem, max_models)
        return result, problem, events

    def test_rashomon_set_keeps_its_promises(self) -> None:
        result, _, _ = self._rashomon_solve()
        rs, cert = result.rashomon, result.certificate
        assert rs is not None
        if cert.status is Status.OPTIMAL:
            assert rs.optimum_proven, "the certificate is optimal, the set's optimum is not proven"
        assert any(m.model is not None for m in rs.members) or rs.count == 0, "keep: model kept no model"

    def test_rashomon_summary_keeps_no_model(self) -> None:
        result, _, _ = self._rashomon_solve(keep="summary")
        assert result.rashomon is not None
        assert all(m.model is None for m in result.rashomon.members), "keep: summary kept a member's model"

    def test_rashomon_set_of_a_stopped_run_is_not_complete(self) -> None:
        result, _, events = self._rashomon_solve(stop=StopReason.CANCEL)
        rs, cert = result.rashomon, result.certificate
        assert rs is not None
        if cert.status is Status.OPTIMAL:
            return  # the search ended before it looked at the stop flag: nothing was stopped
        assert not rs.complete, f"a run stopped with status {cert.status} says its set is complete"
        assert not rs.optimum_proven, f"a run stopped with status {cert.status} says its optimum is proven"
        assert cert.objective is not None and abs(rs.optimum - cert.objective) <= _slack(cert.objective), (
            f"the set's optimum {rs.optimum!r} is not the stopped run's incumbent {cert.objective!r}"
        )
        if rs.optimum <= rs.threshold + _slack(rs.threshold):
            assert rs.count >= 1, "a stopped run's incumbent is within its threshold, yet the set counts nothing"
        # sent live too, so the store and the monitor hold it before the finish record
        own = [e for e in events if e.rashomon is not None and e.rashomon.point is None]
        assert own, "a stopped run's set was not sent as a rashomon event (ctx.rashomon) before the run ended"
        assert own[-1].rashomon is not None and own[-1].rashomon.count == rs.count, (
            "the events' count is not the stopped set's"
        )
        sent = [m.objective for e in own for m in e.members]
        assert sent == [m.objective for m in rs.members], "the events' members are not the stopped set's"

    # -- what the plugin shows (hooks) ---------------------------------------------------------

    def test_model_renders_through_the_hooks(self) -> None:
        from glasswork.display import model_view

        result, _, _ = self._solve()
        registry = self._registry()
        assert result.model is not None, "an unconstrained solve ended with no model"
        doc, text = result.model.to_dict(), result.model.to_text()
        for compact in (True, False):
            shown = _render(model_view(doc, text, compact=compact, stats=result.stats, registry=registry))
            assert shown.strip(), "the model renders to nothing"
            assert "models failed" not in shown, shown
        if self._implements(registry, "render_model"):
            assert (
                _first(registry, "render_model", model={"kind": "__no_such_kind__"}, compact=False, stats={}) is None
            ), "render_model must return None for model kinds that are not the plugin's own"

    def test_model_renders_hostile_names_as_text(self) -> None:
        """Feature names are data (docs/plugins.md, "Data is data"): solved with names full of rich
        markup, the model still renders, and exactly as it renders the same names with their
        brackets made round (a view that hands a name to rich as markup styles '[red]' away and
        fails on '[/]'; comparing two drawings of one model leaves a view free to cut or wrap)."""
        import dataclasses

        from glasswork.display import model_view

        spec = self._spec()
        problem = self.problem(spec)
        names = [f"[/]hostile{j}[red]" for j in range(len(problem.feature_names))]
        problem = dataclasses.replace(problem, feature_names=names)
        ctx = SolveContext(Limits(), lambda event: None)
        result = self.solver_class(spec).solve(problem, ctx)
        registry = self._registry()

        def rounded(text: str) -> str:
            return text.replace("[/]hostile", "(/)hostile").replace("[red]", "(red)")

        assert result.model is not None, "an unconstrained solve ended with no model"
        doc, text = result.model.to_dict(), result.model.to_text()
        plain_doc = json.loads(rounded(json.dumps(doc)))
        for compact in (True, False):
            shown = _render(model_view(doc, text, compact=compact, stats=result.stats, registry=registry))
            assert "failed" not in shown, f"the model view fails on hostile feature names: {shown}"
            view = model_view(plain_doc, rounded(text), compact=compact, stats=result.stats, registry=registry)
            plain = _render(view)
            assert rounded(shown) == rounded(plain), (
                f"hostile feature names rendered as markup, not text:\n{shown}\nagainst, with round brackets:\n{plain}"
            )

    def test_monitor_panels_are_fed_by_the_solvers_counters(self) -> None:
        from glasswork.display import Panel

        registry = self._registry()
        self._needs_hook(registry, "monitor_panels")
        name = self.solver_class.name
        panels = registry.monitor_panels(name)
        assert panels, f"monitor_panels({name!r}) describes no panel"
        assert all(isinstance(p, Panel) for p in panels)
        again = registry.monitor_panels(name)
        assert all(a is not b for a, b in zip(panels, again)), "monitor_panels must return new panels per call"
        assert registry.monitor_panels("__another_solver__") == [], "panels for a solver that is not the plugin's"
        result, events, _ = self._solve(document=self.panels_spec_document())
        reported = {"objective", "lower_bound", "nodes", "gap", "elapsed"}
        for event in events:
            reported.update(event.counters)
        for panel in panels:
            missing = _unreported(panel, reported, result.stats)
            assert not missing, (
                f"panel {panel.title!r} names {', '.join(sorted(missing))}, which no event "
                f"of a whole solve reports (the solver reports {', '.join(sorted(reported))})"
            )

    def test_exports_reproduce_the_model(self) -> None:
        """A plugin with ``export_model``: its Python and SQL (DuckDB, SQLite) over the raw training
        columns, and its json document read back through ``load_model``, predict what the model
        predicts (labels exactly, probabilities within 1e-12); markdown and html are text, and
        other kinds are left alone."""
        from glasswork.export import ExportRequest, ModelInputs
        from glasswork.testing.exports import check_exports, raw_columns

        registry = self._registry()
        self._needs_hook(registry, "export_model")
        result, _, problem = self._solve()
        assert result.model is not None, "an unconstrained solve ended with no model"
        doc = result.model.to_dict()
        inputs = ModelInputs.of_problem(problem)
        request = ExportRequest("markdown", inputs, run={"run_id": "contract"})

        def hook(**kwargs: Any) -> Any:
            return _first(registry, "export_model", **kwargs)

        for fmt in ("markdown", "html"):
            text = hook(model=doc, format=fmt, request=request)
            assert text is None or (isinstance(text, str) and text.strip()), f"{fmt} export is not text"
        assert hook(model={"kind": "__another_kind__"}, format="python", request=request) is None
        formats = tuple(f for f in ("python", "sql") if hook(model=doc, format=f, request=ExportRequest(f, inputs)))
        if self._implements(registry, "load_model"):
            formats += ("json",)
        assert formats, "export_model writes neither python nor sql, and the plugin has no load_model"
        try:
            columns = raw_columns(self._spec().data, problem, "train")
        except Exception as exc:  # a hand-made problem (``problem`` overridden) has no raw table
            import pytest

            pytest.skip(
                f"the problem's raw columns cannot be read again ({exc}); override problem() "
                "only when the spec's data section cannot describe it"
            )
        checked = check_exports(result.model, inputs, columns, problem.X, registry, formats)
        assert checked and all(n == problem.n_samples for n in checked.values()), checked

    def test_sweep_defaults_are_well_formed(self) -> None:
        registry = self._registry()
        self._needs_hook(registry, "sweep_defaults")
        defaults = registry.sweep_defaults(self.solver_class.name)
        assert set(defaults) <= {"metric", "goal"}, defaults
        assert defaults.get("goal") in (None, "max", "min")
        assert registry.sweep_defaults("__another_solver__") == {}


def _slack(value: float) -> float:
    return 1e-9 * max(1.0, abs(value))


def check_rashomon_set(result: Result, problem: Problem, max_models: int) -> None:
    """What every ``Result.rashomon`` promises, checked with assertions that say what broke
    (the contract's Rashomon tests; a plugin's own tests may call it on any set)."""
    rs = result.rashomon
    assert rs is not None
    objectives = [m.objective for m in rs.members]
    assert all(b >= a - _slack(a) for a, b in zip(objectives, objectives[1:])), f"members not best first: {objectives}"
    assert all(o <= rs.threshold + _slack(rs.threshold) for o in objectives), (
        f"a member's objective exceeds the threshold {rs.threshold!r}: {objectives}"
    )
    assert all(o >= rs.optimum - _slack(rs.optimum) for o in objectives), (
        f"a member's objective is below the optimum {rs.optimum!r}: {objectives}"
    )
    assert rs.count >= len(rs.members), f"count {rs.count} below the {len(rs.members)} members kept"
    assert len(rs.members) <= max_models, f"{len(rs.members)} members kept, max_models is {max_models}"
    if rs.exhaustive:
        assert len(rs.members) == min(rs.count, max_models), (
            f"{len(rs.members)} members kept of {rs.count} counted with max_models {max_models}: the best are kept"
        )
    if rs.complete:
        assert rs.unenumerated_bound is None, "a complete set bounds something it did not enumerate"
    cert = result.certificate
    if cert.objective is not None and cert.status is Status.OPTIMAL:
        assert abs(rs.optimum - cert.objective) <= 1e-6 * max(1.0, abs(cert.objective)), (
            f"the set's optimum {rs.optimum!r} is not the certified objective {cert.objective!r}"
        )
    for rank, member in enumerate(rs.members, 1):
        assert isinstance(member.fingerprint, str) and member.fingerprint, f"member {rank} has no fingerprint"
        assert tuple(member.features) == tuple(str(f) for f in member.features)
        assert set(member.features) <= set(problem.feature_names), (
            f"member {rank} uses {set(member.features) - set(problem.feature_names)}, not columns of the matrix"
        )
        if member.model is not None:
            expected = prediction_fingerprint(np.asarray(member.model.predict(problem.X)))
            assert member.fingerprint == expected, (
                f"member {rank}'s fingerprint is not that of its predictions on the training rows"
            )
    json.dumps(result.to_dict(), allow_nan=False)


def _unreported(panel: Any, reported: set[str], stats: dict[str, Any]) -> set[str]:
    """The figures a panel draws that the solver never reports (a misspelled counter, say)."""
    from glasswork.display import BarsPanel, ScatterPanel, SeriesPanel

    if isinstance(panel, (SeriesPanel, BarsPanel)):
        return {panel.counter} - reported
    if isinstance(panel, ScatterPanel):
        if panel.result_points and isinstance(stats.get(panel.result_points), list):
            return set()
        return {panel.x, panel.y} - reported
    return set() if panel.has_data else {f"the figures of {type(panel).__name__}"}


def _render(renderable: Any) -> str:
    from rich.console import Console

    console = Console(width=120, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def _first(registry: Registry, hook: str, **kwargs: Any) -> Any:
    """A firstresult hook through the registry, as the workbench calls it, but with the plugin's
    own exception raised (the registry would pass over it), so the contract names the failure."""
    answer = registry.first(hook, **kwargs)
    if answer.errors:
        raise answer.errors[0][1]
    return answer.value


def check_no_model(result: Result) -> None:
    """A result without a model keeps its promises: a status that allows none (``infeasible``,
    or a stop), no objective, and ``to_dict`` saying so (``Result`` refuses the rest when made)."""
    if result.model is not None:
        return
    from glasswork.result import NO_MODEL_STATUSES

    assert result.certificate.status in NO_MODEL_STATUSES, result.certificate
    assert result.certificate.objective is None, result.certificate
    doc = result.to_dict()
    assert doc["model"] is None and doc["model_text"] is None
    json.dumps(doc, allow_nan=False)
