"""The risk score card: integer points, a hidden intercept and multiplier, a score -> risk table.

Risk of a row is ``sigmoid((score + intercept) / multiplier)`` with ``score = sum points * x``.
The card shows only the points and the table; the intercept and multiplier are internal (after
gcd reduction they may be fractional).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from functools import reduce
from typing import Any, Protocol

import numpy as np
from glasswork.contract.model import Classifier
from glasswork.contract.result import GAP_FLOOR
from glasswork.display.console import fmt_gap, fmt_number


def sigmoid(t: np.ndarray | float) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    return np.exp(-np.logaddexp(0.0, -t))


class RoundedCard(Protocol):
    """A rounded solution as the engine returns it (``engine.IntegerModel``)."""

    features: np.ndarray
    points: np.ndarray
    intercept: float
    multiplier: float
    loss: float


class ScoreCard(Classifier):
    """A FasterRisk model; ``predict`` returns encoded labels (1 = ``classes[1]``)."""

    kind = "score_card"
    task = "binary"

    def __init__(
        self,
        *,
        features: Sequence[str],
        columns: Sequence[int] | np.ndarray,
        points: Sequence[int] | np.ndarray,
        intercept: float,
        multiplier: float,
        classes: Sequence[Any] | np.ndarray | None = None,
        binary: Sequence[bool] | None = None,
        scores: Sequence[float] | None = None,
        loss: float | None = None,
        reduced_by: int = 1,
        certified_gap: float | None = None,
        certified_against: str | None = None,
    ) -> None:
        if not (len(features) == len(columns) == len(points)):
            raise ValueError("features, columns and points must have the same length")
        if multiplier <= 0:
            raise ValueError("the multiplier must be positive")
        self.features = [str(f) for f in features]
        self.columns = [int(c) for c in columns]
        self.points = [int(p) for p in points]
        self.intercept = float(intercept)
        self.multiplier = float(multiplier)
        self.classes = np.asarray(classes if classes is not None else [0, 1], dtype=object)
        self.binary = [True] * len(self.columns) if binary is None else [bool(b) for b in binary]
        self.loss = loss
        self.reduced_by = int(reduced_by)
        # proven: no k-feature logistic model (integer points or not) has a loss below
        # loss * (1 - certified_gap); None when no bound was computed
        self.certified_gap = certified_gap
        self.certified_against = certified_against  # what the gap is measured against
        self.scores = sorted(set(float(s) for s in scores)) if scores is not None else self._subset_sums()

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_pool(
        cls,
        X: np.ndarray,
        feature_names: Sequence[str],
        pool: Iterable[RoundedCard],
        *,
        classes: Sequence[Any] | np.ndarray | None,
        reduce_points: bool,
    ) -> list[ScoreCard]:
        """The engine's rounded pool (best first) as cards, in the same order."""
        return [
            cls.from_solution(
                X,
                feature_names,
                m.features,
                m.points,
                m.intercept,
                m.multiplier,
                classes=classes,
                loss=m.loss,
                reduce_points=reduce_points,
            )
            for m in pool
        ]

    @classmethod
    def from_solution(
        cls,
        X: np.ndarray,
        feature_names: Sequence[str],
        columns: Sequence[int] | np.ndarray,
        points: Sequence[int] | np.ndarray,
        intercept: float,
        multiplier: float,
        *,
        classes: Sequence[Any] | np.ndarray | None = None,
        loss: float | None = None,
        reduce_points: bool = True,
    ) -> ScoreCard:
        """Build a card from a rounded solution; ``X`` (training) decides the scores shown."""
        columns = [int(c) for c in columns]
        points = [int(p) for p in points]
        g = 1
        if reduce_points and points:
            g = reduce(math.gcd, (abs(p) for p in points))
            if g > 1:
                points = [p // g for p in points]
                intercept, multiplier = intercept / g, multiplier / g
            g = max(g, 1)
        sub = np.asarray(X, dtype=np.float64)[:, columns]
        binary = [bool(np.isin(sub[:, k], (0.0, 1.0)).all()) for k in range(len(columns))]
        scores = None
        if not (all(binary) and len(columns) <= 10):
            observed = sub @ np.asarray(points, dtype=np.float64) if columns else np.zeros(len(sub))
            qs = np.quantile(observed, np.linspace(0, 1, 20), method="closest_observation")
            scores = np.unique(qs).tolist()
        return cls(
            features=[feature_names[c] for c in columns],
            columns=columns,
            points=points,
            intercept=intercept,
            multiplier=multiplier,
            classes=classes,
            binary=binary,
            scores=scores,
            loss=loss,
            reduced_by=g,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreCard:
        return cls(
            features=data["features"],
            columns=data["columns"],
            points=data["points"],
            intercept=data["intercept"],
            multiplier=data["multiplier"],
            classes=data.get("classes"),
            binary=data.get("binary"),
            scores=[row["score"] for row in data.get("table", [])] or None,
            loss=data.get("loss"),
            reduced_by=data.get("reduced_by", 1),
            certified_gap=data.get("certified_gap"),
            certified_against=data.get("certified_against"),
        )

    def _subset_sums(self) -> list[float]:
        if len(self.points) > 10:
            return []
        sums = {0.0}
        for r in range(1, len(self.points) + 1):
            for combo in itertools.combinations(self.points, r):
                sums.add(float(sum(combo)))
        return sorted(sums)

    # -- prediction ----------------------------------------------------------------------------

    def score(self, X: np.ndarray) -> np.ndarray:
        """Total points of each row."""
        X = np.asarray(X, dtype=np.float64)
        if not self.columns:
            return np.zeros(X.shape[0])
        return X[:, self.columns] @ np.asarray(self.points, dtype=np.float64)

    def risk(self, score: np.ndarray | float) -> np.ndarray:
        """P(positive) for a score: sigmoid((score + intercept) / multiplier)."""
        return sigmoid((np.asarray(score, dtype=np.float64) + self.intercept) / self.multiplier)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = self.risk(self.score(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """1 where (score + intercept) / multiplier > 0, else 0."""
        return (self.score(X) + self.intercept > 0).astype(np.int64)

    def logistic_loss(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        """Summed logistic loss on encoded labels (0/1) or -1/+1 labels."""
        y = np.asarray(y, dtype=np.float64)
        signs = np.where(y > 0, 1.0, -1.0)
        margin = signs * (self.score(X) + self.intercept) / self.multiplier
        losses = np.logaddexp(0.0, -margin)
        return float(losses.sum() if sample_weight is None else losses @ sample_weight)

    # -- reading -------------------------------------------------------------------------------

    @property
    def features_used(self) -> list[int]:
        """The matrix columns on the card: a row missing one gets no prediction in exports."""
        return sorted(set(self.columns))

    @property
    def size(self) -> int:
        return sum(1 for p in self.points if p != 0)

    def table(self) -> list[tuple[float, float]]:
        """(score, risk) rows for the scores the card shows."""
        return [(s, float(self.risk(s))) for s in self.scores]

    def to_text(self) -> str:
        """The paper's card: one row per feature, the SCORE line, then the score -> risk table."""
        if not self.features:
            lines = ["(no features: every row gets the same risk)"]
        else:
            width = max(len(self._label(k)) for k in range(len(self.features)))
            lines = []
            for k in range(len(self.features)):
                unit = "point " if abs(self.points[k]) == 1 else "points"
                lead = "  " if k == 0 else "+ "
                lines.append(f"{k + 1:>2}. {self._label(k):<{width}}  {self.points[k]:>3} {unit} | {lead}...")
            lines.append(f"    {'SCORE':<{width}}  {'':>3} {'':6} | = ...")
        rows = self.table()
        if rows:
            lines.append("")
            for start in range(0, len(rows), 10):
                chunk = rows[start : start + 10]
                cells = [(_fmt_score(s), format_risk(r)) for s, r in chunk]
                wide = [max(len(a), len(b)) for a, b in cells]
                lines.append("SCORE | " + " | ".join(a.rjust(w) for (a, _), w in zip(cells, wide)))
                lines.append("RISK  | " + " | ".join(b.rjust(w) for (_, b), w in zip(cells, wide)))
        if self.certified_gap is not None:
            lines.append("")
            lines.append(self.certified_line())
        return "\n".join(lines)

    def certified_line(self) -> str:
        """The certificate in words: how far the card's loss can be from the best possible."""
        return certified_words(self.loss, self.certified_gap, self.certified_against)

    def _label(self, k: int) -> str:
        return self.features[k] if self.binary[k] else f"{self.features[k]} x"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "features": list(self.features),
            "columns": list(self.columns),
            "points": list(self.points),
            "intercept": self.intercept,
            "multiplier": self.multiplier,
            "classes": [c.item() if hasattr(c, "item") else c for c in self.classes],
            "binary": list(self.binary),
            "loss": self.loss,
            "reduced_by": self.reduced_by,
            "certified_gap": self.certified_gap,
            "certified_against": self.certified_against,
            "table": [{"score": s, "risk": r} for s, r in self.table()],
        }

    def summary(self) -> str:
        """One line: ``NoHS -4, HSDiploma -2, ...``."""
        return ", ".join(f"{f} {p:+d}" for f, p in zip(self.features, self.points))


def reliability(
    y: np.ndarray, proba: np.ndarray, bins: int = 5, sample_weight: np.ndarray | None = None
) -> list[dict[str, float]]:
    """Uniform-bin reliability table, weighted by the rows' weights.

    The bins are ``sklearn.calibration.calibration_curve``'s (``n_bins`` uniform bins; a
    probability on an inner edge goes to the lower bin, as in scikit-learn 1.9), and with unit
    weights the table equals its output (a test checks it). It is computed here because
    ``calibration_curve`` takes no ``sample_weight`` (none from 1.7 to 1.9, the versions checked):
    a weighted row counts for its weight in ``mean_predicted``, ``observed`` and ``weight``;
    ``count`` stays rows.
    """
    y = np.asarray(y, dtype=np.float64)
    proba = np.asarray(proba, dtype=np.float64)
    w = np.ones_like(proba) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.searchsorted(edges[1:-1], proba)
    count = np.bincount(which, minlength=bins)
    weight = np.bincount(which, weights=w, minlength=bins)
    predicted = np.bincount(which, weights=w * proba, minlength=bins)
    observed = np.bincount(which, weights=w * y, minlength=bins)
    return [
        {
            "bin_low": float(edges[b]),
            "bin_high": float(edges[b + 1]),
            "count": int(count[b]),
            "weight": float(weight[b]),
            "mean_predicted": float(predicted[b] / weight[b]),
            "observed": float(observed[b] / weight[b]),
        }
        for b in range(bins)
        if weight[b] > 0
    ]


def expected_calibration_error(table: list[dict[str, float]]) -> float:
    """The bins' gaps between predicted and observed risk, averaged by their (weighted) size."""
    total = sum(row["weight"] for row in table)
    if total == 0:
        return float("nan")
    return float(sum(row["weight"] * abs(row["mean_predicted"] - row["observed"]) for row in table) / total)


def certified_words(loss: float | None, gap: float | None, against: str | None) -> str:
    """A card's certificate in words: the gap of its training logistic loss to the best model it is
    proven against, in the one gap form (``glasswork.display.console.fmt_gap``, the relative gap of
    ``glasswork.contract.result.relative_gap`` with the proven lower bound next to it).

    ``gap`` is the certificate's ``(loss - bound) / loss``; the bound is read back from it. A bound
    of zero proves nothing useful, and the line says so rather than printing 100 %.
    """
    against = against or "best model"
    gap = max(0.0, gap or 0.0)
    if loss is None or not math.isfinite(loss) or gap >= 1.0 - 1e-12:
        return f"no useful bound yet against the {against} (the proven lower bound is 0)"
    bound = loss - gap * max(abs(loss), GAP_FLOOR)
    return f"certified: training logistic loss {fmt_number(loss)}, gap {fmt_gap(loss, bound)} to the {against}"


def _fmt_score(s: float) -> str:
    return str(int(s)) if float(s).is_integer() else f"{s:.4g}"


def format_risk(r: float | None) -> str:
    """A risk as a percentage: one decimal, two near 0 % and 100 %, and bounds beyond two decimals,
    so a probability strictly between 0 and 1 never reads "0.0%" or "100.0%" (99.96 % is "99.96%",
    99.996 % is ">99.99%"). Every place the card's risk table is shown uses it."""
    if r is None or not math.isfinite(r):
        return "-"
    pct = 100.0 * r
    if pct < 0.005:
        return "<0.01%"
    if pct >= 99.995:
        return ">99.99%"
    text = f"{pct:.1f}%"
    if text in ("0.0%", "100.0%"):
        text = f"{pct:.2f}%"
    return text
