"""What a Rashomon set says about its data: predictive multiplicity and model class reliance.

On the test rows (the training rows when there is no test split), over the kept members that
carry a model:

- ``ambiguity``: the share of rows on which at least one member predicts otherwise than the
  optimal model, and ``discrepancy``: the largest share of rows on which one member does (Marx,
  Calmon and Ustun, "Predictive Multiplicity in Classification", ICML 2020);
- for regression, where predictions are real numbers that differ by rounding on every row, the
  per-row ``spread`` over the members instead (``spread_mean``, ``spread_max``, in units of y;
  ambiguity and discrepancy are ``None``);
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
  on the rows has its loss floored at one row's (the smallest row weight's share), so the ratio
  stays finite;
- ``reliance_columns``: the same per raw column of the data, from the run's recorded inputs
  (``ModelInputs``: which raw column each matrix column is made from, as ``--avoids COLUMN``
  reads them): every matrix column made from the raw column is permuted together, with one
  permutation, as shuffling the raw column would. A raw column that a feature some member uses
  combines with another (a CORELS antecedent ``sex:Male,priors:>3``) cannot be shuffled on the
  matrix alone, so it gets no range and ``notes`` says so (a combination no member uses does not
  matter: no member's prediction reads it).

Rows carry their weights when the data has them (``data.weights``: ``sample_weight`` on the
training rows, ``test_sample_weight`` on the test rows): ambiguity, discrepancy and the split
rows' share (``split_share``) are weighted shares of the rows, reliance's losses weighted means,
and ``majority_share_min`` is over the rows with positive weight (a row's vote is the share of
the members, which its weight does not change; ``vote_shares`` are those per row).
``weighted`` says whether weights were used. Everything is NumPy over whole columns: one
``predict`` per member, and one per member and feature (or raw column) it uses for reliance,
bounded by ``MAX_RELIANCE_CELLS`` (rows are subsampled, with the same seed, to stay within it;
``notes`` says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from glasswork.contract.model import Model
    from glasswork.data import Problem
    from glasswork.rashomon import RashomonSet

SEED = 0
MAX_STORED_ROWS = 5_000  # per-row vote shares kept up to this many rows (a few hundred KB of JSON)
MAX_PREDICTION_CELLS = 10_000_000  # members x rows held for the agreement figures (80 MB of int64 labels)
MAX_RELIANCE_CELLS = 20_000_000  # (member, feature it uses) pairs x rows predicted for reliance


def rows_of(problem: Problem) -> tuple[np.ndarray, np.ndarray, str]:
    """The rows the figures are computed on: the test rows, else the training rows."""
    if problem.X_test is not None and problem.y_test is not None and len(problem.y_test):
        return problem.X_test, problem.y_test, "test"
    return problem.X, problem.y, "train"


def weights_of(problem: Problem, rows: str) -> np.ndarray | None:
    """The weights of the rows ``rows_of`` chose (``None``: every row counts alike)."""
    weights = problem.test_sample_weight if rows == "test" else problem.sample_weight
    if weights is None:
        return None
    weights = np.asarray(weights, dtype=np.float64)
    return weights if weights.sum() > 0 else None


def raw_columns(inputs: dict[str, Any] | None, names: Sequence[str]) -> dict[int, frozenset[str]]:
    """The raw columns each matrix column (an index into ``names``) is made from, from the run's
    recorded ``ModelInputs`` (a dict: a feature reads its ``column``, or the columns of its
    conditions); empty when the inputs are unknown."""
    index = {name: j for j, name in enumerate(names)}
    sources: dict[int, frozenset[str]] = {}
    for feature in (inputs or {}).get("features") or []:
        if not isinstance(feature, dict) or feature.get("name") not in index:
            continue
        read = {feature["column"]} if isinstance(feature.get("column"), str) else set()
        for condition in feature.get("all") or feature.get("any") or []:
            if isinstance(condition, dict) and isinstance(condition.get("column"), str):
                read.add(condition["column"])
        sources[index[feature["name"]]] = frozenset(read)
    return sources


def column_groups(
    sources: dict[int, frozenset[str]], used: Sequence[set[int]]
) -> tuple[dict[str, list[int]], list[str]]:
    """The matrix columns to shuffle together for each raw column some member reads (every column
    made from that raw column alone), and the raw columns left out: those a feature some member
    uses reads together with another column, which no shuffle of the matrix's columns reproduces."""
    read_by_members = {j for u in used for j in u if j in sources}
    combined = sorted({c for j in read_by_members if len(sources[j]) > 1 for c in sources[j]})
    groups: dict[str, list[int]] = {}
    for j, read in sorted(sources.items()):
        if len(read) == 1 and next(iter(read)) not in combined:
            groups.setdefault(next(iter(read)), []).append(j)
    return {c: js for c, js in groups.items() if read_by_members & set(js)}, combined


def figures(
    rashomon: RashomonSet, optimal: Model, problem: Problem, inputs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The multiplicity figures of a run's set (see the module docstring), JSON-ready; ``inputs``
    (the run's recorded ``ModelInputs``) gives reliance per raw column."""
    X, y, rows = rows_of(problem)
    weights = weights_of(problem, rows)
    names = list(problem.feature_names)
    regression = problem.task == "regression"
    notes: list[str] = []
    with_model = [m.model for m in rashomon.members if m.model is not None]
    if rashomon.kept < rashomon.count:
        notes.append(f"over the {rashomon.kept:,} kept members of {rashomon.count:,}")
    out: dict[str, Any] = {
        "rows": rows,
        "n_rows": int(len(y)),
        "weighted": weights is not None,
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
    out.update(agreement(predictions, reference, None if regression else _n_classes(problem, y), weights))
    column = {name: j for j, name in enumerate(names)}
    carrying = [m for m in rashomon.members if m.model is not None][: len(with_model)]
    used = [{column[f] for f in m.features if f in column} for m in carrying]
    groups, combined = column_groups(raw_columns(inputs, names), used)
    pairs = sum(len(u) for u in used)
    if inputs is not None:
        pairs += sum(1 for u in used for js in groups.values() if u & set(js))
    X, y, weights, reliance_rows = bounded_rows(X, y, weights, pairs)
    by_feature = {name: [j] for j, name in enumerate(names)}
    out["reliance"] = reliance_ranges(member_reliance(with_model, used, X, y, by_feature, regression, weights))
    if inputs is not None:
        out["reliance_columns"] = reliance_ranges(member_reliance(with_model, used, X, y, groups, regression, weights))
        if combined:
            notes.append(
                f"no reliance for raw column(s) {', '.join(map(repr, combined))}: a member's feature combines "
                "each with another column, so it cannot be shuffled alone"
            )
    if reliance_rows < out["n_rows"]:
        notes.append(
            f"reliance on {reliance_rows:,} of {out['n_rows']:,} rows (sampled, seed {SEED}) to bound its cost"
        )
    out["reliance_rows"] = reliance_rows
    return out


def bounded_rows(
    X: np.ndarray, y: np.ndarray, weights: np.ndarray | None, pairs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """The rows reliance is computed on: all of them, or a sample (seed ``SEED``) when ``pairs``
    (member, feature or raw column it uses) predictions over every row would pass
    ``MAX_RELIANCE_CELLS``."""
    n = len(y)
    if pairs * n <= MAX_RELIANCE_CELLS:
        return X, y, weights, n
    rng = np.random.default_rng(SEED)
    pool = np.arange(n) if weights is None else np.flatnonzero(weights > 0)  # a weightless row adds nothing
    size = min(len(pool), max(2, MAX_RELIANCE_CELLS // max(1, pairs)))
    keep = np.sort(rng.choice(pool, size=size, replace=False))
    return X[keep], y[keep], None if weights is None else weights[keep], len(keep)


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


def agreement(
    predictions: np.ndarray, reference: np.ndarray, n_classes: int | None, weights: np.ndarray | None = None
) -> dict[str, Any]:
    """Ambiguity, discrepancy and the per-row vote of ``predictions`` (members x rows) against
    the optimal model's ``reference``; ``n_classes`` ``None`` for regression (no vote). With
    ``weights`` the shares of rows are weighted shares."""
    if predictions.shape[1] == 0:
        return {"ambiguity": None, "discrepancy": None, "split_rows": 0}
    if n_classes is None:
        return _spread(predictions, reference, weights)
    differs = predictions != reference[None, :]
    out: dict[str, Any] = {
        "ambiguity": float(np.average(differs.any(axis=0), weights=weights)),
        "discrepancy": float(np.average(differs, axis=1, weights=weights).max()),
    }
    split = ~(predictions == predictions[0][None, :]).all(axis=0)
    out["split_rows"] = int(split.sum())
    out["split_share"] = float(np.average(split, weights=weights))
    if n_classes:
        shares = np.stack([(predictions == c).mean(axis=0) for c in range(n_classes)])
        counted = slice(None) if weights is None else weights > 0
        out["majority_share_min"] = float(shares.max(axis=0)[counted].min())
        if predictions.shape[1] <= MAX_STORED_ROWS:
            out["vote_shares"] = np.round(shares, 6).T.tolist()  # rows x classes
    return out


def _spread(predictions: np.ndarray, reference: np.ndarray, weights: np.ndarray | None) -> dict[str, Any]:
    """The regression form of agreement: real-valued predictions differ on every row by rounding,
    so "predicts otherwise" (ambiguity, discrepancy) says nothing; each row's spread (the largest
    minus the smallest prediction over the members) says how far they disagree, in units of y."""
    spread = predictions.max(axis=0) - predictions.min(axis=0)
    split = spread > 1e-9 * max(1.0, float(np.abs(reference).max()))  # rounding is not a split
    return {
        "ambiguity": None,
        "discrepancy": None,
        "spread_mean": float(np.average(spread, weights=weights)),
        "spread_max": float(spread.max()),
        "split_rows": int(split.sum()),
        "split_share": float(np.average(split, weights=weights)),
    }


def reliance_ranges(ratios: dict[str, list[float]]) -> dict[str, list[float]]:
    """The model class reliance range ``[min, max]`` over the members of each group's reliance
    (``member_reliance``'s answer)."""
    return {label: [float(min(values)), float(max(values))] for label, values in ratios.items()}


def member_reliance(
    models: Sequence[Model],
    used: Sequence[set[int]],
    X: np.ndarray,
    y: np.ndarray,
    groups: dict[str, list[int]],
    regression: bool,
    weights: np.ndarray | None = None,
) -> dict[str, list[float]]:
    """Each member's model reliance on each group of matrix columns, permuted together (one matrix
    column, or every column made from one raw column): one ratio per model in order (member ``i``
    uses the matrix columns ``used[i]``), exactly 1 for a member that does not use the group;
    groups no member uses left out."""
    n = len(y)
    if n == 0:
        return {}
    permutation = np.random.default_rng(SEED).permutation(n)

    def loss(pred: np.ndarray) -> float:
        if regression:
            return float(np.average((np.asarray(pred, dtype=np.float64) - y) ** 2, weights=weights))
        return float(np.average(np.asarray(pred) != y, weights=weights))

    floor = 1.0 / n if weights is None else float(weights[weights > 0].min() / weights.sum())
    base = [max(loss(m.predict(X)), floor) for m in models]
    out: dict[str, list[float]] = {}
    for label, columns in groups.items():
        users = [i for i, u in enumerate(used) if u & set(columns)]
        if not users:
            continue
        permuted = X.copy()
        permuted[:, columns] = X[permutation][:, columns]
        ratios = [1.0] * len(models)  # a member that does not use the group relies on it exactly 1
        for i in users:
            ratios[i] = loss(models[i].predict(permuted)) / base[i]
        out[label] = ratios
    return out
