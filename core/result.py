"""What a solver hands back: a glass-box model, a certificate of how good it is, metrics and stats.

The certificate is the product's promise, so its invariants are enforced here rather than trusted
to each solver: ``optimal`` needs a lower bound that meets the objective, and no lower bound may
exceed the objective it bounds.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, computed_field, model_validator

if TYPE_CHECKING:
    from glasswork.rashomon import RashomonSet


class Status(str, Enum):
    """How a search ended. ``optimal`` and ``infeasible`` are proofs (the whole space was searched:
    the model is the best, or no model meets the constraints); every other status comes with a gap."""

    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    STOPPED_TIME = "stopped_time"
    STOPPED_NODES = "stopped_nodes"
    STOPPED_MEMORY = "stopped_memory"
    CANCELLED = "cancelled"
    HEURISTIC = "heuristic"

    def __str__(self) -> str:  # so f-strings and click print "optimal", not "Status.OPTIMAL"
        return self.value

    @property
    def stopped(self) -> bool:
        """A search ended by a limit or a cancel before its proof (the statuses that may end
        with no model yet)."""
        return self in STOP_STATUSES


STOP_STATUSES = frozenset({Status.STOPPED_TIME, Status.STOPPED_NODES, Status.STOPPED_MEMORY, Status.CANCELLED})
"""The statuses of a search a limit or a cancel ended: a result may have no model then (none
found yet that meets the constraints), with the lower bound proven so far."""

NO_MODEL_STATUSES = frozenset({Status.INFEASIBLE, *STOP_STATUSES})
"""The statuses a result without a model may have."""

_STOPPED_AT = {
    Status.STOPPED_TIME: "stopped at the time limit",
    Status.STOPPED_NODES: "stopped at the node limit",
    Status.STOPPED_MEMORY: "stopped at the memory limit",
    Status.CANCELLED: "cancelled",
}


GAP_FLOOR = 1e-10
"""The smallest denominator of the relative gap, so an objective of 0 gives a finite gap."""


def relative_gap(objective: float | None, lower_bound: float | None) -> float | None:
    """The relative gap ``max(0, objective - lower_bound) / max(|objective|, 1e-10)`` of a minimisation.

    The one home of the formula (the convention of MIP solvers): certificates, events, the run
    store, the monitor and the solvers' own stopping tests all call it, so a gap means the same
    everywhere. ``None`` when either figure is missing or not finite.
    """
    if objective is None or lower_bound is None:
        return None
    objective, lower_bound = float(objective), float(lower_bound)
    if not (math.isfinite(objective) and math.isfinite(lower_bound)):
        return None
    return max(0.0, objective - lower_bound) / max(abs(objective), GAP_FLOOR)


class CertificateError(Exception):
    """A solver produced a certificate that contradicts itself (a solver bug, never user error)."""


class Certificate(BaseModel):
    """Status, best objective, proven lower bound and the gap between them (minimisation).

    ``gap`` is relative (``relative_gap``: ``(objective - lower_bound) / max(|objective|, 1e-10)``,
    the convention of MIP solvers); ``abs_gap`` is the plain difference. Both are ``None`` when no bound is known.
    ``tolerance`` is the relative gap under which the solver declares a proof (0 for
    combinatorial searches that exhaust their queue, a MIP gap tolerance for MIP backends).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Status
    objective: float | None
    lower_bound: float | None = None
    tolerance: float = 1e-9

    @computed_field  # type: ignore[prop-decorator]
    @property
    def abs_gap(self) -> float | None:
        if self.objective is None or self.lower_bound is None:
            return None
        return max(0.0, self.objective - self.lower_bound)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.lower_bound)

    @property
    def proven(self) -> bool:
        """Whether the status is a proof: the optimum, or that no model meets the constraints."""
        return self.status in (Status.OPTIMAL, Status.INFEASIBLE)

    @model_validator(mode="after")
    def _consistent(self) -> Certificate:
        for name in ("objective", "lower_bound"):
            value = getattr(self, name)
            if value is not None and math.isnan(value):
                raise CertificateError(f"certificate {name} is NaN")
        slack = 1e-9 * max(1.0, abs(self.objective or 0.0))
        if self.objective is not None and self.lower_bound is not None and self.lower_bound > self.objective + slack:
            raise CertificateError(f"lower bound {self.lower_bound!r} exceeds the objective {self.objective!r}")
        if self.status is Status.INFEASIBLE and self.objective is not None:
            raise CertificateError(
                f"an 'infeasible' certificate (no model meets the constraints) has an objective {self.objective!r}"
            )
        if self.status is Status.OPTIMAL:
            if self.objective is None or self.lower_bound is None:
                raise CertificateError("an 'optimal' certificate needs an objective and a lower bound")
            if self.gap is None:
                raise CertificateError("an 'optimal' certificate needs a finite objective and lower bound")
            if self.gap > self.tolerance + 1e-12:
                raise CertificateError(
                    f"'optimal' claimed with a gap of {self.gap!r} above the tolerance {self.tolerance!r}"
                )
        return self


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


@dataclass
class Result:
    """What ``Solver.solve`` returns.

    ``metrics`` holds quality figures (the runner adds train/test accuracy, AUC, log loss or R²);
    ``stats`` holds search figures (nodes, cuts, queue peak, time to incumbent, ...);
    ``rashomon`` the Rashomon set when the spec asked for one (``rashomon:``).

    ``model`` is ``None`` only when no model meets the constraints: proven (status
    ``infeasible``, no objective) or not yet known (a stop status, no objective, the lower bound
    proven so far). Checked when the result is made, as the certificate is.
    """

    model: Model | None
    certificate: Certificate
    metrics: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    rashomon: RashomonSet | None = None

    def __post_init__(self) -> None:
        status = self.certificate.status
        if self.model is None:
            if status not in NO_MODEL_STATUSES:
                raise CertificateError(
                    f"a result with status {status.value!r} has no model; only 'infeasible' or a stopped "
                    "search may end without one"
                )
            if self.certificate.objective is not None:
                raise CertificateError(
                    f"a result without a model claims the objective {self.certificate.objective!r} of none"
                )
        elif status is Status.INFEASIBLE:
            raise CertificateError("an 'infeasible' result (no model meets the constraints) returned a model")

    def to_dict(self) -> dict[str, Any]:
        cert = self.certificate.model_dump(mode="json")
        out: dict[str, Any] = {
            "status": cert["status"],
            "objective": cert["objective"],
            "lower_bound": cert["lower_bound"],
            "gap": cert["gap"],
            "model": None if self.model is None else self.model.to_dict(),
            "model_text": None if self.model is None else self.model.to_text(),
            "metrics": jsonable(self.metrics),
            "stats": jsonable(self.stats),
        }
        if self.rashomon is not None:
            out["rashomon"] = self.rashomon.to_dict()
        return out


def constraints_phrase(constraints: Mapping[str, Any] | None) -> str:
    """The constraints a model must meet, as a result without one names them: ``constraints.fairness
    (statistical_parity <= 0.05)``, or ``the spec's constraints`` when no fairness limit is set."""
    limit = (constraints or {}).get("fairness")
    if isinstance(limit, Mapping) and limit.get("metric") is not None and limit.get("at_most") is not None:
        at_most = limit["at_most"]
        bound = f"{at_most:g}" if isinstance(at_most, (int, float)) else str(at_most)
        return f"constraints.fairness ({limit['metric']} <= {bound})"
    return "the spec's constraints"


def no_model_reason(status: Status | str, constraints: Mapping[str, Any] | None) -> str:
    """Why a result has no model, in one phrase every printer shows (``run``, ``runs show``, the
    card, the terminal UI): ``no model meets constraints.fairness (statistical_parity <= 0.05):
    proven infeasible``, or ``stopped at the time limit before finding a model that meets ...``."""
    status = Status(status)
    meets = constraints_phrase(constraints)
    if status is Status.INFEASIBLE:
        return f"no model meets {meets}: proven infeasible (the whole search space was searched)"
    return f"{_STOPPED_AT.get(status, status.value)} before finding a model that meets {meets}"


def stored_no_model_reason(status: Any, spec: Any) -> str | None:
    """``no_model_reason`` for a run read back (the store, a journal, a sweep reply): its status
    and resolved spec as stored, either possibly anything; ``None`` when the status is not one a
    run without a model ends with (a failed run's missing model is its error's to explain)."""
    if status not in {s.value for s in NO_MODEL_STATUSES}:
        return None
    constraints = spec.get("constraints") if isinstance(spec, Mapping) else None
    return no_model_reason(status, constraints if isinstance(constraints, Mapping) else None)


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
