"""Which rows train and which test: a spec's ``split`` (none, holdout, k-fold), seeded.

Its own module because both the table loader (``load``) and the CORELS-format loader
(``corels_format``) split the rows they read, and neither should import the other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from glasswork.data.problem import DataError
from glasswork.data.spec import SplitSpec


def split_indices(
    split: SplitSpec, y: np.ndarray, task: str
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(train, test, folds)`` row indices for a split; seeded, so the same spec gives the same rows.

    ``folds`` (k-fold only) gives every row's fold, so any fold can be rebuilt.
    """
    n = y.shape[0]
    rows = np.arange(n)
    if split.kind == "none":
        return rows, None, None
    stratify = split.stratify and task != "regression"
    if stratify:
        labels, counts = np.unique(y, return_counts=True)
        need = split.folds if split.kind == "kfold" else 2
        if counts.min() < need:
            small = labels[counts.argmin()]
            raise DataError(
                f"the smallest class (label code {small}) has only {counts.min()} sample(s), too few to stratify "
                f"{'into ' + str(split.folds) + ' folds' if split.kind == 'kfold' else 'a holdout'}",
                hint=(
                    "lower 'folds', or set split: {stratify: false}"
                    if split.kind == "kfold"
                    else "lower 'test_size', use more rows, or set split: {stratify: false}"
                ),
            )
    if split.kind == "holdout":
        n_test = math.ceil(split.test_size * n)
        if n_test < 1 or n - n_test < 1:
            raise DataError(
                f"a test_size of {split.test_size} leaves an empty part of {n} rows",
                hint="use more data or a different test_size",
            )
        rng = np.random.RandomState(split.seed)
        if not stratify:
            train, test = _shuffled_holdout(n, n_test, rng)
        else:
            n_classes = np.unique(y).shape[0]
            if min(n_test, n - n_test) < n_classes:
                part = "test" if n_test < n_classes else "training"
                raise DataError(
                    f"cannot split the data: the {part} part would hold {min(n_test, n - n_test)} row(s), "
                    f"fewer than the {n_classes} classes",
                    hint="set split: {stratify: false} or change test_size",
                )
            train, test = _stratified_holdout(y, n_test, rng)
        return np.sort(train), np.sort(test), None
    if n < split.folds:
        raise DataError(f"{n} rows cannot form {split.folds} folds", hint="lower 'folds'")
    from sklearn.model_selection import KFold, StratifiedKFold

    splitter: Any = (StratifiedKFold if stratify else KFold)(
        n_splits=split.folds, shuffle=True, random_state=split.seed
    )
    folds = np.empty(n, dtype=np.int64)
    for k, (_, test) in enumerate(splitter.split(rows, y if stratify else None)):
        folds[test] = k
    return rows[folds != split.fold], rows[folds == split.fold], folds


# The holdout split draws the same rows as scikit-learn's ``train_test_split(rows,
# test_size=..., random_state=seed, stratify=y or None)`` did when glasswork called it, so a spec
# keeps its split; drawn here, with the same NumPy generator calls in the same order, so a run
# need not import scikit-learn (1.7 CPU-s). tests/data/test_data_split.py compares the two.


def _shuffled_holdout(n: int, n_test: int, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """Train and test rows: the first ``n_test`` of a random permutation are the test rows."""
    order = rng.permutation(n)
    return order[n_test:], order[:n_test]


def _stratified_holdout(y: np.ndarray, n_test: int, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """Train and test rows with each class split in proportion to its size.

    Each class gets its floored share of the training rows, then of the remaining test rows;
    the rows left over go to the classes with the largest fractional remainders (ties broken by
    the generator). Then each class's rows are shuffled and dealt out in that order.
    """
    n_train = y.shape[0] - n_test
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    by_class = np.split(np.argsort(codes, kind="stable"), np.cumsum(counts)[:-1])
    train_counts = _share(counts, n_train, rng)
    test_counts = _share(counts - train_counts, n_test, rng)
    train: list[int] = []
    test: list[int] = []
    for rows, n_tr, n_te in zip(by_class, train_counts.tolist(), test_counts.tolist()):
        shuffled = rows[rng.permutation(rows.shape[0])]
        train.extend(shuffled[:n_tr].tolist())
        test.extend(shuffled[n_tr : n_tr + n_te].tolist())
    return rng.permutation(np.asarray(train, dtype=np.int64)), rng.permutation(np.asarray(test, dtype=np.int64))


def _share(counts: np.ndarray, draws: int, rng: np.random.RandomState) -> np.ndarray:
    """How many of ``draws`` rows each class gets, in proportion to ``counts``: the floor of each
    share, plus one for the classes with the largest remainders until the total is ``draws``."""
    exact = counts / counts.sum() * draws
    given = np.floor(exact)
    left = int(draws - given.sum())
    if left > 0:
        remainder = exact - given
        for value in np.sort(np.unique(remainder))[::-1]:
            (tied,) = np.where(remainder == value)
            take = min(len(tied), left)
            given[rng.choice(tied, size=take, replace=False)] += 1
            left -= take
            if left == 0:
                break
    return given.astype(int)
