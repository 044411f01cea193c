"""The data layer: a spec's ``data:`` section in, a ``Problem`` out.

``load_problem(spec, base_dir)`` is the one entry point the runner uses. Sources, splits and
binarization are described by ``DataSpec``; every failure is a ``DataError`` naming the file,
column, row or value and the fix.
"""

from __future__ import annotations

from glasswork.data.load import load_problem
from glasswork.data.problem import DataError, Problem
from glasswork.data.spec import BinarizeSpec, DataSpec, SplitSpec

__all__ = ["BinarizeSpec", "DataError", "DataSpec", "Problem", "SplitSpec", "load_problem"]
