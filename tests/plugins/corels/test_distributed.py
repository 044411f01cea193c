"""One CORELS search spread over Dask workers (issue 27 item 2): the kernel's seed/take/offer
handles, the driver against brute force and the single-process search, a worker killed mid-run,
a stopped run's bound, and ``glasswork run --executor``'s refusals."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from corels_reference import COMPAS, brute_force, random_instance
from glasswork.cli import cli
from glasswork.contract.result import Status
from glasswork.contract.solver import ClusterExecutor, Limits, SolveContext
from glasswork.cython_ext import bitset
from glasswork.plugins.corels.cluster.search import search_split_here
from glasswork.plugins.corels.search import engine
from grids import sampled
from processes import a_worker_pid, local_cluster

distributed = pytest.importorskip("distributed")


def _units(X: np.ndarray, y: np.ndarray) -> engine.Units:
    return engine.make_units(bitset.pack_columns(np.ascontiguousarray(X, dtype=np.uint8)), y, 2)


def _wide_instance(seed: int, n: int = 600, m: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Enough antecedents that a search takes about a second, so a run can be cut or hit."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, m)) < rng.uniform(0.1, 0.5, m)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & (1 - X[:, 3])) | (X[:, 4] & X[:, 5])).astype(np.int64)
    y[rng.random(n) < 0.2] ^= 1
    return X, y


def _single(units: engine.Units, lam: float) -> tuple[float, list[int], int]:
    search = engine.make_search(units, lam)
    engine.run_to_end(search)
    assert search.done
    return search.objective, search.best_prefix, search.n_evaluated


# -- the kernel's handles -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_seeded_subtrees_cover_the_search(seed: int) -> None:
    """The root's open prefixes, taken and searched apart (incumbent passed along), find the
    brute-force optimum; each taken bound is at most the best list under it."""
    rng = np.random.default_rng(seed)
    X, y = random_instance(rng, max_m=7)
    lam = (0.0, 0.005, 0.01, 0.03)[seed % 4]
    ref, _ = brute_force(X, y, lam)
    units = _units(X, y)
    root = engine.make_search(units, lam)
    root.run(0.0, np.zeros(1, dtype=np.uint8), 1)
    best, prefix = root.objective, root.best_prefix
    for seed_prefix, bound in root.take(1000):
        sub = engine.make_search(units, lam)
        sub.offer_incumbent(prefix)
        sub.seed([seed_prefix])
        engine.run_to_end(sub)
        assert sub.done
        if sub.objective < best:
            best, prefix = sub.objective, sub.best_prefix
            assert sub.objective >= bound - 1e-12
    assert root.queue_size == 0
    assert best == pytest.approx(ref, abs=1e-12)


def test_offer_incumbent_rescores_and_keeps_the_better() -> None:
    X, y = _wide_instance(1, m=12)
    units = _units(X, y)
    opt, prefix, _ = _single(units, 0.01)
    search = engine.make_search(units, 0.01)
    assert search.offer_incumbent(prefix)
    assert search.objective == opt and search.best_prefix == prefix
    assert not search.offer_incumbent([])  # the empty list scores worse
    with pytest.raises(ValueError):
        search.offer_incumbent([0, 0])
    search.seed([[]])  # the root again: the search certifies what it was offered
    engine.run_to_end(search)
    assert search.done and search.objective == opt


# -- permutations across subtrees: the reordering check and the ordered map -----------------------


def _units_of(X: np.ndarray, y: np.ndarray, n_classes: int, weights: np.ndarray | None) -> engine.Units:
    bits = bitset.pack_columns(np.ascontiguousarray(X, dtype=np.uint8))
    return engine.make_units(bits, y, n_classes, class_weights=weights)


# seeds 0 to 4: every weighting and map (seed % 3), every lambda and the cap (seed % 4), three classes (4)
@pytest.mark.parametrize("seed", sampled(range(24), range(5)))
def test_every_open_prefix_searched_alone_finds_the_optimum(seed: int) -> None:
    """The root's open prefixes after one to three expansions, each searched by its own Search
    with no map, no incumbent and no bound shared with the others: the best they find is the
    brute-force optimum. A child dropped for a reordering that lives in another subtree, or a
    map tie kept elsewhere, would lose it here; ties of equal error are frequent (duplicated
    and complementary columns, few rows), and fractional weights take the strict-only path."""
    rng = np.random.default_rng(1000 + seed)
    n_classes = 3 if seed % 5 == 4 else 2
    X, y = random_instance(rng, n_classes=n_classes, max_m=6)
    weights = [None, np.array([0.5, 1.5, 1.0][:n_classes]), np.array([1 / 3, 1.0, 0.7][:n_classes])][seed % 3]
    lam = (0.0, 0.005, 0.01, 0.03)[seed % 4]
    smap = ("prefix", "prefix", "captured")[seed % 3]
    max_len = (255, 255, 255, 2)[seed % 4]
    ref, _ = brute_force(X, y, lam, n_classes, weights=weights, max_len=max_len)
    units = _units_of(X, y, n_classes, weights)
    kw = {"symmetry_map": smap, "max_prefix_length": max_len}
    root = engine.make_search(units, lam, **kw)
    stop = np.zeros(1, dtype=np.uint8)
    for _ in range(1 + seed % 3):
        root.run(0.0, stop, root.n_evaluated + 1)
    best = root.objective
    for prefix, _ in root.take(10_000):
        alone = engine.make_search(units, lam, **kw)
        alone.seed([prefix])
        engine.run_to_end(alone)
        assert alone.done
        best = min(best, alone.objective)
    assert best == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_split_in_one_process_equals_brute_force(threads: int) -> None:
    rng = np.random.default_rng(77)
    for i in range(12):
        X, y = random_instance(rng, max_m=6)
        lam = (0.0, 0.005, 0.01, 0.03)[i % 4]
        ref, _ = brute_force(X, y, lam)
        objective, prefix, _ = search_split_here(_units(X, y), lam, {"threads": threads}, 2 + i % 3)
        assert objective == pytest.approx(ref, abs=1e-12)
        assert engine.make_search(_units(X, y), lam).evaluate(prefix)["objective"] == pytest.approx(ref, abs=1e-12)


def test_the_reordering_check_prunes_in_seeded_searches_with_the_prefix_map() -> None:
    """The check runs where a map cannot see the other orderings (a seeded task of a split),
    with the prefix map only; one unseeded process leaves it to its map (cheaper there)."""
    X, y = _wide_instance(3, m=16)
    units = _units(X, y)
    opt, _, _ = _single(units, 0.005)
    pruned = {}
    for smap in engine.SYMMETRY_MAPS:
        search = engine.make_search(units, 0.005, symmetry_map=smap)
        search.seed([[]])  # the root, as a task
        engine.run_to_end(search)
        assert search.objective == opt
        pruned[smap] = search.counters()["pruned_reorder"]
    assert pruned["prefix"] > 0 and pruned["none"] == 0 and pruned["captured"] == 0
    unseeded = engine.make_search(units, 0.005)
    engine.run_to_end(unseeded)
    assert unseeded.counters()["pruned_reorder"] == 0


def test_a_two_way_split_does_about_the_work_of_one_process() -> None:
    """Issue 27's goal for 2 workers (evaluations within 1.3x of one process), on the split
    searched here with an instant incumbent, which the cluster matches. With a map per subtree
    and nothing else the split did 1.53x here (1.05x now; 1.7x to 1.8x on COMPAS): every ordering
    of a set whose rules start different subtrees was searched once per subtree."""
    X, y = _wide_instance(1, m=20)
    units = _units(X, y)
    opt, _, one = _single(units, 0.005)
    objective, _, split = search_split_here(units, 0.005, {"threads": 1}, 2)
    assert objective == opt
    assert split <= 1.3 * one


# -- the driver on a LocalCluster -----------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


def _distributed(units: engine.Units, lam: float, address: str, limits: Limits | None = None):
    from glasswork.plugins.corels.cluster.search import run_distributed

    found: list[tuple[float, list[int]]] = []
    ctx = SolveContext(limits, executor=ClusterExecutor(address))
    out = run_distributed(
        units,
        lam,
        {"policy": "lower_bound", "symmetry_map": "prefix", "threads": 1},
        ctx,
        lambda objective, prefix, evaluations: found.append((objective, prefix)),
        lambda *progress: None,
    )
    return out, found


def test_distributed_equals_brute_force(cluster) -> None:
    rng = np.random.default_rng(5)
    for lam in (0.0, 0.01, 0.03):
        X, y = random_instance(rng, max_m=7)
        ref, _ = brute_force(X, y, lam)
        out, found = _distributed(_units(X, y), lam, cluster.scheduler_address)
        assert out.status is Status.OPTIMAL
        assert out.objective == pytest.approx(ref, abs=1e-12) and out.lower_bound == out.objective
        assert found[-1][0] == out.objective  # the last incumbent event is the optimum


def test_one_and_two_workers_equal_brute_force(cluster) -> None:
    """The same instances on a one-worker and the two-worker cluster: each certifies the
    brute-force optimum, with the reordering check and the ordered map pruning in every task."""
    from distributed import LocalCluster

    rng = np.random.default_rng(11)
    cases = []
    for i in range(6):
        X, y = random_instance(rng, max_m=7)
        lam = (0.0, 0.005, 0.01, 0.03)[i % 4]
        cases.append((X, y, lam, brute_force(X, y, lam)[0]))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as one:
        for address in (one.scheduler_address, cluster.scheduler_address):
            for X, y, lam, ref in cases:
                out, _ = _distributed(_units(X, y), lam, address)
                assert out.status is Status.OPTIMAL
                assert out.objective == pytest.approx(ref, abs=1e-12) and out.lower_bound == out.objective


def test_distributed_equals_one_process(cluster) -> None:
    X, y = _wide_instance(3, m=24)
    units = _units(X, y)
    opt, prefix, evaluations = _single(units, 0.005)
    out, _ = _distributed(units, 0.005, cluster.scheduler_address)
    assert out.status is Status.OPTIMAL and out.objective == opt
    assert engine.make_search(units, 0.005).evaluate(out.prefix)["objective"] == opt
    assert out.stats["evaluated"] > 0 and out.stats["workers"] == 2


class _Starting(ClusterExecutor):
    """An executor whose cluster reads as still starting for its first ``polls`` looks, then is
    the one at ``address``; counts its connects."""

    def __init__(self, address: str, polls: int) -> None:
        super().__init__(address)
        object.__setattr__(self, "looks", [polls, 0])

    @property
    def starting(self) -> bool:
        self.looks[0] -= 1
        return self.looks[0] >= 0

    def connect(self, cancelled=None):
        self.looks[1] += 1
        return super().connect(cancelled)


def _head_start(units: engine.Units, lam: float, executor: _Starting, limits: Limits | None = None):
    from glasswork.plugins.corels.cluster.search import run_distributed, search_while_the_cluster_starts

    found: list[tuple[float, list[int], int]] = []
    ctx = SolveContext(limits, executor=executor)
    options = {"policy": "lower_bound", "symmetry_map": "prefix", "threads": 2}

    def incumbent(objective: float, prefix: list[int], evaluations: int) -> None:
        found.append((objective, prefix, evaluations))

    head = search_while_the_cluster_starts(units, lam, options, ctx, incumbent)
    out = run_distributed(units, lam, options, ctx, incumbent, lambda *progress: None, head_start=head)
    return head, out, found


def test_a_search_that_ends_while_the_cluster_starts_is_one_process_search(cluster) -> None:
    """The cluster reads as starting for as long as the search runs: the search ends in this
    process with one process's optimum and certificate, and never connects."""
    X, y = _wide_instance(3, m=24)
    units = _units(X, y)
    opt, _, evaluations = _single(units, 0.005)
    executor = _Starting(cluster.scheduler_address, 10**9)
    head, out, found = _head_start(units, 0.005, executor)
    assert head is not None and head.ended is out
    assert out.status is Status.OPTIMAL and out.objective == opt == out.lower_bound
    assert out.stats["searched_here_while_the_cluster_started"] == out.stats["evaluated"] > 0
    assert found[-1][0] == opt and executor.looks[1] == 0


def test_the_cluster_takes_on_from_a_head_start_it_did_not_finish(cluster) -> None:
    """The cluster is up after three slices here: its search starts from the root with this
    process's incumbent, counts its evaluations, and certifies the same optimum."""
    X, y = _wide_instance(7)
    units = _units(X, y)
    opt, _, _ = _single(units, 0.005)
    executor = _Starting(cluster.scheduler_address, 3)
    head, out, found = _head_start(units, 0.005, executor)
    assert head is not None and head.ended is None and head.evaluations > 0
    assert out.status is Status.OPTIMAL and out.objective == opt and executor.looks[1] == 1
    assert out.stats["searched_here_while_the_cluster_started"] == head.evaluations
    assert out.stats["evaluated"] > head.evaluations and out.stats["workers"] == 2
    assert [o for o, _, _ in found] == sorted({o for o, _, _ in found}, reverse=True)  # each incumbent once


def test_a_head_start_stopped_by_a_limit_keeps_its_bound(cluster) -> None:
    X, y = _wide_instance(7)
    units = _units(X, y)
    opt, _, _ = _single(units, 0.005)
    executor = _Starting(cluster.scheduler_address, 10**9)
    head, out, _ = _head_start(units, 0.005, executor, Limits(nodes=20_000))
    assert head is not None and head.ended is out and executor.looks[1] == 0
    assert out.status is Status.STOPPED_NODES
    assert out.lower_bound <= opt + 1e-12 <= out.objective + 2e-12


def test_no_head_start_without_a_cluster_starting(cluster) -> None:
    from glasswork.plugins.corels.cluster.search import search_while_the_cluster_starts

    X, y = _wide_instance(3, m=12)
    ctx = SolveContext(None, executor=ClusterExecutor(cluster.scheduler_address))
    assert search_while_the_cluster_starts(_units(X, y), 0.01, {"threads": 1}, ctx, lambda *a: None) is None


@pytest.mark.slow  # end to end on dask:local, a worker killed mid-search
def test_a_killed_worker_loses_no_subtree() -> None:
    """A worker process killed mid-run: its subtree is searched again and the optimum is exact."""
    X, y = _wide_instance(7)
    units = _units(X, y)
    opt, _, _ = _single(units, 0.005)
    killed_at: list[float] = []
    with local_cluster() as own:
        victim = a_worker_pid(own.scheduler_address)

        def kill() -> None:
            time.sleep(0.5)
            os.kill(victim, signal.SIGKILL)
            killed_at.append(time.monotonic())

        killer = threading.Thread(target=kill)
        killer.start()
        try:
            out, _ = _distributed(units, 0.005, own.scheduler_address)
        finally:
            killer.join()
        finished = time.monotonic()
    assert killed_at and killed_at[0] < finished - 0.05  # the worker died while the search ran
    assert out.status is Status.OPTIMAL and out.objective == opt


def test_a_stopped_run_has_a_valid_lower_bound(cluster) -> None:
    X, y = _wide_instance(7)
    units = _units(X, y)
    opt, _, _ = _single(units, 0.005)
    out, _ = _distributed(units, 0.005, cluster.scheduler_address, Limits(time=0.3))
    assert out.status is Status.STOPPED_TIME
    assert out.lower_bound <= opt + 1e-12 <= out.objective + 2e-12
    assert out.lower_bound < out.objective


def named_on_scheduler(address: str) -> set[str]:
    """The names of every Queue, Variable, Event and pub/sub topic the scheduler holds."""

    def names(dask_scheduler=None) -> list[str]:
        ext = dask_scheduler.extensions
        found = [*ext["queues"].queues, *ext["variables"].variables, *ext["events"]._events]
        if "pubsub" in ext:
            found += [*ext["pubsub"].publishers, *ext["pubsub"].subscribers]
        return [str(n) for n in found]

    with distributed.Client(address) as client:
        return set(client.run_on_scheduler(names))


def test_a_failed_task_leaves_no_named_object_on_the_scheduler(cluster, monkeypatch) -> None:
    """One task raises (an ordinary failure, not a killed worker) while the other searches: the run
    fails with that error, the other task is stopped, and the scheduler holds none of the run's
    Queues or Variables afterwards (they stayed there before)."""
    from glasswork.plugins.corels.cluster import search as dist

    def first_task_fails(config, task_id, seeds):
        from distributed import Queue, Variable
        from glasswork.plugins.corels.cluster import search as on_worker

        if task_id == 0:
            Queue(config.names["queue"])  # what a real task holds when it fails
            Variable(config.names["control"]).get()
            raise RuntimeError("a task failed on purpose")
        return on_worker.search_subtree(config, task_id, seeds)

    monkeypatch.setattr(dist, "search_subtree", first_task_fails)
    X, y = _wide_instance(7)
    with pytest.raises(RuntimeError, match="on purpose"):
        _distributed(_units(X, y), 0.005, cluster.scheduler_address)
    assert not {n for n in named_on_scheduler(cluster.scheduler_address) if n.startswith("glasswork-")}
    monkeypatch.undo()
    out, _ = _distributed(_units(X, y), 0.005, cluster.scheduler_address)  # and after a success
    assert out.status is Status.OPTIMAL
    assert not {n for n in named_on_scheduler(cluster.scheduler_address) if n.startswith("glasswork-")}


# -- glasswork run --executor -----------------------------------------------------------------


def test_executor_is_refused_by_a_solver_without_support(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    spec = tmp_path / "toy.yaml"
    spec.write_text(f"name: t\nsolver: toy\ndata:\n  source: {tiny_csv}\n  target: label\n")
    result = CliRunner().invoke(cli, ["run", "-q", "--no-store", "--executor", "dask:local", str(spec)])
    assert result.exit_code == 2
    assert "cannot spread one search over a cluster" in result.stderr


@pytest.mark.parametrize("executor", ["dask", "spark:local", "dask:"])
def test_an_unknown_executor_is_a_usage_error(executor: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "-q", "--no-store", "--executor", executor, str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and "unknown executor" in result.stderr and "nothing was run" in result.stderr


@pytest.mark.slow  # 10 to 22 s (a timeout waited out, or every character tried): .ci/run's slow step
@pytest.mark.skipif(not (COMPAS.parent / "compas_train.out").exists(), reason="COMPAS data not available")
def test_a_scheduler_that_cannot_be_reached_fails_the_run(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(
        f"name: c\nsolver: corels\ndata:\n  source: {COMPAS.parent / 'compas_train.out'}\n"
        "objective:\n  regularization: 0.05\n"
    )
    result = CliRunner().invoke(cli, ["run", "-q", "--no-store", "--executor", "dask:tcp://127.0.0.1:9", str(spec)])
    assert result.exit_code == 1
    assert "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(not (COMPAS.parent / "compas_train.out").exists(), reason="COMPAS data not available")
def test_compas_on_dask_local_certifies_the_single_process_optimum(tmp_path: Path) -> None:
    import json

    spec = tmp_path / "c.yaml"
    spec.write_text(
        f"name: c\nsolver: corels\ndata:\n  source: {COMPAS.parent / 'compas_train.out'}\n"
        "objective:\n  regularization: 0.015\n"
    )
    one = CliRunner().invoke(cli, ["run", "-q", "--no-store", "--json", str(spec)])
    two = CliRunner().invoke(
        cli, ["run", "-q", "--no-store", "--json", "--executor", "dask:local", "--workers", "2", str(spec)]
    )
    assert one.exit_code == 0 and two.exit_code == 0, two.stderr
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert b["status"] == "optimal" and b["objective"] == a["objective"] and b["lower_bound"] == a["lower_bound"]
    assert b["stats"]["executor"] == "dask:local"
