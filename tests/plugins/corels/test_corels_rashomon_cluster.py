"""The CORELS Rashomon set on a Dask cluster (plugins/corels/cluster/enumeration.py), on a local
cluster of two workers: the same count and members as one process and as brute force, a stopped
enumeration's bound, a worker killed mid-enumeration, and ``glasswork run --executor``'s output."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.contract.events import Event
from glasswork.contract.result import Result
from glasswork.contract.solver import ClusterExecutor, Limits, SolveContext, StopReason
from glasswork.cython_ext import corels_rashomon as cr
from glasswork.data import Problem
from glasswork.plugins.corels import CorelsSolver, CorelsSpec
from glasswork.plugins.corels.inputs import antecedents_for
from glasswork.plugins.corels.rashomon.enumeration import make_enumerator
from grids import covering_grid
from processes import a_worker_pid, local_cluster
from test_corels_rashomon import _problem, every_rule_list, units_of, with_collapsed_orderings, within
from test_distributed import named_on_scheduler

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


def _spec(lam: float, rashomon: dict, max_len: int | None = None, **search) -> CorelsSpec:
    return CorelsSpec.model_validate(
        {
            "name": "t",
            "data": {"source": "sklearn:breast_cancer"},
            "solver": "corels",
            "store": {"enabled": False},
            "objective": {"regularization": lam},
            "constraints": {"min_support": 0.0, "negations": False, "max_prefix_length": max_len},
            "search": {"threads": 1, **search},
            "rashomon": rashomon,
        }
    )


def _solve(spec: CorelsSpec, problem: Problem, address: str | None, limits: Limits | None = None, on_event=None):
    events: list[Event] = []
    executor = None if address is None else ClusterExecutor(address)

    def emit(event: Event) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event, ctx)

    ctx = SolveContext(limits, emit, executor=executor)
    return CorelsSolver(spec).solve(problem, ctx), events


def _prefixes(result: Result, problem: Problem, spec: CorelsSpec) -> list[tuple[float, tuple[int, ...]]]:
    """The kept members as (objective, antecedent indices), from their rule lists."""
    names, _, _ = antecedents_for(problem, spec.constraints, spec.objective.regularization)
    index = {name: i for i, name in enumerate(names)}
    assert result.rashomon is not None
    return [(m.objective, tuple(index[r.antecedent] for r in m.model.rules)) for m in result.rashomon.members]


def _random(seed: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, m)) < rng.uniform(0.15, 0.6, m)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & (1 - X[:, 3 % m]))).astype(np.int64)
    y[rng.random(n) < 0.2] ^= 1
    return X, y


CASES = [  # seed, rows, antecedents, lambda, epsilon, policy, max_prefix_length, threads per task
    (1, 40, 5, 0.01, 0.3, "lower_bound", None, 1),
    (2, 60, 6, 0.005, 0.2, "lower_bound", None, 2),
    (3, 30, 5, 0.0, 0.0, "objective", None, 1),
    (4, 50, 5, 0.02, 0.5, "dfs", None, 2),
    (5, 40, 6, 0.01, 0.4, "bfs", 2, 1),
]


@pytest.mark.parametrize(("seed", "n", "m", "lam", "epsilon", "policy", "max_len", "threads"), CASES)
def test_the_cluster_set_equals_one_process_and_brute_force(
    cluster, seed, n, m, lam, epsilon, policy, max_len, threads
) -> None:
    X, y = _random(seed, n, m)
    problem = _problem(X, y)
    spec = _spec(lam, {"epsilon": epsilon, "max_models": 10**6}, max_len, policy=policy, threads=threads)
    here, _ = _solve(spec, problem, None)
    there, events = _solve(spec, problem, cluster.scheduler_address)
    a, b = here.rashomon, there.rashomon
    assert a is not None and b is not None and a.complete and b.complete and b.unenumerated_bound is None
    assert there.certificate.status.value == "optimal" and b.optimum == a.optimum
    expected = within(every_rule_list(X, y, lam, max_len=max_len), b.threshold)
    assert b.count == a.count == len(expected)
    got = _prefixes(there, problem, spec)
    assert sorted(p for _, p in got) == sorted(p for _, p in _prefixes(here, problem, spec))
    assert sorted(p for _, p in got) == sorted(p for _, p in expected)
    objectives = [o for o, _ in got]
    assert objectives == sorted(objectives)
    np.testing.assert_allclose(objectives, [o for o, _ in expected], atol=1e-12)
    announced = [e for e in events if e.kind == "rashomon"]
    assert announced[-1].rashomon.count == b.count
    streamed = [mem.objective for e in announced for mem in e.members]
    assert sorted(streamed) == objectives  # every kept member announced once
    while_running = [mem.objective for e in announced[:-1] for mem in e.members]
    assert while_running == sorted(while_running)  # best first (the collapsed orderings come at the end)
    if policy not in ("lower_bound", "objective"):
        assert not while_running  # out of objective order: nothing is final before the end
    assert there.stats["rashomon_workers"] == 2 and there.stats["rashomon_count"] == b.count
    assert there.stats["rashomon_threads"] == threads  # search.threads in every task
    assert there.stats["rashomon_depth_first_from"] == -1  # no task switched (it was -1 summed over tasks)
    assert there.stats["rashomon_mirrored_pairs"] > 0  # swapped first two rules counted by their mirror


def _enumerate_tree(units, lam: float, threshold: float, optimum: float, tree, **options):
    """A subtree as a task enumerates it: its count with the lists of its reported pairs (left
    out in another subtree), and its kept members with their mirrors."""
    from glasswork.plugins.corels.cluster.enumeration import mirrored

    en = make_enumerator(
        units, lam, threshold, floor=optimum, roots=tree.roots, include_empty=tree.include_empty,
        seconds=tree.seconds, include_short=tree.include_short, max_models=10**6,
        skip_pairs=tree.skip_pairs or None, **options,
    )  # fmt: skip
    stop = np.zeros(1, np.uint8)
    while en.run(5.0, stop, -1) != 0:  # DONE
        pass
    return en.count + sum(en.counts_through(tree.report_pairs)), mirrored(tree, en.kept_members())


@pytest.mark.parametrize("policy", ["lower_bound", "dfs"])
def test_a_first_rule_split_by_its_second_rule_adds_up_to_brute_force(policy: str) -> None:
    """The driver's split with the best first rule cut into pieces by second rule (and without
    whole roots left, when it is the only live one), and the swapped two-rule prefixes of equal
    error left out in one subtree and counted by their mirror in another: over the subtrees the
    counts add up to brute force, and every list is listed once, with its objective."""
    from glasswork.plugins.corels.cluster.enumeration import mirror_pairs, split_roots

    only_pieces = pairs = 0
    for seed, n, m, lam, epsilon, max_len in [
        (21, 50, 5, 0.01, 0.4, None), (22, 60, 6, 0.005, 0.2, None), (23, 40, 5, 0.0, 0.0, None),
        (24, 40, 6, 0.02, 0.5, 3), (26, 60, 5, 0.1, 0.05, None), (55, 40, 5, 0.1, 0.0, None),
        (35834, 48, 4, 0.0, 0.3, 2), (424106, 35, 6, 0.02, 1.0, 3),
    ]:  # fmt: skip
        X, y = _random(seed, n, m)
        X[:, m - 1] = X[:, 0] if seed > 1000 else X[:, m - 1]  # a copied antecedent: its twin (7) at length 1
        every = every_rule_list(X, y, lam, max_len=max_len)
        optimum = every[0][0]
        threshold = (1 + epsilon) * optimum
        expected = within(every, threshold)
        units = units_of(X, y, 2)
        cap = m if max_len is None else max_len
        for n_subtrees, pieces in [(2, 0), (1, 2), (2, 2), (2, 3), (3, 1)]:
            trees = split_roots(units, lam, threshold, cap, n_subtrees, pieces)
            pairs += mirror_pairs(units, trees) if cap > 1 else 0
            assert sum(t.include_empty for t in trees) == 1
            only_pieces += all(t.seconds is not None for t in trees)
            counts, lists = 0, []
            for tree in trees:
                count, kept = _enumerate_tree(
                    units, lam, threshold, optimum, tree, policy=policy, max_prefix_length=cap
                )
                assert count == len(kept)
                counts += count
                lists += kept
            assert counts == len(expected)
            assert sorted(p for _, p in lists) == sorted(p for _, p in expected)  # none twice, none lost
            np.testing.assert_allclose(sorted(o for o, _ in lists), [o for o, _ in expected], atol=1e-12)
    assert only_pieces  # a case with the best root the only live one
    assert pairs  # and cases with two-rule prefixes left out in one subtree, counted in another


def test_one_live_first_rule_is_split_over_both_workers(cluster) -> None:
    """Only one first rule can start a member (every other captures too many errors): before, one
    subtree held it all and the second worker sat idle; now it is split by second rule into one
    piece per worker, and the set is still brute force's."""
    rng = np.random.default_rng(0)
    X = (rng.random((60, 6)) < 0.5).astype(np.uint8)
    y = X[:, 0].astype(np.int64).copy()
    y[rng.random(60) < 0.05] ^= 1
    problem = _problem(X, y)
    spec = _spec(0.01, {"epsilon": 1.0, "max_models": 10**6})
    there, _ = _solve(spec, problem, cluster.scheduler_address)
    b = there.rashomon
    expected = within(every_rule_list(X, y, 0.01), b.threshold)
    assert b.complete and b.count == len(expected) == 266
    assert sorted(p for _, p in _prefixes(there, problem, spec)) == sorted(p for _, p in expected)
    assert there.stats["rashomon_subtrees"] == 2 and len(there.stats["rashomon_tasks"]) == 2
    assert all(evaluations > 0 for _, evaluations, _ in there.stats["rashomon_tasks"])


def test_mirrored_pairs_add_up_with_three_classes_and_class_weights() -> None:
    """Three classes, integer class weights (the errors exact: pairs mirrored) and inexact ones
    (no pair): over the subtrees, the counts and the lists are brute force's."""
    from glasswork.plugins.corels.cluster.enumeration import mirror_pairs, split_roots

    rng = np.random.default_rng(5)
    pairs = 0
    for i in range(12):
        n, m = int(rng.integers(20, 50)), int(rng.integers(4, 7))
        X = (rng.random((n, m)) < rng.uniform(0.15, 0.6, m)).astype(np.uint8)
        y = rng.integers(0, 3, n).astype(np.int64)
        y[:3] = np.arange(3)
        weights = np.array([1.0, 0.7, 1.3]) if i % 4 == 3 else rng.integers(1, 4, 3).astype(float)
        lam, epsilon = (0.0, 0.01, 0.03)[i % 3], (0.2, 0.5, 1.0)[i % 3]
        every = every_rule_list(X, y, lam, n_classes=3, weights=weights)
        threshold = (1 + epsilon) * every[0][0]
        expected = within(every, threshold)
        units = units_of(X, y, 3, weights)
        trees = split_roots(units, lam, threshold, m, 2, 0)
        found = mirror_pairs(units, trees)
        assert found == 0 or i % 4 != 3  # inexact weights: ties are not trusted
        pairs += found
        counts, lists = 0, []
        for tree in trees:
            count, kept = _enumerate_tree(units, lam, threshold, every[0][0], tree, max_prefix_length=m)
            counts += count
            lists += kept
        assert counts == len(expected)
        assert sorted(p for _, p in lists) == sorted(p for _, p in expected)
    assert pairs


def test_max_models_keeps_the_best_over_every_subtree(cluster) -> None:
    X, y = _random(8, 60, 6)
    problem = _problem(X, y)
    spec = _spec(0.005, {"epsilon": 0.3, "max_models": 7})
    there, events = _solve(spec, problem, cluster.scheduler_address)
    every = within(every_rule_list(X, y, 0.005), there.rashomon.threshold)
    assert len(every) > 7
    assert there.rashomon.count == len(every) and there.rashomon.kept == 7
    np.testing.assert_allclose([m.objective for m in there.rashomon.members], [o for o, _ in every[:7]], atol=1e-12)
    assert sum(len(e.members) for e in events if e.kind == "rashomon") == 7


def _heavy() -> tuple[np.ndarray, np.ndarray]:
    """An enumeration of 176,000 evaluations and 437,011 lists (half a second in one process):
    long enough on two workers to be stopped or hit while it runs."""
    return _random(7, 400, 12)


HEAVY = {"lam": 0.003, "epsilon": 0.1}


def _reference(X: np.ndarray, y: np.ndarray, optimum: float, threshold: float, keep: int):
    en = make_enumerator(units_of(X, y, 2), HEAVY["lam"], threshold, floor=optimum, max_models=keep)
    stop = np.zeros(1, np.uint8)
    while en.run(5.0, stop, -1) != 0:  # DONE
        pass
    return en.count, en.kept_members()


def test_a_stopped_enumeration_keeps_the_certificate_and_bounds_the_rest(cluster) -> None:
    """A stop (what Ctrl-C does) once the first list is found. The set is large, so it is counted
    by one task and its best 20 listed again in another; the stop lands in the count's listing,
    in the count or in the relisting (or, on a fast machine, after the last task): either way the
    certificate stays, and a stopped set's bound holds every list not enumerated, with the best
    below it exactly the reference's. (On ``_counting_long``, not ``_to_stop``: its 59 M
    lists are counted by the table in a fraction of a second.)"""
    X, y = _counting_long()
    problem = _problem(X, y)
    spec = _spec(0.002, {"epsilon": 0.2, "max_models": 20})

    def cancel_once_enumerating(event: Event, ctx: SolveContext) -> None:
        if event.kind == "rashomon" and event.rashomon.count > 0:  # a list is found
            ctx.request_stop(StopReason.CANCEL)  # what Ctrl-C does

    result, events = _solve(spec, problem, cluster.scheduler_address, on_event=cancel_once_enumerating)
    rset = result.rashomon
    assert result.certificate.status.value == "optimal" and rset is not None and rset.optimum_proven
    best = _best_listed(X, y, 0.002, rset.threshold, rset.optimum, 20)
    assert 0 < rset.count and all(m.objective <= rset.threshold + 1e-9 for m in rset.members)
    if rset.complete:  # every task had returned before the stop was read (the count: other tests)
        np.testing.assert_allclose([m.objective for m in rset.members], best, atol=1e-12)
        return
    bound = rset.unenumerated_bound
    assert bound is not None and rset.optimum <= bound <= rset.threshold
    # everything below the bound was enumerated, so the kept members below it are the reference's
    below = [o for o in best if o < bound - 1e-12]
    np.testing.assert_allclose([m.objective for m in rset.members if m.objective < bound - 1e-12], below, atol=1e-12)
    last = [e for e in events if e.kind == "rashomon"][-1]
    assert last.lower_bound == bound and last.rashomon.count == rset.count


def test_a_task_gone_depth_first_still_gives_way_to_the_table(cluster) -> None:
    """A task whose best-first queue outgrew its budget (64 entries here) lists depth first, out
    of objective order, and would list its whole subtree before its kept lists are proven its
    best (the commit before this test's fix did: no table): as one process, it gives way to the
    table at once and counts the subtree exactly; the objective of its ``max_models``-th, which
    the table gives, is what the driver's tasks list again up to (``relist_up_to``)."""
    import uuid

    from glasswork.plugins.corels.cluster.driver import release_named
    from glasswork.plugins.corels.cluster.enumeration import EnumerationConfig, enumerate_subtree

    X, y = _heavy()
    units = units_of(X, y, 2)
    every = _solve(_spec(HEAVY["lam"], {"epsilon": HEAVY["epsilon"], "max_models": 50}), _problem(X, y), None)[0]
    optimum, threshold = every.rashomon.optimum, every.rashomon.threshold
    names = {k: f"glasswork-test-{k}-{uuid.uuid4().hex}" for k in ("stop", "queue")}
    options = {"policy": "lower_bound", "max_models": 50}
    config = EnumerationConfig(
        units,
        HEAVY["lam"],
        options,
        names,
        None,
        threshold=threshold,
        floor=optimum,
        threads=1,
        count=True,
        queue_budget=64,
    )
    with distributed.Client(cluster.scheduler_address) as client:
        try:
            out = client.submit(enumerate_subtree, config, 0, list(range(X.shape[1])), True, pure=False).result()
        finally:
            release_named(client, names.values())
    count, best = _reference(X, y, optimum, threshold, 50)
    assert out["counters"]["depth_first_from"] >= 0  # it went depth first
    assert out["needed_table"] and out["counted_by_table"] and out["complete"]
    assert out["count"] == count == every.rashomon.count
    assert out["relist_up_to"] == pytest.approx(best[-1][0], abs=1e-12)  # the 50th best's objective
    assert all(o <= threshold + 1e-9 for o, _ in out["kept"])  # listed before it gave way: members


def _listing_gone_depth_first(seed: int, threads: int, budget: int, collapse: bool = True, max_models: int = 6):
    """A task's listing on three classes (orderings collapse: twins found after the list they
    mirror) whose best-first queue outgrows ``budget`` entries: its report loop, a few expansions
    a slice. Returns the enumerator, brute force's set and each report's (bound, lists streamed by
    then, whether the kept lists capped it)."""
    from glasswork.plugins.corels.cluster.enumeration import streamed_bound
    from glasswork.plugins.corels.rashomon.enumeration import KeptStream

    X, y, every, theta = with_collapsed_orderings(seed)
    en = make_enumerator(
        units_of(X, y, 3), 0.005, theta, floor=every[0][0], threads=threads, max_models=max_models,
        queue_budget=budget, collapse_orderings=collapse,
    )  # fmt: skip
    stream = KeptStream(en)
    steps: list[tuple[float, set[tuple[int, ...]], bool]] = []
    sent: set[tuple[int, ...]] = set()
    stop = np.zeros(1, np.uint8)
    code = cr.NODE_LIMIT
    while code == cr.NODE_LIMIT:
        code = en.run(5.0, stop, en.n_evaluated + 10)
        done = code != cr.NODE_LIMIT
        sent |= {p for _, p in stream.fresh(whole=done)}
        bound = streamed_bound(en, stream)
        # the bound read before kept_best: the stream's, capped gone depth first by every kept list
        kept = [o for o, _ in en.kept_members()]
        assert bound == (stream.bound() if en.ordered_order else min([stream.bound(), *kept]))
        assert en.kept_best == (kept[0] if kept else np.inf)
        # at the end too (the task's result then carries its kept lists)
        steps.append((bound, set(sent), bound < stream.bound()))
    assert code == cr.DONE
    return en, within(every, theta), steps


@pytest.mark.parametrize(
    "seed, threads, budget, collapse",
    covering_grid([[33, 36, 40], [1, 2], [0, 8, 48], [True, False]], edges=[(33, 1, 0, True), (40, 2, 48, False)]),
)
def test_a_task_gone_depth_first_streams_only_what_is_final_below_its_bound(
    seed: int, threads: int, budget: int, collapse: bool
) -> None:
    """What the driver takes as final from a task (the lists it streamed below the bound sent with
    them) is final when the listing goes depth first: every list kept at the end and not streamed
    by a report is at least that report's bound, and the bound is the one the kept lists read
    whole gave. With orderings collapsed (twins found late) the bound stays at the last one with
    no twin unread; expanded, the kept lists found depth first and not streamed cap it."""
    en, members, steps = _listing_gone_depth_first(seed, threads, budget, collapse)
    assert en.switched_at >= 0 and (en.n_collapsed > 0) == collapse and len(steps) > 3
    kept = en.kept_members()
    assert [o for o, _ in kept] == pytest.approx([o for o, _ in members][:6], abs=1e-12)
    for bound, by_then, _ in steps:
        assert all(o >= bound - 1e-12 for o, p in kept if p not in by_then), bound
    if not collapse:  # lists found depth first and not streamed, below the enumerator's bound
        assert any(capped for _, _, capped in steps[:-1])


def test_the_depth_first_bound_reads_no_kept_list() -> None:
    """A report's bound gone depth first costs O(1) (``kept_best``): it read the kept lists whole,
    0.27 s a report at ``max_models`` 100,000, most of a task's time."""
    from glasswork.plugins.corels.cluster.enumeration import streamed_bound
    from glasswork.plugins.corels.rashomon.enumeration import KeptStream

    en, _, _ = _listing_gone_depth_first(33, 1, 8, collapse=False)
    assert not en.ordered_order

    class NoWholeRead:
        def __getattr__(self, name: str):
            if name in ("kept_members", "kept_since"):
                raise AssertionError(f"a report read the kept lists ({name})")
            return getattr(en, name)

    watched = NoWholeRead()
    assert streamed_bound(watched, KeptStream(watched)) == min(en.lower_bound(), en.kept_members()[0][0])


def test_a_worker_killed_mid_enumeration_loses_no_subtree() -> None:
    X, y = _heavy()
    problem = _problem(X, y)
    spec = _spec(HEAVY["lam"], {"epsilon": HEAVY["epsilon"], "max_models": 50})
    killed: list[int] = []
    with local_cluster() as own:
        victim = a_worker_pid(own.scheduler_address)

        def kill_once_enumerating(event: Event, ctx: SolveContext) -> None:
            if event.kind == "rashomon" and not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        result, events = _solve(spec, problem, own.scheduler_address, on_event=kill_once_enumerating)
    rset = result.rashomon
    assert killed and rset is not None and rset.complete
    count, best = _reference(X, y, rset.optimum, rset.threshold, 50)
    assert rset.count == count
    np.testing.assert_allclose([m.objective for m in rset.members], [o for o, _ in best], atol=1e-12)


def _problem_of(X: np.ndarray, y: np.ndarray) -> Problem:
    """Two or three classes."""
    classes = ["no", "yes"] if int(y.max()) < 2 else [f"c<{k}>" for k in range(int(y.max()) + 1)]
    task = "binary" if len(classes) == 2 else "multiclass"
    names = [f"f<{j}>" for j in range(X.shape[1])]
    return Problem(name="t", X=np.asarray(X, np.uint8), y=y, feature_names=names, task=task, classes=np.array(classes))


LARGE = [  # seed, rows, antecedents, classes, lambda, epsilon, policy, threads per task, max_models
    (31, 60, 6, 2, 0.005, 0.5, "lower_bound", 1, 5),
    (32, 60, 7, 2, 0.002, 0.4, "bfs", 2, 3),
    (33, 50, 6, 3, 0.01, 1.0, "dfs", 1, 20),
    (34, 60, 6, 3, 0.0, 0.5, "lower_bound", 2, 10),
    (35, 60, 7, 2, 0.005, 0.6, "dfs", 2, 8),
    (36, 50, 6, 3, 0.005, 0.8, "bfs", 1, 4),
]


@pytest.mark.parametrize(("seed", "n", "m", "classes", "lam", "epsilon", "policy", "threads", "keep"), LARGE)
def test_a_set_larger_than_max_models_is_counted_by_one_task(
    cluster, seed, n, m, classes, lam, epsilon, policy, threads, keep
) -> None:
    """One task lists the set in objective order until its best ``keep`` are proven, then counts
    it by the tail table over every first rule: brute force's count, one process's, and brute
    force's best members, for every policy (listed in objective order on the cluster: the set and
    its best do not depend on it)."""
    X, y = _random(seed, n, m)
    if classes == 3:
        y = np.where(X[:, 4] & (y == 0), 2, y)
    problem = _problem_of(X, y)
    spec = _spec(lam, {"epsilon": epsilon, "max_models": keep}, policy=policy, threads=threads)
    here, _ = _solve(spec, problem, None)
    there, events = _solve(spec, problem, cluster.scheduler_address)
    a, b = here.rashomon, there.rashomon
    assert a is not None and b is not None and b.complete and b.unenumerated_bound is None
    expected = within(every_rule_list(X, y, lam, n_classes=classes), b.threshold)
    assert len(expected) > 10 * keep  # far larger than what is kept
    assert b.count == a.count == len(expected)
    got = _prefixes(there, problem, spec)
    np.testing.assert_allclose([o for o, _ in got], [o for o, _ in expected[:keep]], atol=1e-12)
    worst = expected[keep - 1][0]  # below the worst kept no tie can swap a member
    assert {p for o, p in got if o < worst - 1e-12} == {p for o, p in expected if o < worst - 1e-12}
    assert there.stats["rashomon_count_method"] == "tail table"
    assert there.stats["rashomon_count_threads"] == threads and there.stats["rashomon_count_evaluated"] > 0
    assert there.stats["rashomon_count"] == b.count and len(there.stats["rashomon_tasks"]) == 1
    # the count's task built the tail table over the set's units (none without a penalty)
    assert (there.stats["rashomon_tail_table_blocks"] > 0) == (lam > 0)
    assert 0 < there.stats["rashomon_tail_table_blocks"] <= (n + 15) // 16 or lam == 0
    assert there.stats["rashomon_tail_table_seconds"] > 0 or lam == 0
    announced = [e for e in events if e.kind == "rashomon"]
    assert sorted(mem.objective for e in announced for mem in e.members) == [o for o, _ in got]


@pytest.mark.parametrize(("policy", "threads"), [("lower_bound", 1), ("dfs", 2)])
def test_a_count_gone_depth_first_has_its_best_listed_again_under_the_first_rules_that_reach_them(
    cluster, monkeypatch, policy: str, threads: int
) -> None:
    """The counting task's queue outgrows its budget (64 entries here) before its best are proven:
    it counts and gives the objective of the 50th and the first rules with a list within it, and
    the driver lists the set again up to it under those, in one task: the count and best 50 of
    the reference."""
    from glasswork.plugins.corels.cluster import enumeration as on_cluster

    monkeypatch.setattr(on_cluster, "queue_budget_for", lambda memory, max_models=None: 64)
    X, y = _heavy()
    problem = _problem(X, y)
    spec = _spec(HEAVY["lam"], {"epsilon": HEAVY["epsilon"], "max_models": 50}, policy=policy, threads=threads)
    there, events = _solve(spec, problem, cluster.scheduler_address)
    b = there.rashomon
    assert b is not None and b.complete and b.unenumerated_bound is None
    count, best = _reference(X, y, b.optimum, b.threshold, 50)
    stats = there.stats
    assert b.count == count and stats["rashomon_count_method"] == "tail table"
    assert stats["rashomon_depth_first_from"] >= 0 and stats["rashomon_count_threads"] == threads
    assert stats["rashomon_relisted_up_to"] == pytest.approx(best[-1][0], abs=1e-12)
    assert len(stats["rashomon_tasks"]) == 2 and stats["rashomon_subtrees"] == 1  # the count's, the relisting's
    assert 0 < stats["rashomon_relisted_first_rules"] <= X.shape[1]
    np.testing.assert_allclose([m.objective for m in b.members], [o for o, _ in best], atol=1e-12)
    announced = [e for e in events if e.kind == "rashomon"]
    assert announced[-1].rashomon.count == count
    assert all(e.rashomon.count <= count for e in announced)  # never the relisting's own count added
    # every member kept was streamed; a streamed list tied with the 50th may lose the tie to another
    streamed = [mem for e in announced for mem in e.members]
    assert {id(m) for m in b.members} <= {id(m) for m in streamed}
    assert all(m.objective <= best[-1][0] + 1e-12 for m in streamed)


def _best_listed(X: np.ndarray, y: np.ndarray, lam: float, threshold: float, optimum: float, keep: int):
    """The best ``keep`` objectives of the set, listed in one process in objective order until
    they are proven (the set itself is far too large to count here)."""
    reference = make_enumerator(units_of(X, y, 2), lam, threshold, floor=optimum, max_models=keep)
    reference.stop_when_kept = True
    stop = np.zeros(1, np.uint8)
    while reference.run(5.0, stop, -1) == 1 and reference.kept_worst > reference.lower_bound():  # SLICE
        pass
    return [o for o, _ in reference.kept_members()]


def _counting_long() -> tuple[np.ndarray, np.ndarray]:
    """A set whose tail-table count runs for tens of seconds in one process (its best 20 are
    listed in about 2 s; counted, 29 s did not finish): a stop sent once the count began always
    finds it counting."""
    return _random(7, 500, 24)


def test_a_stop_during_the_table_count_reports_what_the_listing_proved(cluster) -> None:
    X, y = _counting_long()
    problem = _problem(X, y)
    spec = _spec(0.002, {"epsilon": 0.2, "max_models": 20})
    counting: list[float] = []

    def cancel_once_counting(event: Event, ctx: SolveContext) -> None:
        if event.kind == "log" and "tail table" in (event.message or "") and not counting:
            counting.append(event.elapsed)
            ctx.request_stop(StopReason.CANCEL)

    result, events = _solve(spec, problem, cluster.scheduler_address, Limits(time=60), cancel_once_counting)
    rset = result.rashomon
    assert counting, "the count never began"
    assert result.certificate.status.value == "optimal" and rset is not None and not rset.complete
    assert events[-1].elapsed - counting[0] < 20  # stopped at once, not at the time limit
    assert result.stats["rashomon_count_method"] == "listed"
    best = _best_listed(X, y, 0.002, rset.threshold, rset.optimum, 20)
    # what the listing kept before it gave way to the table (its queue budget: 256 entries a member)
    assert len(best) == 20 and 1 <= rset.kept <= 20 and rset.count >= rset.kept
    bound = rset.unenumerated_bound
    assert bound is not None and rset.optimum <= bound <= rset.threshold
    # every list below the bound was listed: the kept ones below it are the set's best below it
    # (all 20 when every subtree had proven its best before the stop; another may still be listing)
    below = [m.objective for m in rset.members if m.objective < bound - 1e-12]
    np.testing.assert_allclose(below, [o for o in best if o < bound - 1e-12], atol=1e-12)
    assert all(m.objective <= rset.threshold for m in rset.members)
    last = [e for e in events if e.kind == "rashomon"][-1]
    assert last.rashomon.count == rset.count and last.lower_bound == rset.unenumerated_bound


@pytest.mark.slow  # end to end on dask:local, a worker killed mid-count
def test_a_worker_killed_during_the_table_count_loses_nothing() -> None:
    """The count of 3,384,970,736,174 lists (3 s in one process): a worker killed once the table
    count began; its task is run again from its roots, and the count is one process's."""
    X, y = _random(7, 400, 23)
    problem = _problem(X, y)
    spec = _spec(0.002, {"epsilon": 0.2, "max_models": 20})
    killed: list[int] = []
    with local_cluster() as own:
        victim = a_worker_pid(own.scheduler_address)

        def kill_once_counting(event: Event, ctx: SolveContext) -> None:
            if event.kind == "log" and "tail table" in (event.message or "") and not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        there, _ = _solve(spec, problem, own.scheduler_address, Limits(time=120), kill_once_counting)
    here, _ = _solve(spec, problem, None)
    assert killed and there.rashomon is not None and there.rashomon.complete
    assert there.rashomon.count == here.rashomon.count == 3_384_970_736_174
    assert there.stats["rashomon_count_method"] == "tail table"
    np.testing.assert_allclose(
        [m.objective for m in there.rashomon.members], [m.objective for m in here.rashomon.members], atol=1e-12
    )


def _ours(address: str) -> set[str]:
    return {n for n in named_on_scheduler(address) if n.startswith("glasswork-")}


def test_a_failed_task_leaves_no_named_object_on_the_scheduler(cluster, monkeypatch) -> None:
    """One enumeration task raises (not a killed worker) while the other enumerates: the run fails
    with that error, and the scheduler keeps none of the run's Queues, Variables or Events, nor
    after a run that succeeds (or one stopped like Ctrl-C, in the test above)."""
    from glasswork.plugins.corels.cluster import enumeration as rashomon_cluster

    def first_task_fails(config, task_id, roots, include_empty, *piece):
        from distributed import Queue
        from glasswork.plugins.corels.cluster import enumeration as on_worker

        if task_id == 0:
            Queue(config.names["queue"])  # what a real task holds when it fails
            raise RuntimeError("a task failed on purpose")
        return on_worker.enumerate_subtree(config, task_id, roots, include_empty, *piece)

    X, y = _heavy()
    problem = _problem(X, y)
    spec = _spec(HEAVY["lam"], {"epsilon": HEAVY["epsilon"], "max_models": 50})
    monkeypatch.setattr(rashomon_cluster, "enumerate_subtree", first_task_fails)
    with pytest.raises(RuntimeError, match="on purpose"):
        _solve(spec, problem, cluster.scheduler_address)
    assert not _ours(cluster.scheduler_address)
    monkeypatch.undo()

    def stop_once_enumerating(event: Event, ctx: SolveContext) -> None:
        if event.kind == "rashomon" and event.rashomon.count > 0:
            ctx.request_stop(StopReason.CANCEL)

    # (not ``_to_stop``: its 59 M lists are now counted by the table before the stop arrives)
    long = _spec(0.002, {"epsilon": 0.2, "max_models": 20})
    stopped, _ = _solve(long, _problem(*_counting_long()), cluster.scheduler_address, on_event=stop_once_enumerating)
    assert stopped.rashomon is not None and not stopped.rashomon.complete
    assert not _ours(cluster.scheduler_address)
    done, _ = _solve(_spec(0.01, {"epsilon": 0.3}), _problem(*_random(1, 40, 5)), cluster.scheduler_address)
    assert done.rashomon is not None and done.rashomon.complete
    assert not _ours(cluster.scheduler_address)


def _csv(path: Path, X: np.ndarray, y: np.ndarray) -> Path:
    header = ",".join([f"f{j}" for j in range(X.shape[1])] + ["label"])
    path.write_text("\n".join([header, *(",".join(map(str, [*x, t])) for x, t in zip(X.tolist(), y.tolist()))]) + "\n")
    return path


def test_run_json_has_the_same_shape_on_the_cluster(cluster, tmp_path: Path) -> None:
    X, y = _random(11, 80, 5)
    data = _csv(tmp_path / "d.csv", X, y)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\nsolver: corels\ndata:\n  source: {data}\n  target: label\n"
        "objective: {regularization: 0.01}\nconstraints: {min_support: 0.0}\n"
        "rashomon: {epsilon: 0.2, max_models: 5}\n"
    )
    base = ["run", "-q", "--no-store", "--json"]
    one = CliRunner().invoke(cli, [*base, str(spec)])
    two = CliRunner().invoke(cli, [*base, "--executor", f"dask:{cluster.scheduler_address}", str(spec)])
    assert one.exit_code == 0, one.stderr
    assert two.exit_code == 0, two.stderr
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert set(a) == set(b) and set(a["rashomon"]) == set(b["rashomon"])
    assert [set(m) for m in a["rashomon"]["models"]] == [set(m) for m in b["rashomon"]["models"]]
    assert b["rashomon"]["count"] == a["rashomon"]["count"] and b["rashomon"]["complete"]
    assert [m["objective"] for m in b["rashomon"]["models"]] == [m["objective"] for m in a["rashomon"]["models"]]
    assert b["stats"]["executor"].startswith("dask:") and b["stats"]["rashomon_subtrees"] >= 1


def test_the_cluster_set_says_which_antecedents_it_is_complete_over(cluster) -> None:
    """Mined at the default support floor (lambda), the set counted on the cluster says, as one
    process's does, that it is complete over the mined antecedents only (the stat and the warning
    naming ``constraints.min_support``); it said nothing on the cluster before."""
    X, y = _random(13, 80, 4)
    spec = CorelsSpec.model_validate(
        {
            "name": "t", "data": {"source": "sklearn:breast_cancer"}, "solver": "corels",
            "store": {"enabled": False}, "objective": {"regularization": 0.02},
            "search": {"threads": 1}, "rashomon": {"epsilon": 0.25},
        }
    )  # fmt: skip
    said = {}
    for where in (None, cluster.scheduler_address):
        result, events = _solve(spec, _problem(X, y), where)
        over = result.stats["rashomon_complete_over"]
        warnings = [e.message for e in events if e.kind == "log" and e.level == "warning"]
        assert any(over in w and "min_support" in w for w in warnings)
        said[where] = (over, result.rashomon.count)
    assert said[None] == said[cluster.scheduler_address]
    assert "support in [0.02, 0.98]" in said[None][0]


@pytest.mark.slow
def test_ctrl_c_during_the_enumeration_exits_130_with_the_set_so_far(cluster, tmp_path: Path) -> None:
    """A real ``glasswork run --executor``: SIGINT once the enumeration reports, exit 130, and the
    result document holds the certified optimum and an incomplete set with its bound."""
    import subprocess
    import sys
    import time

    X, y = _counting_long()  # counted by the table for tens of seconds (a listed set is now counted in a few)
    data = _csv(tmp_path / "d.csv", X, y)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\nsolver: corels\ndata:\n  source: {data}\n  target: label\n"
        "objective: {regularization: 0.002}\nconstraints: {min_support: 0.0, negations: false}\n"
        "rashomon: {epsilon: 0.2, max_models: 20}\n"
    )
    events = tmp_path / "events.jsonl"
    command = [sys.executable, "-m", "glasswork", "run", "--json", "-q", "--no-store", "--events", str(events)]
    command += ["--executor", f"dask:{cluster.scheduler_address}", str(spec)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        # a rashomon event, not the start event (whose spec has a "rashomon" key: a SIGINT then
        # came before the search and the run said "nothing was run", one run in a few)
        while '"kind": "rashomon"' not in (events.read_text() if events.exists() else ""):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["rashomon"]["complete"] is False and doc["rashomon"]["unenumerated_bound"] is not None
    assert doc["rashomon"]["optimum_proven"] is True


class _Event:
    """A stop event whose waits answer from a script: False (timed out), True (set) or an error
    (the connection going), then True forever."""

    def __init__(self, answers: list[object]) -> None:
        self.answers, self.waits = list(answers), 0

    def wait(self, timeout: float) -> bool:
        self.waits += 1
        answer = self.answers.pop(0) if self.answers else True
        if isinstance(answer, Exception):
            raise answer
        return bool(answer)


def test_the_stop_watch_stops_once_when_the_event_is_set_and_never_after_the_task() -> None:
    from glasswork.plugins.corels.cluster.enumeration import StopWatch

    stops: list[int] = []
    event = _Event([False, OSError("the scheduler is going"), False])
    watch = StopWatch(event, lambda: stops.append(1))
    watch._thread.join(10)
    assert watch.stopped and stops == [1] and event.waits == 4  # waited on past a timeout and an error

    class Held:  # a wait that is still open when the task ends, then answered (release_named's set)
        def __init__(self) -> None:
            self.open, self.answer = threading.Event(), threading.Event()

        def wait(self, timeout: float) -> bool:
            self.open.set()
            self.answer.wait(10)
            return True

    held = Held()
    with StopWatch(held, lambda: stops.append(2)) as late:
        assert held.open.wait(10)
    held.answer.set()
    late._thread.join(10)
    assert not late._thread.is_alive() and not late.stopped and stops == [1]
