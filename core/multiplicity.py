"""What a Rashomon set says about its data: predictive multiplicity and model class reliance.

On the test rows (the training rows when there is no test split), over the kept members that
carry a model:

- ``ambiguity``: the share of rows on which at least one member predicts otherwise than the
  optimal model, and ``discrepancy``: the largest share of rows on which one member does (Marx,
  Calmon and Ustun, "Predictive Multiplicity in Classification", ICML 2020);
- the vote: for each row, the share of members predicting each class (``split_rows`` counts the
  rows the members do not agree on; the per-row shares are kept when there are at most
  ``MAX_STORED_ROWS`` rows);
- ``variable_use``: the share of the kept members that use each feature (every kept member
  counts, also those kept as summaries);
- ``reliance``: model class reliance (Fisher, Rudin and Dominici, JMLR 2019): each member's
  model reliance on a feature is its loss (0-1, squared error for regression) with that feature's
  column permuted (one fixed permutation, seed 0) over its loss on the rows as they are; the range
  is ``[min, max]`` over the members. A member that does not use the feature relies on it exactly
  1, so features no member uses are left out (their range is ``[1, 1]``). A member with no error
  on the rows has its loss floored at one row's (``1 / n``), so the ratio stays finite.

Rows are counted alike (weights are ignored: these figures are about the models' disagreement,
not the fit). Everything is NumPy over whole columns: one ``predict`` per member, and one per
member and feature it uses for reliance, bounded by ``MAX_RELIANCE_CELLS`` (rows are subsampled,
with the same seed, to stay within it; ``notes`` says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.result import Model, RashomonSet

SEED = 0
MAX_STORED_ROWS = 5_000  # per-row vote shares kept up to this many rows (a few hundred KB of JSON)
MAX_PREDICTION_CELLS = 10_000_000  # members x rows held for the agreement figures (80 MB of int64 labels)
MAX_RELIANCE_CELLS = 20_000_000  # (member, feature it uses) pairs x rows predicted for reliance


def rows_of(problem: Problem) -> tuple[np.ndarray, np.ndarray, str]:
    """The rows the figures are computed on: the test rows, else the training rows."""
    if problem.X_test is not None and problem.y_test is not None and len(problem.y_test):
        return problem.X_test, problem.y_test, "test"
    return problem.X, problem.y, "train"


def figures(rashomon: RashomonSet, optimal: Model, problem: Problem) -> dict[str, Any]:
    """The multiplicity figures of a run's set (see the module docstring), JSON-ready."""
    X, y, rows = rows_of(problem)
    names = list(problem.feature_names)
    regression = problem.task == "regression"
    notes: list[str] = []
    with_model = [m.model for m in rashomon.members if m.model is not None]
    if rashomon.kept < rashomon.count:
        notes.append(f"over the {rashomon.kept:,} kept members of {rashomon.count:,}")
    out: dict[str, Any] = {
        "rows": rows,
        "n_rows": int(len(y)),
        "members": len(with_model),
        "kept": rashomon.kept,
        "count": rashomon.count,
        "variable_use": variable_use([m.features for m in rashomon.members], names),
        "seed": SEED,
        "notes": notes,
    }
    if not with_model:
        notes.append("no kept member carries its model (rashomon.keep: summary): only variable use is computed")
        return out
    if len(with_model) * max(1, len(y)) > MAX_PREDICTION_CELLS:
        limit = max(1, MAX_PREDICTION_CELLS // max(1, len(y)))
        notes.append(f"prediction figures over the best {limit:,} of {len(with_model):,} members with a model")
        with_model = with_model[:limit]
        out["members"] = limit
    predictions = np.stack([np.asarray(m.predict(X)) for m in with_model])
    reference = np.asarray(optimal.predict(X))
    out.update(agreement(predictions, reference, None if regression else _n_classes(problem, y)))
    column = {name: j for j, name in enumerate(names)}
    carrying = [m for m in rashomon.members if m.model is not None][: len(with_model)]
    used = [[column[f] for f in m.features if f in column] for m in carrying]
    out["reliance"], reliance_rows = reliance(with_model, used, X, y, names, regression)
    if reliance_rows < len(y):
        notes.append(f"reliance on {reliance_rows:,} of {len(y):,} rows (sampled, seed {SEED}) to bound its cost")
    out["reliance_rows"] = reliance_rows
    return out


def _n_classes(problem: Problem, y: np.ndarray) -> int:
    if problem.classes is not None:
        return len(problem.classes)
    return int(np.max(y)) + 1 if len(y) else 0


def variable_use(features: Sequence[Sequence[str]], names: Sequence[str]) -> dict[str, float]:
    """The share of members using each feature that some member uses, in the data's column order."""
    if not features:
        return {}
    counts: dict[str, int] = {}
    for used in features:
        for name in set(used):
            counts[name] = counts.get(name, 0) + 1
    order = {name: i for i, name in enumerate(names)}
    return {name: counts[name] / len(features) for name in sorted(counts, key=lambda n: (order.get(n, len(order)), n))}


def agreement(predictions: np.ndarray, reference: np.ndarray, n_classes: int | None) -> dict[str, Any]:
    """Ambiguity, discrepancy and the per-row vote of ``predictions`` (members x rows) against
    the optimal model's ``reference``; ``n_classes`` ``None`` for regression (no vote)."""
    if predictions.shape[1] == 0:
        return {"ambiguity": None, "discrepancy": None, "split_rows": 0}
    differs = predictions != reference[None, :]
    out: dict[str, Any] = {
        "ambiguity": float(differs.any(axis=0).mean()),
        "discrepancy": float(differs.mean(axis=1).max()),
    }
    unanimous = (predictions == predictions[0][None, :]).all(axis=0)
    out["split_rows"] = int((~unanimous).sum())
    if n_classes:
        shares = np.stack([(predictions == c).mean(axis=0) for c in range(n_classes)])
        out["majority_share_min"] = float(shares.max(axis=0).min())
        if predictions.shape[1] <= MAX_STORED_ROWS:
            out["vote_shares"] = np.round(shares, 6).T.tolist()  # rows x classes
    return out


def reliance(
    models: Sequence[Model],
    used: Sequence[Sequence[int]],
    X: np.ndarray,
    y: np.ndarray,
    names: Sequence[str],
    regression: bool,
) -> tuple[dict[str, list[float]], int]:
    """Each feature's model reliance range ``[min, max]`` over ``models`` (member ``i`` uses the
    columns ``used[i]``), features no member uses left out; and how many rows it was computed on."""
    n = len(y)
    if n == 0:
        return {}, 0
    rng = np.random.default_rng(SEED)
    pairs = sum(len(set(u)) for u in used)
    if pairs * n > MAX_RELIANCE_CELLS:
        keep = np.sort(rng.choice(n, size=max(2, MAX_RELIANCE_CELLS // max(1, pairs)), replace=False))
        X, y, n = X[keep], y[keep], len(keep)
    permutation = rng.permutation(n)

    def loss(pred: np.ndarray) -> float:
        if regression:
            return float(np.mean((np.asarray(pred, dtype=np.float64) - y) ** 2))
        return float(np.mean(np.asarray(pred) != y))

    floor = 1.0 / n
    base = [max(loss(m.predict(X)), floor) for m in models]
    users: dict[int, list[int]] = {}
    for i, columns in enumerate(used):
        for j in set(columns):
            users.setdefault(j, []).append(i)
    ranges: dict[str, list[float]] = {}
    for j in sorted(users):
        permuted = X.copy()
        permuted[:, j] = X[permutation, j]
        ratios = [loss(models[i].predict(permuted)) / base[i] for i in users[j]]
        if len(users[j]) < len(models):
            ratios.append(1.0)  # a member that does not use the feature relies on it exactly 1
        ranges[names[j]] = [float(min(ratios)), float(max(ratios))]
    return ranges, n
