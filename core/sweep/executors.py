"""Where a sweep's points run: a local process pool or a dask.distributed cluster, each yielding
outcomes as points complete and recording the faults (a raised task, a dead worker, a cluster
that goes away) on the points they hit."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from glasswork.sweep.plan import SweepPoint
from glasswork.sweep.workers import PointOutcome, failed_outcome, outcome_of, run_point


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
            pool.submit(run_point, p.document, base_dir, self._cancel): p for p in points
        }
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
                    yield failed_outcome(point, f"{type(exc).__name__}: {exc}")
                else:
                    yield outcome_of(point, future.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for point in suspects:
            yield self._isolated(point, base_dir)

    def _isolated(self, point: SweepPoint, base_dir: str) -> PointOutcome:
        pool = self._pool = self._new_pool(1)
        try:
            return outcome_of(point, pool.submit(run_point, point.document, base_dir, self._cancel).result())
        except BrokenProcessPool:
            return failed_outcome(
                point, "the worker process died while running this point (killed, out of memory, or crashed)"
            )
        except Exception as exc:
            return failed_outcome(point, f"{type(exc).__name__}: {exc}")
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

    It connects as ``glasswork run --executor`` does (``ClusterExecutor.connect``: one way to
    start a local cluster or reach a scheduler, one message when it cannot be reached). Dask
    reschedules a task whose worker died and gives up with ``KilledWorker``; a cluster that goes
    away fails the tasks still out. Both are recorded on the points they hit.
    """

    name = "dask"

    def __init__(self, address: str | None = None, *, workers: int | None = None) -> None:
        from glasswork.contract.solver import ClusterExecutor

        self.client, self._close = ClusterExecutor(address or "local", workers).connect()
        try:
            from distributed import Event

            self._cancel = Event(f"glasswork-sweep-cancel-{uuid.uuid4().hex}", client=self.client)
        except BaseException:
            self._close()
            raise

    def run(self, points: Sequence[SweepPoint], base_dir: str) -> Iterator[PointOutcome]:
        from distributed import as_completed

        futures = {
            self.client.submit(
                run_point,
                p.document,
                base_dir,
                self._cancel,
                pure=False,
                key=f"glasswork-point-{p.index}-{uuid.uuid4().hex[:8]}",
            ): p
            for p in points
        }
        remaining = dict(futures)
        try:
            for future in as_completed(list(futures)):
                point = remaining.pop(future)
                try:
                    yield outcome_of(point, future.result())
                except Exception as exc:
                    kind = type(exc).__name__
                    if kind == "KilledWorker":
                        message = (
                            f"the worker process died while running this point (dask gave up after retrying it: {exc})"
                        )
                    elif (
                        kind in ("CancelledError", "FutureCancelledError", "CommClosedError")
                        or self.client.status != "running"
                    ):
                        message = (
                            f"the Dask cluster went away ({kind}: {str(exc).splitlines()[-1]}); "
                            "run the sweep again to resume it"
                        )
                    else:
                        message = f"{kind}: {exc}"
                    yield failed_outcome(point, message)
        except Exception as exc:  # the scheduler or the connection went away
            for point in remaining.values():
                yield failed_outcome(
                    point, f"the Dask cluster went away ({type(exc).__name__}: {exc}); run the sweep again to resume it"
                )

    def cancel(self) -> None:
        try:
            self._cancel.set()
        except Exception:
            pass

    def close(self) -> None:
        self._close()


def make_executor(kind: str, *, jobs: int | None = None, scheduler: str | None = None) -> Executor:
    """``local``, ``dask`` (with ``scheduler``, else a local cluster), or what ``run --executor``
    takes (``ClusterExecutor.parse``: ``dask:local`` or ``dask:HOST:PORT``); ValueError for
    anything else, OSError when the scheduler cannot be reached."""
    from glasswork.contract.solver import ClusterExecutor

    if kind == "local":
        return LocalExecutor(jobs)
    cluster = ClusterExecutor.parse(f"dask:{scheduler or 'local'}" if kind == "dask" else kind, workers=jobs)
    assert cluster is not None  # only "local" parses to this process
    return DaskExecutor(cluster.address, workers=jobs)
