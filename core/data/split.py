"""Which rows train and which test: a spec's ``split`` (none, holdout, k-fold), seeded.

Its own module because both the table loader (``load``) and the CORELS-format loader
(``corels_format``) split the rows they read, and neither should import the other.
"""

from __future__ import annotations

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
        from sklearn.model_selection import train_test_split

        n_test = int(np.ceil(split.test_size * n))
        if n_test < 1 or n - n_test < 1:
            raise DataError(
                f"a test_size of {split.test_size} leaves an empty part of {n} rows",
                hint="use more data or a different test_size",
            )
        try:
            train, test = train_test_split(
                rows, test_size=split.test_size, random_state=split.seed, stratify=y if stratify else None
            )
        except ValueError as exc:
            raise DataError(
                f"cannot split the data: {exc}", hint="set split: {stratify: false} or change test_size"
            ) from exc
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
