"""``ClusterExecutor`` (core/contract/solver.py): a local cluster started early is the one a
search connects to, one nobody took is closed on the way out, a failed start reaches the connect,
and the local cluster's workers run with the quieter monitors while the driver's config is left
as it was."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.contract.solver import QUIET_LOCAL_CLUSTER, ClusterExecutor

distributed = pytest.importorskip("distributed")


def _worker_settings(client: Any) -> list[tuple[Any, ...]]:
    import dask

    def read() -> tuple[Any, ...]:
        return tuple(dask.config.get(key) for key in QUIET_LOCAL_CLUSTER)

    return list(client.run(read).values())


def test_connect_takes_the_cluster_started_early_and_its_workers_run_quietly() -> None:
    import dask

    before = tuple(dask.config.get(key) for key in QUIET_LOCAL_CLUSTER)
    executor = ClusterExecutor("local", 2)
    with executor.started_early():
        (starting,) = executor._early
        client, close = executor.connect()
        try:
            assert not executor._early  # taken: the way out leaves it to the connection's close
            assert client.scheduler.address == starting.result().scheduler_address
            assert len(client.scheduler_info()["workers"]) == 2
            assert _worker_settings(client) == [tuple(QUIET_LOCAL_CLUSTER.values())] * 2
        finally:
            close()
    assert starting.result().status.name == "closed"
    assert tuple(dask.config.get(key) for key in QUIET_LOCAL_CLUSTER) == before  # the driver's own, untouched


def test_a_cluster_started_early_and_never_taken_is_closed_on_the_way_out() -> None:
    executor = ClusterExecutor("local", 1)
    with pytest.raises(RuntimeError, match="the spec was bad"), executor.started_early():
        (starting,) = executor._early
        raise RuntimeError("the spec was bad")  # the run ends before its search connects
    assert not executor._early
    cluster = starting.result()
    assert cluster.status.name == "closed" and not cluster.workers


def test_a_failed_early_start_is_raised_where_the_search_connects(monkeypatch) -> None:
    started = threading.Event()

    def no_cluster(self: ClusterExecutor) -> Any:
        started.set()
        raise OSError("no room for a worker process")

    monkeypatch.setattr(ClusterExecutor, "_start_local", no_cluster)
    executor = ClusterExecutor("local", 2)
    with executor.started_early():
        assert started.wait(10)
        with pytest.raises(OSError, match="no room for a worker process"):
            executor.connect()


def test_a_remote_scheduler_is_not_connected_to_early() -> None:
    executor = ClusterExecutor("127.0.0.1:1")  # nothing listens there: an early connect would fail
    with executor.started_early():
        assert not executor._early


def test_run_closes_the_cluster_it_started_when_the_data_are_bad(tmp_path: Path, monkeypatch) -> None:
    """``glasswork run --executor dask:local`` starts its cluster before it reads the spec's data;
    data that do not load end the run with exit 2, and the cluster is closed, not left running."""
    started: list[Any] = []
    start = ClusterExecutor._start_local

    def recorded(self: ClusterExecutor) -> Any:
        cluster = start(self)
        started.append(cluster)
        return cluster

    monkeypatch.setattr(ClusterExecutor, "_start_local", recorded)
    (tmp_path / "t.csv").write_text("a,b,y\n1,0,1\n0,1,oops\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: bad\ndata: {source: t.csv, target: y}\nsolver: corels\nobjective: {regularization: 0.01}\n"
        "store: {enabled: false}\n"
    )
    result = CliRunner().invoke(cli, ["run", "-q", "--executor", "dask:local", "--workers", "1", str(spec)])
    assert result.exit_code == 2, result.output
    assert started and started[0].status.name == "closed"
