"""The one Dask driver the CORELS search and its Rashomon set share (plugins/corels/cluster/driver.py):
what it does with a task that returned, whose worker died, or that failed, without a cluster (a
client that records what it is asked; the runs on a real cluster are in test_distributed.py and
test_corels_rashomon_cluster.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from glasswork.contract.solver import Limits, SolveContext
from glasswork.plugins.corels.cluster import driver as cluster
from glasswork.plugins.corels.cluster.driver import MAX_RESUBMITS, Connection, Driver, Subtree, TaskConfig

pytest.importorskip("distributed")


class KilledWorker(Exception):
    """Named as Dask's: the driver knows it by its name (Dask's own lives in distributed.scheduler)."""


class Future:
    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    def done(self) -> bool:
        return True

    def result(self) -> Any:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class Client:
    """Hands out futures whose outcomes the test lines up, and records what was submitted."""

    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes
        self.submitted: list[tuple[Any, ...]] = []

    def submit(self, function: Any, *args: Any, **kwargs: Any) -> Future:
        self.submitted.append(args)
        return Future(self.outcomes.pop(0))


class Messages:
    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def qsize(self) -> int:
        return len(self.items)

    def get(self, batch: bool = False) -> list[tuple[Any, ...]]:
        items, self.items = self.items, []
        return items


@dataclass
class Piece(Subtree):
    bound: float


class Recording(Driver[Piece]):
    key = "test"
    period = 0.002

    def __init__(self, client: Client, *, lose_when_stopping: bool = False) -> None:
        self.failed_when_stopping_is_lost = lose_when_stopping  # type: ignore[misc]
        config = TaskConfig(None, 0.0, {}, {"queue": "q"}, None)  # type: ignore[arg-type]
        super().__init__(Connection(client, config.names), config, SolveContext(Limits()))
        self.events: list[tuple[str, int, Any]] = []

    def task(self, tree: Piece) -> tuple[Any, tuple[Any, ...]]:
        return print, (tree.bound,)

    def read(self, message: tuple[Any, ...], tree: Piece | None) -> None:
        self.events.append(("read", message[1], tree))
        if tree is not None:
            tree.reported, tree.evaluations = message[2], message[3]

    def finished(self, tree: Piece, out: dict[str, Any]) -> None:
        self.evaluated += out["evaluated"]
        self.events.append(("finished", tree.task, out))

    def lost(self, tree: Piece) -> None:
        self.events.append(("lost", tree.task, tree.resubmits))

    def halt(self) -> None:
        self.events.append(("halt", -1, None))


@pytest.fixture(autouse=True)
def fake_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    import distributed

    monkeypatch.setattr(distributed, "Queue", lambda name, client=None: Messages())


def test_a_dead_workers_subtree_is_rerun_with_its_evaluations_counted_then_lost() -> None:
    client = Client([KilledWorker("gone")] * (MAX_RESUBMITS + 1))
    driver = Recording(client)
    driver.submit(Piece(bound=0.25))
    reruns = 0
    while driver.running:
        future, tree = next(iter(driver.running.items()))
        tree.evaluations = 10  # what the task had reported before its worker died
        driver.collect(future)
        reruns += 1
    assert reruns == MAX_RESUBMITS + 1 and driver.resubmitted == MAX_RESUBMITS
    assert driver.events == [("lost", MAX_RESUBMITS, MAX_RESUBMITS)]  # a new task id at every run
    assert driver.evaluated == 10 * (MAX_RESUBMITS + 1)
    assert [args[1] for args in client.submitted] == list(range(MAX_RESUBMITS + 1))


def test_a_rerun_starts_its_report_afresh() -> None:
    driver = Recording(Client([KilledWorker("gone"), {"evaluated": 7}]))
    driver.submit(Piece(bound=0.25))
    ((future, tree),) = driver.running.items()
    tree.reported, tree.evaluations = 0.3, 5
    driver.collect(future)
    assert (tree.reported, tree.evaluations, tree.task) == (None, 0, 1)
    ((future, _),) = driver.running.items()
    driver.collect(future)
    assert driver.evaluated == 5 + 7 and driver.events[-1] == ("finished", 1, {"evaluated": 7})


def test_a_dead_worker_once_the_run_stops_is_lost_not_rerun() -> None:
    driver = Recording(Client([KilledWorker("gone")]))
    driver.submit(Piece(bound=0.25))
    driver.stopping = True
    driver.collect(next(iter(driver.running)))
    assert driver.events == [("lost", 0, 0)] and driver.resubmitted == 0


@pytest.mark.parametrize("stopping", [False, True])
def test_a_failed_task_raises_unless_the_run_is_stopping_and_takes_it_as_lost(stopping: bool) -> None:
    for lose in (False, True):
        driver = Recording(Client([RuntimeError("on purpose")]), lose_when_stopping=lose)
        driver.submit(Piece(bound=0.25))
        driver.stopping = stopping
        if stopping and lose:
            driver.collect(next(iter(driver.running)))
            assert driver.events == [("lost", 0, 0)]
        else:
            with pytest.raises(RuntimeError, match="on purpose"):
                driver.collect(next(iter(driver.running)))


def test_messages_reach_the_subtree_that_runs_their_task() -> None:
    driver = Recording(Client([{"evaluated": 1}, {"evaluated": 2}]))
    first, second = Piece(bound=0.1), Piece(bound=0.2)
    driver.submit(first)
    driver.submit(second)
    driver.messages.items = [("status", 1, 0.5, 40), ("status", 9, 0.6, 50)]  # 9: no task of this run
    driver.drain()
    assert driver.events == [("read", 1, second), ("read", 9, None)]
    assert second.reported == 0.5 and driver.evaluations() == 40


def test_the_run_polls_until_every_task_returned_and_stops_them_at_a_limit() -> None:
    driver = Recording(Client([{"evaluated": 3}, {"evaluated": 4}]))
    driver.ctx = SolveContext(Limits(nodes=1))
    driver.submit(Piece(bound=0.1))
    driver.submit(Piece(bound=0.2))
    driver.messages.items = [("status", 0, 0.5, 2)]
    driver.run()
    kinds = [kind for kind, _, _ in driver.events]
    assert kinds == ["read", "finished", "finished", "halt"] and driver.stopping and driver.over
    assert driver.evaluations() == 7


def test_the_way_out_stops_the_tasks_and_drops_the_named_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(cluster, "stop_tasks", lambda client, futures, stop: calls.append(f"stop {len(futures)}"))
    monkeypatch.setattr(cluster, "release_named", lambda client, names: calls.extend(sorted(names)))

    class Executor:
        def connect(self, cancelled: Any = None) -> tuple[Client, Any]:
            return Client([{"evaluated": 0}]), lambda: calls.append("closed")

    ctx = SolveContext(Limits(), executor=Executor())  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="midway"):
        with cluster.connected(ctx, "glasswork-test", ("stop",)) as connection:
            driver = Recording(connection.client)
            connection.driver = driver
            driver.submit(Piece(bound=0.1))
            raise RuntimeError("midway")
    assert calls[0] == "stop 1" and calls[-1] == "closed"
    assert [n.rsplit("-", 1)[0] for n in calls[1:-1]] == ["glasswork-test-queue", "glasswork-test-stop"]
