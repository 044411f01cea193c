"""The tail table (cython_ext/corels_tailtable.pxd): a raise of the bound every strict extension of
a prefix scores, read from exact k-rule answers on blocks of 16 units. Checked against a brute force
over every rule list: the raised bound never passes what an extension scores (and equals it when
the units fit one block), and the search under it, from the start or started again part-way, still
finds the brute force's optimum, with a lower bound that never falls and never passes it."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels.search import engine

from grids import sampled

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
