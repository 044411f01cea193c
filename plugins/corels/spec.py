"""The ``corels`` spec: objective, constraints and search options, each with its range."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from glasswork.class_weights import ClassWeight, one_spelling
from glasswork.plugins.corels.bounds import BOUND_NAMES
from glasswork.spec.models import MAX_LIMIT_BYTES, FairnessConstraint, SolverSpec, StrictModel
from pydantic import ByteSize, Field, PositiveFloat, model_validator

if TYPE_CHECKING:
    Bound = str
else:
    Bound = Literal[BOUND_NAMES]  # the names declared in bounds.BOUNDS


class CorelsObjective(StrictModel):
    """R(d) = weighted misclassification / total weight + regularization * (number of rules)."""

    regularization: float = Field(
        0.01,
        ge=0.0,
        le=1.0,
        description="Penalty per rule (lambda): one more rule must cut the training error by more "
        "than this fraction of the data.",
    )
    class_weight: ClassWeight = None  # every bound stays valid for the weighted loss

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        return one_spelling(data)


class CorelsConstraints(StrictModel):
    """Limits on the list and, when antecedents are mined from 0/1 features, on the mining."""

    max_prefix_length: int | None = Field(
        None,
        ge=0,
        le=255,
        description="Most rules before the default rule; by default only the bounds limit it.",
    )
    max_card: int = Field(
        1,
        ge=1,
        le=3,
        description="Most items per mined antecedent (ignored for .out data). 1 keeps a search over "
        "a binarized table to tens or hundreds of antecedents; 2 (pairs) often multiplies them by "
        "50 to 100 and the search far more (docs/corels.md, 'Keeping a search small').",
    )
    min_support: float | None = Field(
        None,
        ge=0.0,
        le=0.5,
        description="Mined antecedents keep support in [min_support, 1 - min_support]; by default "
        "the regularization, which loses no optimal list (Theorems 10 and 21). Ignored for .out data.",
    )
    negations: bool = Field(True, description="Also mine negated features (ignored for .out data).")
    fairness: FairnessConstraint | None = Field(
        None,
        description="Certify the best list whose metric is at most at_most for every protected group of "
        "the fairness: section (docs/fairness.md). The support bounds are then off (the symmetry map stays on), "
        "and min_support defaults to 0 (they assume a rule may be dropped, which a constraint forbids).",
    )

    def mining_support(self, lam: float) -> float:
        """The min_support mined with: the given one, else lambda (Theorems 10 and 21), or 0 under a
        fairness constraint (a list those theorems would shorten may be the only one that meets it)."""
        if self.min_support is not None:
            return self.min_support
        return 0.0 if self.fairness is not None else lam


class CorelsSearch(StrictModel):
    """How the branch-and-bound explores prefixes; every choice certifies the same optimum."""

    policy: Literal["bfs", "dfs", "curiosity", "lower_bound", "objective"] = Field(
        "lower_bound",
        description="Queue order: breadth-first, depth-first, curiosity, lower bound or objective (best-first).",
    )
    symmetry_map: Literal["none", "prefix", "captured"] = Field(
        "prefix",
        description="Symmetry-aware map: none; prefix: keep the best ordering of each "
        "antecedent set (Corollary 16); captured: the best prefix of each captured set (Theorem 15).",
    )
    ablation: list[Bound] = Field(
        default_factory=list,
        description=f"Bounds to switch off, for experiments: {', '.join(BOUND_NAMES)}. The optimum is unchanged.",
    )
    compress: bool = Field(
        True,
        description="Merge samples with identical antecedent signatures before searching "
        "(lossless; turn off only to measure its effect).",
    )
    progress_interval: PositiveFloat = Field(0.25, le=60.0, description="Seconds between progress reports.")
    threads: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="Threads of one search, sharing its queue, symmetry map, incumbent and bound; "
        "by default all the cores the process may use. 1 runs the single-threaded path. The "
        "optimum is the same for any count; among equally good lists another may be returned.",
    )
    spill: Literal["auto", "off"] | Annotated[ByteSize, Field(le=MAX_LIMIT_BYTES)] = Field(
        "auto",
        description="External-memory queue: once the search's memory passes this size (e.g. 8GB), "
        "the queue's worst prefixes go to files in $TMPDIR and come back when the search reaches "
        "them; the certificate is unchanged. auto: 60% of limits.memory (of the machine's memory "
        "without one); off: never.",
    )


class CorelsSpec(SolverSpec):
    """A CORELS problem: certifiably optimal rule lists over pre-mined or mined antecedents."""

    solver: Literal["corels"]
    objective: CorelsObjective = Field(default_factory=CorelsObjective)
    constraints: CorelsConstraints = Field(default_factory=CorelsConstraints)
    search: CorelsSearch = Field(default_factory=CorelsSearch)
