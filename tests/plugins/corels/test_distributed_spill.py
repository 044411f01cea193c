"""One CORELS search on Dask whose workers spill their queues to disk (``search.spill``): brute
force with every task's spill forced, a stopped run's bound with prefixes on disk, the worker's
temporary directory left empty after a run and after a failed task, and a spill that cannot write
failing the run with a message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from corels_reference import brute_force, random_instance
from glasswork.contract.result import Status
from glasswork.contract.solver import ClusterExecutor, Limits, SolveContext
from glasswork.cython_ext import bitset
from glasswork.plugins.corels.cluster.search import SearchConfig, worker_spill_space
from glasswork.plugins.corels.search import engine

distributed = pytest.importorskip("distributed")

FORCED = 1  # bytes: every task's queue spills as soon as it holds spill_min_entries prefixes


def _units(X: np.ndarray, y: np.ndarray) -> engine.Units:
    return engine.make_units(bitset.pack_columns(np.ascontiguousarray(X, dtype=np.uint8)), y, 2)


def _wide_instance(seed: int, n: int = 600, m: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, m)) < rng.uniform(0.1, 0.5, m)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & (1 - X[:, 3])) | (X[:, 4] & X[:, 5])).astype(np.int64)
    y[rng.random(n) < 0.2] ^= 1
    return X, y


@pytest.fixture(scope="module")
def worker_tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("worker-tmp")


@pytest.fixture(scope="module")
def cluster(worker_tmp: Path):
    """Two worker processes whose temporary directory (TMPDIR) is ``worker_tmp``, not the driver's."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", env={"TMPDIR": str(worker_tmp)}
    ) as c:
        yield c


def _spill_dirs(root: Path) -> list[Path]:
    return sorted(root.glob("glasswork-corels-spill-*"))


def _distributed(
    units: engine.Units,
    lam: float,
    address: str,
    limits: Limits | None = None,
    options: dict[str, Any] | None = None,
    spill: str | int = FORCED,
    min_entries: int = 2,
):
    from glasswork.plugins.corels.cluster.search import run_distributed

    ctx = SolveContext(limits, executor=ClusterExecutor(address))
    opts = {"policy": "lower_bound", "symmetry_map": "prefix", "threads": 1, **(options or {})}
    return run_distributed(
        units, lam, opts, ctx, lambda *a: None, lambda *a: None, spill=spill, spill_min_entries=min_entries
    )


@pytest.mark.parametrize("policy", engine.POLICIES)
@pytest.mark.parametrize("smap", ["prefix", "none"])
def test_spilled_workers_equal_brute_force(cluster, worker_tmp: Path, policy: str, smap: str) -> None:
    """Every task spills from its second queued prefix on: the cluster certifies the brute-force
    optimum (that of one process), the tasks' spills add up in the stats, nothing stays on disk."""
    rng = np.random.default_rng(40 + engine.POLICIES.index(policy))
    spills = 0
    for lam in (0.0, 0.01, 0.005):
        X, y = random_instance(rng, max_m=7)
        while X.shape[1] < 5:  # enough antecedents that the tasks' queues reach two prefixes
            X, y = random_instance(rng, max_m=7)
        ref, _ = brute_force(X, y, lam)
        units = _units(X, y)
        out = _distributed(units, lam, cluster.scheduler_address, options={"policy": policy, "symmetry_map": smap})
        assert out.status is Status.OPTIMAL
        assert out.objective == pytest.approx(ref, abs=1e-12) and out.lower_bound == out.objective
        one = engine.make_search(units, lam, policy=policy, symmetry_map=smap)
        engine.run_to_end(one)
        assert out.objective == pytest.approx(one.objective, abs=1e-12)
        spills += out.stats.get("spills", 0)
        if out.stats.get("spills"):
            assert out.stats["spilled"] >= out.stats["max_spilled"] > 0
            assert out.stats["spill_bytes_at_most"] >= out.stats["max_spill_bytes"] > 0
    assert spills > 0
    assert _spill_dirs(worker_tmp) == []


def test_a_stopped_run_with_prefixes_on_disk_has_a_valid_bound(cluster, worker_tmp: Path) -> None:
    X, y = _wide_instance(7)
    units = _units(X, y)
    one = engine.make_search(units, 0.005)
    engine.run_to_end(one)
    out = _distributed(units, 0.005, cluster.scheduler_address, Limits(time=0.4), min_entries=64)
    assert out.status is Status.STOPPED_TIME
    assert out.stats["spills"] > 0 and out.stats["spilled_at_stop"] > 0  # the stop found prefixes on disk
    assert out.lower_bound <= one.objective + 1e-12 <= out.objective + 2e-12
    assert out.lower_bound < out.objective
    assert _spill_dirs(worker_tmp) == []


def test_ctrl_c_on_the_driver_leaves_the_worker_tmp_empty(cluster, worker_tmp: Path) -> None:
    """Ctrl-C while the tasks hold prefixes on disk: the driver stops them on the way out and each
    task removes its spill directory before it returns."""
    from glasswork.plugins.corels.cluster.search import run_distributed

    X, y = _wide_instance(7)
    ctx = SolveContext(None, executor=ClusterExecutor(cluster.scheduler_address))
    calls: list[int] = []

    def interrupt(*progress: Any) -> None:
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt

    opts = {"policy": "lower_bound", "symmetry_map": "prefix", "threads": 1}
    with pytest.raises(KeyboardInterrupt):
        run_distributed(
            _units(X, y), 0.005, opts, ctx, lambda *a: None, interrupt,
            progress_interval=0.2, spill=FORCED, spill_min_entries=64,
        )  # fmt: skip
    assert len(calls) == 2
    assert _spill_dirs(worker_tmp) == []


def test_a_failed_task_leaves_the_worker_tmp_empty(cluster, worker_tmp: Path, monkeypatch) -> None:
    """A task raises after its queue spilled (an ordinary failure): the run fails with that error
    and the spill directory it made in the worker's TMPDIR is gone."""
    from glasswork.plugins.corels.cluster import search as dist

    def fails_after_a_spill(config, task_id, seeds):
        import os

        from glasswork.plugins.corels.cluster import search as on_worker

        real = on_worker.engine.make_search

        class FailsOnceSpilled:
            def __init__(self, search: Any) -> None:
                self.search = search

            def __getattr__(self, name: str) -> Any:
                return getattr(self.search, name)

            def run(self, *args: Any) -> int:
                code = self.search.run(*args)
                if self.search.spilled_size > 0:
                    made = [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("glasswork-corels-spill-")]
                    raise RuntimeError(f"a task failed on purpose with {len(made)} spill dir(s)")
                return code

        on_worker.engine.make_search = lambda *a, **k: FailsOnceSpilled(real(*a, **k))
        try:
            return on_worker.search_subtree(config, task_id, seeds)
        finally:
            on_worker.engine.make_search = real

    monkeypatch.setattr(dist, "search_subtree", fails_after_a_spill)
    X, y = _wide_instance(7)
    with pytest.raises(RuntimeError, match=r"on purpose with [12] spill dir\(s\)"):  # made, then removed
        _distributed(_units(X, y), 0.005, cluster.scheduler_address, min_entries=64)
    monkeypatch.undo()
    assert _spill_dirs(worker_tmp) == []


def test_a_spill_that_cannot_write_fails_the_run_with_a_message(cluster, worker_tmp: Path, monkeypatch) -> None:
    """The task's spill directory is gone when the queue spills (as a full disk fails a write):
    the run fails with SpillError naming the worker and the directory, no certificate."""
    from glasswork.plugins.corels.cluster import search as dist
    from glasswork.plugins.corels.search.engine import SpillError

    def directory_vanishes(config, task_id, seeds):
        from glasswork.plugins.corels.cluster import search as on_worker

        real = on_worker.engine.make_search

        class LosesItsDirectory:
            def __init__(self, search: Any) -> None:
                self.search = search

            def __getattr__(self, name: str) -> Any:
                return getattr(self.search, name)

            def set_spill(self, directory: str, budget: int, **kw: Any) -> None:
                self.search.set_spill(directory + "/missing", budget, **kw)

        on_worker.engine.make_search = lambda *a, **k: LosesItsDirectory(real(*a, **k))
        try:
            return on_worker.search_subtree(config, task_id, seeds)
        finally:
            on_worker.engine.make_search = real

    monkeypatch.setattr(dist, "search_subtree", directory_vanishes)
    X, y = _wide_instance(7)
    with pytest.raises(SpillError, match=r"spill files failed on worker tcp://.*No such file.*glasswork-corels-spill-"):
        _distributed(_units(X, y), 0.005, cluster.scheduler_address, min_entries=64)
    monkeypatch.undo()
    assert _spill_dirs(worker_tmp) == []


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, dict[str, Any]]] = []

    def set_spill(self, directory: str, budget: int, **kw: Any) -> None:
        self.calls.append((directory, budget, kw))


def _config(spill: str | int, memory: int | None) -> SearchConfig:
    X, y = _wide_instance(1, m=6)
    return SearchConfig(_units(X, y), 0.01, {}, {}, memory, spill, 5)


def test_the_spill_setting_reaches_the_task() -> None:
    """off: no directory; a size as is; auto: 60 % of limits.memory less what the process holds;
    the directory (in TMPDIR) is removed on the way out, the spill turned off."""
    from glasswork.memory import resident_memory

    off = _Recorder()
    with worker_spill_space(off, _config("off", None)):
        pass
    assert off.calls == []
    sized = _Recorder()
    with worker_spill_space(sized, _config(12345, None)):
        directory, budget, kw = sized.calls[0]
        assert Path(directory).is_dir() and Path(directory).name.startswith("glasswork-corels-spill-")
        assert budget == 12345 and kw == {"min_entries": 5, "map_budget": 12345 // 2}
    assert not Path(directory).exists() and sized.calls[-1][1] == 0
    auto = _Recorder()
    with worker_spill_space(auto, _config("auto", 40 * 10**9)):
        pass
    expected = int(0.6 * 40 * 10**9) - resident_memory()
    assert abs(auto.calls[0][1] - expected) < 64 << 20


def test_auto_is_resolved_against_the_worker(cluster) -> None:
    """With no limits.memory, ``auto`` takes the worker's Dask memory limit (here the machine's
    memory split between the two workers), computed on the worker."""
    from glasswork.plugins.corels.cluster.search import worker_memory

    config = _config("auto", None)
    with distributed.Client(cluster.scheduler_address) as client:
        limits = {w: i["memory_limit"] for w, i in client.scheduler_info(n_workers=-1)["workers"].items()}
        for address, limit in limits.items():  # as a task, where search_subtree calls it
            assert client.submit(worker_memory, config, workers=[address], pure=False).result() == limit
            capped = _config("auto", 3 * 10**9)
            assert client.submit(worker_memory, capped, workers=[address], pure=False).result() == 3 * 10**9
        assert 0 < min(limits.values()) < worker_memory(config)  # the driver here sees the machine's


def _compas_on_dask_local(tmp_path: Path, preexec: Any = None) -> tuple[Any, Path]:
    """``glasswork run --executor dask:local --workers 2`` on COMPAS at lambda 0.005 with
    ``spill: 1MB``, the workers started with a TMPDIR of their own."""
    import os
    import subprocess
    import sys

    from corels_reference import COMPAS

    if not COMPAS.with_suffix(".out").exists():
        pytest.skip("COMPAS CORELS files not found")
    spec = tmp_path / "c.yaml"
    spec.write_text(
        f"name: c\nsolver: corels\ndata:\n  source: {COMPAS.with_suffix('.out')}\n"
        "objective: {regularization: 0.005}\nsearch: {spill: 1MB}\nlimits: {time: 300, memory: 2GB}\n"
    )
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    args = ["run", str(spec), "--no-store", "--json", "-q", "--executor", "dask:local", "--workers", "2"]
    out = subprocess.run(
        [sys.executable, "-m", "glasswork", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(spill_root)},
        timeout=600,
        preexec_fn=preexec,
    )
    return out, spill_root


@pytest.mark.slow
def test_cli_dask_local_full_disk_fails_the_run_with_a_message(tmp_path: Path) -> None:
    """Files may not grow past 64 KiB in the driver and its workers (RLIMIT_FSIZE, inherited; a
    write fails with EFBIG as on a full disk): exit 1, a message naming the worker and the spill
    directory, no certificate, nothing left in the workers' TMPDIR."""
    import resource

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))

    out, spill_root = _compas_on_dask_local(tmp_path, small_files)
    assert out.returncode == 1, out.stdout + out.stderr[-2000:]
    assert "spill files failed on worker" in out.stderr and str(spill_root) in out.stderr
    assert "optimal" not in out.stdout
    assert _spill_dirs(spill_root) == []


@pytest.mark.slow
def test_cli_dask_local_spilled_certifies_the_compas_optimum(tmp_path: Path) -> None:
    """``glasswork run --executor dask:local`` on COMPAS at lambda 0.005 with ``spill: 1MB``: the
    workers (started with the driver's TMPDIR) spill, the run certifies the one-process optimum
    (0.3461414), and their TMPDIR is empty afterwards."""
    out, spill_root = _compas_on_dask_local(tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout)
    assert doc["status"] == "optimal" and doc["objective"] == pytest.approx(0.3461414, abs=1e-7)
    assert doc["stats"]["spills"] > 0 and doc["stats"]["spilled"] > 0
    assert _spill_dirs(spill_root) == []


def test_the_tasks_spill_figures_are_summed_and_maxed() -> None:
    """Prefixes written and spills add up over tasks; the most one task held is a max, and the
    sum of those maxima bounds what was on disk at once; a task that never spilled adds nothing."""
    from types import SimpleNamespace

    from glasswork.plugins.corels.cluster.search import SearchDriver

    driver = SimpleNamespace(spill={})

    def task(spills: int, spilled: int, most: int, most_bytes: int, at_end: int = 0) -> dict[str, Any]:
        counters = {"spills": spills, "reloads": 2 * spills, "spilled": spilled}
        counters |= {"max_spilled": most, "max_spill_bytes": most_bytes}
        return {"counters": counters, "spilled_at_end": at_end}

    for out in (task(3, 100, 60, 2000), task(0, 0, 0, 0), task(5, 40, 30, 3000, at_end=7)):
        SearchDriver.add_spill(driver, out)  # type: ignore[arg-type]
    assert driver.spill == {
        "spills": 8,
        "reloads": 16,
        "spilled": 140,
        "max_spilled": 60,
        "max_spill_bytes": 3000,
        "spill_bytes_at_most": 5000,
        "spilled_tasks": 2,
        "spilled_at_stop": 7,
    }
