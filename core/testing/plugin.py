"""glasswork's pytest plugin: fixtures for testing a solver plugin from its own test suite.

Registered through the ``pytest11`` entry point, so pytest loads it wherever glasswork is
installed. It imports nothing heavy until a fixture is used: every project in such an
environment pays only for this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from glasswork.contract.record import RunOutcome
    from glasswork.hooks.registry import Registry
    from glasswork.store import RunStore


@pytest.fixture
def glasswork_registry() -> Callable[..., Registry]:
    """Build a registry holding only the plugins given (``name=plugin_module``), nothing installed.

    ``registry = glasswork_registry(my_solver=my_package.plugin)``; its ``plugins[name].error``
    says why a plugin did not load (a misspelled hook, a malformed solver class).
    """
    from glasswork.hooks.registry import Registry

    def build(**plugins: object) -> Registry:
        return Registry(builtins=False, entry_points=False, disabled=(), extra=list(plugins.items()))

    return build


@pytest.fixture
def glasswork_store(tmp_path: Path) -> RunStore:
    """A real, empty run store (a DuckDB file) in the test's temporary folder."""
    from glasswork.store import RunStore

    return RunStore(tmp_path / "runs.duckdb").open()


@pytest.fixture
def glasswork_run(tmp_path: Path) -> Callable[..., tuple[RunOutcome, list[dict[str, Any]]]]:
    """Run a spec (a document or a file) through glasswork's own run path.

    ``outcome, records = glasswork_run(document, registry=..., db=..., overrides=[...])`` returns
    the outcome and the run's records (start, events, finish) exactly as the events file, the
    run store and the terminal UI see them. Nothing is stored unless ``db`` is given (the
    ``glasswork_store`` fixture's ``path``, say).
    """
    from glasswork.contract.events import RecordSink
    from glasswork.running.launch import Launch
    from ruamel.yaml import YAML

    def run(
        spec: dict[str, Any] | str | Path,
        *,
        registry: Registry | None = None,
        db: str | Path | None = None,
        overrides: Sequence[str] = (),
    ) -> tuple[RunOutcome, list[dict[str, Any]]]:
        if isinstance(spec, dict):
            path = tmp_path / "spec.yaml"
            YAML(typ="safe").dump(spec, path)
        else:
            path = Path(spec)
        launch = Launch.from_file(path, overrides, db=db, no_store=db is None, registry=registry)
        records: list[dict[str, Any]] = []
        outcome = launch.run([RecordSink(records.append)])
        return outcome, records

    return run
