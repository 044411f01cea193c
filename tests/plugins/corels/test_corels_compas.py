"""COMPAS certification at lambda = 0.015: objective 0.37797 and the two-rule list, every way."""

from __future__ import annotations

import numpy as np
import pytest
from corels_reference import compas  # noqa: F401  (a fixture)
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels.search import engine
from grids import covering_grid

EXPECTED_RULES = {"sex:Male,juvenile-crimes:>0", "priors:>3"}


@pytest.fixture(scope="module")
def units(compas):
    return engine.make_units(compas.antecedents.bits, compas.y, 2)


def test_minority_matches_the_minor_file(compas, units) -> None:
    """Our equivalence classes reproduce the reference .minor vector (up to ties, same count)."""
    assert compas.minority is not None
    assert int(units.minority.sum()) == int(compas.minority.sum())
    counts = units.counts[units.unit_of_sample]
    majority = (2 * counts[:, 1] >= counts.sum(axis=1)).astype(int)  # ties: higher label
    tie = 2 * counts[:, 1] == counts.sum(axis=1)
    mine = compas.y != majority
    assert np.array_equal(mine[~tie], compas.minority[~tie])


@pytest.mark.parametrize(
    "policy, smap",
    covering_grid([engine.POLICIES, engine.SYMMETRY_MAPS], edges=[("lower_bound", "prefix")], strength=1),
)
def test_certified_optimum(compas, units, policy: str, smap: str) -> None:
    s = engine.make_search(units, 0.015, policy=policy, symmetry_map=smap)
    assert engine.run_to_end(s, time_limit=60) == ccorels.DONE
    assert round(s.objective, 5) == 0.37797
    assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)
    names = [compas.antecedents.names[i] for i in s.best_prefix]
    assert set(names) == EXPECTED_RULES and len(names) == 2
    ev = s.evaluate(s.best_prefix)
    assert ev["rule_labels"] == [1, 1] and ev["default"] == 0
    assert compas.label_names[1].endswith("Yes")


def test_kernels_agree_on_compas(compas, units) -> None:
    runs = []
    for kernel in ("dense", "bitsliced"):
        s = engine.make_search(units, 0.015, kernel=kernel)
        assert s.kernel == kernel
        assert engine.run_to_end(s, time_limit=60) == ccorels.DONE
        runs.append((s.objective, s.counters()["evaluated"], s.best_prefix))
    assert runs[0] == runs[1]


def test_uncompressed_search_agrees(compas) -> None:
    units = engine.make_units(compas.antecedents.bits, compas.y, 2, compress=False)
    s = engine.make_search(units, 0.015)
    assert engine.run_to_end(s, time_limit=60) == ccorels.DONE
    assert round(s.objective, 5) == 0.37797


def test_objective_recomputed_from_the_samples(compas) -> None:
    units = engine.make_units(compas.antecedents.bits, compas.y, 2)
    s = engine.make_search(units, 0.015)
    engine.run_to_end(s)
    X = compas.antecedents.matrix().astype(bool)
    y = compas.y
    open_ = np.ones(len(y), bool)
    errors = 0
    for j in s.best_prefix:
        cap = open_ & X[:, j]
        errors += int((y[cap] != 1).sum())
        open_ &= ~cap
    errors += int((y[open_] != 0).sum())
    assert errors / len(y) + 0.015 * 2 == pytest.approx(s.objective, abs=1e-12)


# certified by the search without Theorem 18 (docs/maintainers/corels-measurements.md, benchmark table)
KNOWN = {0.015: (0.37797, 2), 0.01: (0.36797, 2), 0.005: (0.34809, 4)}


@pytest.mark.parametrize("lam", [0.015, 0.01, pytest.param(0.005, marks=pytest.mark.slow)])
def test_known_optima_with_theorem_18(units, lam: float) -> None:
    """Theorem 18 (on by default) keeps COMPAS's certified optima and cuts work."""
    s = engine.make_search(units, lam)
    assert engine.run_to_end(s, time_limit=300) == ccorels.DONE
    objective, rules = KNOWN[lam]
    assert round(s.objective, 5) == objective
    assert len(s.best_prefix) == rules
    assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)
    if lam <= 0.01:
        assert s.counters()["pruned_similar_support"] > 0


def test_theorem_18_reduces_the_work_at_lambda_001(units) -> None:
    runs = []
    for on in (False, True):
        s = engine.make_search(units, 0.01, ablation={"similar_support": on})
        assert engine.run_to_end(s, time_limit=120) == ccorels.DONE
        runs.append(s)
    off, on_ = runs
    assert on_.objective == off.objective
    assert on_.counters()["inserted"] < off.counters()["inserted"]
    assert on_.n_evaluated < off.n_evaluated
