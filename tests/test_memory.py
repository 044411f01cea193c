"""The memory readings every limit is checked against (``glasswork.memory``)."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.memory import memory_reached, peak_memory, physical_memory, resident_memory


def test_resident_memory_sees_an_allocation() -> None:
    before = resident_memory()
    block = np.ones(64 * 2**20, dtype=np.uint8)  # 64 MiB, every page written
    after = resident_memory()
    assert after - before >= 48 * 2**20
    assert peak_memory() >= after - 2**20  # the peak is never below what is resident now
    del block


def test_resident_memory_is_below_the_machine() -> None:
    total = physical_memory()
    if total is None:
        pytest.skip("this system does not say its memory")
    assert 0 < resident_memory() < total


def test_a_limit_is_reached_at_the_resident_size_and_never_without_one() -> None:
    now = resident_memory()
    assert memory_reached(now // 2)
    assert not memory_reached(now + 2**40)
    assert not memory_reached(None)
