"""The kernels' shared parts stay shared (issue 24 item 4): one clock, one hash, one heap, one
penalised loss, no NumPy C API, and index arrays of a fixed width (``long`` is 32 bits on Windows)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from glasswork.cython_ext import fasterrisk

KERNELS = Path(__file__).resolve().parents[2] / "cython_ext"
pytestmark = pytest.mark.skipif(not KERNELS.is_dir(), reason="needs the cython_ext sources")


def _sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(KERNELS.iterdir()) if p.suffix in (".pyx", ".pxd", ".h")}


def _count(pattern: str) -> dict[str, int]:
    found = {name: len(re.findall(pattern, text, re.M | re.I)) for name, text in _sources().items()}
    return {name: n for name, n in found.items() if n}


@pytest.mark.parametrize(
    "kernel", [fasterrisk.compress_rows, fasterrisk.build_design, fasterrisk.Design.screen], ids=lambda f: f.__name__
)
def test_index_arrays_are_int64_not_long(kernel):
    signature = kernel.__doc__.splitlines()[0]  # embedsignature: the compiled declaration
    assert "long[" not in signature
    assert "int64_t[::1]" in signature


def test_no_kernel_cimports_numpy():
    # arrays cross as typed memoryviews; the NumPy C API (and its headers at build time) is unused
    assert _count(r"^\s*cimport numpy") == {}


def test_one_clock_and_one_hash():
    assert _count(r"^cdef inline double now\(") == {"monotonic_clock.pxd": 1}
    # the splitmix64 multipliers appear once, in bitops.mix64
    assert _count(r"0xBF58476D1CE4E5B9") == {"bitops.pxd": 1}


def test_one_heap_for_every_search():
    assert _count(r"priority_queue|heap_push|_sift_down") == {}
    users = _count(r"PagedHeap\[")
    assert set(users) == {"corels.pyx", "corels_rashomon.pyx", "riskcert.pyx", "moss.pyx"}


def test_penalised_loss_and_class_counts_written_once():
    assert _count(r"ridge \+= w\[j\] \* w\[j\]") == {"logistic.pxd": 1}
    assert _count(r"cdef void _(class|minority)_counts") == {}


def test_search_composes_its_parts():
    corels = (KERNELS / "corels.pyx").read_text()
    for part in ("paged_heap", "corels_trie", "corels_map", "corels_counts", "monotonic_clock"):
        assert re.search(rf"^from {part} cimport", corels, re.M), part


def test_corels_bounds_live_in_their_part():
    # Search keeps the pruning policy; the bound arithmetic (the hopeless test, Theorem 7's f)
    # is inline in corels_bounds.pxd
    corels = (KERNELS / "corels.pyx").read_text()
    assert re.search(r"^from corels_bounds cimport", corels, re.M)
    assert _count(r"^cdef inline bint hopeless\(") == {"corels_bounds.pxd": 1}
    assert _count(r"^cdef inline int theorem7_f\(") == {"corels_bounds.pxd": 1}
    assert _count(r"and \(depth \+ 1\) \* (self\.)?lamW >=|def _theorem7_f") == {"corels_bounds.pxd": 1}
