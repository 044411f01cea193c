"""The glass-box model a solver returns, and the rules every solver's output keeps: the ``Model``
contract (and what a plugin's model lacks of it), the fingerprint of its predictions, plain JSON
values of what it reports (``jsonable``) and ``CertificateError``, raised when a solver's
certificate, or its Rashomon set, contradicts itself.

Below the certificate and the Rashomon set (``glasswork.contract.result``, ``glasswork.rashomon``),
which both build on it.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from enum import Enum
from typing import Any, ClassVar, Literal

import numpy as np


class CertificateError(Exception):
    """A solver produced a certificate that contradicts itself (a solver bug, never user error)."""


Task = Literal["binary", "multiclass", "regression"]


class Model(ABC):
    """A glass-box model: it predicts, and it can be read as text and stored as JSON.

    Subclasses set ``kind`` (a name the plugin's ``render_model`` hook recognises) and ``task``. Classifiers
    also implement ``predict_proba`` (columns in the order of ``classes``).
    """

    kind: ClassVar[str]
    task: Task

    @abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted labels (classification) or values (regression), one per row of ``X``."""

    @abstractmethod
    def to_text(self) -> str:
        """The model as a person reads it, e.g. ``if age<=25 then yes else no``."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; it includes ``kind`` so stored models can be told apart."""

    @property
    def size(self) -> int:
        """Model size for summaries (rules, non-zero points, ...); 0 when it has no notion of one."""
        return 0

    def __str__(self) -> str:
        return self.to_text()


TASKS: tuple[str, ...] = ("binary", "multiclass", "regression")


def model_contract_fault(model: object) -> str | None:
    """What a solver's model lacks of the ``Model`` contract, as a phrase ("returned ..."), or
    ``None``. The runner checks it before anything reads the model, so a plugin's omission is
    reported as the plugin's, not as an internal error."""
    if not isinstance(model, Model):
        return f"returned a {type(model).__name__} as its model, not a glasswork.Model"
    missing = []
    kind = getattr(model, "kind", None)
    if not isinstance(kind, str) or not kind:
        missing.append("'kind' (a class attribute: the name its plugin's render_model hook recognises)")
    if getattr(model, "task", None) not in TASKS:
        missing.append("'task' (" + ", ".join(map(repr, TASKS)) + ")")
    if missing:
        return f"returned a {type(model).__name__} model without " + " or ".join(missing)
    size = model.size
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        return (
            f"returned a {type(model).__name__} model whose 'size' is a {type(size).__name__}, "
            "not an int (a property: rules, non-zero points, ...)"
        )
    return None


class Classifier(Model):
    """A model over discrete labels that also gives class probabilities."""

    classes: np.ndarray

    @abstractmethod
    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """``(n, len(classes))`` probabilities, rows summing to one."""


def prediction_fingerprint(predictions: np.ndarray) -> str:
    """A short, stable digest of a model's predictions on a fixed set of rows.

    Two members of a Rashomon set with the same fingerprint predict alike on those rows, so a
    person can tell the models that differ only in how they are written from those that decide
    differently. Labels are compared as their text, so the same predictions give the same
    fingerprint whatever their dtype.
    """
    values = np.asarray(predictions).ravel()
    if values.dtype.kind in "biu":
        data = np.ascontiguousarray(values.astype(np.int64)).tobytes()
    elif values.dtype.kind == "f":
        data = np.ascontiguousarray(values.astype(np.float64)).tobytes()
    else:
        data = "\x1f".join(str(v) for v in values.tolist()).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def jsonable(value: Any) -> Any:
    """Turn numpy scalars and arrays (and non-finite floats) into plain JSON values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Enum):
        return value.value
    return value
