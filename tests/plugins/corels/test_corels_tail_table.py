"""The tail table (cython_ext/corels_tailtable.pxd): a raise of the bound every strict extension of
a prefix scores, read from exact k-rule answers on blocks of 16 units. Checked against a brute force
over every rule list: the raised bound never passes what an extension scores (and equals it when
the units fit one block), and the search under it, from the start or started again part-way, still
finds the brute force's optimum, with a lower bound that never falls and never passes it. The
Rashomon set's listing and count read the table too: their sets are brute force's."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.cython_ext import corels_rashomon as cr
from glasswork.plugins.corels.rashomon import enumeration as rashomon
from glasswork.plugins.corels.rashomon.enumeration import make_enumerator
from glasswork.plugins.corels.search import engine

from grids import sampled
from test_corels_rashomon import POLICIES, every_rule_list, run_all, units_of, within

from corels_reference import brute_force, compas, random_instance, rule_lists  # noqa: F401  (compas: a fixture)

MARGIN = 1e-9  # the table takes 1e-9 of the total weight off every raise (float rounding)


def _units(X: np.ndarray, y: np.ndarray, n_classes: int = 2, weights=None):
    return engine.make_units(bitset.pack_columns(X), y, n_classes, class_weights=weights)


def _search_with_table(units, lam: float, **kw):
    """A search that builds its table at the start, run to the end."""
    search = engine.make_search(units, lam, tail_after=0, **kw)
    engine.run_to_end(search)
    return search


def _best_extensions(lists) -> dict[tuple[int, ...], float]:
    """For every prefix, the least objective over its strict extensions (inf when it has none)."""
    best: dict[tuple[int, ...], float] = {}
    for objective, prefix, _ in lists:
        for cut in range(len(prefix)):
            key = tuple(prefix[:cut])
            best[key] = min(best.get(key, np.inf), objective)
    return best


def _wide_instance(rng: np.random.Generator, n_classes: int = 2):
    """Rows spread over many signatures, so the units fill several 16-unit blocks."""
    n, M = int(rng.integers(60, 200)), int(rng.integers(4, 7))
    X = (rng.random((n, M)) < rng.uniform(0.2, 0.6, size=M)).astype(np.uint8)
    score = X @ rng.normal(size=M) + rng.normal(scale=0.8, size=n)
    if n_classes == 2:
        y = (score > np.median(score)).astype(np.int64)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int64)
    return X, y


# the sample: both instance kinds, three classes (4, 14, 24), class weights (3, 17, 24, 31)
@pytest.mark.parametrize("seed", sampled(range(40), [0, 3, 4, 9, 14, 17, 24, 31]))
def test_the_raised_bound_never_passes_an_extension_and_is_exact_on_one_block(seed: int) -> None:
    rng = np.random.default_rng(7100 + seed)
    n_classes = 3 if seed % 5 == 4 else 2
    X, y = random_instance(rng, n_classes) if seed % 2 else _wide_instance(rng, n_classes)
    weights = rng.uniform(0.5, 2.0, size=n_classes) if seed % 7 == 3 else None
    lam = float(rng.choice([0.002, 0.01, 0.03]))
    units = _units(X, y, n_classes, weights)
    search = _search_with_table(units, lam)
    counters = search.counters()
    # built at the first slice, unless the root was already hopeless (nothing to search)
    assert counters["tail_table_blocks"] == ((units.n_units + 15) // 16 if counters["expanded"] else 0)
    rules = counters["tail_table_rules"]
    lists = rule_lists(X, y, lam, n_classes, weights)
    exact = units.n_units <= 16  # one block: the table holds the best tail of up to `rules` rules
    raised = 0
    for prefix, truth in _best_extensions(lists).items():
        bound = search.extension_bound(list(prefix))
        plain = search.evaluate(list(prefix))
        assert bound <= truth + 1e-12, (prefix, bound, truth)
        raised += bound > plain["b"] + plain["b0"] + lam + 1e-9
        if exact and len(prefix) + rules >= X.shape[1]:
            # floats hold the table: exact with integer weights, within their rounding otherwise
            assert bound == pytest.approx(truth, abs=MARGIN + (1e-12 if weights is None else 1e-6)), prefix
    objective, _ = brute_force(X, y, lam, n_classes, weights)
    assert search.objective == pytest.approx(objective, abs=1e-12)
    if seed == 0:
        assert raised > 0  # the table does raise bounds on these instances


@pytest.mark.parametrize("seed", sampled(range(24), [0, 1, 2, 3, 4, 5, 7]))  # every policy, map, thread count
def test_a_search_started_again_under_the_table_finds_the_brute_force_optimum(seed: int) -> None:
    """The table comes after a few evaluations: the search starts again from the root under it,
    keeping its incumbent; its lower bound, read after every slice, never falls and never passes
    the optimum, under every policy, map and thread count."""
    rng = np.random.default_rng(8200 + seed)
    X, y = _wide_instance(rng)
    lam = float(rng.choice([0.002, 0.005, 0.01]))
    policy = ("lower_bound", "bfs", "curiosity", "objective", "dfs")[seed % 5]
    symmetry_map = ("prefix", "captured", "none")[seed % 3]
    threads = 1 + seed % 2
    units = _units(X, y)
    after = int(rng.integers(1, 12))
    search = engine.make_search(units, lam, policy=policy, symmetry_map=symmetry_map, threads=threads, tail_after=after)
    objective, _ = brute_force(X, y, lam)
    stop = np.zeros(1, np.uint8)
    bounds, budget = [], 0
    while True:
        budget += 50
        code = search.run(10.0, stop, budget)
        bounds.append(search.lower_bound())
        assert bounds[-1] <= objective + 1e-12
        if code != ccorels.NODE_LIMIT:
            break
    assert code == ccorels.DONE
    assert bounds == sorted(bounds)
    assert search.objective == pytest.approx(objective, abs=1e-12)
    assert search.lower_bound() == pytest.approx(search.objective, abs=1e-15)
    counters = search.counters()
    if counters["evaluated_before_tail_table"]:  # it outlasted `after`: built, and started again
        assert counters["evaluated_before_tail_table"] >= after
        assert counters["tail_table_blocks"] == (units.n_units + 15) // 16
    else:  # done before `after` evaluations
        assert counters["tail_table_blocks"] == 0 and counters["evaluated"] <= after + X.shape[1]


def test_a_table_holds_every_block_or_is_not_built() -> None:
    """Within its budget the table holds fewer rules; past it (too many units) there is none, and
    the search never starts again for it."""
    rng = np.random.default_rng(11)
    for _ in range(6):
        X, y = _wide_instance(rng)
        units = _units(X, y)
        if units.n_units > 16:
            break
    blocks = (units.n_units + 15) // 16
    assert blocks > 1
    lam = 0.004
    objective = brute_force(X, y, lam)[0]
    lists = rule_lists(X, y, lam)
    for rules in (1, 3):  # a budget for tails of `rules` rules over every block
        search = _search_with_table(units, lam, tail_bytes=blocks * 65536 * (2 * rules + 1) * 4)
        counters = search.counters()
        assert counters["tail_table_blocks"] == blocks and counters["tail_table_rules"] == rules
        for prefix, truth in _best_extensions(lists).items():
            assert search.extension_bound(list(prefix)) <= truth + 1e-12
        assert search.objective == pytest.approx(objective, abs=1e-12)
    short = _search_with_table(units, lam, tail_bytes=blocks * 65536 * 3 * 4 - 1)
    assert short.counters()["tail_table_blocks"] == 0 and short.counters()["evaluated_before_tail_table"] == 0
    assert short.objective == pytest.approx(objective, abs=1e-12)


def test_the_table_waits_for_a_long_search_and_is_off_when_switched_off_or_constrained() -> None:
    rng = np.random.default_rng(5)
    X, y = _wide_instance(rng)
    units = _units(X, y)
    short = engine.make_search(units, 0.01)
    engine.run_to_end(short)  # a short search never pays for the table
    assert short.counters()["tail_table_blocks"] == 0
    off = engine.make_search(units, 0.01, tail_after=0, ablation={"tail_table": False})
    engine.run_to_end(off)
    assert off.counters()["tail_table_blocks"] == 0
    assert off.extension_bound([0]) == pytest.approx(off.evaluate([0])["b"] + off.evaluate([0])["b0"] + 0.01, abs=1e-12)
    groups = np.zeros((1, X.shape[0]), dtype=bool)
    groups[0, ::2] = True
    fair_units = engine.make_units(bitset.pack_columns(X), y, 2, groups=groups)
    fair = engine.make_search(fair_units, 0.01, tail_after=0, fairness=("statistical_parity", 0.5))
    engine.run_to_end(fair)
    assert fair.counters()["tail_table_blocks"] == 0  # its raise and the constraint's do not add


@pytest.mark.parametrize(
    ("lam", "optimum", "fewer"), [(0.01, 0.367973, 3), pytest.param(0.005, 0.348094, 8, marks=pytest.mark.slow)]
)
def test_compas_certifies_with_the_table_in_a_fraction_of_the_evaluations(compas, lam, optimum, fewer) -> None:
    """From the start, and after the evaluations the build costs (started again): the same
    optimum as without the table, certified in a fraction of its evaluations."""
    units = engine.make_units(compas.antecedents.bits, compas.y, 2)
    plain = engine.make_search(units, lam, ablation={"tail_table": False})
    table = engine.make_search(units, lam, tail_after=0)
    again = engine.make_search(units, lam, tail_after=1_000_000)
    stop, bounds = np.zeros(1, np.uint8), []
    while again.run(10.0, stop, again.n_evaluated + 200_000) == ccorels.NODE_LIMIT:
        bounds.append(again.lower_bound())
    assert bounds == sorted(bounds) and len(bounds) > 5  # the floor carries the bound over the restart
    for search in (plain, table, again):
        engine.run_to_end(search)
        assert search.done
        assert search.objective == pytest.approx(optimum, abs=1e-6)
    assert table.objective == plain.objective == again.objective
    assert table.counters()["tail_table_blocks"] == again.counters()["tail_table_blocks"] == 13
    assert table.n_evaluated * fewer < plain.n_evaluated
    assert again.counters()["evaluated_before_tail_table"] >= 1_000_000


# the set (corels_rashomon.pyx): the listing and the count read the same table


@pytest.mark.parametrize("seed", sampled(range(24), [0, 1, 2, 5, 8, 13]))  # policies, threads, 3 classes (5)
def test_the_set_listed_and_counted_under_the_table_is_the_brute_force_set(seed: int) -> None:
    """The enumerator raises every child's bound by the table and drops a node queued before the
    table was built when its tails cannot fit; the count makes a child a leaf (or gives it one more
    rule at most) when the table says its longer tails cannot fit. Built at the first slice or
    part-way, under every policy and thread count, the set, its size and its best are brute
    force's; so is the count on one thread, and on two sharing one memo."""
    rng = np.random.default_rng(9300 + seed)
    n_classes = 3 if seed % 6 == 5 else 2
    X, y = _wide_instance(rng, n_classes)
    weights = rng.choice([0.5, 1.0, 2.0], size=n_classes) if seed % 4 == 3 else None
    lam = float(rng.choice([0.005, 0.01, 0.02]))
    every = every_rule_list(X, y, lam, n_classes, weights, None)
    optimum = every[0][0]
    theta = (1 + float(rng.choice([0.02, 0.05, 0.1]))) * optimum
    expected = within(every, theta)
    units = units_of(X, y, n_classes, weights)
    policy, threads = POLICIES[seed % len(POLICIES)], 1 + seed % 2
    pruned = 0
    for after in (0, int(rng.integers(1, 300))):
        en = make_enumerator(
            units, lam, theta, floor=optimum, policy=policy, threads=threads, max_models=5, tail_after=after
        )
        assert run_all(en) == cr.DONE
        assert en.count == len(expected), (after, policy, threads)
        kept = [o for o, _ in en.kept_members()]
        np.testing.assert_allclose(kept, [o for o, _ in expected[: len(kept)]], rtol=0, atol=1e-9)
        assert len(kept) == min(5, len(expected))
        counters = en.counters()
        assert counters["tail_table_blocks"] in (0, (units.n_units + 15) // 16)
        pruned += counters["pruned_tail_table"]
    counter = cr.TailCounter(make_enumerator(units, lam, theta, floor=optimum, max_models=0), 1 << 24, tail_table=True)
    assert counter.run(60.0, np.zeros(1, np.uint8)) == cr.DONE
    assert counter.count == len(expected)
    pruned += counter.counters()["count_pruned_tail_table"]
    pool = rashomon.TableCount(make_enumerator(units, lam, theta, floor=optimum, max_models=0), 1 << 24, 2)
    pool.join()
    assert pool.count == len(expected)
    if seed == 0:
        assert pruned > 0  # the table does prune on these instances


def test_a_table_built_over_other_data_is_refused_and_one_switched_off_is_not_read() -> None:
    rng = np.random.default_rng(5)
    X, y = _wide_instance(rng)
    units = units_of(X, y, 2)
    en = make_enumerator(units, 0.01, 0.5, max_models=0)
    assert en.build_tail_table() and en.tail_table is not None
    other = make_enumerator(units_of(X[:, :-1], y, 2), 0.01, 0.5, max_models=0)
    with pytest.raises(ValueError, match="other data"):
        other.use_tail_table(en.tail_table)
    off = make_enumerator(units, 0.01, 0.5, max_models=0, ablation=["tail_table"])
    assert not off.use_tail_table(en.tail_table) and off.tail_table is None
    assert not off.build_tail_table() and off.counters()["tail_table_blocks"] == 0
    # a higher threshold reads the same table: it bounds every tail, whatever the threshold
    assert make_enumerator(units, 0.01, 0.9, max_models=0).use_tail_table(en.tail_table)


@pytest.mark.slow
def test_compas_lists_its_epsilon_001_set_under_the_table_in_a_fraction_of_the_evaluations(compas) -> None:
    """COMPAS at lambda 0.01, epsilon 0.01: the 226 lists and their best, with the table built once
    the listing has paid for it (its nodes queued before are dropped when popped), in a quarter
    of the evaluations listing them without it takes."""
    units = engine.make_units(compas.antecedents.bits, compas.y, 2)
    search = engine.make_search(units, 0.01)
    engine.run_to_end(search)
    theta = 1.01 * search.objective
    runs = {}
    for ablation in ((), ("tail_table",)):
        en = make_enumerator(units, 0.01, theta, floor=search.objective, max_models=1000, ablation=ablation)
        assert run_all(en) == cr.DONE
        runs[ablation] = (en.count, [o for o, _ in en.kept_members()], en.counters())
    (with_count, with_kept, with_c), (plain_count, plain_kept, plain_c) = runs[()], runs[("tail_table",)]
    assert with_count == plain_count == 226
    np.testing.assert_allclose(with_kept, plain_kept, rtol=0, atol=1e-12)
    assert with_c["tail_table_blocks"] == 13 and with_c["pruned_tail_table"] > 0
    assert with_c["evaluated"] * 4 < plain_c["evaluated"]


def test_a_limit_reached_where_the_table_is_due_is_a_node_limit() -> None:
    """The slice that ends where the table is due also ends at the caller's evaluations: NODE_LIMIT
    then, as without the table (the table is built all the same)."""
    rng = np.random.default_rng(11)
    X = (rng.random((150, 7)) < 0.4).astype(np.uint8)
    y = (X @ rng.normal(size=7) + rng.normal(size=150) > 0).astype(np.int64)
    en = make_enumerator(units_of(X, y, 2), 0.005, 1.0, max_models=0, tail_after=100)
    stop = np.zeros(1, np.uint8)
    assert en.run(10.0, stop, 101) == cr.NODE_LIMIT and en.n_evaluated >= 101
    assert en.tail_table is not None
    assert run_all(en) == cr.DONE and en.count == len(every_rule_list(X, y, 0.005, 2, None, None))
