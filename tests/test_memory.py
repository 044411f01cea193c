"""The memory readings every limit is checked against (``glasswork.memory``)."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.memory import memory_reached, peak_memory, physical_memory, resident_memory


def test_resident_memory_sees_an_allocation() -> None:
    """64 MiB written are seen, in the best of three tries: between two readings the kernel may
    reclaim other pages of this process, or another thread free some (seen once in CI, in a test
    worker holding 640 MB: 30 MB more for the 64 MiB)."""
    grown = []
    for _ in range(3):
        before = resident_memory()
        block = np.ones(64 * 2**20, dtype=np.uint8)  # 64 MiB, every page written
        after = resident_memory()
        grown.append(after - before)
        assert peak_memory() >= after - 2**20  # the peak is never below what is resident now
        del block
        if grown[-1] >= 48 * 2**20:
            break
    assert max(grown) >= 48 * 2**20, grown


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
