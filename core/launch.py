"""One run, from a spec file to a recorded result: the path ``glasswork run``, the terminal UI
and the sweep workers share.

The steps keep their order because each protects the next: the spec is validated (``SpecError``,
nothing runs), the data are loaded and checked against the solver (``DataError``: still nothing
is written), the run store is opened (``StoreError``: nothing has run yet), and only then does
the solver search, with the store's sink first so a run is recorded before anyone else hears
that it ended. Callers map the exceptions to exit codes or messages; they never repeat a step.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from glasswork.events import EventSink
from glasswork.spec import LoadedSpec, load_spec

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.registry import Registry
    from glasswork.runner import RunOutcome
    from glasswork.store import RunStore, StoreSink


class Launch:
    """A validated spec on its way to a recorded run.

    ``db`` and ``no_store`` are the command line's ``--db`` and ``--no-store``: the run is
    recorded in ``--db``, ``$GLASSWORK_DB``, the spec's ``store.path`` or ``./glasswork.duckdb``,
    unless ``no_store`` or the spec's ``store.enabled: false`` (an explicit ``db`` wins over the
    latter). ``cancel`` may be called from any thread at any time, also before ``run``.
    """

    def __init__(
        self,
        loaded: LoadedSpec,
        *,
        db: str | Path | None = None,
        no_store: bool = False,
        registry: Registry | None = None,
    ) -> None:
        from glasswork.registry import get_registry
        from glasswork.runner import Runner

        self.loaded = loaded
        self.db = db
        self.no_store = no_store
        self.registry = registry or get_registry()
        self.runner = Runner(self.registry)
        self.problem: Problem | None = None
        self.store: RunStore | None = None
        self.store_sink: StoreSink | None = None
        self._store_checked = False
        self._store_notes: list[str] = []
        if self.recorded and db is None:
            self._check_spec_store_path()

    def _check_spec_store_path(self) -> None:
        """A spec's ``store.path`` that escapes its folder through a symbolic link is a mistake in
        the spec (exit 2), found before anything runs."""
        from glasswork.spec import SpecError, SpecIssue
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
    ) -> Launch:
        """Read and validate a spec file with ``--set PATH=VALUE`` overrides; raises ``SpecError``."""
        loaded = load_spec(path, registry, overrides=overrides)
        return cls(loaded, db=db, no_store=no_store, registry=registry)

    @property
    def recorded(self) -> bool:
        """Whether this run is recorded in a run store."""
        return not self.no_store and (self.db is not None or self.loaded.spec.store.enabled)

    def prepare(self) -> Problem:
        """Load the data and check the solver takes them; raises ``DataError`` (nothing written)."""
        if self.problem is None:
            from glasswork.data import DataError
            from glasswork.validation import locate_in_spec

            try:
                self.problem = self.runner.prepare(self.loaded)
            except DataError as exc:  # one about a spec field points at its line in the spec
                raise locate_in_spec(exc, self.loaded) from None
        return self.problem

    def open_store(self) -> RunStore | None:
        """Open (migrate, recover) the run store this run is recorded in; raises ``StoreError``."""
        if not self._store_checked:
            from glasswork.store import RunStore, StoreLocked, default_db_path

            if self.recorded:
                spec = self.loaded.spec
                store = RunStore(default_db_path(self.db, spec.store.path, self.loaded.base_dir))
                try:
                    store.open(wait=False)  # a run never waits for the store, nor is refused by a busy one
                except StoreLocked as exc:  # a program outside glasswork holds the file: the journal keeps the run
                    self._store_notes.append(
                        f"{exc}. This run is kept in its journal and recorded the next time the store is opened"
                    )
                self.store = store
            self._store_checked = True
        return self.store

    def run(self, sinks: Sequence[EventSink] = (), *, run_id: str | None = None) -> RunOutcome:
        """Prepare, open the store, then solve and record; the caller's sinks follow the store's.

        Raises ``DataError``, ``StoreError``, ``SolverFailure`` or ``RunAborted`` (a second
        interrupt); a first interrupt ends the run with its best model, status ``cancelled``.
        """
        from glasswork.store import StoreSink

        problem = self.prepare()
        store = self.open_store()
        if store is not None:
            self.store_sink = StoreSink(store, held_noted=bool(self._store_notes))
        self.runner.sinks = [*([self.store_sink] if self.store_sink else []), *sinks]
        return self.runner.run(self.loaded, problem=problem, run_id=run_id)

    def cancel(self) -> None:
        """Stop the search as Ctrl-C would; its best model is kept with status ``cancelled``."""
        self.runner.cancel()

    @property
    def warnings(self) -> list[str]:
        """What went wrong on the side (a sink that failed, a store that stayed locked)."""
        return [*self._store_notes, *self.runner.sink_errors, *(self.store_sink.warnings if self.store_sink else [])]
