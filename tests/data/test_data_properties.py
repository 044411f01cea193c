"""Property tests (hypothesis): mined supports, the dedupe count, binarization and file round trips."""

from __future__ import annotations

import itertools
import math
import tempfile
from pathlib import Path

import numpy as np
from glasswork.data.binarize import binarize
from glasswork.data.corels_format import CorelsData, read_corels, write_corels
from glasswork.data.rules import Antecedents, mine_antecedents, minority_mask, split_items
from glasswork.data.spec import BinarizeSpec
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def binary_problems(draw: st.DrawFn) -> tuple[np.ndarray, list[str]]:
    n = draw(st.integers(1, 90))
    p = draw(st.integers(1, 6))
    density = draw(st.sampled_from([0.05, 0.3, 0.5, 0.9]))
    seed = draw(st.integers(0, 2**32 - 1))
    X = (np.random.default_rng(seed).random((n, p)) < density).astype(np.uint8)
    attrs = draw(st.lists(st.sampled_from("abcd"), min_size=p, max_size=p))
    names = [f"{a}:v{j}" for j, a in enumerate(attrs)]
    return X, names


def _item_vector(X: np.ndarray, names: list[str], item: str) -> np.ndarray:
    if item in names:
        return X[:, names.index(item)].astype(bool)
    attr, value = item.split(":", 1)
    assert value.startswith("not-")
    return ~X[:, names.index(f"{attr}:{value[4:]}")].astype(bool)


@SETTINGS
@given(binary_problems(), st.integers(1, 3), st.sampled_from([0.0, 0.01, 0.1, 0.3]), st.booleans())
def test_mined_antecedents_are_the_supported_conjunctions(
    problem: tuple[np.ndarray, list[str]], max_card: int, min_support: float, negations: bool
) -> None:
    X, names = problem
    n = X.shape[0]
    mined = mine_antecedents(X, names, max_card=max_card, min_support=min_support, negations=negations, dedupe=False)
    lo, hi = math.ceil(min_support * n - 1e-9), math.floor((1 - min_support) * n + 1e-9)
    M = mined.matrix()
    counts = M.sum(axis=0)
    assert ((counts >= lo) & (counts <= hi)).all()
    assert np.array_equal(counts, mined.counts)
    # each vector is the AND of the items its name lists, from distinct attributes
    for j, name in enumerate(mined.names):
        items = split_items(name)
        assert len(items) == mined.cardinality[j] <= max_card
        assert len({i.split(":")[0] for i in items}) == len(items)
        expect = np.logical_and.reduce([_item_vector(X, names, i) for i in items])
        assert np.array_equal(M[:, j].astype(bool), expect)
    # completeness: brute force over all item combinations
    pool = list(names) + ([n_.replace(":", ":not-", 1) for n_ in names] if negations else [])
    expected = 0
    for k in range(1, max_card + 1):
        for combo in itertools.combinations(pool, k):
            if len({c.split(":")[0] for c in combo}) < k:
                continue
            c = int(np.logical_and.reduce([_item_vector(X, names, i) for i in combo]).sum())
            expected += lo <= c <= hi
    assert len(mined) == expected


@SETTINGS
@given(binary_problems(), st.integers(1, 2), st.booleans())
def test_dedupe_count(problem: tuple[np.ndarray, list[str]], max_card: int, negations: bool) -> None:
    X, names = problem
    full = mine_antecedents(X, names, max_card=max_card, min_support=0.0, negations=negations, dedupe=False)
    kept = mine_antecedents(X, names, max_card=max_card, min_support=0.0, negations=negations)
    distinct = {r.tobytes() for r in full.bits}
    assert len(kept) == len(distinct)
    assert kept.duplicates_removed == len(full) - len(distinct)
    assert {r.tobytes() for r in kept.bits} == distinct
    # the survivors are the first occurrences, in the original order
    first = [full.names[i] for i in sorted({r.tobytes(): i for i, r in reversed(list(enumerate(full.bits)))}.values())]
    assert kept.names == first


@SETTINGS
@given(
    arrays(np.uint8, st.tuples(st.integers(1, 40), st.integers(1, 5)), elements=st.integers(0, 1)),
    st.integers(0, 2**32 - 1),
)
def test_minority_counts_and_permutation_invariance(X: np.ndarray, seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, X.shape[0])
    z = minority_mask(X, y)
    total = 0
    for row in {r.tobytes() for r in X}:
        members = np.flatnonzero([r.tobytes() == row for r in X])
        total += len(members) - np.bincount(y[members]).max()
    assert int(z.sum()) == total
    perm = rng.permutation(X.shape[0])
    assert np.array_equal(minority_mask(X[perm], y[perm]), z[perm])


@SETTINGS
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 50), st.integers(1, 3)),
        elements=st.floats(-1e6, 1e6, allow_nan=False, width=32),
    ),
    st.integers(1, 8),
    st.sampled_from(["quantile", "uniform", "all"]),
    st.booleans(),
)
def test_thresholds_mean_what_their_names_say(X: np.ndarray, k: int, method: str, neg: bool) -> None:
    names = [f"x{j}" for j in range(X.shape[1])]
    out_names, B = binarize(X, names, BinarizeSpec(thresholds=k, method=method, negations=neg))
    assert B.dtype == np.uint8 and B.shape == (X.shape[0], len(out_names))
    assert len(set(out_names)) == len(out_names)
    for j, name in enumerate(out_names):
        if "<=" in name:
            col, t = name.split("<=")
            values = X[:, names.index(col)]
            assert np.array_equal(B[:, j], (values <= float(t)).astype(np.uint8))
            assert B[:, j].any() and not B[:, j].all()  # never a constant threshold
        elif ">" in name:
            col, t = name.split(">")
            assert np.array_equal(B[:, j], (X[:, names.index(col)] > float(t)).astype(np.uint8))
    per_column = [sum(n.startswith(f"{c}<=") for n in out_names) for c in names]
    assert all(c <= k or np.isin(X[:, i], (0, 1)).all() for i, c in enumerate(per_column))


@SETTINGS
@given(
    arrays(np.uint8, st.tuples(st.integers(1, 5), st.integers(1, 150)), elements=st.integers(0, 1)),
    st.integers(2, 3),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_corels_files_round_trip(M: np.ndarray, k: int, seed: int, with_minor: bool) -> None:
    rng = np.random.default_rng(seed)
    n = M.shape[1]
    names = [f"f{i}:v" + (",g:w" if i % 2 else "") for i in range(M.shape[0])]
    a = Antecedents.from_matrix(M.T, names)
    y = rng.integers(0, k, n)
    minor = rng.random(n) < 0.3 if with_minor else None
    data = CorelsData(a, y, [f"label:{c}" for c in range(k)], minor)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_corels(data, Path(tmp) / "p.out")
        first = [p.read_bytes() for p in paths]
        back = read_corels(Path(tmp) / "p.out")
        assert back.antecedents.names == names
        assert np.array_equal(back.antecedents.bits, a.bits)
        assert np.array_equal(back.y, y) and back.label_names == data.label_names
        assert (back.minority is None) == (minor is None)
        if minor is not None:
            assert np.array_equal(back.minority, minor)
        again = write_corels(back, Path(tmp) / "p.out")
        assert [p.read_bytes() for p in again] == first


@SETTINGS
@given(
    st.lists(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3), min_size=1, max_size=3).flatmap(
        lambda cats: st.lists(st.tuples(*[st.sampled_from(c) for c in cats]), min_size=1, max_size=40)
    ),
    st.sampled_from(["appearance", "sorted"]),
    st.booleans(),
)
def test_one_hot_decodes_back_to_the_values(rows: list[tuple[str, ...]], order: str, collapse: bool) -> None:
    from glasswork.data.binarize import Binarizer

    data = np.asarray(rows, dtype=object).reshape(len(rows), -1)
    names = [f"c{j}" for j in range(data.shape[1])]
    columns = {n: data[:, j] for j, n in enumerate(names)}
    spec = BinarizeSpec(category_order=order, collapse_binary=collapse)
    fitted = Binarizer(spec).fit(columns, names)
    out_names, B = fitted.transform(columns)
    for j, name in enumerate(names):
        cats = [enc.values for enc in fitted.encodings if enc.column == name][0]
        if order == "sorted":
            assert cats == sorted(cats)
        else:  # first-appearance order
            assert cats == list(dict.fromkeys(data[:, j].tolist()))
        cols = [i for i, n in enumerate(out_names) if n.startswith(f"{name}:")]
        values = [out_names[i].split(":", 1)[1] for i in cols]
        decoded = []
        for r in range(len(rows)):
            on = [v for v, i in zip(values, cols) if B[r, i]]
            assert len(on) <= 1
            decoded.append(on[0] if on else cats[0])  # collapsed: the dropped first value
        assert decoded == data[:, j].tolist()
        assert len(cols) == (1 if collapse and len(cats) == 2 else len(cats))


@SETTINGS
@given(binary_problems(), st.booleans())
def test_mined_antecedents_survive_the_corels_files(problem: tuple[np.ndarray, list[str]], negations: bool) -> None:
    X, names = problem
    mined = mine_antecedents(X, names, min_support=0.0, negations=negations)
    if len(mined) == 0:
        return
    y = (X.sum(axis=1) % 2).astype(np.int64)
    data = CorelsData(mined, y, ["t:0", "t:1"], minority_mask(X, y))
    with tempfile.TemporaryDirectory() as tmp:
        write_corels(data, Path(tmp) / "m.out")
        back = read_corels(Path(tmp) / "m.out")
    assert back.antecedents.names == mined.names
    assert np.array_equal(back.antecedents.bits, mined.bits)
    assert np.array_equal(back.antecedents.cardinality, mined.cardinality)
    assert np.array_equal(back.minority, data.minority) and np.array_equal(back.y, y)
