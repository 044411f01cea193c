"""The ``data:`` section of a problem spec."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SplitSpec(_Strict):
    """How to hold out test data. ``kind: none`` trains on everything."""

    kind: Literal["none", "holdout"] = "holdout"
    test_size: float = Field(0.2, gt=0.0, lt=1.0, description="Fraction of rows held out for testing.")
    seed: int = Field(0, ge=0, description="Seed of the shuffle, so the split can be reproduced.")
    stratify: bool = Field(True, description="Keep class proportions equal in both parts.")


class BinarizeSpec(_Strict):
    """Turn numeric columns into 0/1 threshold features ``x<=t`` (categorical: one-hot)."""

    thresholds: int = Field(
        4, ge=1, le=255, description="Thresholds per numeric column, taken at quantiles."
    )
    negations: bool = Field(False, description="Also emit the negation of every feature.")


class DataSpec(_Strict):
    """Where the data comes from and how it is shaped for the solver.

    ``source`` is a file path (CSV or Parquet, relative to the spec file), or
    ``sklearn:NAME`` for a data set shipped with scikit-learn (``breast_cancer``, ``iris``,
    ``wine``, ``diabetes``).
    """

    source: str = Field(min_length=1, description="File path, or sklearn:NAME.")
    target: str | None = Field(None, description="Target column (required for files).")
    positive: str | int | float | bool | None = Field(
        None, description="The positive label for binary classification."
    )
    task: Literal["binary", "multiclass", "regression"] | None = Field(
        None, description="Inferred from the target when omitted."
    )
    columns: list[str] | None = Field(None, description="Feature columns to keep (default: all).")
    drop: list[str] = Field(default_factory=list, description="Feature columns to leave out.")
    weights: str | None = Field(None, description="Column of per-sample weights.")
    split: SplitSpec = Field(default_factory=SplitSpec)
    binarize: BinarizeSpec | None = Field(
        None, description="Binarize features (rule solvers need 0/1 features)."
    )

    @model_validator(mode="after")
    def _target_for_files(self) -> DataSpec:
        if not self.source.startswith("sklearn:") and self.target is None:
            raise ValueError("a file source needs 'target': the name of the column to predict")
        return self
