"""Sweeps: one spec expanded into many runs (grids, regularization paths, cross-validation),
run on a local process pool or a Dask cluster, recorded by the one process that owns the store.

Every point is validated before any runs. Workers never open the database: each returns its
run's records (start, events, finish) and the owner records them. The sweep's id is the hash of
its spec, so running the same sweep again resumes it: points already finished are not rerun.
Faults (a task that raises, a worker that dies, a cluster that goes away, Ctrl-C) are recorded
on the points they hit; the other points still finish, and nothing stored is lost.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import statistics
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from glasswork.record import RunInfo, finish_record, start_record
from glasswork.registry import Registry, get_registry
from glasswork.spec import LoadedSpec, SpecError, SpecIssue, SweepSpec, _Positions, set_path, validate_spec

MAXIMISE = ("accuracy", "auc", "r2", "stability")


@dataclass
class SweepPoint:
    """One run of a sweep: its grid coordinates, its fold, and its complete spec document."""

    index: int
    coords: dict[str, Any]
    fold: int | None
    document: dict[str, Any]

    @property
    def key(self) -> str:
        """Identifies the point across invocations (for resuming)."""
        return json.dumps({"coords": self.coords, "fold": self.fold}, sort_keys=True, default=str)

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.coords.items()]
        if self.fold is not None:
            parts.append(f"fold {self.fold}")
        return ", ".join(parts) or "base"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "index": self.index, "coords": self.coords, "fold": self.fold}


@dataclass
class Sweep:
    """A validated, expanded sweep."""

    loaded: LoadedSpec
    spec: SweepSpec
    points: list[SweepPoint]
    defaults: dict[str, Any] = field(default_factory=dict)  # the solver's sweep_defaults hook

    @property
    def sweep_id(self) -> str:
        return self.loaded.spec.spec_hash()[:16]

    @property
    def metric(self) -> str:
        if self.spec.metric:
            return self.spec.metric
        has_test = self.spec.folds is not None or self.loaded.spec.data.split.kind != "none" \
            or self.loaded.spec.data.test is not None
        if not has_test:
            return "objective"
        return str(self.defaults.get("metric") or "test_accuracy")

    @property
    def maximise(self) -> bool:
        if self.spec.goal is not None:
            return self.spec.goal == "max"
        if self.defaults.get("goal") in ("max", "min") and not self.spec.metric:
            return self.defaults["goal"] == "max"
        return any(word in self.metric for word in MAXIMISE)


# -- expansion -----------------------------------------------------------------------------------


def expand(
    document: dict[str, Any],
    registry: Registry,
    *,
    file: str = "<spec>",
    positions: _Positions | None = None,
    path: Path | None = None,
) -> Sweep:
    """Validate a spec with a ``sweep:`` section and every point it expands to.

    An invalid point is reported with its grid coordinates, at the line of the sweep entry
    that produced it; all invalid points are reported together and nothing runs.
    """
    positions = positions or _Positions(None)
    base = validate_spec(document, registry, file=file, positions=positions)
    if base.sweep is None:
        line, col = positions.locate([])
        raise SpecError([SpecIssue(file, line, col, "sweep", "this spec has no 'sweep:' section to expand")])
    sweep_spec = base.sweep
    grid_keys = list(sweep_spec.grid)
    # each combination with, per swept path, where its value stands in the file
    combos: list[tuple[dict[str, Any], dict[str, list[str | int]]]] = [
        ({k: sweep_spec.grid[k][i] for k, i in zip(grid_keys, indices)},
         {k: ["sweep", "grid", k, i] for k, i in zip(grid_keys, indices)})
        for indices in itertools.product(*(range(len(sweep_spec.grid[k])) for k in grid_keys))
    ] if grid_keys else []
    combos += [(dict(p), {k: ["sweep", "points", i, k] for k in p}) for i, p in enumerate(sweep_spec.points)]
    if not combos:
        combos = [({}, {})]
    folds: list[int | None] = list(range(sweep_spec.folds)) if sweep_spec.folds else [None]

    template = {k: v for k, v in document.items() if k != "sweep"}
    points: list[SweepPoint] = []
    issues: list[SpecIssue] = []
    for coords, where in combos:
        for fold in folds:
            doc = copy.deepcopy(template)
            for key, value in coords.items():
                set_path(doc, key, copy.deepcopy(value))
            if fold is not None:
                split = dict(doc.get("data", {}).get("split") or {})
                split.update(kind="kfold", folds=sweep_spec.folds, fold=fold)
                doc.setdefault("data", {})["split"] = split
            point = SweepPoint(len(points), coords, fold, doc)
            try:
                validate_spec(doc, registry, file=file, positions=None)
            except SpecError as exc:
                for issue in exc.issues:
                    culprit = next((loc for k, loc in where.items() if issue.path.startswith(k)), None)
                    line, col = positions.locate(culprit or next(iter(where.values()), ["sweep"]))
                    issues.append(SpecIssue(file, line, col, issue.path,
                                            f"at sweep point ({point.label()}): {issue.message}"))
                continue
            points.append(point)
    if issues:
        raise SpecError(issues)
    return Sweep(LoadedSpec(base, path), sweep_spec, points, registry.sweep_defaults(base.solver))


# -- what a worker does ----------------------------------------------------------------------------


@dataclass
class PointOutcome:
    """What comes back from a worker: the run's records, ready to be stored and summarised."""

    point: SweepPoint
    records: list[dict[str, Any]]
    error: str | None = None

    @property
    def result(self) -> dict[str, Any] | None:
        last = self.records[-1] if self.records else {}
        return last.get("result") if last.get("kind") == "finish" else None


def run_point(document: dict[str, Any], base_dir: str, cancel: Any = None) -> list[dict[str, Any]]:
    """Run one point in a worker process; returns the run's records (start, events, finish).

    ``cancel`` is a cross-process flag (``is_set()``): when the owner sets it, the solver is
    stopped as by Ctrl-C and its best model comes back with status ``cancelled``.
    """
    from glasswork.data import DataError
    from glasswork.launch import Launch
    from glasswork.record import RecordSink
    from glasswork.runner import SolverFailure

    registry = get_registry()
    spec = validate_spec(document, registry)
    # workers never open the database: the owner records what they send back
    launch = Launch(LoadedSpec(spec, Path(base_dir) / "spec"), no_store=True, registry=registry)
    records: list[dict[str, Any]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.2):
            try:
                if cancel is not None and cancel.is_set():
                    launch.cancel()
                    return
            except Exception:  # the owner (and its flag) went away: finish on our own
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    error = None
    try:
        launch.run([RecordSink(records.append, full=True)])
    except (DataError, SolverFailure) as exc:
        error = str(exc)
    finally:
        stop.set()
    if not records:  # failed before the run began (e.g. unreadable data)
        return [dict(finish_record(None, None, error or "the run did not start"))]
    if error is not None and records[-1].get("kind") == "finish":
        records[-1]["error"] = error  # the message the user acts on, not the exception's repr
    return records


# -- executors -------------------------------------------------------------------------------------


class CancelToken(Protocol):
    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class Executor(Protocol):
    """Runs points and yields their outcomes as they complete."""

    name: str

    def run(self, points: Sequence[SweepPoint], base_dir: str) -> Iterator[PointOutcome]: ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the owner, which stops them through the cancel token; a terminal's
    Ctrl-C reaches the whole process group and would otherwise kill idle workers."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def as_completed_futures(futures: dict[Future[Any], Any]) -> Iterator[Future[Any]]:
    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        yield from done


def _failed(point: SweepPoint, message: str) -> PointOutcome:
    return PointOutcome(point, [dict(finish_record(None, None, message))], message)


def _outcome(point: SweepPoint, records: list[dict[str, Any]]) -> PointOutcome:
    finish = records[-1] if records else {}
    return PointOutcome(point, records, finish.get("error") if finish.get("result") is None else None)


class LocalExecutor:
    """A pool of worker processes (``--jobs N``).

    A worker that dies breaks a ``ProcessPoolExecutor`` and fails every task in flight; the
    pool is rebuilt and those tasks are rerun one at a time, so the task that kills its worker
    is found, recorded as failed, and the rest finish.
    """

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        import multiprocessing

        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self._context = multiprocessing.get_context("spawn")
        self._manager = self._context.Manager()
        self._cancel = self._manager.Event()
        self._pool: ProcessPoolExecutor | None = None

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=workers, mp_context=self._context, initializer=_ignore_sigint)

    def run(self, points: Sequence[SweepPoint], base_dir: str) -> Iterator[PointOutcome]:
        if not points:
            return
        pool = self._pool = self._new_pool(min(self.jobs, len(points)))
        futures: dict[Future[Any], SweepPoint] = {
            pool.submit(run_point, p.document, base_dir, self._cancel): p for p in points}
        suspects: list[SweepPoint] = []
        try:
            # When a worker dies the pool breaks and every unfinished future fails with
            # BrokenProcessPool; those points are the suspects, rerun one by one below.
            for future in as_completed_futures(futures):
                point = futures[future]
                exc = future.exception()
                if isinstance(exc, BrokenProcessPool):
                    suspects.append(point)
                elif exc is not None:
                    yield _failed(point, f"{type(exc).__name__}: {exc}")
                else:
                    yield _outcome(point, future.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for point in suspects:
            yield self._isolated(point, base_dir)

    def _isolated(self, point: SweepPoint, base_dir: str) -> PointOutcome:
        pool = self._pool = self._new_pool(1)
        try:
            return _outcome(point, pool.submit(run_point, point.document, base_dir, self._cancel).result())
        except BrokenProcessPool:
            return _failed(point, "the worker process died while running this point "
                                  "(killed, out of memory, or crashed)")
        except Exception as exc:
            return _failed(point, f"{type(exc).__name__}: {exc}")
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._manager.shutdown()


class DaskExecutor:
    """Points as tasks on a dask.distributed cluster (``--executor dask``, or ``dask:local``).

    Dask reschedules a task whose worker died and gives up with ``KilledWorker``; a cluster that
    goes away fails the tasks still out. Both are recorded on the points they hit.
    """

    name = "dask"

    def __init__(self, address: str | None = None, *, workers: int | None = None) -> None:
        from distributed import Client, Event, LocalCluster

        self._cluster = None
        if address in (None, "local"):
            self._cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                         processes=True, dashboard_address=None)
            address = self._cluster.scheduler_address
        self.client = Client(address, timeout="30s")
        self._cancel = Event(f"glasswork-sweep-cancel-{uuid.uuid4().hex}", client=self.client)

    def run(self, points: Sequence[SweepPoint], base_dir: str) -> Iterator[PointOutcome]:
        from distributed import as_completed

        futures = {self.client.submit(run_point, p.document, base_dir, self._cancel, pure=False,
                                      key=f"glasswork-point-{p.index}-{uuid.uuid4().hex[:8]}"): p
                   for p in points}
        remaining = dict(futures)
        try:
            for future in as_completed(list(futures)):
                point = remaining.pop(future)
                try:
                    yield _outcome(point, future.result())
                except Exception as exc:
                    kind = type(exc).__name__
                    if kind == "KilledWorker":
                        message = ("the worker process died while running this point "
                                   f"(dask gave up after retrying it: {exc})")
                    elif kind in ("CancelledError", "FutureCancelledError", "CommClosedError") \
                            or self.client.status != "running":
                        message = (f"the Dask cluster went away ({kind}: {str(exc).splitlines()[-1]}); "
                                   "run the sweep again to resume it")
                    else:
                        message = f"{kind}: {exc}"
                    yield _failed(point, message)
        except Exception as exc:  # the scheduler or the connection went away
            for point in remaining.values():
                yield _failed(point, f"the Dask cluster went away ({type(exc).__name__}: {exc}); "
                                     "run the sweep again to resume it")

    def cancel(self) -> None:
        try:
            self._cancel.set()
        except Exception:
            pass

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()


def make_executor(kind: str, *, jobs: int | None = None, scheduler: str | None = None) -> Executor:
    """``local``, ``dask`` (with ``scheduler``, else a LocalCluster), or ``dask:ADDRESS`` / ``dask:local``."""
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "dask" or kind.startswith("dask:"):
        address = kind.partition(":")[2] or scheduler or "local"
        return DaskExecutor(address, workers=jobs)
    raise ValueError(f"unknown executor {kind!r}: use local, dask, dask:local or dask:ADDRESS")


# -- the owner -------------------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What a sweep did: every point's outcome (new or resumed), and the summary rows."""

    sweep: Sweep
    outcomes: list[PointOutcome] = field(default_factory=list)
    resumed: dict[str, str] = field(default_factory=dict)  # point key -> run id already stored
    interrupted: bool = False

    @property
    def failed(self) -> list[PointOutcome]:
        return [o for o in self.outcomes if o.result is None]


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
    """Store one point's run, tagged with the sweep; a run that never began gets a minimal row."""
    records = outcome.records
    if not records or records[0].get("kind") != "start":
        spec = sweep.loaded.spec
        info = RunInfo(
            run_id=uuid.uuid4().hex, name=spec.name, solver=spec.solver, solver_version="",
            spec_hash="", spec=outcome.point.document, spec_path=None if sweep.loaded.path is None
            else str(sweep.loaded.path), data_fingerprint="", n_train=0, n_test=0, n_features=0,
            started_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"), pid=0,
        )
        records = [start_record(info, full=True),
                   dict(finish_record(info.run_id, None, outcome.error or "the point did not run"))]
        outcome.records = records
    records[0]["sweep_id"] = sweep.sweep_id
    records[0]["sweep_point"] = {**outcome.point.to_dict(), "total": len(sweep.points)}
    records[0]["spec_path"] = None if sweep.loaded.path is None else str(sweep.loaded.path)
    if store is not None:
        store.record(records)


# -- summary ---------------------------------------------------------------------------------------


@dataclass
class SummaryRow:
    """One grid point, aggregated over its folds."""

    coords: dict[str, Any]
    runs: int
    statuses: dict[str, int]
    values: dict[str, tuple[float, float]]  # name -> (mean, sd)
    best: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.coords, "runs": self.runs,
                               "status": ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))}
        for name, (mean, sd) in self.values.items():
            out[f"{name}_mean"] = mean
            out[f"{name}_sd"] = sd
        out["best"] = self.best
        return out


def summarise(report: SweepReport, store: Any = None) -> list[SummaryRow]:
    """Mean and sd across folds of objective, metrics and model size, per grid point.

    Points resumed from the store are read back from it, so a resumed sweep's summary covers
    every point, not just the ones run this time.
    """
    results: dict[str, list[dict[str, Any] | None]] = {}
    coords_of: dict[str, dict[str, Any]] = {}
    by_key = {p.key: p for p in report.sweep.points}
    for outcome in report.outcomes:
        group = json.dumps(outcome.point.coords, sort_keys=True, default=str)
        coords_of[group] = outcome.point.coords
        results.setdefault(group, []).append(outcome.result)
    if store is not None:
        for key, run_id in report.resumed.items():
            point = by_key.get(key)
            if point is None:
                continue
            doc = store.details(run_id)
            result = {"status": doc["status"], "objective": doc["objective"], "metrics": doc["metrics"],
                      "stats": doc["stats"]}
            group = json.dumps(point.coords, sort_keys=True, default=str)
            coords_of[group] = point.coords
            results.setdefault(group, []).append(result)
    rows = []
    for group, items in results.items():
        statuses: dict[str, int] = {}
        series: dict[str, list[float]] = {}
        for result in items:
            if result is None:
                statuses["failed"] = statuses.get("failed", 0) + 1
                continue
            statuses[result["status"]] = statuses.get(result["status"], 0) + 1
            values = {"objective": result.get("objective"),
                      "model_size": (result.get("stats") or {}).get("model_size"),
                      **(result.get("metrics") or {})}
            for name, value in values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    series.setdefault(name, []).append(float(value))
        values = {name: (statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else 0.0)
                  for name, v in series.items()}
        rows.append(SummaryRow(coords_of[group], len(items), statuses, values))
    metric = report.sweep.metric
    scored = [r for r in rows if metric in r.values]
    if scored:
        pick = max if report.sweep.maximise else min
        pick(scored, key=lambda r: r.values[metric][0]).best = True
    order = list(report.sweep.spec.grid)
    rows.sort(key=lambda r: tuple(_sortable(r.coords.get(k)) for k in order))
    return rows


def _sortable(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def write_summary(rows: Sequence[SummaryRow], path: Path) -> None:
    """CSV or Parquet (by extension), through DuckDB so no data-frame library is needed."""
    import duckdb
    import numpy as np

    records = [r.to_dict() for r in rows]
    columns = list(dict.fromkeys(k for r in records for k in r))
    data = {}
    for column in columns:
        values = [r.get(column) for r in records]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values):
            data[column] = np.array([np.nan if v is None else float(v) for v in values])
        else:
            data[column] = np.array([None if v is None else str(v) for v in values], dtype=object)
    fmt = "parquet" if path.suffix.lower() == ".parquet" else "csv"
    con = duckdb.connect()
    con.register("summary", data)
    target = str(path).replace("'", "''")
    con.execute(f"COPY summary TO '{target}' (FORMAT {fmt}{', HEADER true' if fmt == 'csv' else ''})")
    con.close()


def plot_path(report: SweepReport, rows: Sequence[SummaryRow], path: Path) -> None:
    """The regularization path: the chosen metric and the model size against the swept value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = list(report.sweep.spec.grid)
    if not grid:
        raise ValueError("--plot needs a grid to plot against")
    x_key, others = grid[0], grid[1:]
    metric = report.sweep.metric
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    size_ax = ax.twinx()
    groups: dict[str, list[SummaryRow]] = {}
    for row in rows:
        groups.setdefault(", ".join(f"{k}={row.coords.get(k)}" for k in others), []).append(row)
    for label, members in groups.items():
        members = [m for m in members if isinstance(m.coords.get(x_key), (int, float))]
        members.sort(key=lambda m: m.coords[x_key])
        xs = [m.coords[x_key] for m in members]
        if metric in (members[0].values if members else {}):
            ax.errorbar(xs, [m.values[metric][0] for m in members], yerr=[m.values[metric][1] for m in members],
                        marker="o", capsize=3, label=f"{metric} {label}".strip())
        if members and "model_size" in members[0].values:
            size_ax.plot(xs, [m.values["model_size"][0] for m in members], linestyle="--", marker="s",
                         color="tab:orange", alpha=0.7, label=f"model size {label}".strip())
    if all(isinstance(r.coords.get(x_key), (int, float)) and r.coords.get(x_key) > 0 for r in rows):
        values = sorted({r.coords[x_key] for r in rows})
        if len(values) > 2 and values[-1] / values[0] >= 20:
            ax.set_xscale("log")
    ax.set_xlabel(x_key)
    ax.set_ylabel(metric + (" (mean ± sd over folds)" if report.sweep.spec.folds else ""))
    size_ax.set_ylabel("model size")
    handles = ax.get_legend_handles_labels()
    size_handles = size_ax.get_legend_handles_labels()
    ax.legend(handles[0] + size_handles[0], handles[1] + size_handles[1], fontsize=8, loc="best")
    ax.set_title(f"{report.sweep.loaded.spec.name}: {metric} and model size along {x_key}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

