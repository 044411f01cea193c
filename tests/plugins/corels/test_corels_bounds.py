"""``bounds.BOUNDS``: the one declaration of the switchable bounds, read by the spec, the search
and the Rashomon enumerator. Each declared name must reach the kernels as a switch that changes
the work, and each declared counter must be one the kernels report."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from glasswork.cython_ext import bitset
from glasswork.plugins.corels import bounds, spec
from glasswork.plugins.corels.rashomon import enumeration as rashomon
from glasswork.plugins.corels.search import engine
from pydantic import ValidationError

LAMBDA = 0.02


def _units(seed: int = 4, n: int = 600, p: int = 18):
    """Features from rare to common, so that every bound has prefixes to prune."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < rng.uniform(0.01, 0.5, size=p)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | X[:, 2] | (X[:, 3] & (1 - X[:, 4]))).astype(np.int64)
    y ^= (rng.random(n) < 0.2).astype(np.int64)
    return engine.make_units(bitset.pack_columns(X), y, 2)


def test_spec_engine_and_enumerator_read_the_one_declaration() -> None:
    names = tuple(b.name for b in bounds.BOUNDS)
    assert len(set(names)) == len(names)
    assert typing.get_args(spec.Bound) == names
    assert engine.ABLATIONS == names
    assert rashomon.KEPT_BOUNDS == {b.name: b.enumerator for b in bounds.BOUNDS if b.enumerator}
    for name in names:
        assert spec.CorelsSearch(ablation=[name]).ablation == [name]
    with pytest.raises(ValidationError):
        spec.CorelsSearch(ablation=["no_such_bound"])


@pytest.mark.parametrize("bound", bounds.BOUNDS, ids=lambda b: b.name)
def test_each_declared_switch_and_counter_reaches_the_search(tmp_path, bound: bounds.BoundSwitch) -> None:
    units = _units()
    # the tail table waits for a search long enough to pay for it: this one gets it at once
    kw = {"tail_after": 0} if bound.name == "tail_table" else {}
    on = engine.make_search(units, LAMBDA, **kw)
    off = engine.make_search(units, LAMBDA, ablation={bound.name: False}, **kw)
    if bound.name == "reorder":  # it runs once the prefix map has no room (or in a seeded search)
        for search in (on, off):
            search.set_spill(str(tmp_path), 0, map_budget=1)
    engine.run_to_end(on)
    engine.run_to_end(off)
    assert on.objective == pytest.approx(off.objective, abs=1e-12)  # a bound never moves the optimum
    c_on, c_off = on.counters(), off.counters()
    assert bound.counter in c_on
    if bound.name != "length_bound":  # it rarely bites: Theorem 1's bound comes first
        assert c_on[bound.counter] > 0  # the declared counter counts the bound's work
        assert c_on[bound.counter] != c_off[bound.counter]  # the switch reached the kernel


@pytest.mark.parametrize("bound", [b for b in bounds.BOUNDS if b.enumerator], ids=lambda b: b.name)
def test_each_kept_bound_reaches_the_enumerator(bound: bounds.BoundSwitch) -> None:
    units = _units()
    search = engine.make_search(units, LAMBDA)
    engine.run_to_end(search)
    threshold = 1.05 * search.objective
    stop = np.zeros(1, dtype=np.uint8)
    counts = []
    kw = {"tail_after": 0} if bound.name == "tail_table" else {}  # built at the first slice, not after a wait
    for ablation in ((), (bound.name,)):
        en = rashomon.make_enumerator(units, LAMBDA, threshold, floor=search.objective, ablation=ablation, **kw)
        while en.run(1.0, stop, -1) == 1:
            pass
        counts.append((en.count, en.counters()))
    assert counts[0][0] == counts[1][0]  # the set is the same with or without the bound
    assert counts[0][1][bound.set_counter] > 0
    assert counts[0][1][bound.set_counter] != counts[1][1][bound.set_counter]
