"""Brute-force grids: every case under ``-m slow``, a fixed sample of them in the default run.

A test that checks a solver against brute force over a Cartesian grid (policy x map x ablation x
threads, say) or over many seeded instances would cost all of them in the default run. These
helpers keep every case, marked ``slow`` (the default run deselects them; ``.ci/run`` runs them in
a step of its own, ``pytest -m slow``), and add a sample the default run keeps, with ids starting
``sample-``. For a grid: the edge cases the test names (all bounds on, all off, the most threads),
then seeded cases until every pair of values of any two axes is covered, so a fault that needs two
settings together shows in the sample (``strength=1``: every value, for two axes, where every pair
is the whole grid). For a list of seeds: the seeds the test names. The sample is the same on every
run.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

SEED = 20261129
Case = tuple[int, ...]


def _covers(case: Case, strength: int) -> set[Case]:
    """The (axis, value index, axis, value index, ...) combinations of ``strength`` axes one case covers."""
    return {tuple(x for i in axes for x in (i, case[i])) for axes in itertools.combinations(range(len(case)), strength)}


def covering_sample(
    sizes: Sequence[int], edges: Sequence[Case] = (), strength: int = 2, seed: int = SEED
) -> list[Case]:
    """Indices into the grid ``sizes``: ``edges``, then cases until every combination of values of
    any ``strength`` axes (2: every pair) is covered.

    Greedy, as AETG: each new case is the best of 50 seeded random candidates at covering the
    combinations still missing (each candidate holds the first missing one, so the loop ends).
    """
    rng = random.Random(seed)
    strength = min(strength, len(sizes))
    uncovered = set().union(*(_covers(c, strength) for c in itertools.product(*(range(n) for n in sizes))))
    sample: list[Case] = []
    for case in edges:
        if case not in sample:
            sample.append(case)
            uncovered -= _covers(case, strength)
    while uncovered:
        first = min(uncovered)
        best: Case = ()
        for _ in range(50):
            values = [rng.randrange(n) for n in sizes]
            for axis, value in zip(first[::2], first[1::2], strict=True):
                values[axis] = value
            if len(_covers(tuple(values), strength) & uncovered) > len(_covers(best, strength) & uncovered):
                best = tuple(values)
        sample.append(best)
        uncovered -= _covers(best, strength)
    return sample


def covering_grid(
    axes: Sequence[Sequence[Any]],
    ids: Sequence[Callable[[Any], str]] | None = None,
    edges: Sequence[tuple[Any, ...]] = (),
    strength: int = 2,
    seed: int = SEED,
) -> list[Any]:
    """``parametrize`` values over the product of ``axes``: the covering sample (ids ``sample-...``)
    and every case of the grid marked ``slow``. ``edges``: cases, as values, the sample starts with;
    ``strength``: 2 covers every pair of values, 1 every value (for two axes, where every pair is
    the whole grid)."""
    names = ids or [str] * len(axes)

    def case_id(values: tuple[Any, ...]) -> str:
        return "-".join(name(v) for name, v in zip(names, values, strict=True))

    def indices(values: tuple[Any, ...]) -> Case:
        return tuple(list(axis).index(v) for axis, v in zip(axes, values, strict=True))

    picked = covering_sample([len(axis) for axis in axes], [indices(e) for e in edges], strength, seed)
    sample = [tuple(axis[k] for axis, k in zip(axes, case, strict=True)) for case in picked]
    return [pytest.param(*c, id=f"sample-{case_id(c)}") for c in sample] + [
        pytest.param(*c, id=case_id(c), marks=pytest.mark.slow) for c in itertools.product(*axes)
    ]


def sampled(values: Iterable[Any], sample: Iterable[Any]) -> list[Any]:
    """``parametrize`` values: those of ``sample`` (ids ``sample-...``), then every one marked ``slow``."""
    values = list(values)
    picked = list(sample)
    assert set(picked) <= set(values), "the sample is taken from the values"
    return [pytest.param(v, id=f"sample-{v}") for v in picked] + [
        pytest.param(v, id=str(v), marks=pytest.mark.slow) for v in values
    ]
