"""The ``moss`` spec: candidate rules and ridge loss, stability constraint or frontier, search policy."""

from __future__ import annotations

from typing import Annotated, Literal

from glasswork.spec.models import KEEP_NUMBERS, FairnessConstraint, SolverSpec, StrictModel
from pydantic import Field, model_validator


class CandidatesSpec(StrictModel):
    """How the candidate rules are harvested (a random forest on quantile-binned features)."""

    trees: int = Field(1000, ge=1, le=100_000, description="Trees in the forest (B); Pi = share of trees.")
    depth: int = Field(2, ge=1, le=4, description="Tree depth, i.e. conditions per rule at most.")
    max_features: float = Field(
        1.0 / 3.0, gt=0.0, le=1.0, description="Fraction of features tried at each split (mtry)."
    )
    quantiles: int = Field(10, ge=2, le=255, description="Quantile bins per feature; thresholds sit between them.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of the forest (scikit-learn takes 0 to 2^32 - 1).")
    rules_from: Literal["all_nodes", "leaves"] = Field(
        "all_nodes", description="Every non-root node is a rule (SIRUS), or the leaves only."
    )
    max_candidates: int = Field(
        1000, ge=1, le=1_000_000, description="Keep at most this many rules, those with the largest Pi."
    )


class MossObjective(StrictModel):
    """Minimise the ridge loss H2 of the rule set; its stability H1 = Pi'z is constrained."""

    gamma: float = Field(1e-3, gt=0.0, description="Ridge parameter; the penalty is ||w||^2 / (2 gamma).")
    encoding: Literal["sirus", "indicator", "node_value"] = Field(
        "sirus",
        description="Rule output: sirus (mean inside / outside), indicator (0/1), node_value (mean inside, 0).",
    )
    standardize: bool = Field(
        True, description="Divide y by its standard deviation before optimising, so gamma is unit-free."
    )
    refit: Literal["ols", "ridge"] = Field(
        "ols", description="Weights of the returned rule set: least squares on the chosen rules, or the ridge solution."
    )
    candidates: CandidatesSpec = Field(default_factory=CandidatesSpec)


class FrontierSpec(StrictModel):
    """Solve the epsilon grid (descending window sums of the sorted Pi) instead of one epsilon."""

    points: int = Field(100, ge=1, le=100_000, description="How many grid values, from eps_max down.")
    choose: Literal["knee"] | Annotated[int, Field(ge=1, le=100_000)] = Field(
        "knee", description="The rule set returned as the model: 'knee', or a 1-based point number."
    )


class MossConstraints(StrictModel):
    """At most ``max_rules`` rules; stability at least ``min_stability``, or a whole frontier; and,
    for a binary target, a fairness limit on the training predictions."""

    max_rules: int = Field(15, ge=1, le=1000, description="k, the largest number of rules.")
    min_stability: float | None = Field(None, ge=0.0, description="epsilon: lower bound on H1 = Pi'z.")
    stability_rank: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="Use the j-th value of the epsilon grid (1 = eps_max; 3 = MOSS-eps-H, the default).",
    )
    frontier: FrontierSpec | None = Field(None, description="Compute the Pareto frontier.")
    fairness: FairnessConstraint | None = Field(
        None,
        description="Binary target: every rule set returned (each frontier point) meets this limit on the "
        "training rows, for every protected group of the fairness: section; certified by the cutting plane.",
    )

    @model_validator(mode="after")
    def _one_target(self) -> MossConstraints:
        given = [n for n in ("min_stability", "stability_rank", "frontier") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of min_stability, stability_rank, frontier (got {', '.join(given)})")
        return self


class MossSearch(StrictModel):
    """Which algorithm solves the problem and with what tolerances."""

    policy: Literal["branch_and_bound", "cutting_plane", "mio", "heuristic"] = Field(
        "branch_and_bound",
        description="branch_and_bound: perspective-relaxation branch and bound (exact, fastest); "
        "cutting_plane: the paper's outer approximation with a HiGHS master; mio: exact model via cvxpy; "
        "heuristic: coordinate descent (MOSS-L).",
    )
    tolerance: float = Field(1e-6, gt=0.0, lt=1.0, description="Relative gap under which a point is declared optimal.")
    epm: bool = Field(
        True, description="Frontier: share cuts and warm starts across epsilons (EPM); false solves each from scratch."
    )
    threads: int = Field(1, ge=1, le=64, description="Threads of the HiGHS master.")
    backend: Literal["auto", "mosek", "scip"] = Field("auto", description="mio: MOSEK when licensed (auto), or SCIP.")
    formulation: Literal["perspective", "bigm"] = Field(
        "perspective", description="mio: perspective MISOCP or big-M MIQP."
    )
    fallback: bool = Field(False, description="mio: use another backend when the requested one cannot run.")
    mip_gap: float = Field(1e-4, gt=0.0, lt=1.0, description="mio: relative MIP gap of the backend.")
    stability_weight: float = Field(1.0, ge=0.0, description="heuristic: lam2 = stability_weight * lam1 / mean(Pi).")

    @model_validator(mode="after")
    def _backend_installed(self) -> MossSearch:
        """The mio policy's packages are an extra: a missing one is reported before anything runs."""
        if self.policy == "mio":
            from .mio import require_installed

            require_installed(self.backend, self.fallback)  # MissingExtra is a ValueError
        return self


class MossSpec(SolverSpec):
    solver: Literal["moss"]
    objective: MossObjective = Field(default_factory=MossObjective)
    constraints: MossConstraints = Field(default_factory=MossConstraints)
    search: MossSearch = Field(default_factory=MossSearch)

    # MOSS cuts numeric columns on its own quantile grid: by default the data layer only one-hot
    # encodes text columns and keeps numbers (and 0/1 columns) as they are.
    default_binarize = KEEP_NUMBERS

    @model_validator(mode="after")
    def _policy_fits(self) -> MossSpec:
        if self.search.policy == "heuristic" and self.constraints.frontier is not None:
            raise ValueError("the heuristic policy does not compute frontiers; use cutting_plane or mio")
        if self.search.tolerance < 1e-9 and self.search.policy in ("cutting_plane", "branch_and_bound"):
            raise ValueError("search.tolerance below 1e-9 is beneath the master's numerical accuracy")
        return self
