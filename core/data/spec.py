"""The ``data:`` section of a problem spec.

Every field carries a ``description`` and its range: the JSON Schema editors use is generated
from these models.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_OPENML = re.compile(r"openml:[1-9][0-9]*")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SplitSpec(_Strict):
    """How to hold out test data: ``none``, a seeded ``holdout`` or one fold of a seeded ``kfold``.

    The split is reproducible from the seed, and the row indices (and, for k-fold, every row's
    fold) are kept on the ``Problem``.
    """

    kind: Literal["none", "holdout", "kfold"] = Field(
        "holdout",
        description="none: train on every row; holdout: one train/test split; "
        "kfold: train on all folds but one, test on fold 'fold'.",
    )
    test_size: float = Field(0.2, gt=0.0, lt=1.0, description="Fraction of rows held out for testing (holdout).")
    folds: int = Field(5, ge=2, le=1000, description="Number of folds (kfold).")
    fold: int = Field(0, ge=0, le=999, description="The fold used as the test set (kfold), from 0.")
    seed: int = Field(
        0, ge=0, le=2**32 - 1, description="Seed of the shuffle, so the split can be reproduced (0 to 2^32 - 1)."
    )
    stratify: bool = Field(True, description="Keep class proportions equal across parts (classification only).")

    @model_validator(mode="after")
    def _fold_in_range(self) -> SplitSpec:
        if self.kind == "kfold" and self.fold >= self.folds:
            raise ValueError(f"fold must be below folds ({self.folds}), got {self.fold}")
        return self


class BinarizeSpec(_Strict):
    """Turn columns into 0/1 features, fitted on the training rows and applied to the test rows.

    Text columns (and those listed in ``categorical``) are one-hot encoded as ``col:value``;
    numeric columns become thresholds ``col<=t`` (or stay as they are, ``numeric: keep``); columns
    holding only 0 and 1 are kept as they are.
    """

    thresholds: int = Field(4, ge=1, le=1024, description="Maximum number of thresholds per numeric column.")
    method: Literal["quantile", "uniform", "all"] = Field(
        "quantile",
        description="Where thresholds go: quantile: at evenly spaced quantiles of the column; "
        "uniform: an equal-width grid between its minimum and maximum; all: at every distinct "
        "value when there are at most 'thresholds' of them (else at quantiles).",
    )
    grid: dict[str, list[float]] = Field(
        default_factory=dict,
        description="Fixed thresholds for named numeric columns (overrides 'method' for them).",
    )
    categorical: list[str] = Field(
        default_factory=list, description="Numeric columns to one-hot encode instead of threshold."
    )
    category_order: Literal["appearance", "sorted"] = Field(
        "appearance",
        description="Order of one-hot columns: by first appearance in the data (as the CORELS "
        "files are) or sorted by value.",
    )
    collapse_binary: bool = Field(
        False,
        description="A categorical column with exactly two values gives one feature (the second value) instead of two.",
    )
    negations: bool = Field(False, description="Also emit the negation of every feature (col:not-v, col>t).")
    numeric: Literal["thresholds", "keep"] = Field(
        "thresholds",
        description="Numeric columns (not 0/1, not listed in 'grid' or 'categorical'): cut at thresholds, "
        "or kept as they are for solvers that cut them themselves (MOSS's default).",
    )


class DataSpec(_Strict):
    """Where the data comes from and how it is shaped for the solver.

    ``source`` (and ``test``) is one of: a CSV or Parquet file; a CORELS ``.out`` file (its
    ``.label`` and ``.minor`` files are found next to it); ``sklearn:NAME`` for a data set shipped
    with scikit-learn (``breast_cancer``, ``iris``, ``wine``, ``diabetes``); ``openml:ID`` for an
    OpenML data set, downloaded once into ``$GLASSWORK_OPENML_CACHE`` (default: scikit-learn's data
    folder). File paths are relative to the spec file's folder; ``data:REL`` is relative to the
    folder named by the environment variable ``GLASSWORK_DATA``, and ``${VAR}`` in a path is
    replaced by that variable.
    """

    source: str = Field(
        min_length=1,
        description="CSV/Parquet/CORELS .out file, data:REL (under $GLASSWORK_DATA), sklearn:NAME, "
        "or openml:ID (an OpenML data set by numeric id, cached in $GLASSWORK_OPENML_CACHE; "
        "'target' defaults to its default target).",
    )
    test: str | None = Field(
        None,
        min_length=1,
        description="A separate test file of the same kind as 'source' (replaces the split).",
    )
    target: str | None = Field(
        None,
        description="The column to predict (required for CSV and Parquet files; "
        "defaults to the data set's target for sklearn: and openml: sources).",
    )
    positive: str | int | float | bool | None = Field(
        None,
        description="The positive label for binary classification, as written in the target "
        'column (e.g. yes, "yes" or 1); other labels become negative.',
    )
    task: Literal["binary", "multiclass", "regression"] | None = Field(
        None, description="Inferred from the target when omitted."
    )
    columns: list[str] | None = Field(
        None, description="Feature columns to keep, in this order (default: all but the target)."
    )
    drop: list[str] = Field(default_factory=list, description="Feature columns to leave out.")
    weights: str | None = Field(None, description="Column of non-negative per-sample weights (not used as a feature).")
    audit_only: list[str] = Field(
        default_factory=list,
        description="Columns read only for the fairness audit (e.g. race), never features: not given to "
        "the solver, not binarized. For a CORELS .out source, antecedents (e.g. Race=African-American).",
    )
    where: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Row filter for CSV/Parquet files: one SQL condition over the file's columns "
        "(e.g. \"age >= 18 AND sex = 'Male'\"), checked and run in a DuckDB sandbox that can "
        "see only the file's rows (no subqueries, no file, network or environment access).",
    )
    types: dict[str, Literal["category", "numeric", "boolean"]] = Field(
        default_factory=dict,
        description="Override how named columns are read: category (text, even if it looks like "
        "numbers: '003' stays '003'), numeric (numbers; '+5' and '007' read as 5 and 7), or "
        "boolean (true/t/yes/y/1 and false/f/no/n/0, any case). Without an override a text "
        "column is a number only when every value is a plain decimal number as written.",
    )
    missing: Literal["error", "drop"] = Field(
        "error",
        description="What a missing value (empty, whitespace, 'NaN' text, NULL, NaN) in a used "
        "column does: error names it; drop removes the row.",
    )
    split: SplitSpec = Field(
        default_factory=SplitSpec,
        description="How to hold out test data (defaults to kind: none when 'test' is given).",
    )
    binarize: BinarizeSpec | None = Field(None, description="Binarize features (rule solvers need 0/1 features).")

    @field_validator("source", "test")
    @classmethod
    def _openml_id(cls, value: str | None) -> str | None:
        """Catch a malformed OpenML id here, with its field path, rather than at download time."""
        if value is not None and value.startswith("openml:") and not _OPENML.fullmatch(value):
            raise ValueError("an OpenML source is openml:ID with the data set's numeric id, e.g. openml:1027")
        return value

    @field_validator("where")
    @classmethod
    def _safe_where(cls, value: str | None) -> str | None:
        """A filter is data, not code: refuse at validation anything beyond a row condition."""
        if value is not None:
            from glasswork.data.sandbox import check_where

            check_where(value)  # UnsafeFilter is a ValueError: reported at data.where
        return value

    @model_validator(mode="after")
    def _check(self) -> DataSpec:
        if self.target is None and not _is_labelled_source(self.source):
            raise ValueError("a CSV or Parquet source needs 'target': the name of the column to predict")
        if self.test is not None:
            if "split" not in self.model_fields_set:
                self.split = SplitSpec(kind="none")
            elif self.split.kind != "none":
                raise ValueError("give either 'test' (a separate test file) or a split, not both")
            if self.source.startswith(("sklearn:", "openml:")):
                raise ValueError("'test' needs a file source; sklearn and OpenML data sets use 'split'")
        return self


def _is_labelled_source(source: str) -> bool:
    """Sources that carry their own labels, so need no 'target'."""
    return source.startswith(("sklearn:", "openml:")) or source.lower().endswith(".out")
