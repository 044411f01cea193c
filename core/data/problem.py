"""The resolved problem a solver receives: arrays, names, the split, and where they came from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from glasswork.contract.model import Task


class DataError(ValueError):
    """Bad data: the message names the file, column, row or value, and the fix.

    The CLI prints it as ``FILE[:LINE]: message`` and exits with status 2. An error about a spec
    field (``field``) is moved to that field's line in the spec (``glasswork.running.validation``).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: str | None = None,
        row: int | None = None,
        hint: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = None if file is None else str(file)
        self.line = line
        self.column = column
        self.row = row
        self.hint = hint
        self.field = field  # the spec field at fault (``data.types.age``), pointed at in the spec file

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line is not None else "") + ": "
        parts = [where + self.message]
        if self.column is not None:
            parts.append(f"(column {self.column!r})")
        if self.row is not None:
            parts.append(f"(row {self.row})")
        text = " ".join(parts)
        return f"{text}; {self.hint}" if self.hint else text


class LimitReached(Exception):
    """Reading the data went past the run's ``limits.time`` or ``limits.memory``: not bad data
    but a run stopped at a limit before its search, with ``status`` (``stopped_time`` or
    ``stopped_memory``) and no model; ``glasswork run`` exits 0 for it, as for any stopped run."""

    def __init__(self, message: str, *, status: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}"


@dataclass
class Problem:
    """Training (and optional test) data in the form solvers consume.

    ``y`` is encoded: ``0..K-1`` indices into ``classes`` for classification, floats for
    regression. ``X`` holds the features the spec asked for (0/1 when binarized). ``extras``
    carries solver-specific inputs the data layer prepares, such as the CORELS minority vector.

    The split is kept so a run can be reproduced: ``train_index`` / ``test_index`` are row
    indices into the loaded data (after any ``where`` filter); for k-fold, ``folds`` gives every
    row's fold and ``fold`` the one held out.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    task: Task
    classes: np.ndarray | None = None
    sample_weight: np.ndarray | None = None
    test_sample_weight: np.ndarray | None = None  # the test rows' weights: metrics only, never the fit
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    train_index: np.ndarray | None = None
    test_index: np.ndarray | None = None
    source: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
    folds: np.ndarray | None = None
    fold: int | None = None
    # what loading noticed that the user should hear before the search (an ID column one-hot
    # encoded into hundreds of features): printed at load and kept in the run's log
    warnings: list[str] = field(default_factory=list)
    # ``data.audit_only`` columns, raw values of the training (and test) rows: read by the
    # fairness audit only, never features, never in the fingerprint (they decide no answer)
    audit: dict[str, np.ndarray] = field(default_factory=dict)
    audit_test: dict[str, np.ndarray] | None = None

    def __post_init__(self) -> None:
        if self.X.ndim != 2:
            raise DataError(f"features must be a 2-D matrix, got shape {self.X.shape}")
        if self.y.shape != (self.X.shape[0],):
            raise DataError(f"{self.X.shape[0]} rows of features but {self.y.shape} labels")
        if len(self.feature_names) != self.X.shape[1]:
            raise DataError(f"{self.X.shape[1]} feature columns but {len(self.feature_names)} feature names")

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def has_test(self) -> bool:
        return self.X_test is not None and self.y_test is not None

    @property
    def is_binary_matrix(self) -> bool:
        return bool(np.isin(self.X, (0, 1)).all())

    def fingerprint(self) -> str:
        """A hash of everything that decides a solver's answer: arrays, names, split and task."""
        h = hashlib.sha256()
        h.update(self.task.encode())
        for arr in (self.X, self.y, self.sample_weight, self.X_test, self.y_test):
            if arr is None:
                h.update(b"-")
            else:
                a = np.ascontiguousarray(arr)
                h.update(str((a.dtype.str, a.shape)).encode())
                h.update(a.tobytes())
        h.update("\x1f".join(self.feature_names).encode())
        if self.classes is not None:
            h.update(repr(self.classes.tolist()).encode())
        return h.hexdigest()
