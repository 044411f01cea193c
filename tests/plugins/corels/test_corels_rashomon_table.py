"""The CORELS Rashomon set counted by the table of tail costs per uncaptured row set
(``TailCounter``) against brute force: the count for every instance, subtree, memory budget and
bound; through the solver with ``max_models`` smaller than the set, for every policy and thread
count, the kept lists are the best; a count stopped by a limit reports what the listing proved."""

from __future__ import annotations

import numpy as np
import pytest
from corels_reference import compas, one_mixed_unit  # noqa: F401  (a fixture)
from glasswork import Limits, SolveContext
from glasswork.cython_ext import corels_rashomon as cr
from glasswork.plugins.corels import CorelsSolver
from glasswork.plugins.corels.rashomon import enumeration as rashomon
from glasswork.plugins.corels.rashomon.enumeration import make_enumerator
from glasswork.plugins.corels.search import engine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_corels_rashomon import (
    ORDERED,
    POLICIES,
    _instance,
    _problem,
    _spec,
    every_rule_list,
    instances,
    run_all,
    units_of,
    within,
)


def table_count(
    units, lam, theta, floor, cap, memory=1 << 24, budget_mode=0, one_rule_bound=True, tail_table=False, **options
) -> int | None:
    en = make_enumerator(units, lam, theta, floor=floor, max_prefix_length=cap, max_models=0, **options)
    counter = cr.TailCounter(en, memory, budget_mode, one_rule_bound=one_rule_bound, tail_table=tail_table)
    assert counter.run(60.0, np.zeros(1, np.uint8)) == cr.DONE
    return counter.count


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_table_counts_what_brute_force_lists(case) -> None:
    """Relative and absolute thresholds, a floor below the optimum (a stopped search's), a memory
    budget so small that every entry is dropped and recomputed, no table at all, and the search's
    tail table read by the count."""
    X, y, C, weights, lam, max_len, epsilon = case
    every = every_rule_list(X, y, lam, C, weights, max_len)
    optimum = every[0][0]
    units = units_of(X, y, C, weights)
    cap = 255 if max_len is None else max_len
    for theta, floor in (((1 + epsilon) * optimum, optimum), (optimum + 0.1 * epsilon, 0.9 * optimum)):
        expected = len(within(every, theta))
        for memory in (1 << 24, 1, 0):
            assert table_count(units, lam, theta, floor, cap, memory) == expected, (theta, memory)
        assert table_count(units, lam, theta, floor, cap, budget_mode=1) == expected  # never recomputed
        assert table_count(units, lam, theta, floor, cap, tail_table=True) == expected


@settings(max_examples=25, deadline=None, derandomize=True)
@given(instances(), st.sampled_from(["support", "equivalent_points", "map", "one_rule"]))
def test_each_bound_of_the_table_switched_off_changes_no_count(case, bound: str) -> None:
    X, y, C, weights, lam, max_len, epsilon = case
    every = every_rule_list(X, y, lam, C, weights, max_len)
    theta = every[0][0] * (1 + epsilon)
    units = units_of(X, y, C, weights)
    cap = 255 if max_len is None else max_len
    options: dict = {"symmetry_map": False} if bound == "map" else {"ablation": (bound,)}
    if bound == "one_rule":
        options = {"one_rule_bound": False}
    assert table_count(units, lam, theta, every[0][0], cap, **options) == len(within(every, theta))


def _mixed_units(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
    """Few antecedents over many rows, so every unit is large and holds both labels."""
    if seed == 0:
        return (*one_mixed_unit(), None, 0.05)
    rng = np.random.default_rng(500 + seed)
    n, m = int(rng.integers(150, 300)), 4 + seed % 2
    X = (rng.random((n, m)) < rng.uniform(0.25, 0.6, m)).astype(np.uint8)
    score = X @ rng.normal(size=m) + rng.normal(scale=1.5, size=n)
    y = (score > np.median(score)).astype(np.int64)
    weights = (None, np.array([1.0, 2.0]), np.array([0.7, 1.3]))[seed % 3]
    return X, y, weights, (0.01, 0.03, 0.06)[seed % 3]


@pytest.mark.parametrize("seed", range(7))
def test_units_with_both_labels_count_and_list_what_brute_force_lists(seed: int) -> None:
    """The support bound on units (a rule right beyond its units' minorities on less than lambda
    less the threshold's slack is in no member) prunes in the table and the listing, and the
    count and the listed set still equal brute force, with integral and fractional class weights.
    Seed 0 is the one the paper's bound keeps (``a`` is right on 10 rows, lambda N is 5)."""
    X, y, weights, lam = _mixed_units(seed)
    every = every_rule_list(X, y, lam, 2, weights)
    optimum = every[0][0]
    units = units_of(X, y, 2, weights)
    pruned = 0
    for epsilon in (0.0, 0.02, 0.1):
        theta = (1 + epsilon) * optimum
        expected = within(every, theta)
        en = make_enumerator(units, lam, theta, floor=optimum, max_models=0)
        counter = cr.TailCounter(en, 1 << 24, 0)
        assert counter.run(60.0, np.zeros(1, np.uint8)) == cr.DONE
        assert counter.count == len(expected), epsilon
        pruned += counter.counters()["count_pruned_support"]
        for policy in POLICIES:
            en = make_enumerator(units, lam, theta, floor=optimum, policy=policy, max_models=10**6)
            assert run_all(en) == cr.DONE and en.complete
            assert en.count == len(expected), (epsilon, policy)
            got = en.kept_members()
            assert sorted(p for _, p in got) == sorted(p for _, p in expected), (epsilon, policy)
            np.testing.assert_allclose([o for o, _ in got], [o for o, _ in expected], rtol=0, atol=1e-9)
            pruned += en.counters()["pruned_support"]
    if seed == 0:  # pruned on units only: the paper's bound keeps ``a``
        assert pruned > 0


@pytest.mark.parametrize("seed", range(8))
def test_deeper_sets_count_what_brute_force_lists_with_and_without_the_one_rule_bound(seed: int) -> None:
    """Seven antecedents over 150 rows, small lambda and wide thresholds: tables four and five
    rules deep, children scored in their parent (one more rule at most) and pruned by the one-rule
    bound, integral and fractional class weights, a length cap. Brute force lists every list."""
    rng = np.random.default_rng(seed)
    X, y = _instance(seed, n=150, M=7)
    weights = None if seed % 3 == 0 else (np.array([1.0, 2.0]) if seed % 3 == 1 else np.array([0.7, 1.3]))
    lam = (0.002, 0.005, 0.01)[seed % 3]
    max_len = None if seed % 4 else 3
    every = every_rule_list(X, y, lam, 2, weights, max_len)
    units = units_of(X, y, 2, weights)
    cap = 255 if max_len is None else max_len
    for epsilon in (0.02, 0.1, float(rng.uniform(0.2, 0.5))):
        theta = every[0][0] * (1 + epsilon)
        expected = len(within(every, theta))
        for one_rule in (True, False):
            assert table_count(units, lam, theta, every[0][0], cap, one_rule_bound=one_rule) == expected, (
                epsilon,
                one_rule,
            )


def pooled_count(units, lam, theta, floor, cap, memory: int, threads: int) -> rashomon.TableCount:
    en = make_enumerator(units, lam, theta, floor=floor, max_prefix_length=cap, max_models=0)
    table = rashomon.TableCount(en, memory, threads)
    table.join()
    assert table.code == cr.DONE
    return table


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from([2, 3, 4]))
def test_counters_on_threads_sharing_one_memo_count_what_brute_force_lists(case, threads: int) -> None:
    """One counter per thread, each taking first rules from a shared list, all finding and
    storing tables in one memo (also one so small that entries are dropped as they are stored):
    the count, the n-th best objective and the first rules of the members within an objective
    (what a relisting is restricted to) are brute force's."""
    X, y, C, weights, lam, max_len, epsilon = case
    every = every_rule_list(X, y, lam, C, weights, max_len)
    theta = every[0][0] * (1 + epsilon)
    members = within(every, theta)
    units = units_of(X, y, C, weights)
    cap = 255 if max_len is None else max_len
    for memory in (1 << 24, 1, 0):
        table = pooled_count(units, lam, theta, every[0][0], cap, memory, threads)
        assert table.count == len(members), memory
        for n in (1, 2, len(members), len(members) + 1):
            expected = members[n - 1][0] if n <= len(members) else None
            got = table.nth_objective(n)
            assert (got is None) == (expected is None) and (got is None or abs(got - expected) < 1e-12)
        for t in sorted({o for o, _ in members})[:: max(1, len(members) // 7)] + [theta]:
            roots, empty = table.first_rules_within(t)
            below = [p for o, p in members if o <= t + 1e-12]
            assert roots == sorted({p[0] for p in below if p}) and empty == (() in below), (t, memory)


def test_a_memo_shared_by_four_threads_under_eviction_counts_as_one_thread() -> None:
    """An instance of thousands of tables, four threads storing into shards a few KiB each, so
    entries are dropped while other threads read them: the count one thread gives."""
    X, y = _instance(11, n=300, M=12)
    lam = 0.005
    units = units_of(X, y, 2)
    one = pooled_count(units, lam, 0.3, 0.0, 255, 1 << 26, 1)
    assert one.count is not None and one.count > 10_000
    for memory in (1 << 26, 1 << 18, 1 << 14):
        four = pooled_count(units, lam, 0.3, 0.0, 255, memory, 4)
        assert four.count == one.count
        assert four.nth_objective(1000) == one.nth_objective(1000)
    assert four.counters_summed()["memo_evictions"] > 0


def test_a_stopped_pool_counts_exactly_the_first_rules_it_finished() -> None:
    """Stopped by a node limit, one thread takes the first rules in ``root_order``: what it counted
    is the members under the first few of them, exactly (a lower bound the solver may report),
    never a part of an unfinished one."""
    X, y = _instance(7, n=60, M=6)
    lam = 0.01
    every = every_rule_list(X, y, lam)
    theta = every[0][0] * 1.3
    members = within(every, theta)
    units = units_of(X, y, 2)
    whole = pooled_count(units, lam, theta, every[0][0], 255, 1 << 24, 1)
    order = whole.counters[0].root_order()
    prefix_sums = [sum(1 for _, p in members if p[:1] and p[0] in order[:j]) for j in range(len(order) + 1)]
    seen = set()
    for limit in range(0, whole.n_evaluated, max(whole.n_evaluated // 40, 1)):
        en = make_enumerator(units, lam, theta, floor=every[0][0], max_models=0)
        table = rashomon.TableCount(en, 1 << 24, 1, max_evaluations=limit)
        table.join()
        assert table.code == cr.NODE_LIMIT and table.count is None
        assert table.counted in prefix_sums
        seen.add(table.counted)
    assert len(seen) > 2


def _long_count(threads: int = 2) -> rashomon.TableCount:
    """A count of about 10^12 lists that runs for minutes: only a stop ends it soon."""
    X, y = _instance(11, n=300, M=20)
    en = make_enumerator(units_of(X, y, 2), 0.002, 0.35, floor=0.0, max_models=0)
    return rashomon.TableCount(en, 1 << 26, threads)


def test_wait_stops_the_count_when_asked_and_its_code_says_so() -> None:
    """``TableCount.wait``: ``should_stop`` is asked after every slice until it says yes, then the
    counters stop; ``tick`` comes every period meanwhile; the wait returns soon after, with the
    code STOPPED and no count (the members of the first rules finished stay a lower bound)."""
    import time

    table = _long_count()
    asked, ticks = [], []
    started = time.monotonic()

    def should_stop() -> bool:
        asked.append(time.monotonic())
        return len(asked) >= 4

    code = table.wait(0.02, should_stop, lambda: ticks.append(time.monotonic()), poll=0.01)
    assert time.monotonic() - started < 10.0  # the count alone runs for minutes
    assert code == table.code == cr.STOPPED and table.count is None and not table.alive()
    assert len(asked) == 4  # asked until it said yes, not after
    assert ticks and all(b - a >= 0.02 for a, b in zip([started, *ticks], ticks))


def test_an_error_in_tick_stops_and_joins_the_counters_and_propagates() -> None:
    """Whatever leaves the wait by an exception (here ``tick``'s; a Ctrl-C alike) stops the
    counters and joins them first: no thread goes on counting behind the caller."""
    import time

    table = _long_count()

    def tick() -> None:
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        table.wait(0.01, lambda: False, tick)
    assert time.monotonic() - started < 10.0
    assert not table.alive() and table.flag[0] == 1 and table.code == cr.STOPPED


def test_wait_on_a_count_that_ends_returns_done_and_the_count_join_gives() -> None:
    X, y = _instance(7, n=60, M=6)
    units = units_of(X, y, 2)
    whole = pooled_count(units, 0.01, 0.4, 0.0, 255, 1 << 24, 1)
    table = rashomon.TableCount(make_enumerator(units, 0.01, 0.4, floor=0.0, max_models=0), 1 << 24, 2)
    assert table.wait(0.01, lambda: False, lambda: None) == cr.DONE
    assert table.count == whole.count and table.count is not None


def test_roots_split_the_table_count_into_subtrees_that_add_up() -> None:
    X, y = _instance(7, n=60, M=6)
    lam = 0.01
    every = every_rule_list(X, y, lam)
    theta = every[0][0] * 1.3
    units = units_of(X, y, 2)
    parts = [table_count(units, lam, theta, every[0][0], 255, roots=[], include_empty=True)]
    parts += [table_count(units, lam, theta, every[0][0], 255, roots=[r], include_empty=False) for r in range(6)]
    members = within(every, theta)
    assert parts[0] == sum(1 for _, p in members if p == ()) and sum(parts) == len(members) > 20
    for r in range(6):  # each subtree: the lists whose first rule is r
        assert parts[r + 1] == sum(1 for _, p in within(every, theta) if p[:1] == (r,))


def test_a_stopped_count_is_no_count() -> None:
    X, y = _instance(7, n=60, M=6)
    every = every_rule_list(X, y, 0.01)
    units = units_of(X, y, 2)
    en = make_enumerator(units, 0.01, every[0][0] * 1.3, floor=every[0][0], max_models=0)
    counter = cr.TailCounter(en, 1 << 20)
    assert counter.run(60.0, np.zeros(1, np.uint8), 50) == cr.NODE_LIMIT
    assert counter.count is None
    en = make_enumerator(units, 0.01, every[0][0] * 1.3, floor=every[0][0], max_models=0)
    counter = cr.TailCounter(en, 1 << 20)
    assert counter.run(60.0, np.ones(1, np.uint8)) == cr.STOPPED and counter.count is None


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.sampled_from([0.0, 0.01, 0.03]), st.sampled_from([0.1, 0.4, 1.0]))
def test_solver_counts_by_the_table_and_keeps_the_best_for_every_policy_and_thread_count(
    seed: int, lam: float, epsilon: float
) -> None:
    """Unordered policies count first and list the best after (at once here, not after a second)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rashomon, "UNORDERED_LISTING_SECONDS", 0.0)
        _solve_every_way(seed, lam, epsilon)


def _solve_every_way(seed: int, lam: float, epsilon: float) -> None:
    X, y = _instance(seed, n=40, M=5)
    every = every_rule_list(X, y, lam)
    for policy in POLICIES:
        for threads in (1, 2):
            for max_models in (1, 3):  # the spec asks for max_models >= 1
                spec = _spec(
                    objective={"regularization": lam},
                    constraints={"min_support": 0.0, "negations": False},
                    search={"threads": threads, "policy": policy},
                    rashomon={"epsilon": epsilon, "max_models": max_models},
                )
                result = CorelsSolver(spec).solve(_problem(X, y), SolveContext(Limits()))
                rset = result.rashomon
                assert rset is not None and rset.complete, (policy, threads, max_models)
                expected = within(every, rset.threshold)
                assert rset.count == len(expected), (policy, threads, max_models)
                assert rset.kept == min(max_models, len(expected))
                np.testing.assert_allclose(
                    [m.objective for m in rset.members], [o for o, _ in expected[: rset.kept]], atol=1e-12
                )
                method = result.stats["rashomon_count_method"]
                if len(expected) < max_models and policy in ORDERED:  # the listing ends first: nothing else
                    assert method == "listed"
                elif policy not in ORDERED:  # counted first, the best listed again
                    assert method == "tail table" and "rashomon_relisted_up_to" in result.stats
                elif result.stats["rashomon_emitted"] > max_models and threads == 1:
                    # in objective order the listing stops once it holds the best (the orderings
                    # collapsed onto a list are not emitted: with them the listing may end first).
                    # With two threads the other one may end a set this small within the same
                    # slice: then it is listed whole, which the count and members above check
                    # (this assertion once failed under load)
                    assert method == "tail table", (policy, threads, max_models)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_limit_during_the_count_reports_what_the_listing_proved(threads: int) -> None:
    X, y = _instance(19, n=80, M=6)
    base = {
        "objective": {"regularization": 0.01},
        "constraints": {"min_support": 0.0, "negations": False},
        "search": {"threads": threads},
    }
    spec = _spec(**base, rashomon={"epsilon": 0.5, "max_models": 3})
    whole = CorelsSolver(spec).solve(_problem(X, y), SolveContext(Limits()))
    assert whole.stats["rashomon_count_method"] == "tail table"
    every = every_rule_list(X, y, 0.01)
    expected = within(every, whole.rashomon.threshold)
    assert whole.rashomon.count == len(expected) > 3
    listed_nodes = whole.stats["nodes"] + whole.stats["rashomon_evaluated"]  # the search's and the listing's
    stopped = 0
    for extra in (1, 30, 300):
        events: list = []
        limits = Limits(nodes=listed_nodes + extra)
        result = CorelsSolver(spec).solve(_problem(X, y), SolveContext(limits, events.append))
        rset = result.rashomon
        assert result.certificate.status.value == "optimal" and rset is not None
        if rset.complete:
            assert rset.count == len(expected)
            continue
        stopped += 1
        assert result.stats["rashomon_count_method"] == "listed"
        # what the listing proved (its members, with the orderings collapsed onto them), or the
        # members of the first rules the table finished: never an unfinished part's partial sum
        assert rset.kept <= 3 and rset.kept <= result.stats["rashomon_listed"] <= rset.count < len(expected)
        np.testing.assert_allclose(
            [m.objective for m in rset.members], [o for o, _ in expected[: rset.kept]], atol=1e-12
        )
        assert rset.unenumerated_bound is not None
        assert rset.unenumerated_bound <= expected[rset.kept][0] + 1e-12
        assert [e for e in events if e.kind == "rashomon"][-1].rashomon.count == rset.count
    assert stopped > 0


def test_a_table_asked_for_with_more_budget_is_recomputed() -> None:
    """A row set first reached by a costly prefix holds only the tails that prefix can afford; a
    cheaper prefix reaching it later needs more: the table is recomputed, never reused as is."""
    recomputed = 0
    for seed in range(6):
        X, y = _instance(seed, n=60, M=7)
        every = every_rule_list(X, y, 0.0)
        units = units_of(X, y, 2)
        for epsilon in (0.2, 0.6):
            theta = every[0][0] * (1 + epsilon)
            en = make_enumerator(units, 0.0, theta, floor=every[0][0], max_models=0)
            counter = cr.TailCounter(en, 1 << 24)
            assert counter.run(60.0, np.zeros(1, np.uint8)) == cr.DONE
            assert counter.count == len(within(every, theta)), (seed, epsilon)
            recomputed += counter.counters()["memo_recomputed"]
    assert recomputed > 0


@pytest.mark.slow
def test_a_length_cap_with_tables_recomputed_deeper_than_it_counts_the_compas_set(compas) -> None:
    """COMPAS at epsilon 0.05 with max_prefix_length 4: a table stored for a shallow caller and
    recomputed for a deeper one keeps its larger length, so a chain runs past the cap (it ran
    past the table's level arrays and aborted the process with a corrupted heap)."""
    X = np.ascontiguousarray(compas.antecedents.matrix())
    units = units_of(X, compas.y, 2)
    search = engine.make_search(units, 0.01)
    engine.run_to_end(search)
    optimum = float(search.objective)
    theta = 1.05 * optimum

    def listing():
        return make_enumerator(units, 0.01, theta, floor=optimum, max_prefix_length=4, max_models=0, policy="dfs")

    en = listing()
    assert run_all(en) == cr.DONE
    counter = cr.TailCounter(listing(), 1 << 30)
    assert counter.run(600.0, np.zeros(1, np.uint8)) == cr.DONE
    assert counter.count == en.count > 100_000


def test_a_released_listing_answers_as_before_and_frees_its_search() -> None:
    """Before the table counts, the listing's queue and nodes are freed (GBs at COMPAS epsilon
    0.05): its kept members (collapsed orderings included), count and bound stay what they were,
    and it cannot run again."""
    X, y = _instance(7, n=60, M=6)
    lam = 0.01
    every = every_rule_list(X, y, lam)
    theta = every[0][0] * 1.3
    en = make_enumerator(units_of(X, y, 2), lam, theta, floor=every[0][0], max_models=5)
    en.stop_when_kept = True
    stop = np.zeros(1, np.uint8)
    while en.kept_worst > en.lower_bound() and en.run(0.01, stop, -1) == cr.SLICE:
        pass  # until the kept 5 are provably the best, as the solver's listing stops
    before = (en.kept_members(), en.count, en.lower_bound(), en.memory_bytes())
    assert len(before[0]) == 5 and before[1] >= 5
    en.release_search()
    assert (en.kept_members(), en.count, en.lower_bound()) == before[:3]
    assert en.memory_bytes() < before[3]
    with pytest.raises(RuntimeError, match="released"):
        en.run(1.0, stop, -1)
    counter = cr.TailCounter(en, 1 << 24)  # the data stays: the table still counts
    assert counter.run(60.0, stop) == cr.DONE and counter.count == len(within(every, theta))


@pytest.mark.parametrize(
    ("epsilon", "expected", "ways"),
    [
        (0.01, 226, (True, False)),
        pytest.param(0.02, 2456, (True, False), marks=pytest.mark.slow),
        pytest.param(0.05, 2_159_467, (True,), marks=pytest.mark.slow),  # about 95 CPU-s
    ],
)
def test_the_compas_sets_have_the_present_counters_sizes_with_and_without_the_one_rule_bound(
    compas, epsilon: float, expected: int, ways: tuple[bool, ...]
) -> None:
    """COMPAS (``compas_train``, lambda 0.01): 226 lists at epsilon 0.01 (the listing's count
    too), 2,456 at 0.02 (main's tail table, before the per-level scan and the one-rule bound) and
    2,159,467 at 0.05 (main's table in 1,521 CPU-s). There the bound prunes millions of
    children, so a bound too strong by one row shows."""
    X = np.ascontiguousarray(compas.antecedents.matrix())
    units = units_of(X, compas.y, 2)
    search = engine.make_search(units, 0.01)
    engine.run_to_end(search)
    optimum = float(search.objective)
    for one_rule in ways:
        en = make_enumerator(units, 0.01, (1 + epsilon) * optimum, floor=optimum, max_models=0)
        counter = cr.TailCounter(en, 1 << 30, one_rule_bound=one_rule)
        assert counter.run(3600.0, np.zeros(1, np.uint8)) == cr.DONE
        assert counter.count == expected
        assert (counter.counters()["count_pruned_one_rule"] > 10_000) == one_rule
