"""The spec's models: ``SolverSpec`` (what every solver's spec model extends), its common
sections (``limits``, ``store``, ``sweep``, ``rashomon``, ``fairness``) and the bounds on them.

Pydantic models only, below the registry (which checks that a plugin's ``spec_model`` extends
``SolverSpec``); reading a file and validating it against the installed solvers is
``glasswork.spec.load``.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import PurePosixPath
from typing import Annotated, Any, ClassVar, Literal

from glasswork.data import DataSpec
from glasswork.data.spec import BinarizeSpec
from glasswork.fairness.figures import ALL_METRICS, METRICS, Metric, PredictionMetric
from pydantic import (
    BaseModel,
    ByteSize,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

# A sweep runs every point it expands to, each a whole solve recorded in the run store: 10,000
# runs are already hours of CPU at a second each and 10,000 spec documents held and validated
# before the first runs (a few hundred MB at worst). A grid beyond that is a typo or a plan for
# another tool, and is refused before anything is expanded.
MAX_SWEEP_RUNS = 10_000


class StrictModel(BaseModel):
    """Base of every spec section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


# Limits reach the compiled searches (64-bit node counters), setrlimit and the run store (DuckDB
# BIGINT and DOUBLE): bounded far above any real run and far below where those overflow.
MAX_LIMIT_SECONDS = 1e9  # about 31 years
MAX_LIMIT_NODES = 10**15  # 3 years at 10 million nodes a second; int64 holds 9.2e18
MAX_LIMIT_BYTES = 2**50  # 1 PiB


class LimitsSpec(StrictModel):
    """Resource limits. A run stopped by one still finishes, with status ``stopped_*`` and a gap."""

    time: PositiveFloat | None = Field(None, le=MAX_LIMIT_SECONDS, description="Wall-clock seconds.")
    nodes: PositiveInt | None = Field(
        None, le=MAX_LIMIT_NODES, description="Search nodes (as the solver counts them), at most 10^15."
    )
    memory: ByteSize | None = Field(
        None,
        le=MAX_LIMIT_BYTES,
        description="Resident memory of the process, e.g. 4GB, 512MiB or a number of bytes (at most 1PiB).",
    )


class StoreSpec(StrictModel):
    """Where the run history goes (the DuckDB run store).

    A spec is data from anyone, so the file it names stays inside the spec's own folder: a
    relative ``.duckdb`` path without ``..``. Any other place is the user's choice, made with
    ``--db`` or ``$GLASSWORK_DB`` (docs/security.md).
    """

    enabled: bool = Field(True, description="Record this run in the run store.")
    path: str | None = Field(
        None,
        description="Database file inside the spec's folder (a relative .duckdb path without '..'); "
        "default glasswork.duckdb here. Use --db or $GLASSWORK_DB for any other place.",
    )

    @field_validator("path")
    @classmethod
    def _inside_the_spec_folder(cls, value: str | None) -> str | None:
        if value is None:
            return value
        path = PurePosixPath(value.replace("\\", "/"))
        if (
            path.is_absolute()
            or value.startswith("~")
            or "$" in value
            or ".." in path.parts
            or ":" in value
            or path.suffix.lower() not in (".duckdb", ".db")
        ):
            raise ValueError(
                "a spec may only name a .duckdb file inside its own folder (e.g. runs/history.duckdb); "
                "choose any other place with --db PATH or $GLASSWORK_DB"
            )
        return value


class SweepSpec(StrictModel):
    """Many runs of one spec: a grid or a list of points over its fields, optionally cross-validated.

    ``grid: {objective.regularization: [0.02, 0.01]}`` runs every combination of the listed
    values; ``points`` lists combinations explicitly; both may be given. ``folds: K`` runs each
    point on K seeded folds (the data's split becomes ``kfold``). ``glasswork sweep SPEC`` runs it.
    """

    grid: dict[str, list[Any]] = Field(
        default_factory=dict, description="Dotted field path -> values; every combination is a point."
    )
    points: list[dict[str, Any]] = Field(
        default_factory=list, description="Explicit points, each a mapping of dotted field paths to values."
    )
    folds: int | None = Field(None, ge=2, le=100, description="Cross-validate every point on this many folds.")
    metric: str | None = Field(
        None,
        description="What picks the best point: a metric such as test_auc, or objective "
        "(default: test_accuracy or test_r2 when there is test data, else objective).",
    )
    goal: Literal["min", "max"] | None = Field(
        None, description="Whether the metric is better low or high (inferred from its name when omitted)."
    )

    @model_validator(mode="after")
    def _something_to_sweep(self) -> SweepSpec:
        for path, values in self.grid.items():
            if not values:
                raise ValueError(f"grid entry {path!r} has no values")
            if path.split(".")[0] in ("sweep", "name", "solver"):
                raise ValueError(f"{path!r} cannot be swept")
        if not self.grid and not self.points and self.folds is None:
            raise ValueError("a sweep needs a grid, points or folds")
        combos = math.prod(len(values) for values in self.grid.values()) if self.grid else 0
        runs = max(combos + len(self.points), 1) * (self.folds or 1)
        if runs > MAX_SWEEP_RUNS:
            sizes = " x ".join(f"{path!r}: {len(values)}" for path, values in self.grid.items())
            parts = [f"grid {sizes} = {combos:,} points"] if self.grid else []
            parts += [f"{len(self.points):,} listed points"] if self.points else []
            folds = f", x {self.folds} folds" if self.folds else ""
            raise ValueError(
                f"this sweep would run {runs:,} times ({' + '.join(parts)}{folds}), over the "
                f"limit of {MAX_SWEEP_RUNS:,} runs per sweep; sweep fewer values, or split it "
                "into several sweeps"
            )
        return self


# A Rashomon set can hold millions of models; the count is always exact, but each model kept with its
# rule list or card costs memory in the run, a row in the store and a line in --json. A million kept
# models is already hundreds of MB of documents; more is a count, not something a person browses.
MAX_RASHOMON_MODELS = 1_000_000


class RashomonSpec(StrictModel):
    """Ask for the Rashomon set: every model of the solver's class whose objective is within a
    threshold of the optimum, not only the optimum.

    Give ``epsilon`` (relative, TreeFARMS' convention: every model with objective at most
    ``(1 + epsilon) * R*``, ``R*`` the certified optimum) or ``threshold`` (absolute), not both.
    ``max_models`` caps how many members are kept with their model (best first); the count is
    exact whatever the cap. ``keep`` says what is kept per member: ``model`` (the model itself,
    so it can be shown, picked and exported) or ``summary`` (objective, features used and the
    fingerprint of its predictions only).
    """

    epsilon: NonNegativeFloat | None = Field(
        None, le=10.0, description="Relative: keep every model with objective <= (1 + epsilon) * optimum."
    )
    threshold: PositiveFloat | None = Field(
        None, le=1e12, description="Absolute: keep every model with objective <= threshold."
    )
    max_models: PositiveInt = Field(
        1000,
        le=MAX_RASHOMON_MODELS,
        description="Members kept with their model, best first (the count is exact regardless).",
    )
    keep: Literal["model", "summary"] = Field(
        "model", description="Per kept member: the model itself, or only its objective, features and fingerprint."
    )

    @model_validator(mode="after")
    def _one_threshold(self) -> RashomonSpec:
        if (self.epsilon is None) == (self.threshold is None):
            raise ValueError("give either epsilon (relative to the optimum) or threshold (absolute), not both")
        return self


# a value as written in the data, compared with the column's values and never computed with;
# integers bounded inside int64 like every integer of a spec
ProtectedValue = str | Annotated[int, Field(ge=-(2**63), le=2**63 - 1)] | float | bool


class ProtectedGroupSpec(StrictModel):
    """A protected group: the rows whose ``column`` holds ``value`` (or one of the listed values)."""

    column: str = Field(min_length=1, description="An audit-only column (listed in data.audit_only).")
    value: ProtectedValue | list[ProtectedValue] = Field(
        description="The value (or values) of the column that make a row protected, as written in the data.",
    )

    @field_validator("value")
    @classmethod
    def _some_value(cls, value: ProtectedValue | list[ProtectedValue]) -> ProtectedValue | list[ProtectedValue]:
        if isinstance(value, list) and not value:
            raise ValueError("list at least one value")
        return value

    @property
    def values(self) -> list[ProtectedValue]:
        return self.value if isinstance(self.value, list) else [self.value]


class FairnessSpec(StrictModel):
    """Audit every run for a protected group against the rest (docs/fairness.md).

    Each metric is an absolute difference between the protected group and every other row, on
    the training and the test rows; ``calibration`` needs a model that gives probabilities.
    Several groups (a list under ``protected``) are each compared with the rest.
    """

    protected: ProtectedGroupSpec | list[ProtectedGroupSpec] = Field(
        description="The protected group {column, value}, or a list of groups."
    )
    metrics: list[Metric] = Field(
        default_factory=lambda: list(ALL_METRICS),
        min_length=1,
        description="The metrics to report (default: all six, and calibration for models that give probabilities).",
    )

    @property
    def groups(self) -> list[ProtectedGroupSpec]:
        return self.protected if isinstance(self.protected, list) else [self.protected]


class FairnessFrontierSpec(StrictModel):
    """``constraints.fairness.frontier``: the accuracy-fairness frontier in one run, walked exactly
    by the epsilon-constraint method: the best model within ``at_most``, then the best whose
    figure is strictly below that model's, and so on until no model is fairer (a proof, as
    ``infeasible`` is) or ``points`` are solved (docs/fairness.md). A list of chosen limits is a
    sweep over ``constraints.fairness.at_most`` instead."""

    points: int = Field(20, ge=1, le=1000, description="The most points solved (the walk stops there).")
    min_step: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        allow_inf_nan=False,
        description="How much fairer each point must be than the last (0: any fairer model, the exact front).",
    )


class FairnessConstraint(StrictModel):
    """``constraints.fairness``: the model must keep one metric at most ``at_most`` on the training
    rows, for every protected group of the spec's ``fairness:`` section (docs/fairness.md).

    A model whose figure is undefined for a group (no predicted positive in it, for predictive
    parity) does not meet the constraint: an undefined figure is never read as 0. A solver that
    accepts the field proves its optimum among the models that meet it, or says that none does.
    """

    metric: PredictionMetric = Field(description=f"One of: {', '.join(METRICS)}.")
    at_most: float = Field(
        ge=0.0,
        le=2.0,
        allow_inf_nan=False,
        description="The largest difference allowed between the protected group and the rest "
        "(equalized odds and conditional use accuracy equality are sums of two, so up to 2).",
    )
    frontier: FairnessFrontierSpec | None = Field(
        None,
        description="Walk the accuracy-fairness frontier from at_most down (solvers that offer it, "
        "'glasswork plugins'); the model returned is the first point's.",
    )


def fairness_issues(spec: SolverSpec) -> list[tuple[list[str | int], str]]:
    """What ties ``data.audit_only`` and ``fairness`` together, as (field path, message): a
    protected column must be audit-only (a feature would let the model read the group), and an
    audit-only column is never the target, the weights or a listed feature."""
    data = spec.data
    out: list[tuple[list[str | int], str]] = []
    roles = {data.target: "the target", data.weights: "the weights column"}
    for i, name in enumerate(data.audit_only):
        if name in roles:
            out.append((["data", "audit_only", i], f"{name!r} is {roles[name]}; an audit-only column is neither"))
        elif data.columns is not None and name in data.columns:
            out.append(
                (
                    ["data", "audit_only", i],
                    f"{name!r} is also listed under data.columns, as a feature; an audit-only column is "
                    "never a feature: remove it from one of the two",
                )
            )
        elif name in data.audit_only[:i]:
            out.append((["data", "audit_only", i], f"{name!r} is listed twice"))
    limit = getattr(spec.constraints, "fairness", None)
    if isinstance(limit, FairnessConstraint):
        if spec.fairness is None:
            out.append(
                (
                    ["constraints", "fairness"],
                    "a fairness constraint needs a fairness: section naming the protected group "
                    "(fairness: {protected: {column: ..., value: ...}}) and its column under data.audit_only",
                )
            )
        elif limit.metric not in spec.fairness.metrics:
            out.append(
                (
                    ["constraints", "fairness", "metric"],
                    f"{limit.metric!r} is constrained but not audited; add it to fairness.metrics "
                    "so that the run reports the figure it is held to",
                )
            )
    if spec.fairness is not None:
        several = isinstance(spec.fairness.protected, list)
        for i, group in enumerate(spec.fairness.groups):
            if group.column not in data.audit_only:
                where: list[str | int] = ["fairness", "protected", *([i] if several else []), "column"]
                out.append(
                    (
                        where,
                        f"{group.column!r} is not in data.audit_only; add it there (data: {{audit_only: "
                        f"[{json.dumps(group.column)}]}}) so that it is read for the audit and is never a feature",
                    )
                )
    return out


KEEP_NUMBERS: dict[str, Any] = {"numeric": "keep"}
"""The ``default_binarize`` of a solver that cuts numbers itself: text columns are one-hot encoded
and numbers kept, so a plain spec on a table with text columns runs."""


class SolverSpec(StrictModel):
    """Base of every solver's spec model.

    A plugin subclasses it, narrows ``solver`` to ``Literal["its-name"]`` and replaces
    ``objective``, ``constraints`` and ``search`` with its own ``StrictModel`` sections.
    """

    name: str = Field(min_length=1, description="A name for this problem, shown in run lists.")
    data: DataSpec
    solver: str
    objective: StrictModel = Field(default_factory=StrictModel)
    constraints: StrictModel = Field(default_factory=StrictModel)
    search: StrictModel = Field(default_factory=StrictModel)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    store: StoreSpec = Field(default_factory=StoreSpec)
    sweep: SweepSpec | None = Field(None, description="Run a grid of variants of this spec (glasswork sweep).")
    rashomon: RashomonSpec | None = Field(
        None, description="Enumerate every model within a threshold of the optimum (the Rashomon set)."
    )
    fairness: FairnessSpec | None = Field(
        None, description="Audit the model for a protected group (an audit-only column) against the rest."
    )

    # The ``binarize:`` section a spec without one gets (None: the features are used as they are).
    # A solver that cuts numbers itself sets ``KEEP_NUMBERS``.
    default_binarize: ClassVar[dict[str, Any] | None] = None

    @model_validator(mode="after")
    def _default_binarize(self) -> SolverSpec:
        if self.data.binarize is None and self.default_binarize is not None:
            self.data.binarize = BinarizeSpec(**self.default_binarize)
        return self

    def resolved(self) -> dict[str, Any]:
        """The spec with every default filled in, as plain JSON values.

        A spec without ``rashomon``, ``fairness`` or ``data.audit_only`` resolves as it did before
        those existed, so its hash (and the runs recorded under it) stays the same.
        """
        resolved = self.model_dump(mode="json")
        for section in ("rashomon", "fairness"):
            if resolved.get(section) is None:
                resolved.pop(section, None)
        if not resolved["data"].get("audit_only"):
            resolved["data"].pop("audit_only", None)
        return resolved

    def spec_hash(self) -> str:
        """A stable hash of the resolved spec (key order and formatting do not matter)."""
        canonical = json.dumps(self.resolved(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()
