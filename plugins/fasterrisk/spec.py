"""The ``fasterrisk`` spec: logistic objective, sparsity/box/group constraints, beam search knobs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from glasswork.class_weights import ClassWeight, one_spelling
from glasswork.spec.models import KEEP_NUMBERS, FairnessConstraint, SolverSpec, StrictModel
from pydantic import Field, field_validator, model_validator

MAX_POINTS = 1_000_000  # points of one feature; the kernels hold them as doubles
Points = Annotated[int, Field(ge=-MAX_POINTS, le=MAX_POINTS)]
Pair = tuple[Points, Points]


def _check_pair(pair: Pair) -> Pair:
    lo, hi = pair
    if not lo <= 0 <= hi:
        raise ValueError(f"a bound pair [lo, hi] needs lo <= 0 <= hi, got [{lo}, {hi}]")
    return pair


class FasterRiskObjective(StrictModel):
    """Weighted logistic loss (a sum over rows). Row weights come from ``data.weights``."""

    loss: Literal["logistic"] = Field("logistic", description="Only the logistic loss is defined.")
    class_weight: ClassWeight = None

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        return one_spelling(data)


class FasterRiskConstraints(StrictModel):
    """Model size, integer point bounds, feature groups and forced/banned features.

    Feature names may be glob patterns (``age<=*``) in ``groups``, ``include`` and ``exclude``.
    """

    sparsity: int = Field(5, ge=1, le=64, description="k: at most this many non-zero points.")
    coefficient_bounds: Pair | list[Pair] | dict[str, Pair] = Field(
        (-5, 5),
        description="Integer points bounds: one [lo, hi] pair for all features, a list with one "
        "pair per feature, or a map feature -> pair (others [-5, 5]). [0, 5] makes a feature "
        "monotone.",
    )
    groups: list[list[str] | str] = Field(
        default_factory=list,
        description="At most one feature from each group (a list of names or one glob pattern), "
        "e.g. all thresholds of one raw column.",
    )
    include: list[str] = Field(default_factory=list, description="Features every card must use.")
    exclude: list[str] = Field(default_factory=list, description="Features no card may use.")
    fairness: FairnessConstraint | None = Field(
        None,
        description="Every card returned keeps this metric at most this on the training rows, at its "
        "decision threshold (points total + intercept > 0, a risk above 50%), for each group of the "
        "fairness: section. policy exact proves the best such card (or that none exists); policy beam "
        "keeps only its pool's cards that meet it (moving a card's intercept where that helps).",
    )

    @field_validator("coefficient_bounds")
    @classmethod
    def _pairs(cls, value: object) -> object:
        if isinstance(value, tuple):
            _check_pair(value)
        elif isinstance(value, list):
            for pair in value:
                _check_pair(pair)
        elif isinstance(value, dict):
            for pair in value.values():
                _check_pair(pair)
        return value

    @model_validator(mode="after")
    def _include_fits(self) -> FasterRiskConstraints:
        if len(self.include) > self.sparsity:
            raise ValueError(f"{len(self.include)} included features exceed sparsity {self.sparsity}")
        return self


class FasterRiskSearch(StrictModel):
    """Beam search, diverse pool and star-ray search. Unset knobs come from ``defaults``.

    ``defaults: paper`` uses the paper's values (B=10, epsilon=0.3, T=50, N_m=20, no pool
    truncation, 1-D screening of every feature by loss). ``defaults: reference`` reproduces the
    public reference code (epsilon=0.05, pool truncated to 50, screening by gradient, centred and
    scaled columns with a 1e-8 ridge, multiplier early stop at 0.1%, de-duplication by support).
    """

    policy: Literal["beam", "exact"] = Field(
        "beam",
        description="beam: FasterRisk's sparse beam search (fast, heuristic). exact: prove the "
        "best card with integer points and intercept (multiplier 1) by branch and bound over supports "
        "and the integer lattice, seeded with the beam search's cards.",
    )
    certify: bool = Field(
        True,
        description="Prove a lower bound on the loss of every card: the best k-feature "
        "logistic model with real coefficients (branch and bound over supports).",
    )
    certify_time: float = Field(
        5.0,
        gt=0,
        description="Seconds the lower-bound search may take (within limits.time); "
        "when it stops early the bound it proved so far is reported.",
    )
    defaults: Literal["paper", "reference"] = Field(
        "paper", description="Which defaults fill the knobs left unset: the paper's or the code's."
    )
    beam_width: int | None = Field(None, ge=1, le=1000, description="B: supports kept per size (10).")
    pool_gap: float | None = Field(
        None, gt=0, le=10, description="epsilon: pool members lose at most (1+epsilon) x the best loss."
    )
    swap_attempts: int | None = Field(
        None, ge=0, le=100000, description="T: features tried in place of each removed one (50)."
    )
    multipliers: int | None = Field(None, ge=1, le=1000, description="N_m: multipliers per member (20).")
    pool_size: int | None = Field(
        None, ge=1, le=100_000, description="Keep at most this many continuous pool members (reference: 50)."
    )
    screening: Literal["loss", "gradient"] | None = Field(
        None, description="Rank new features by 1-D loss over all (paper) or by |gradient| (code)."
    )
    multiplier_early_stop: float | None = Field(
        None, ge=0, description="Stop the multiplier scan once within this relative loss (code: 0.001)."
    )
    finetune: Literal["newton", "cd"] | None = Field(
        None,
        description="Fine-tune solver: projected Newton to convergence (paper) or the code's "
        "100 quadratic-bound coordinate sweeps (reference).",
    )
    threads: int | None = Field(None, ge=1, le=64, description="Threads for independent fine-tunes (default 2).")
    reduce_points: bool = Field(True, description="Divide points by their gcd (risks unchanged; Appendix G).")


class FasterRiskSpec(SolverSpec):
    """A FasterRisk problem: sparse integer risk scores for a binary target."""

    # Points multiply the features as given: by default text columns are one-hot encoded (as MOSS
    # and the estimator do) and numbers kept; a ``binarize:`` section thresholds them too.
    default_binarize = KEEP_NUMBERS

    solver: Literal["fasterrisk"]
    objective: FasterRiskObjective = Field(default_factory=FasterRiskObjective)
    constraints: FasterRiskConstraints = Field(default_factory=FasterRiskConstraints)
    search: FasterRiskSearch = Field(default_factory=FasterRiskSearch)
