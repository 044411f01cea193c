"""What a solver hands back: its model (``glasswork.contract.model``), a certificate of how good it
is, metrics and stats.

The certificate is the product's promise, so its invariants are enforced here rather than trusted
to each solver: ``optimal`` needs a lower bound that meets the objective, and no lower bound may
exceed the objective it bounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from glasswork.contract.model import CertificateError, Model, jsonable
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

NO_MODEL_STATUSES = frozenset({Status.INFEASIBLE, Status.HEURISTIC, *STOP_STATUSES})
"""The statuses a result without a model may have: a proof that none exists, a search stopped
before it found one, or a heuristic that looked at part of the space and found none there."""

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
                    f"a result with status {status.value!r} has no model; only 'infeasible', a stopped "
                    "search or a heuristic may end without one"
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
    if status is Status.HEURISTIC:
        return f"the heuristic search found no model that meets {meets}; one may still exist (it is not a proof)"
    return f"{_STOPPED_AT.get(status, status.value)} before finding a model that meets {meets}"


def stored_no_model_reason(status: Any, spec: Any) -> str | None:
    """``no_model_reason`` for a run read back (the store, a journal, a sweep reply): its status
    and resolved spec as stored, either possibly anything; ``None`` when the status is not one a
    run without a model ends with (a failed run's missing model is its error's to explain)."""
    if status not in {s.value for s in NO_MODEL_STATUSES}:
        return None
    constraints = spec.get("constraints") if isinstance(spec, Mapping) else None
    return no_model_reason(status, constraints if isinstance(constraints, Mapping) else None)
