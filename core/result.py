"""What a solver hands back: a glass-box model, a certificate of how good it is, metrics and stats.

The certificate is the product's promise, so its invariants are enforced here rather than trusted
to each solver: ``optimal`` needs a lower bound that meets the objective, and no lower bound may
exceed the objective it bounds.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, computed_field, model_validator


class Status(str, Enum):
    """How a search ended. Only ``optimal`` is a proof; every other status comes with a gap."""

    OPTIMAL = "optimal"
    STOPPED_TIME = "stopped_time"
    STOPPED_NODES = "stopped_nodes"
    STOPPED_MEMORY = "stopped_memory"
    CANCELLED = "cancelled"
    HEURISTIC = "heuristic"

    def __str__(self) -> str:  # so f-strings and click print "optimal", not "Status.OPTIMAL"
        return self.value


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
        return self.status is Status.OPTIMAL

    @model_validator(mode="after")
    def _consistent(self) -> Certificate:
        for name in ("objective", "lower_bound"):
            value = getattr(self, name)
            if value is not None and math.isnan(value):
                raise CertificateError(f"certificate {name} is NaN")
        slack = 1e-9 * max(1.0, abs(self.objective or 0.0))
        if self.objective is not None and self.lower_bound is not None and self.lower_bound > self.objective + slack:
            raise CertificateError(f"lower bound {self.lower_bound!r} exceeds the objective {self.objective!r}")
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
class RashomonMember:
    """One model of a Rashomon set.

    ``features`` names the columns of the training matrix the model uses (what ``--uses`` and
    ``--avoids`` filter on, and what variable use counts); ``fingerprint`` is
    ``prediction_fingerprint`` of its predictions on the training rows. ``model`` is ``None``
    when the spec keeps summaries only (``rashomon.keep: summary``).
    """

    objective: float
    features: tuple[str, ...]
    fingerprint: str
    model: Model | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "objective": jsonable(self.objective),
            "features": list(self.features),
            "fingerprint": self.fingerprint,
        }
        if self.model is not None:
            out["model"] = self.model.to_dict()
            out["model_text"] = self.model.to_text()
        return out


class RashomonError(CertificateError):
    """A solver's Rashomon set contradicts itself (a solver bug, never user error)."""


@dataclass
class RashomonSet:
    """Every model within ``threshold`` of the optimum that the solver enumerated.

    ``count`` is exact: the number of members enumerated, whether or not each was kept;
    ``members`` holds the kept ones (at most ``rashomon.max_models``), best first. ``complete``
    promises that every model of the class with objective <= ``threshold`` was counted. A run
    that stopped early says ``complete=False`` and gives ``unenumerated_bound``: a lower bound on
    the objective of every member it did not enumerate (so the members below it are certain).
    ``exhaustive=False`` marks a sample (a heuristic's pool): it is never complete and its count
    is what was seen. ``optimum`` is the objective the threshold came from and
    ``optimum_proven`` whether it is certified; with an unproven optimum the threshold is above
    the true one, so the set holds the true set (and more).

    A search stopped before it certified its optimum gives one set, whatever the solver
    (``RashomonSet.unproven``): its incumbent alone (when within the threshold), the threshold
    taken from the incumbent's objective, ``optimum_proven=False``, ``complete=False`` and the
    search's lower bound as ``unenumerated_bound``. Its count is 1, not 0: the incumbent is a
    model within the threshold, and every model not counted is bounded below by the search.

    Checked here, so no solver can hand over a set that contradicts itself: members best first,
    ``count >= len(members)``, an exhaustive set's members within the threshold and none better
    than ``optimum``, the optimum's model counted when the set says it enumerated it (complete,
    or ``unenumerated_bound`` above the optimum) and the optimum is within the threshold, a
    complete set bounds nothing unenumerated and has a proven optimum (enumerating everything up
    to a threshold above the optimum proves it), an incomplete exhaustive set bounds what it did
    not enumerate, and a sample is never complete. (An enumeration stopped before its first model
    may count 0: its bound then stays at or below the optimum.)
    """

    threshold: float
    optimum: float
    count: int
    complete: bool
    members: list[RashomonMember] = field(default_factory=list)
    epsilon: float | None = None
    unenumerated_bound: float | None = None
    exhaustive: bool = True
    optimum_proven: bool = True

    def __post_init__(self) -> None:
        slack = 1e-9 * max(1.0, abs(self.threshold))
        if not math.isfinite(self.threshold) or not math.isfinite(self.optimum):
            raise RashomonError("a Rashomon set needs a finite threshold and optimum")
        if self.count < len(self.members):
            raise RashomonError(f"count {self.count} is below the {len(self.members)} members kept")
        objectives = [m.objective for m in self.members]
        if any(b < a - slack for a, b in zip(objectives, objectives[1:])):
            raise RashomonError("members must be ordered best first")
        if self.exhaustive and any(o > self.threshold + slack for o in objectives):
            raise RashomonError(f"a member's objective exceeds the threshold {self.threshold!r}")
        if self.complete and not self.exhaustive:
            raise RashomonError("a sample cannot be complete")
        if self.complete and self.unenumerated_bound is not None:
            raise RashomonError("a complete set leaves nothing unenumerated to bound")
        if not self.complete and self.exhaustive and self.unenumerated_bound is None:
            raise RashomonError("an incomplete set must bound what it did not enumerate")
        optimum_slack = 1e-9 * max(1.0, abs(self.optimum))
        if self.exhaustive and any(o < self.optimum - optimum_slack for o in objectives):
            raise RashomonError(f"a member's objective is below the optimum {self.optimum!r}")
        if self.exhaustive and self.count == 0 and self.optimum <= self.threshold + slack:
            if self.complete:
                raise RashomonError(
                    f"the optimum {self.optimum!r} is within the threshold {self.threshold!r}, so its model counts"
                )
            if self.unenumerated_bound is not None and self.unenumerated_bound > self.optimum + optimum_slack:
                raise RashomonError(
                    f"nothing counted, yet every model not enumerated is above the optimum {self.optimum!r}"
                )
        if self.complete and not self.optimum_proven and self.optimum <= self.threshold + slack:
            raise RashomonError("a complete set up to a threshold above its optimum proves the optimum")

    @classmethod
    def unproven(
        cls, incumbent: RashomonMember, threshold: float, lower_bound: float, *, epsilon: float | None = None
    ) -> RashomonSet:
        """The set of a search stopped before it certified its optimum (the class docstring's
        rule): the incumbent alone when within ``threshold`` (which the caller takes from the
        incumbent's objective), never complete, ``lower_bound`` (the search's) bounding every
        model not enumerated."""
        kept = [incumbent] if incumbent.objective <= threshold + 1e-9 * max(1.0, abs(threshold)) else []
        return cls(
            threshold=threshold,
            optimum=incumbent.objective,
            count=len(kept),
            complete=False,
            members=kept,
            epsilon=epsilon,
            unenumerated_bound=float(min(lower_bound, incumbent.objective)),
            optimum_proven=False,
        )

    @property
    def kept(self) -> int:
        return len(self.members)

    def to_dict(self, max_models: int | None = None) -> dict[str, Any]:
        """The JSON form (``glasswork run --json``'s ``rashomon``): the count exact, the models
        capped at ``max_models`` (all kept ones when ``None``)."""
        shown = self.members if max_models is None else self.members[:max_models]
        return {
            "count": self.count,
            "complete": self.complete,
            "exhaustive": self.exhaustive,
            "threshold": jsonable(self.threshold),
            "epsilon": self.epsilon,
            "optimum": jsonable(self.optimum),
            "optimum_proven": self.optimum_proven,
            "unenumerated_bound": jsonable(self.unenumerated_bound),
            "kept": self.kept,
            "models": [m.to_dict() for m in shown],
        }


@dataclass
class Result:
    """What ``Solver.solve`` returns.

    ``metrics`` holds quality figures (the runner adds train/test accuracy, AUC, log loss or R²);
    ``stats`` holds search figures (nodes, cuts, queue peak, time to incumbent, ...);
    ``rashomon`` the Rashomon set when the spec asked for one (``rashomon:``).
    """

    model: Model
    certificate: Certificate
    metrics: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    rashomon: RashomonSet | None = None

    def to_dict(self) -> dict[str, Any]:
        cert = self.certificate.model_dump(mode="json")
        out: dict[str, Any] = {
            "status": cert["status"],
            "objective": cert["objective"],
            "lower_bound": cert["lower_bound"],
            "gap": cert["gap"],
            "model": self.model.to_dict(),
            "model_text": self.model.to_text(),
            "metrics": jsonable(self.metrics),
            "stats": jsonable(self.stats),
        }
        if self.rashomon is not None:
            out["rashomon"] = self.rashomon.to_dict()
        return out


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
