"""A run store with a run whose journal is open: what the store and the monitor read while a run
still goes (its finish record not written yet)."""

from __future__ import annotations

from pathlib import Path

from glasswork.contract.record import RunInfo
from glasswork.store import RunStore, StoreSink


def open_live_run(
    tmp_path: Path, run_id: str, *, solver: str = "x", n_features: int = 1, n_train: int = 1
) -> tuple[RunStore, StoreSink]:
    """The store at ``tmp_path`` and the sink of a started run ``run_id``, alive while the sink's
    journal lock is held (as a run's process holds it)."""
    store = RunStore(tmp_path / "glasswork.duckdb").open()
    sink = StoreSink(store)
    sink.on_start(
        RunInfo(
            run_id=run_id,
            name="live",
            solver=solver,
            solver_version="1",
            spec_hash="h",
            spec={},
            spec_path=None,
            data_fingerprint="f",
            n_train=n_train,
            n_test=0,
            n_features=n_features,
            started_at="2026-01-01T00:00:00+00:00",
            pid=None,
        )
    )
    return store, sink


def corels_rashomon_spec(**extra: object):  # type: ignore[no-untyped-def]
    """An in-memory CORELS spec asking for a Rashomon set (epsilon 0.1), one thread, every
    support: what the live-set tests solve directly; ``extra`` replaces whole sections."""
    from glasswork.plugins.corels.spec import CorelsSpec

    return CorelsSpec.model_validate(
        {
            "name": "t",
            "data": {"source": "in-memory", "target": "y"},
            "solver": "corels",
            "store": {"enabled": False},
            "objective": {"regularization": 0.01},
            "constraints": {"min_support": 0.0},
            "search": {"threads": 1},
            "rashomon": {"epsilon": 0.1},
            **extra,
        }
    )
