"""Sweeps: one spec expanded into many runs (grids, regularization paths, cross-validation),
run on a local process pool or a Dask cluster, recorded by the one process that owns the store.

Every point is validated before any runs. Workers never open the database: each returns its
run's records (start, events, finish) and the owner records them. The sweep's id is the hash of
its spec, so running the same sweep again resumes it: points already finished are not rerun.
Faults (a task that raises, a worker that dies, a cluster that goes away, Ctrl-C) are recorded
on the points they hit; the other points still finish, and nothing stored is lost.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from glasswork.contract.record import RunInfo, finish_record, start_record
from glasswork.sweep.executors import DaskExecutor, Executor, LocalExecutor, make_executor
from glasswork.sweep.plan import Sweep, SweepPoint, expand
from glasswork.sweep.summary import SummaryRow, SweepReport, plot_path, summarise, write_summary
from glasswork.sweep.workers import PointOutcome, run_point

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "PointOutcome",
    "SummaryRow",
    "Sweep",
    "SweepPoint",
    "SweepReport",
    "expand",
    "make_executor",
    "plot_path",
    "run_point",
    "run_sweep",
    "summarise",
    "write_summary",
]


def run_sweep(
    sweep: Sweep,
    executor: Executor,
    *,
    store: Any = None,
    restart: bool = False,
    on_outcome: Callable[[PointOutcome], None] | None = None,
) -> SweepReport:
    """Run the points not already finished, recording each as it comes back."""
    report = SweepReport(sweep)
    points = sweep.points
    if store is not None and not restart:
        report.resumed = store.sweep_points(sweep.sweep_id)
        points = [p for p in points if p.key not in report.resumed]
    interrupts = 0

    def on_interrupt(signum: int, frame: Any) -> None:
        # The first Ctrl-C (or SIGTERM) stops the points in flight through the cancel token:
        # they come back with their best model, status cancelled, and are recorded. Raising here
        # instead would unwind the executor and lose them. A second one abandons the sweep.
        nonlocal interrupts
        interrupts += 1
        report.interrupted = True
        executor.cancel()
        if interrupts > 1:
            raise KeyboardInterrupt

    handlers = _install_handlers(on_interrupt)
    try:
        for outcome in executor.run(points, str(sweep.loaded.base_dir)):
            _record(sweep, outcome, store)
            report.outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    finally:
        _restore_handlers(handlers)
    return report


def _install_handlers(handler: Callable[[int, Any], None]) -> dict[int, Any]:
    import signal

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_handlers(handlers: dict[int, Any]) -> None:
    import signal

    for sig, previous in handlers.items():
        signal.signal(sig, previous)


def _record(sweep: Sweep, outcome: PointOutcome, store: Any) -> None:
    """Store one point's run, tagged with the sweep; a run that never began gets a minimal row,
    but for a point stopped at its limit before its search, which records nothing (as a run)."""
    if outcome.stopped is not None:
        return
    records = outcome.records
    if not records or records[0].get("kind") != "start":
        spec = sweep.loaded.spec
        info = RunInfo(
            run_id=uuid.uuid4().hex,
            name=spec.name,
            solver=spec.solver,
            solver_version="",
            spec_hash="",
            spec=outcome.point.document,
            spec_path=None if sweep.loaded.path is None else str(sweep.loaded.path),
            data_fingerprint="",
            n_train=0,
            n_test=0,
            n_features=0,
            started_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            pid=0,
        )
        records = [
            start_record(info, full=True),
            finish_record(info.run_id, None, outcome.error or "the point did not run"),
        ]
        outcome.records = records
    records[0]["sweep_id"] = sweep.sweep_id
    records[0]["sweep_point"] = {**outcome.point.to_dict(), "total": len(sweep.points)}
    records[0]["spec_path"] = None if sweep.loaded.path is None else str(sweep.loaded.path)
    if store is not None:
        store.write_records(records)
