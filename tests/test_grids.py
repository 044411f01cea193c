"""The sampled brute-force grids (tests/grids.py): the default run's sample covers what it says,
and every case of the grid is still there under ``-m slow``."""

from __future__ import annotations

import itertools

import pytest
from grids import covering_grid, covering_sample, sampled


def _marked_slow(param) -> bool:
    return any(mark.name == "slow" for mark in param.marks)


@pytest.mark.parametrize("sizes", [(5, 3, 9, 3), (3, 2, 3, 2), (5, 3, 2), (2, 2), (4,)])
def test_the_sample_covers_every_pair_of_values_and_starts_with_the_edges(sizes) -> None:
    edges = [tuple(n - 1 for n in sizes), tuple(0 for _ in sizes)]
    sample = covering_sample(sizes, edges)
    assert sample[:2] == edges
    assert covering_sample(sizes, edges) == sample  # seeded: the same every run
    for i, j in itertools.combinations(range(len(sizes)), 2):
        assert {(c[i], c[j]) for c in sample} == set(itertools.product(range(sizes[i]), range(sizes[j])))
    assert len(set(sample)) == len(sample) <= len(list(itertools.product(*map(range, sizes))))


def test_the_sample_of_the_corels_grid_is_the_least_that_covers_every_pair() -> None:
    """5 policies x 3 maps x 9 ablation sets x 3 thread counts: 45 of 405 (5 x 9 pairs need 45)."""
    assert len(covering_sample((5, 3, 9, 3), [(3, 1, 0, 0), (0, 0, 8, 2)])) == 45


def test_strength_one_covers_every_value_with_fewer_cases() -> None:
    sample = covering_sample((5, 3), strength=1)
    assert {c[0] for c in sample} == set(range(5)) and {c[1] for c in sample} == set(range(3))
    assert len(sample) == 5


def test_the_grid_holds_every_case_marked_slow_and_a_sample_unmarked() -> None:
    axes = [("bfs", "dfs", "lower_bound"), (1, 2, 4), (True, False)]
    params = covering_grid(axes, edges=[("dfs", 4, False)])
    slow = [p.values for p in params if _marked_slow(p)]
    default = [p for p in params if not _marked_slow(p)]
    assert sorted(slow, key=str) == sorted(itertools.product(*axes), key=str)
    assert default[0].values == ("dfs", 4, False)
    assert all(p.id.startswith("sample-") for p in default) and len(default) < len(slow)
    assert len({p.id for p in params}) == len(params)


def test_sampled_seeds_keep_every_seed_under_slow() -> None:
    params = sampled(range(6), [0, 3])
    assert [p.values for p in params if not _marked_slow(p)] == [(0,), (3,)]
    assert [p.values for p in params if _marked_slow(p)] == [(s,) for s in range(6)]
    with pytest.raises(AssertionError):
        sampled(range(3), [7])
