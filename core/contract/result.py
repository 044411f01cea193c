"""What a solver hands back: its model (``glasswork.contract.model``), a certificate of how good it
is, metrics and stats.

The certificate is the product's promise, so its invariants are enforced here rather than trusted
to each solver: ``optimal`` needs a lower bound that meets the objective, and no lower bound may
exceed the objective it bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from glasswork.contract.model import CertificateError, Model, jsonable
from pydantic import BaseModel, ConfigDict, computed_field, model_validator

if TYPE_CHECKING:
    from glasswork.rashomon import RashomonSet


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
