"""Compact prefixes (issue 27 item 1): 16-byte trie nodes and compact map records, exactly the
same search as the wider layouts they replace.

The compact layouts apply when their conditions hold (the lower-bound policy keeps bounds in the
queue keys; integral class weights keep errors as integers; at most 256 antecedents keep ids as
bytes); otherwise the search falls back to the wide ones. Each pair below runs both sides on the
same problem and asks for identical work, so a compact field that lost a bit would show.
"""

from __future__ import annotations

import numpy as np
import pytest
from corels_reference import brute_force, random_instance
from glasswork.cython_ext import bitset
from glasswork.plugins.corels.search import engine
from grids import sampled

WORK = ("evaluated", "inserted", "pruned_map", "map_replaced", "max_queue", "max_trie", "map", "popped_pruned")


def _instance(seed: int, m: int = 7, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, m)) < rng.uniform(0.2, 0.6, size=m)).astype(np.uint8)
    score = X @ rng.normal(size=m) + rng.normal(scale=0.7, size=n)
    y = (score > np.median(score)).astype(np.int64)
    return X, y


def _search(X: np.ndarray, y: np.ndarray, lam: float, *, weights=None, **kw):
    units = engine.make_units(bitset.pack_columns(X), y, 2, class_weights=weights)
    search = engine.make_search(units, lam, **kw)
    assert engine.run_to_end(search) == 0
    return search


def _work(search) -> dict[str, int]:
    c = search.counters()
    return {k: c[k] for k in WORK}


def test_node_and_record_layouts():
    X, y = _instance(1)
    # lower-bound policy, unit weights: 16-byte nodes, ids as bytes, score and node in 6 bytes
    mem = _search(X, y, 0.01).memory_breakdown()
    assert (mem["node_bytes"], mem["record_tail_bytes"], mem["byte_ids"]) == (16, 6, True)
    # another policy keeps each node's bound beside it
    assert _search(X, y, 0.01, policy="bfs").memory_breakdown()["node_bytes"] == 24
    # fractional class weights: errors are not integers, so they and the records stay doubles
    mem = _search(X, y, 0.01, policy="bfs", weights=np.array([0.5, 0.75])).memory_breakdown()
    assert (mem["node_bytes"], mem["record_tail_bytes"]) == (32, 12)
    # integers past 2^17 (here 2^20 per sample): a uint32 score beside the node
    mem = _search(X, y, 0.01, weights=np.array([2.0**20, 2.0**20])).memory_breakdown()
    assert (mem["node_bytes"], mem["record_tail_bytes"]) == (16, 8)


@pytest.mark.parametrize("smap", engine.SYMMETRY_MAPS)
@pytest.mark.parametrize("policy", ["lower_bound", "curiosity"])
@pytest.mark.parametrize("scale", [2.0**20, 0.25])
def test_wide_layouts_do_the_same_work(smap: str, policy: str, scale: float):
    """Class weights (2, 2) give integral errors (compact nodes and records); scaled by a power of
    two they are the same problem with every comparison unchanged, and the wide layouts (errors
    and bounds as doubles, uint32 scores) must then do exactly the same work."""
    for seed in range(4):
        X, y = _instance(seed)
        for lam in (0.0, 0.005, 0.02):
            a = _search(X, y, lam, weights=np.array([2.0, 2.0]), policy=policy, symmetry_map=smap)
            b = _search(X, y, lam, weights=np.array([2.0 * scale, 2.0 * scale]), policy=policy, symmetry_map=smap)
            assert b.memory_breakdown()["record_tail_bytes"] > a.memory_breakdown()["record_tail_bytes"]
            assert _work(a) == _work(b)
            assert a.objective == b.objective
            assert a.best_prefix == b.best_prefix


@pytest.mark.parametrize("smap", sampled(engine.SYMMETRY_MAPS, ["prefix"]))  # the default map's records
def test_antecedent_ids_past_255(smap: str):
    """With more than 256 antecedents the records keep 16-bit ids: 290 empty antecedents in front
    of a real set move its ids past 255 and change nothing but the evaluations they cost."""
    for seed in range(3):
        X, y = _instance(10 + seed, m=7, n=300)
        pad = np.hstack([np.zeros((X.shape[0], 290), dtype=np.uint8), X])
        a = _search(X, y, 0.01, symmetry_map=smap)
        b = _search(pad, y, 0.01, symmetry_map=smap)
        assert b.memory_breakdown()["byte_ids"] is False
        assert a.objective == b.objective
        assert [i + 290 for i in a.best_prefix] == b.best_prefix
        wa, wb = _work(a), _work(b)
        for key in ("inserted", "pruned_map", "map_replaced", "max_queue", "map"):
            assert wa[key] == wb[key], key
        ref, _ = brute_force(X, y, 0.01)
        assert b.objective == pytest.approx(ref, abs=1e-12)


def test_optimum_with_compact_layouts_equals_enumeration():
    rng = np.random.default_rng(27)
    for _ in range(12):
        X, y = random_instance(rng, max_m=6)
        for lam in (0.0, 0.01, 0.05):
            s = _search(X, y, lam)
            ref, _ = brute_force(X, y, lam)
            assert s.objective == pytest.approx(ref, abs=1e-12)
