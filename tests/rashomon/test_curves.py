"""The set's figures as epsilon grows (``glasswork.rashomon.curves``) against a brute-force
recomputation: for each threshold where the set changes, the members within it filtered afresh and
every figure recomputed from their predictions, on random sets of our own (ties, weights, labels
as text, members without a model) and on a CORELS run's set against every rule list within its
threshold enumerated by brute force; the card draws them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from test_member_figures import brute_force_set, list_predictions, spec_for, table

from glasswork import Problem
from glasswork.running.launch import Launch
from glasswork.rashomon import RashomonMember, RashomonSet
from glasswork.rashomon.curves import FIGURES, coverage, curves, group_ends, rows
from glasswork.display.report import set_curves_section


class Lookup:
    """A model that predicts a stored label per row (the row's id is its one feature)."""

    def __init__(self, train: np.ndarray, test: np.ndarray) -> None:
        self.by_part = {"train": train, "test": test}

    def predict(self, X: np.ndarray) -> np.ndarray:
        part, index = ("test", X[:, 0] - 10_000) if X[0, 0] >= 10_000 else ("train", X[:, 0])
        return self.by_part[part][index]


def brute_figures(
    within: list[np.ndarray], reference: np.ndarray, weights: np.ndarray | None
) -> dict[str, float | int]:
    """Each figure of the members ``within`` a threshold, from scratch, a row at a time."""
    n = len(reference)
    w = np.ones(n) if weights is None else weights
    total = float(w.sum())
    ambiguous = sum(w[i] for i in range(n) if any(p[i] != reference[i] for p in within))
    discrepancy = max(sum(w[i] for i in range(n) if p[i] != reference[i]) / total for p in within)
    patterns = len({tuple(p.tolist()) for p in within})
    return {
        "ambiguity": ambiguous / total,
        "discrepancy": discrepancy,
        "patterns": patterns,
        "pattern_ratio": patterns / len(within),
    }


def random_set(seed: int, *, labels_as_text: bool = False, weighted: bool = False, summaries: int = 0):
    """A random set of 2 to 30 members (objectives with ties, few distinct labellings, so patterns
    repeat) over 40 training and 25 test rows, with its problem and optimal model."""
    rng = np.random.default_rng(seed)
    n, n_test, k = 40, 25, int(rng.integers(2, 31))
    classes = np.array(["no", "yes", "maybe"], dtype=object) if labels_as_text else np.array([0, 1, 2])
    base = [rng.integers(0, 3, n + n_test) for _ in range(int(rng.integers(1, 6)))]
    objectives = np.sort(np.round(0.3 + rng.integers(0, 8, k) * 0.01, 6))
    members = []
    for i in range(k):
        labels = base[int(rng.integers(0, len(base)))].copy()
        flip = rng.random(n + n_test) < 0.05 * (i > 0)
        labels[flip] = rng.integers(0, 3, int(flip.sum()))
        model = Lookup(classes[labels[:n]], classes[labels[n:]])
        members.append(RashomonMember(float(objectives[i]), ("f",), f"fp{i}", model if i < k - summaries else None))
    optimal = members[0].model
    problem = Problem(
        name="curves",
        X=np.arange(n)[:, None],
        y=np.zeros(n, dtype=np.int64),
        feature_names=["row"],
        task="multiclass",
        classes=np.array([0, 1, 2]),
        X_test=(10_000 + np.arange(n_test))[:, None],
        y_test=np.zeros(n_test, dtype=np.int64),
        sample_weight=rng.uniform(0.1, 3.0, n) if weighted else None,
        test_sample_weight=rng.uniform(0.1, 3.0, n_test) if weighted else None,
    )
    rset = RashomonSet(
        threshold=float(objectives[-1]) + 0.005, optimum=float(objectives[0]), count=k, complete=True, members=members
    )
    return rset, problem, optimal


def check_against_brute_force(doc, rset, problem, optimal) -> None:
    objectives = sorted({m.objective for m in rset.members})
    points = rows(doc)
    assert [p["threshold"] for p in points] == pytest.approx(objectives)
    parts = [("train", problem.X, problem.sample_weight), ("test", problem.X_test, problem.test_sample_weight)]
    for point, threshold in zip(points, objectives):
        within = [m for m in rset.members if m.objective <= threshold]
        assert point["size"] == len(within)
        assert point["epsilon"] == pytest.approx(threshold / rset.optimum - 1)
        for name, X, weights in parts:
            if any(m.model is None for m in within):
                assert all(point[f"{name}_{f}"] is None for f in FIGURES)
                continue
            expected = brute_figures([m.model.predict(X) for m in within], optimal.predict(X), weights)
            for figure in FIGURES:
                assert point[f"{name}_{figure}"] == pytest.approx(expected[figure]), (name, figure, threshold)


@pytest.mark.parametrize("seed", range(12))
def test_curves_equal_a_brute_force_recomputation_at_every_threshold(seed: int) -> None:
    rset, problem, optimal = random_set(seed, labels_as_text=seed % 3 == 1, weighted=seed % 2 == 1)
    doc = curves(rset, optimal, problem)
    assert doc["rows"] == ["train", "test"] and doc["complete"] is True
    assert all(doc["points"]["exact"])  # complete, every member kept: each size is the set's count
    check_against_brute_force(doc, rset, problem, optimal)


def test_members_without_a_model_end_the_prediction_figures_not_the_sizes() -> None:
    rset, problem, optimal = random_set(5, summaries=3)
    doc = curves(rset, optimal, problem)
    check_against_brute_force(doc, rset, problem, optimal)
    assert any("kept as a summary" in note for note in doc["notes"])


def test_sizes_are_exact_only_where_nothing_uncounted_can_be_within() -> None:
    rset, problem, optimal = random_set(3)
    members = rset.members
    middle = sorted({m.objective for m in members})[len({m.objective for m in members}) // 2]
    stopped = RashomonSet(
        threshold=rset.threshold,
        optimum=rset.optimum,
        count=len(members),
        complete=False,
        members=members,
        unenumerated_bound=middle,
    )
    doc = curves(stopped, optimal, problem)
    assert doc["points"]["exact"] == [t < middle for t in doc["points"]["threshold"]]
    assert "exact up to objective" in coverage(doc)
    capped = RashomonSet(
        threshold=rset.threshold, optimum=rset.optimum, count=len(members) + 50, complete=True, members=members
    )
    doc = curves(capped, optimal, problem)
    assert not any(doc["points"]["exact"]) and f"of {len(members) + 50:,}" in coverage(doc)


def test_group_ends_treat_rounding_as_one_threshold() -> None:
    assert group_ends([0.1, 0.1 + 1e-15, 0.2, 0.3, 0.3]).tolist() == [1, 2, 4]
    assert group_ends([]).tolist() == []


@pytest.mark.parametrize("seed", [0, 1])
def test_a_corels_sets_curves_are_the_brute_force_sets(seed: int) -> None:
    """Every rule list within the run's threshold enumerated by brute force: at each threshold
    where that set changes, its size, and each figure from the lists' own predictions."""
    problem = next(p for s in range(seed * 50, seed * 50 + 50) if not brute_force_set(p := table(s), 10.0)[1])
    outcome = Launch(spec_for(0.5), problem=problem, no_store=True).run()
    rset = outcome.result.rashomon
    assert rset is not None and rset.complete and rset.kept == rset.count
    doc = outcome.multiplicity["curves"]
    assert outcome.to_dict()["rashomon"]["multiplicity"]["curves"] == doc  # run --json carries them
    found, _ = brute_force_set(problem, rset.threshold)
    thresholds = sorted({round(o, 12) for o, _ in found})
    points = rows(doc)
    assert [p["threshold"] for p in points] == pytest.approx(thresholds)
    assert all(p["exact"] for p in points)
    assert points[-1]["train_patterns"] == len({m.fingerprint for m in rset.members})  # the members' own hashes
    reference = {"train": outcome.result.model.predict(problem.X), "test": outcome.result.model.predict(problem.X_test)}
    for point, threshold in zip(points, thresholds):
        within = [order for o, order in found if o <= threshold + 1e-12]
        assert point["size"] == len(within)
        for part, X in (("train", problem.X), ("test", problem.X_test)):
            expected = brute_figures([list_predictions(o, problem, X) for o in within], reference[part], None)
            for figure in FIGURES:
                assert point[f"{part}_{figure}"] == pytest.approx(expected[figure]), (part, figure, threshold)


def test_the_card_draws_the_curves_and_escapes_notes() -> None:
    rset, problem, optimal = random_set(2)
    doc = curves(rset, optimal, problem)
    doc["notes"].append("<script>alert(1)</script>")
    html = set_curves_section(doc)
    assert html.count("<svg") == 3 and "set size by epsilon" in html and "distinct prediction vectors" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert set_curves_section(None) == "" and set_curves_section({"error": "x"}) == ""


def test_a_regression_set_has_sizes_only() -> None:
    rset, problem, optimal = random_set(4)
    problem = SimpleNamespace(**{**problem.__dict__, "task": "regression"})
    doc = curves(rset, optimal, problem)
    assert doc["rows"] == [] and set(doc["points"]) == {"threshold", "epsilon", "size", "exact"}
