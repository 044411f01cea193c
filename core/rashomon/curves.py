"""A Rashomon set's figures as its threshold grows: since members come best first, the set at any
smaller threshold is a prefix of the kept members, so one enumeration gives, at every objective
where the set changes (each distinct member objective, up to the run's threshold):

- ``size``: how many members are within it, and ``exact`` whether that is the whole set's count
  there (every member counted is kept, and nothing left unenumerated can be within it: the set is
  complete, or the threshold is below ``unenumerated_bound``); otherwise the curve covers the kept
  members only, and the run's ``count`` at its own threshold is the one exact figure;
- on the training rows and the test rows (when there are some), against the optimal model (the
  run's): ``ambiguity`` (the share of rows on which some member within the threshold predicts
  otherwise) and ``discrepancy`` (the largest share of rows on which one member does), Marx,
  Calmon and Ustun (ICML 2020); weighted shares when the rows carry weights;
- ``patterns``: the number of distinct prediction vectors among those members (the numerator of
  Semenova, Rudin and Parr's pattern Rashomon ratio; its denominator, the patterns of the whole
  model class, is not known), and ``pattern_ratio``: patterns per member (1 when no two members
  predict alike on those rows).

All of it comes from one prediction matrix per part (members x rows) and cumulative NumPy
operations over it (each row's first member that predicts it otherwise, ``maximum.accumulate``,
the first member with each distinct prediction vector), computed once as the set is recorded:
the members' models and the rows are not in the store, so it cannot be computed on read. The
document is columnar (one list per figure, a pandas ``DataFrame(points)`` reads it)::

    {"rows": ["train", "test"], "count": N, "kept": K, "members": M, "complete": bool,
     "threshold": t, "optimum": o, "notes": [...],
     "points": {"threshold": [...], "epsilon": [...], "size": [...], "exact": [...],
                "train_ambiguity": [...], "train_discrepancy": [...], "train_patterns": [...],
                "train_pattern_ratio": [...], "test_ambiguity": [...], ...}}

``epsilon`` is each threshold relative to the optimum (``threshold / optimum - 1``; ``None`` when
the optimum is not positive). Regression sets get ``size`` only (real predictions differ by
rounding on every row, so "predicts otherwise" says nothing). A kept member without a model
(``rashomon.keep: summary``) ends the prediction figures' part of the curve: the figures stop at
the last threshold whose members all have models, and ``notes`` says so; past
``multiplicity.MAX_PREDICTION_CELLS`` the same happens at the best members that fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.rashomon.multiplicity import MAX_PREDICTION_CELLS

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.rashomon import RashomonSet
    from glasswork.contract.model import Model

FIGURES = ("ambiguity", "discrepancy", "patterns", "pattern_ratio")
CHUNK = 256  # members whose disagreements are summed at once (256 x rows floats)


def group_ends(objectives: Sequence[float]) -> np.ndarray:
    """The index of the last member of each run of equal objectives (best first): the prefixes
    that are the set at each threshold where it changes. Objectives equal to 1e-12 (relative)
    are one threshold, as float sums of the same terms in another order are."""
    values = np.asarray(objectives, dtype=np.float64)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    scale = np.maximum(1.0, np.abs(values[1:]))
    changes = np.flatnonzero(values[1:] - values[:-1] > 1e-12 * scale)
    return np.append(changes, len(values) - 1).astype(np.int64)


def prefix_figures(
    predictions: np.ndarray, reference: np.ndarray, weights: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Each figure of the module docstring for every prefix of the members (``predictions``:
    members x rows, best first), against ``reference`` (the optimal model's predictions)."""
    k = predictions.shape[0]
    counted = np.arange(1, k + 1, dtype=np.float64)
    if predictions.shape[1] == 0:
        nothing = np.full(k, np.nan)
        return {"ambiguity": nothing, "discrepancy": nothing, "patterns": np.zeros(k), "pattern_ratio": nothing}
    share = np.ones(predictions.shape[1]) if weights is None else np.asarray(weights, dtype=np.float64)
    share = share / share.sum()
    if predictions.dtype.kind not in "biuf":  # labels as objects: one integer code per label
        _, flat = np.unique(np.concatenate([predictions.ravel(), reference]), return_inverse=True)
        predictions = flat[: predictions.size].reshape(predictions.shape)
        reference = flat[predictions.size :]
    differs = predictions != reference[None, :]
    # a row is ambiguous from the first member that predicts it otherwise: each row's weight is
    # added at that member, so ambiguity is a cumulative sum (no members x rows float matrix)
    ever = differs.any(axis=0)
    first_differs = differs.argmax(axis=0)[ever]
    ambiguity = np.cumsum(np.bincount(first_differs, weights=share[ever], minlength=k))
    chunks = range(0, k, CHUNK)  # each member's share of rows, CHUNK members' floats at a time
    discrepancy = np.maximum.accumulate(np.concatenate([differs[i : i + CHUNK] @ share for i in chunks]))
    patterns = np.cumsum(_first_of_each_pattern(predictions))
    ratio = patterns / counted
    return {"ambiguity": ambiguity, "discrepancy": discrepancy, "patterns": patterns, "pattern_ratio": ratio}


def _first_of_each_pattern(predictions: np.ndarray) -> np.ndarray:
    """1 for each member whose prediction vector no better member has, else 0: members are told
    apart by their vectors' bytes (labels packed to one byte each when they fit), exactly."""
    if predictions.dtype.kind in "biu" and predictions.size and 0 <= predictions.min() and predictions.max() < 256:
        predictions = predictions.astype(np.uint8)
    seen: set[bytes] = set()
    new = np.zeros(predictions.shape[0], dtype=np.int64)
    for i, row in enumerate(np.ascontiguousarray(predictions)):
        key = row.tobytes()
        if key not in seen:
            seen.add(key)
            new[i] = 1
    return new


def _parts(problem: Problem) -> list[tuple[str, np.ndarray, np.ndarray | None]]:
    """The rows the figures are computed on: the training rows, and the test rows when there are
    some, each with its weights (``None`` when every row counts alike)."""
    from glasswork.rashomon.multiplicity import weights_of

    parts = [("train", problem.X, weights_of(problem, "train"))]
    if problem.X_test is not None and problem.y_test is not None and len(problem.y_test):
        parts.append(("test", problem.X_test, weights_of(problem, "test")))
    return parts


def curves(rashomon: RashomonSet, optimal: Model, problem: Problem) -> dict[str, Any]:
    """The curves document of the module docstring, JSON-ready."""
    members = rashomon.members
    objectives = [m.objective for m in members]
    ends = group_ends(objectives)
    notes: list[str] = []
    thresholds = [float(objectives[i]) for i in ends]
    sizes = [int(i) + 1 for i in ends]
    everything_kept = rashomon.kept == rashomon.count and rashomon.exhaustive
    bound = rashomon.unenumerated_bound
    exact = [bool(everything_kept and (rashomon.complete or (bound is not None and t < bound))) for t in thresholds]
    if not all(exact):
        notes.append(
            f"sizes past the exact part cover the {rashomon.kept:,} kept member(s); the set counts "
            f"{rashomon.count:,} at its threshold{'' if rashomon.complete else ' (not complete)'}"
        )
    optimum = rashomon.optimum
    points: dict[str, list[Any]] = {
        "threshold": thresholds,
        "epsilon": [t / optimum - 1.0 if optimum > 0 else None for t in thresholds],
        "size": sizes,
        "exact": exact,
    }
    parts = _parts(problem)
    rows = [name for name, _, _ in parts]
    if problem.task == "regression":
        notes.append("regression: sizes only (real predictions differ by rounding on every row)")
        rows = []
    else:
        with_model = next((i for i, m in enumerate(members) if m.model is None), len(members))
        if with_model < len(members):
            notes.append(
                f"prediction figures over the best {with_model:,} member(s): the next is kept as a summary, "
                "without its model"
            )
        n_rows = sum(len(X) for _, X, _ in parts)
        fits = max(1, MAX_PREDICTION_CELLS // max(1, n_rows))
        if with_model > fits:
            notes.append(f"prediction figures over the best {fits:,} of {with_model:,} members, to bound the work")
            with_model = fits
        covered = int(np.searchsorted(ends, with_model - 1, side="right"))  # thresholds whose members all predict
        for name, X, weights in parts:
            figures = _part_figures(members[:with_model], optimal, X, weights)
            for figure in FIGURES:
                values = [] if figures is None else figures[figure][ends[:covered]].tolist()
                points[f"{name}_{figure}"] = [_jsonable(v) for v in values] + [None] * (len(ends) - covered)
    return {
        "rows": rows,
        "count": rashomon.count,
        "kept": rashomon.kept,
        "members": len(members),
        "complete": rashomon.complete and rashomon.exhaustive,
        "threshold": rashomon.threshold,
        "optimum": optimum,
        "notes": notes,
        "points": points,
    }


def _part_figures(
    members: Sequence[Any], optimal: Model, X: np.ndarray, weights: np.ndarray | None
) -> dict[str, np.ndarray] | None:
    if not members:
        return None
    predictions = np.stack([np.asarray(m.model.predict(X)) for m in members])
    return prefix_figures(predictions, np.asarray(optimal.predict(X)), weights)


def _jsonable(value: Any) -> float | int | None:
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    return value if np.isfinite(value) else None


# -- reading: the document in lines of a table ---------------------------------------------------------


def columns(doc: dict[str, Any]) -> list[str]:
    """The figures a curves document has, in the order a table shows them."""
    points = doc.get("points") or {}
    return [f"{part}_{figure}" for part in doc.get("rows") or [] for figure in FIGURES if f"{part}_{figure}" in points]


def rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The document's points as one dict a threshold (the columnar form read row-wise)."""
    points = doc.get("points") or {}
    n = len(points.get("threshold") or [])
    return [{name: values[i] for name, values in points.items() if i < len(values)} for i in range(n)]


def coverage(doc: dict[str, Any]) -> str:
    """What the curves cover, in words (plain text; printers escape it)."""
    points = doc.get("points") or {}
    exact = points.get("exact") or []
    n = len(exact)
    if n and all(exact):
        return f"exact at each of the {n:,} threshold(s) where the set changes: every member is kept"
    through = next((i for i, e in enumerate(exact) if not e), n)
    said = f"over the {int(doc.get('kept') or 0):,} kept member(s) of {int(doc.get('count') or 0):,}"
    if through:
        said += f"; exact up to objective {points['threshold'][through - 1]:.6g}"
    return said


def header(doc: dict[str, Any]) -> list[str]:
    """The columns of the curves' table (``cells`` gives a row)."""
    return ["epsilon", "objective", "size", *columns(doc)]


def cells(doc: dict[str, Any], point: dict[str, Any]) -> list[str]:
    """One point as the table's cells (plain text): a size that is not the set's count there is
    marked ``+`` (the kept members within it), a figure not available ``-``."""
    epsilon = point.get("epsilon")
    said = [
        "-" if epsilon is None else f"{epsilon:.5f}",
        f"{point['threshold']:.6g}",
        f"{point['size']:,}" + ("" if point.get("exact") else "+"),
    ]
    return said + [_cell(name, point.get(name)) for name in columns(doc)]


SIZE_NOTE = "+: at least (the kept members within it, not the set's count)"


def _cell(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if name.endswith("patterns"):
        return f"{int(value):,}"
    if name.endswith(("ambiguity", "discrepancy")):
        return f"{100 * value:.2f}%"
    return f"{value:.4f}"
