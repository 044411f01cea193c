"""Antecedent mining for rule lists and rule sets, and the CORELS equivalent-points minority.

An *item* is one 0/1 feature (``sex:Male``, ``age<=25``) or, with ``negations``, its negation
(``sex:not-Male``, ``age>25``). An *antecedent* is a conjunction of up to ``max_card`` items from
distinct attributes (the attribute is the part of the name before ``:``, ``<=``, ``>``, ...), kept
when its support lies in ``[min_support, 1 - min_support]``: by CORELS Theorems 10 and 21 no
optimal list for ``lambda >= min_support`` uses any other. Identical bit vectors are dropped
(first one kept) and counted.

The order is the one the CORELS reference files use, so mined sets compare line by line: first
by cardinality, then by the tuple of attributes (in order of first appearance among the columns),
then by the tuple of values (column order within an attribute, negations after the plain items).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from glasswork.cython_ext import bitset
from glasswork.data.problem import DataError

# The first operator in a feature name ends its attribute: "juvenile-crimes:>0" -> ":" (attribute
# "juvenile-crimes"), "age<=25" -> "<=" (attribute "age").
_OPERATOR = re.compile(r"(:|<=|>=|!=|==|<|>|=)")
_NEGATED_OP = {"<=": ">", ">": "<=", "<": ">=", ">=": "<", "==": "!=", "=": "!=", "!=": "="}

MAX_ANTECEDENTS = 2_000_000


@dataclass(frozen=True, eq=False)
class Antecedents:
    """A fixed antecedent set as packed bit vectors: row ``m`` says which samples it captures."""

    names: list[str]
    bits: np.ndarray
    n_samples: int
    cardinality: np.ndarray
    duplicates_removed: int = 0
    # the (column, value) items of each antecedent, when mined: column names may hold the commas
    # that join items in ``names``, so a name cannot be split back into its items
    items: tuple[tuple[tuple[int, int], ...], ...] | None = None

    def __post_init__(self) -> None:
        if self.bits.dtype != np.uint64 or self.bits.ndim != 2 or not self.bits.flags.c_contiguous:
            raise ValueError("bits must be a C-contiguous (M, n_words) uint64 array")
        if self.bits.shape != (len(self.names), bitset.n_words(self.n_samples)):
            raise ValueError(
                f"bits has shape {self.bits.shape}, expected ({len(self.names)}, "
                f"{bitset.n_words(self.n_samples)}) for {self.n_samples} samples"
            )
        if self.cardinality.shape != (len(self.names),):
            raise ValueError("cardinality must have one entry per antecedent")

    def __len__(self) -> int:
        return len(self.names)

    @property
    def counts(self) -> np.ndarray:
        """Number of samples each antecedent captures."""
        return bitset.popcount_rows(self.bits)

    @property
    def support(self) -> np.ndarray:
        """Fraction of samples each antecedent captures."""
        return self.counts / max(self.n_samples, 1)

    def matrix(self) -> np.ndarray:
        """The ``(n_samples, M)`` uint8 0/1 matrix (samples by antecedents)."""
        return np.ascontiguousarray(bitset.unpack_rows(self.bits, self.n_samples).T)

    def subset(self, keep: Sequence[int] | np.ndarray) -> Antecedents:
        """The antecedents at positions ``keep``, in that order."""
        idx = np.asarray(keep, dtype=np.intp)
        return Antecedents(
            names=[self.names[i] for i in idx],
            bits=np.ascontiguousarray(self.bits[idx]),
            n_samples=self.n_samples,
            cardinality=self.cardinality[idx].copy(),
            duplicates_removed=self.duplicates_removed,
        )

    @classmethod
    def from_matrix(cls, matrix: np.ndarray, names: Sequence[str]) -> Antecedents:
        """Wrap an ``(n_samples, M)`` 0/1 matrix whose columns already are antecedents."""
        X = _check_binary(matrix, names)
        names = list(names)
        return cls(
            names=names,
            bits=bitset.pack_columns(X),
            n_samples=X.shape[0],
            cardinality=np.asarray([len(split_items(n)) for n in names], dtype=np.int64),
        )


def attribute_of(name: str) -> str:
    """The attribute a feature name belongs to: the text before its first operator."""
    m = _OPERATOR.search(name)
    return name[: m.start()] if m and m.start() > 0 else name


def negate_name(name: str) -> str:
    """Readable name of a feature's negation: ``a:v`` -> ``a:not-v``, ``x<=3`` -> ``x>3``."""
    m = _OPERATOR.search(name)
    if m is None or m.start() == 0:
        return name[4:] if name.startswith("not-") else f"not-{name}"
    head, op, value = name[: m.start()], m.group(1), name[m.end() :]
    if op == ":":
        return f"{head}:{value[4:]}" if value.startswith("not-") else f"{head}:not-{value}"
    return f"{head}{_NEGATED_OP[op]}{value}"


def split_items(name: str) -> list[str]:
    """The items of an antecedent name (``a:x,b:y`` -> ``[a:x, b:y]``)."""
    return name.split(",")


def mine_antecedents(
    X: np.ndarray,
    names: Sequence[str],
    *,
    max_card: int = 2,
    min_support: float = 0.005,
    negations: bool = True,
    dedupe: bool = True,
    attributes: Sequence[str] | None = None,
    max_antecedents: int = MAX_ANTECEDENTS,
) -> Antecedents:
    """Mine every conjunction of up to ``max_card`` items with support in range (see module doc).

    ``X`` is an ``(n_samples, n_features)`` 0/1 matrix with one name per column. ``attributes``
    overrides the attribute of each column (by default parsed from its name); items of one
    attribute are never combined. ``dedupe=False`` keeps identical vectors, as the CORELS
    reference files do.
    """
    X = _check_binary(X, names)
    if max_card < 1:
        raise DataError(f"max_card must be at least 1, got {max_card}", hint="use max_card: 1 or 2")
    if not 0.0 <= min_support <= 0.5:
        raise DataError(
            f"min_support must lie in [0, 0.5], got {min_support}",
            hint="support is kept in [min_support, 1 - min_support]",
        )
    n, p = X.shape
    if n == 0:
        raise DataError("cannot mine antecedents from an empty data set", hint="check the data source and its filters")
    attrs = [attribute_of(str(nm)) for nm in names] if attributes is None else list(attributes)
    if len(attrs) != p:
        raise DataError(f"{len(attrs)} attributes given for {p} columns")

    plain = bitset.pack_columns(X)
    item_bits = [plain]
    item_names = [str(nm) for nm in names]
    item_attr = list(attrs)
    if negations:
        item_bits.append(bitset.invert_rows(plain, n))
        item_names += [negate_name(nm) for nm in item_names]
        item_attr += attrs
    all_bits = np.ascontiguousarray(np.concatenate(item_bits))

    # Group items by attribute (first appearance), keeping plain-then-negated column order inside.
    group_of: dict[str, int] = {}
    for a in item_attr:
        group_of.setdefault(a, len(group_of))
    gid = np.asarray([group_of[a] for a in item_attr], dtype=np.int64)
    order = np.argsort(gid, kind="stable")
    items = np.ascontiguousarray(all_bits[order])
    starts = np.searchsorted(gid[order], np.arange(len(group_of) + 1)).astype(np.int64)

    lo = max(0, math.ceil(min_support * n - 1e-9))
    hi = min(n, math.floor((1.0 - min_support) * n + 1e-9))
    from glasswork.cython_ext.mining import conjunctions, walk

    try:
        combos, _, hashes = walk(items, starts, max_card, lo, hi, max_antecedents)
    except OverflowError:
        raise DataError(
            f"more than {max_antecedents} antecedents qualify (max_card={max_card}, "
            f"min_support={min_support}, {len(item_names)} items)",
            hint="raise min_support, lower max_card, or use fewer thresholds per column",
        ) from None

    # Canonical order: cardinality, then attribute tuple, then item tuple (item index is
    # group-major, so it orders values within an attribute).
    card = (combos >= 0).sum(axis=1).astype(np.int64)
    item_group = gid[order]
    groups = np.where(combos >= 0, item_group[np.maximum(combos, 0)], -1)
    keys = [combos[:, k] for k in reversed(range(max_card))]
    keys += [groups[:, k] for k in reversed(range(max_card))]
    keys.append(card)
    rank = np.lexsort(keys) if len(card) else np.zeros(0, dtype=np.intp)
    combos, card, hashes = combos[rank], card[rank], hashes[rank]

    removed = 0
    if dedupe and len(card):
        keep = _first_unique(items, combos, hashes)
        removed = len(card) - len(keep)
        combos, card = combos[keep], card[keep]
    bits = conjunctions(items, np.ascontiguousarray(combos))

    ordered_names = [item_names[i] for i in order]
    out_names = [",".join([ordered_names[i] for i in row if i >= 0]) for row in combos.tolist()]
    # item k < p is column k, item p + k its negation
    column_items = tuple(
        tuple((int(order[i]) % p, int(order[i] < p)) for i in row if i >= 0) for row in combos.tolist()
    )
    return Antecedents(
        names=out_names, bits=bits, n_samples=n, cardinality=card, duplicates_removed=removed, items=column_items
    )


def minority_mask(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The CORELS equivalent-points minority: bool ``(n,)``.

    Samples with identical feature rows form a class; inside each class, the samples whose label
    is not the class's majority label are the minority (on a tie the lowest label code is the
    majority). Any rule list errs on at least these samples (CORELS Proposition 19).
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2:
        raise DataError(f"features must be a 2-D matrix, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise DataError(f"{X.shape[0]} rows of features but {y.shape[0] if y.ndim else 0} labels")
    n = X.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    codes, y_idx = np.unique(y, return_inverse=True)
    y_idx = y_idx.reshape(-1)
    if X.dtype in (np.uint8, np.bool_, np.int8) and np.isin(X, (0, 1)).all():
        rows = bitset.pack_rows(np.ascontiguousarray(X.astype(np.uint8, copy=False)))
    else:
        rows = np.ascontiguousarray(X.astype(np.float64) + 0.0)  # + 0.0 folds -0.0 into 0.0
    _, group = np.unique(_void_rows(rows), return_inverse=True)
    group = group.reshape(-1)
    k = len(codes)
    table = np.bincount(group * k + y_idx, minlength=(group.max() + 1) * k).reshape(-1, k)
    majority = table.argmax(axis=1)
    return y_idx != majority[group]


def _first_unique(items: np.ndarray, combos: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Sorted positions of the first conjunction of each distinct vector.

    Only conjunctions sharing a hash can be equal; their vectors are built and compared exactly,
    so a hash collision never merges different vectors.
    """
    from glasswork.cython_ext.mining import conjunctions

    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    suspect = np.flatnonzero(counts[inverse.reshape(-1)] > 1)
    keep = np.ones(len(hashes), dtype=bool)
    if suspect.size:
        vectors = conjunctions(items, np.ascontiguousarray(combos[suspect]))
        _, first = np.unique(_void_rows(vectors), return_index=True)
        keep[suspect] = False
        keep[suspect[first]] = True
    return np.flatnonzero(keep)


def _void_rows(rows: np.ndarray) -> np.ndarray:
    rows = np.ascontiguousarray(rows)
    width = rows.dtype.itemsize * rows.shape[1]
    if width == 0:
        return np.zeros(rows.shape[0], dtype=np.int8)
    return rows.view(np.dtype((np.void, width))).reshape(-1)


def _check_binary(X: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """``X`` as a C-contiguous uint8 0/1 matrix, or a DataError naming the first bad cell."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataError(f"features must be a 2-D matrix, got shape {X.shape}")
    if len(names) != X.shape[1]:
        raise DataError(f"{X.shape[1]} feature columns but {len(names)} names")
    if X.dtype != np.uint8 and X.dtype != np.bool_:
        if X.dtype.kind not in "biuf":
            raise DataError(
                f"features must be 0/1 numbers, got dtype {X.dtype}",
                hint="binarize the data first (data: binarize: ...)",
            )
    if X.dtype != np.bool_:
        bad = ~np.isin(X, (0, 1))
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise DataError(
                f"feature value {X[r, c]!r} is not 0 or 1",
                column=str(names[c]),
                row=int(r) + 1,
                hint="antecedents are mined from 0/1 features: binarize the data first",
            )
    return np.ascontiguousarray(X.astype(np.uint8, copy=False))
