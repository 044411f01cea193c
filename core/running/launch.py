"""One run, from a spec to a recorded result: the one path ``glasswork run``, the monitor, the
sweep workers, ``glasswork.run``, the plugin contract suite, the pytest fixtures and the
benchmarks share (none of them builds the internal ``Runner``).

The steps keep their order because each protects the next: the spec is validated (``SpecError``,
nothing runs), the data are loaded and checked against the solver (``prepare``: ``DataError``,
still nothing is written), the run store is opened and ended journals folded (``open_store``:
``StoreError``, nothing has run yet), the run is described (``RunInfo``: sizes, fingerprint,
split), the solver searches (``glasswork.running.runner``) with the store's sink first so a run is
recorded before anyone else hears that it ended, and the metrics are added before the sinks hear
the outcome. Callers turn the exceptions into exit codes and messages through
``glasswork.running.exits.run_failure``; they never repeat a step.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.contract.events import EventSink
from glasswork.contract.record import RunInfo, RunOutcome
from glasswork.spec.document import SpecError
from glasswork.spec.load import LoadedSpec, load_spec
from glasswork.spec.models import SolverSpec

if TYPE_CHECKING:
    from glasswork.contract.solver import ClusterExecutor, Solver
    from glasswork.data import DataError, Problem
    from glasswork.hooks.registry import Registry
    from glasswork.contract.model import Model
    from glasswork.contract.result import Result
    from glasswork.contract.solver import SolveContext
    from glasswork.store import RunStore, StoreSink


class Launch:
    """A validated spec on its way to a recorded run; one ``Launch`` is one run.

    ``db`` and ``no_store`` are the command line's ``--db`` and ``--no-store``: the run is
    recorded in ``--db``, ``$GLASSWORK_DB``, the spec's ``store.path`` or ``./glasswork.duckdb``,
    unless ``no_store`` or the spec's ``store.enabled: false`` (an explicit ``db`` wins over the
    latter). ``problem`` is data already loaded (a benchmark timing the search alone, a test's
    hand-built problem): it is checked against the solver, not loaded again. ``cancel`` may be
    called from any thread at any time, also before ``run``.
    """

    def __init__(
        self,
        loaded: LoadedSpec | SolverSpec,
        *,
        db: str | Path | None = None,
        no_store: bool = False,
        registry: Registry | None = None,
        problem: Problem | None = None,
        executor: ClusterExecutor | None = None,
    ) -> None:
        from glasswork.hooks.registry import get_registry
        from glasswork.running.runner import Runner

        self.loaded = loaded if isinstance(loaded, LoadedSpec) else LoadedSpec(loaded, None)
        self.db = db
        self.no_store = no_store
        self.registry = registry or get_registry()
        self._runner = Runner()
        self.problem = problem
        self.executor = executor  # ``run --executor dask:...``: where one search may spread
        self._problem_checked = False
        self.store: RunStore | None = None
        self.store_sink: StoreSink | None = None
        self._store_checked = False
        self._store_notes: list[str] = []
        self._started = False
        if self.recorded and db is None:
            self._check_spec_store_path()

    def _check_spec_store_path(self) -> None:
        """A spec's ``store.path`` that escapes its folder through a symbolic link is a mistake in
        the spec (exit 2), found before anything runs."""
        from glasswork.spec.document import SpecIssue
        from glasswork.store import StorePathError, default_db_path

        value = self.loaded.spec.store.path
        try:
            default_db_path(None, value, self.loaded.base_dir)
        except StorePathError as exc:
            file = str(self.loaded.path or "<spec>")
            line = 1
            try:
                lines = self.loaded.path.read_text(encoding="utf-8").splitlines() if self.loaded.path else []
                line = next((i + 1 for i, text in enumerate(lines) if value and value in text), 1)
            except OSError:
                pass
            raise SpecError([SpecIssue(file, line, 1, "store.path", str(exc))]) from None

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        overrides: Sequence[str] = (),
        *,
        db: str | Path | None = None,
        no_store: bool = False,
        registry: Registry | None = None,
        executor: ClusterExecutor | None = None,
    ) -> Launch:
        """Read and validate a spec file with ``--set PATH=VALUE`` overrides; raises ``SpecError``."""
        loaded = load_spec(path, registry, overrides=overrides)
        return cls(loaded, db=db, no_store=no_store, registry=registry, executor=executor)

    @property
    def recorded(self) -> bool:
        """Whether this run is recorded in a run store."""
        return not self.no_store and (self.db is not None or self.loaded.spec.store.enabled)

    def prepare(self) -> Problem:
        """Load the data (inside the run's limits) and check the solver takes them, once; raises
        ``DataError`` (nothing written), also for ``--executor dask:...`` with a solver that cannot
        spread its search."""
        if self.executor is not None and not self.registry.solver(self.loaded.spec.solver).distributed:
            from glasswork.data import DataError

            raise DataError(
                f"solver {self.loaded.spec.solver!r} cannot spread one search over a cluster "
                f"(--executor {self.executor.name})",
                hint="run it without --executor, or sweep many runs on the cluster with 'glasswork sweep --executor'",
            )
        if self.problem is None:
            from glasswork.data import DataError, load_problem

            limits = self.loaded.spec.limits
            try:
                self.problem = load_problem(
                    self.loaded.spec.data,
                    self.loaded.base_dir,
                    time_limit=limits.time,
                    memory_limit=None if limits.memory is None else int(limits.memory),
                )
            except DataError as exc:  # one about a spec field points at its line in the spec
                raise locate_in_spec(exc, self.loaded) from None
        if not self._problem_checked:
            from glasswork.data import DataError
            from glasswork.fairness import audit

            solver_cls = self.registry.solver(self.loaded.spec.solver)
            _check_task(solver_cls, self.problem)
            try:
                audit.check(self.loaded.spec, self.problem)
            except DataError as exc:
                raise locate_in_spec(exc, self.loaded) from None
            self._solver_check(solver_cls)
            self._problem_checked = True
        return self.problem

    def _solver_check(self, solver_cls: type[Solver]) -> None:
        """The solver's own pre-search checks, before the store opens: a ``DataError`` is the
        user's to fix (exit 2); anything else is a fault in the plugin, named as such (exit 1)."""
        from glasswork.data import DataError
        from glasswork.running.runner import SolverFailure

        assert self.problem is not None
        try:
            solver_cls(self.loaded.spec).check(self.problem)
        except DataError:
            raise
        except Exception as exc:
            raise SolverFailure(
                f"solver {solver_cls.name!r} from {self.registry.plugin_of(solver_cls.name)} failed while checking "
                f"the data: {type(exc).__name__}: {exc} (a fault in that plugin, not in the spec)"
            ) from exc

    def open_store(self) -> RunStore | None:
        """Open (migrate, recover) the run store this run is recorded in; raises ``StoreError``."""
        if not self._store_checked:
            from glasswork.store import RunStore, StoreLocked, default_db_path

            if self.recorded:
                spec = self.loaded.spec
                store = RunStore(default_db_path(self.db, spec.store.path, self.loaded.base_dir))
                try:
                    # a run never waits for the store, nor is refused by a busy one; DuckDB opens
                    # only when the store needs it before the run (docs/run-store.md)
                    store.open(wait=False, quick=True)
                except StoreLocked as exc:  # a program outside glasswork holds the file: the journal keeps the run
                    self._store_notes.append(
                        f"{exc}. This run is kept in its journal and recorded the next time the store is opened"
                    )
                self.store = store
            self._store_checked = True
        return self.store

    def run(self, sinks: Sequence[EventSink] = (), *, run_id: str | None = None) -> RunOutcome:
        """Prepare, open the store, describe the run, search, measure and record: every step of
        a run, in order. The caller's sinks follow the store's.

        Raises ``DataError``, ``StoreError``, ``SolverFailure`` or ``RunAborted`` (a second
        interrupt); a first interrupt ends the run with its best model, status ``cancelled``.
        A launch runs once (its runner, sinks and store sink belong to that run): a second call
        raises ``RuntimeError``; make a new ``Launch`` for another run.
        """
        if self._started:
            raise RuntimeError("this Launch has already run; make a new Launch for another run")
        self._started = True
        from glasswork.contract.model import model_contract_fault
        from glasswork.contract.solver import Limits
        from glasswork.memory import peak_memory
        from glasswork.running.runner import SolverFailure
        from glasswork.store import StoreSink

        problem = self.prepare()
        store = self.open_store()
        if store is not None:
            self.store_sink = StoreSink(store, held_noted=bool(self._store_notes))
        spec = self.loaded.spec
        solver_cls = self.registry.solver(spec.solver)
        solver = solver_cls(spec)
        info = self._describe(solver_cls, problem, run_id)
        limits = Limits(
            time=spec.limits.time,
            nodes=spec.limits.nodes,
            memory=None if spec.limits.memory is None else int(spec.limits.memory),
        )
        runner = self._runner
        active = runner.start_sinks([*([self.store_sink] if self.store_sink else []), *sinks], info)
        search: Callable[[Problem, SolveContext], Result] | None = None
        limit = getattr(spec.constraints, "fairness", None)
        if getattr(limit, "frontier", None) is not None:  # the core walks the frontier through the solver's solve
            from glasswork.frontier import walk

            search = functools.partial(walk, solver_cls, spec)

        try:
            result, elapsed, interrupted = runner.solve(
                solver,
                problem,
                limits,
                active,
                self.executor,
                plugin=self.registry.plugin_of(solver.name),
                search=search,
            )
            fault = None if result.model is None else model_contract_fault(result.model)
            if fault is not None:  # the plugin's omission, named before metrics or the store trip on it
                raise SolverFailure(
                    f"solver {solver.name!r} from {self.registry.plugin_of(solver.name)} {fault}: "
                    "a fault in that plugin, not in the spec; its authors can fix it (docs/plugins.md, 'Models')"
                )
            breach = None if result.model is None else _constraint_breach(spec, problem, result.model)
            if breach is not None:  # a claim the product checks itself, as the certificate's
                raise SolverFailure(
                    f"solver {solver.name!r} from {self.registry.plugin_of(solver.name)} returned a model that "
                    f"{breach}: a fault in that plugin, not in the spec; its authors can fix it"
                )
            outcome = RunOutcome(info, result, elapsed, peak_memory(), problem, interrupted=interrupted)
            _add_metrics(outcome, problem)
            _score_set(spec, problem, outcome)
            outcome.fairness = _audit(spec, problem, outcome)
        except BaseException as exc:
            runner.finish_sinks(active, info, None, exc)
            raise
        runner.finish_sinks(active, info, outcome, None)
        return outcome

    def _describe(self, solver_cls: type[Solver], problem: Problem, run_id: str | None) -> RunInfo:
        """Who and what the run is: the start record (sizes, data fingerprint, split, inputs)."""
        spec = self.loaded.spec
        return RunInfo(
            run_id=run_id or uuid.uuid4().hex,
            name=spec.name,
            solver=solver_cls.name,
            solver_version=solver_cls.version,
            spec_hash=spec.spec_hash(),
            spec=spec.resolved(),
            spec_path=None if self.loaded.path is None else str(self.loaded.path),
            data_fingerprint=problem.fingerprint(),
            n_train=problem.n_samples,
            n_test=0 if problem.y_test is None else int(problem.y_test.shape[0]),
            n_features=problem.n_features,
            started_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            split=_split_of(problem),
            inputs=_inputs_of(problem),
        )

    def cancel(self) -> None:
        """Stop the search as Ctrl-C would; its best model is kept with status ``cancelled``."""
        self._runner.cancel()

    @property
    def warnings(self) -> list[str]:
        """What went wrong on the side (a sink that failed, a store that stayed locked)."""
        return [*self._store_notes, *self._runner.sink_errors, *(self.store_sink.warnings if self.store_sink else [])]


def _check_task(solver_cls: type[Solver], problem: Problem) -> None:
    from glasswork.data import DataError

    if problem.task not in solver_cls.tasks:
        raise DataError(
            f"solver {solver_cls.name!r} handles {', '.join(sorted(solver_cls.tasks))} targets, "
            f"but the data's target is {problem.task}",
            hint="set data.task, data.positive, or choose another target",
        )


def _add_metrics(outcome: RunOutcome, problem: Problem) -> None:
    """Train (and test) metrics of the model, under the solver's own; the multiplicity figures
    of its Rashomon set when it has one."""
    from glasswork.running import metrics

    model = outcome.result.model
    if model is None:  # no model meets the constraints (infeasible, or none found before a stop)
        return
    computed = metrics.evaluate(model, problem.X, problem.y, "train_", problem.sample_weight)
    if problem.X_test is not None and problem.y_test is not None:
        computed.update(metrics.evaluate(model, problem.X_test, problem.y_test, "test_", problem.test_sample_weight))
    outcome.result.metrics = {**computed, **outcome.result.metrics}
    if outcome.result.rashomon is not None:
        from glasswork.rashomon import multiplicity

        try:
            outcome.multiplicity = multiplicity.figures(outcome.result.rashomon, model, problem, outcome.info.inputs)
        except Exception as exc:  # a member that cannot predict: the run and its set are still recorded
            outcome.multiplicity = {"error": f"{type(exc).__name__}: {exc}"}
            return
        from glasswork.rashomon.curves import curves

        try:  # the set's figures as epsilon grows
            outcome.multiplicity["curves"] = curves(outcome.result.rashomon, model, problem)
        except Exception as exc:
            outcome.multiplicity["curves"] = {"error": f"{type(exc).__name__}: {exc}"}


def _score_set(spec: SolverSpec, problem: Problem, outcome: RunOutcome) -> None:
    """Each kept member's metrics and fairness audit, and the range of each audited metric over
    the set (``glasswork.rashomon.figures``), once, as the set is recorded."""
    rset = outcome.result.rashomon
    if rset is None:
        return
    from glasswork.rashomon import figures

    try:
        notes = figures.score_members(rset, spec, problem)
    except Exception as exc:  # a member that cannot predict: the set is recorded without figures
        for member in rset.members:
            member.metrics = member.fairness = None
        notes = [f"no member figures: a member's model failed to predict ({type(exc).__name__}: {exc})"]
    rset.fairness = figures.fairness_range(rset, spec, notes)


def _audit(spec: SolverSpec, problem: Problem, outcome: RunOutcome) -> dict[str, Any] | None:
    """The fairness audit of the model (``fairness:``), from its predictions, whatever the solver."""
    from glasswork.fairness import audit

    if outcome.result.model is None:
        return None
    try:
        return audit.figures(spec, problem, outcome.result.model)
    except Exception as exc:  # a model that cannot predict: the run is still recorded, and says why
        return {"error": f"{type(exc).__name__}: {exc}"}


def _constraint_breach(spec: SolverSpec, problem: Problem, model: Model) -> str | None:
    """What of its fairness constraint the solver's model breaks (``audit.constraint_breach``);
    a model that cannot predict is named as the plugin's fault too."""
    from glasswork.fairness import audit

    try:
        return audit.constraint_breach(spec, problem, model)
    except Exception as exc:
        return f"cannot be checked against constraints.fairness ({type(exc).__name__}: {exc})"


def _split_of(problem: Problem) -> dict[str, Any] | None:
    """The row indices of the training and test parts (and, for k-fold, every row's fold and the
    fold held out), kept so a run can be reproduced exactly."""
    split: dict[str, Any] = {
        name: getattr(problem, name).tolist()
        for name in ("train_index", "test_index", "folds")
        if getattr(problem, name, None) is not None
    }
    fold = getattr(problem, "fold", None)
    if fold is not None:
        split["fold"] = int(fold)
    return split or None


def _inputs_of(problem: Problem) -> dict[str, Any] | None:
    """How the problem's feature columns come from the raw columns (kept for ``glasswork export``);
    ``None`` when the data layer cannot say (a problem built by hand with unknown binarization)."""
    from glasswork.export import ExportError, ModelInputs

    try:
        return ModelInputs.of_problem(problem).model_dump(mode="json")
    except (ExportError, ValueError):
        return None


def locate_in_spec(error: DataError, loaded: LoadedSpec) -> DataError:
    """A data error about a spec field (``error.field``, e.g. ``data.types.age``), moved to that
    field's line in the spec file, as a spec error is; other errors are returned as they are."""
    from glasswork.data import DataError
    from glasswork.spec.document import read_spec_document

    if error.field is None or loaded.path is None:
        return error
    line = None
    try:
        _, positions = read_spec_document(loaded.path)
        path = [int(part) if part.isdigit() else part for part in error.field.split(".")]
        line = positions.locate(path, key=True)[0]
    except (SpecError, OSError):  # the file changed since it was read: no line rather than a wrong one
        pass
    return DataError(
        f"{error.field}: {error.message}",
        file=str(loaded.path),
        line=line,
        column=error.column,
        row=error.row,
        hint=error.hint,
        field=error.field,
    )
