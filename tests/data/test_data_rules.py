"""Antecedent mining and the minority mask, checked against the CORELS reference files."""

from __future__ import annotations

import csv
import itertools
import time
from pathlib import Path

import numpy as np
import pytest
from data_fixtures import corels_dir, datasets  # noqa: F401  (pytest fixtures)
from glasswork.cython_ext import bitset
from glasswork.data import DataError
from glasswork.data.corels_format import read_corels
from glasswork.data.rules import (
    Antecedents,
    attribute_of,
    mine_antecedents,
    minority_mask,
    negate_name,
)


def onehot_appearance(csv_path: Path) -> tuple[np.ndarray, list[str], np.ndarray]:
    """One-hot encode a categorical CSV independently of the product code (first-seen order)."""
    with open(csv_path) as fh:
        rows = list(csv.reader(fh))
    header, data = rows[0], np.asarray(rows[1:])
    cols, names = [], []
    for j, h in enumerate(header[:-1]):
        seen: list[str] = []
        for v in data[:, j]:
            if v not in seen:
                seen.append(v)
        for v in seen:
            cols.append(data[:, j] == v)
            names.append(f"{h}:{v}")
    return np.column_stack(cols).astype(np.uint8), names, data[:, -1].astype(np.int64)


def test_compas_mining_matches_reference_file_bit_for_bit(corels_dir: Path) -> None:
    X, names, _ = onehot_appearance(corels_dir / "compas_train.csv")
    ref = read_corels(corels_dir / "compas_train.out").antecedents
    mined = mine_antecedents(X, names, max_card=2, min_support=0.005, negations=False, dedupe=False)
    assert mined.names == ref.names
    assert np.array_equal(mined.bits, ref.bits)
    assert mined.bits.flags.c_contiguous and mined.bits.dtype == np.uint64
    assert mined.cardinality.tolist() == ref.cardinality.tolist()
    assert mined.cardinality.tolist().count(1) == 19


def test_compas_dedupe_removes_the_five_repeated_vectors(corels_dir: Path) -> None:
    X, names, _ = onehot_appearance(corels_dir / "compas_train.csv")
    ref = read_corels(corels_dir / "compas_train.out").antecedents
    mined = mine_antecedents(X, names, negations=False)
    assert mined.duplicates_removed == 5
    assert len(mined) == 150
    # survivors are the reference lines minus later repeats of an earlier vector, in order
    seen: set[bytes] = set()
    expected = []
    for name, row in zip(ref.names, ref.bits):
        if row.tobytes() not in seen:
            seen.add(row.tobytes())
            expected.append(name)
    assert mined.names == expected
    assert len({r.tobytes() for r in mined.bits}) == len(mined)


def test_binary_version_with_negations_covers_every_reference_vector(corels_dir: Path) -> None:
    with open(corels_dir / "compas_train-binary.csv") as fh:
        rows = list(csv.reader(fh))
    names, X = rows[0][:-1], np.asarray(rows[1:], dtype=np.uint8)[:, :-1]
    assert len(names) == 14
    mined = mine_antecedents(X, names, negations=True)
    ref = read_corels(corels_dir / "compas_train.out").antecedents
    ours = {r.tobytes() for r in mined.bits}
    assert all(r.tobytes() in ours for r in ref.bits)
    # the two-valued attributes' negations are the other value: sex:not-Male == sex:Female
    pos = {n: i for i, n in enumerate(mined.names)}
    assert np.array_equal(mined.bits[pos["sex:not-Male"]], ref.bits[ref.names.index("sex:Female")])


def test_compas_mining_is_fast(corels_dir: Path) -> None:
    X, names, _ = onehot_appearance(corels_dir / "compas_train.csv")
    mine_antecedents(X, names, negations=False)  # warm up imports
    start = time.perf_counter()
    mined = mine_antecedents(X, names, negations=False, dedupe=False)
    assert len(mined) == 155
    assert time.perf_counter() - start < 0.25


def test_minority_matches_reference_minor_file(corels_dir: Path) -> None:
    data = read_corels(corels_dir / "compas_train.out")
    assert data.minority is not None and data.y is not None
    assert np.array_equal(minority_mask(data.antecedents.matrix(), data.y), data.minority)
    X, _, y = onehot_appearance(corels_dir / "compas_train.csv")
    assert np.array_equal(minority_mask(X, y), data.minority)
    assert int(data.minority.sum()) == 2063


def test_minority_tie_goes_to_the_lowest_label_as_majority() -> None:
    X = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], dtype=np.uint8)
    y = np.array([1, 0, 1, 1, 0])
    assert minority_mask(X, y).tolist() == [True, False, False, False, True]
    # non-binary features group by exact value
    Xf = np.array([[0.5], [0.5], [-0.0], [0.0]])
    assert minority_mask(Xf, np.array([2, 2, 1, 3])).tolist() == [False, False, False, True]


def test_names_attributes_and_negations() -> None:
    assert attribute_of("juvenile-crimes:>0") == "juvenile-crimes"
    assert attribute_of("age<=25") == "age"
    assert attribute_of("plain") == "plain"
    assert negate_name("sex:Male") == "sex:not-Male"
    assert negate_name("sex:not-Male") == "sex:Male"
    assert negate_name("age<=25") == "age>25"
    assert negate_name("age>25") == "age<=25"
    assert negate_name("flag") == "not-flag"
    assert negate_name("not-flag") == "flag"


def test_conjunctions_of_three_match_brute_force() -> None:
    rng = np.random.default_rng(3)
    X = (rng.random((200, 6)) < 0.5).astype(np.uint8)
    names = ["a:1", "a:2", "b:1", "c:1", "c:2", "d:1"]
    mined = mine_antecedents(X, names, max_card=3, min_support=0.05, negations=False, dedupe=False)
    attrs = [n.split(":")[0] for n in names]
    expect = set()
    for k in (1, 2, 3):
        for combo in itertools.combinations(range(6), k):
            if len({attrs[i] for i in combo}) < k:
                continue
            count = int(np.logical_and.reduce(X[:, combo], axis=1).sum())
            if 10 <= count <= 190:
                expect.add(",".join(names[i] for i in combo))
    assert set(mined.names) == expect
    assert mined.cardinality.tolist() == sorted(mined.cardinality.tolist())


def test_support_bounds_are_inclusive() -> None:
    X = np.zeros((200, 2), dtype=np.uint8)
    X[:1, 0] = 1  # support exactly 0.005
    X[:199, 1] = 1  # support exactly 0.995
    mined = mine_antecedents(X, ["a", "b"], max_card=1, min_support=0.005, negations=False)
    assert mined.names == ["a", "b"]


def test_non_binary_features_are_refused_naming_the_cell() -> None:
    X = np.array([[0, 1], [1, 2]])
    with pytest.raises(DataError) as err:
        mine_antecedents(X, ["a", "b"])
    assert err.value.column == "b" and err.value.row == 2 and "binarize" in str(err.value)


def test_too_many_antecedents_is_a_clear_error() -> None:
    X = (np.random.default_rng(0).random((50, 30)) < 0.5).astype(np.uint8)
    with pytest.raises(DataError, match="raise min_support"):
        mine_antecedents(X, [f"f{i}" for i in range(30)], max_card=3, max_antecedents=1000)


def test_antecedents_helpers_round_trip() -> None:
    M = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1]], dtype=np.uint8)
    a = Antecedents.from_matrix(M, ["x", "y,z", "w"])
    assert a.cardinality.tolist() == [1, 2, 1]
    assert a.counts.tolist() == [2, 1, 3]
    assert np.array_equal(a.matrix(), M)
    sub = a.subset([2, 0])
    assert sub.names == ["w", "x"] and np.array_equal(sub.matrix(), M[:, [2, 0]])
    assert bitset.tail_bits_clear(a.bits, 3)
