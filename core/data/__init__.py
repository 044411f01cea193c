"""The data layer: a spec's ``data:`` section in, a ``Problem`` out.

``load_problem(spec, base_dir)`` is the one entry point the runner uses. Sources, splits and
binarization are described by ``DataSpec``; every failure is a ``DataError`` naming the file,
column, row or value and the fix. ``glasswork.data.rules`` mines antecedents and the CORELS
minority; ``glasswork.data.corels_format`` reads and writes the CORELS text files.

Importing this package stays light: DuckDB and scikit-learn load only when a source needs them.
"""

from __future__ import annotations

from glasswork.data.corels_format import CorelsData, read_corels, write_corels
from glasswork.data.load import load_again, load_problem
from glasswork.data.problem import DataError, LimitReached, Problem
from glasswork.data.rules import Antecedents, mine_antecedents, minority_mask
from glasswork.data.spec import BinarizeSpec, DataSpec, SplitSpec
from glasswork.data.split import split_indices

__all__ = [
    "Antecedents",
    "BinarizeSpec",
    "CorelsData",
    "DataError",
    "DataSpec",
    "LimitReached",
    "Problem",
    "SplitSpec",
    "load_again",
    "load_problem",
    "mine_antecedents",
    "minority_mask",
    "read_corels",
    "split_indices",
    "write_corels",
]
