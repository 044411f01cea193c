"""This process's memory and the machine's: what the limits (``limits.memory``, a data filter's
bound, a Dask task's) are read against.

A leaf module: the data layer, the runner and the plugins all poll memory, and none of them
should have to import the solver contract (or each other) for it.
"""

from __future__ import annotations

import os
import resource
import sys


def resident_memory() -> int:
    """Current resident set size of this process in bytes (peak RSS where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return peak_memory()


def memory_reached(limit: int | None) -> bool:
    """Whether this process's resident memory is at ``limit`` bytes or past it (never without one)."""
    return limit is not None and resident_memory() >= limit


def peak_memory() -> int:
    """Peak resident set size of this process in bytes (``ru_maxrss``: bytes on macOS, KiB elsewhere)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def physical_memory() -> int | None:
    """This machine's memory in bytes (None where the system does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None
