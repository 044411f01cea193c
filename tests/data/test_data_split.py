"""The holdout split and scikit-learn's bundled data sets, read without importing scikit-learn,
give exactly what scikit-learn's ``train_test_split`` and loaders give (a spec keeps its rows)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from glasswork.data.load import split_indices
from glasswork.data.problem import DataError
from glasswork.data.sources import BUNDLED_CSV, read_table
from glasswork.data.spec import SplitSpec
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import datasets
from sklearn.model_selection import train_test_split

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)


@st.composite
def labelled_rows(draw: st.DrawFn) -> tuple[np.ndarray, float, int]:
    """Labels with 1 to 5 classes of uneven sizes (ties in the shares included), a test size, a seed."""
    sizes = draw(st.lists(st.integers(2, 40), min_size=1, max_size=5))
    order = draw(st.integers(0, 2**32 - 1))
    y = np.random.default_rng(order).permutation(np.repeat(np.arange(len(sizes)), sizes))
    test_size = draw(st.sampled_from([0.1, 0.2, 0.25, 0.3, 1 / 3, 0.5, 0.7]))
    seed = draw(st.integers(0, 2**31 - 1))
    return y.astype(np.int64), test_size, seed


def _sklearn_split(y: np.ndarray, test_size: float, seed: int, stratify: bool) -> tuple[np.ndarray, np.ndarray]:
    train, test = train_test_split(
        np.arange(y.shape[0]), test_size=test_size, random_state=seed, stratify=y if stratify else None
    )
    return np.sort(train), np.sort(test)


@SETTINGS
@given(labelled_rows(), st.booleans())
def test_the_holdout_split_draws_the_rows_train_test_split_draws(case: tuple[np.ndarray, float, int], stratify: bool):
    y, test_size, seed = case
    split = SplitSpec(kind="holdout", test_size=test_size, seed=seed, stratify=stratify)
    try:
        expected = _sklearn_split(y, test_size, seed, stratify)
    except ValueError:  # too few rows per part for the classes: glasswork refuses too
        with pytest.raises(DataError, match="cannot split the data|too few to stratify|leaves an empty part"):
            split_indices(split, y, "multiclass")
        return
    train, test, folds = split_indices(split, y, "multiclass")
    assert folds is None
    np.testing.assert_array_equal(train, expected[0])
    np.testing.assert_array_equal(test, expected[1])


def test_the_readme_examples_split_is_unchanged():
    y = np.asarray(datasets.load_breast_cancer().target, dtype=np.int64)
    train, test, _ = split_indices(SplitSpec(kind="holdout", test_size=0.25, seed=0), y, "binary")
    expected = _sklearn_split(y, 0.25, 0, True)
    np.testing.assert_array_equal(train, expected[0])
    np.testing.assert_array_equal(test, expected[1])


def test_a_regression_holdout_is_the_unstratified_split():
    y = np.linspace(0.0, 1.0, 37)
    train, test, _ = split_indices(SplitSpec(kind="holdout", test_size=0.3, seed=7), y, "regression")
    expected = _sklearn_split(y, 0.3, 7, False)
    np.testing.assert_array_equal(train, expected[0])
    np.testing.assert_array_equal(test, expected[1])


def test_a_test_part_smaller_than_the_classes_is_a_data_error():
    y = np.repeat(np.arange(4), 3)  # 12 rows, 4 classes; a test part of 2 rows cannot hold them
    with pytest.raises(DataError, match="test part would hold 2 row"):
        split_indices(SplitSpec(kind="holdout", test_size=0.15, seed=0), y, "multiclass")


@pytest.mark.parametrize("name", sorted(BUNDLED_CSV))
def test_a_bundled_data_set_reads_as_scikit_learns_loader_gives_it(name: str):
    table = read_table(f"sklearn:{name}", Path("."))
    bunch = getattr(datasets, f"load_{name}")()
    names = [str(n).replace(" ", "_") for n in bunch.feature_names]
    assert table.names == [*names, "target"]
    assert table.target == "target"
    for j, column in enumerate(names):
        assert table.columns[column].dtype == np.float64
        np.testing.assert_array_equal(table.columns[column], bunch.data[:, j])
    labels = np.asarray(bunch.target_names, dtype=object)[bunch.target]
    assert table.columns["target"].tolist() == labels.tolist()
    assert all(type(v) is str for v in table.columns["target"].tolist())
    np.testing.assert_array_equal(table.rows, np.arange(1, len(labels) + 1))
